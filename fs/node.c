/*
 * Inode table: two GLib hash tables (by number, by identity) under one
 * mutex.  A node lives while the kernel holds lookups on it or a handler
 * holds a reference (node_get .. node_put).  Numbers are never reused.
 * Messages are not in it: their records are msgnodes.c's, and node_get
 * gives a handler a copy of one for as long as it holds it.
 */
#include <errno.h>
#include <glib.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fs/msgnodes.h"
#include "fs/node.h"

struct ref_node {
	struct node n;
	uint64_t refs;          /* handler references; protected by lock */
	int unkeyed;            /* replaced by a rename: in by_ino only */
	int copy;               /* a message's, made by node_get */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static GHashTable *by_ino;      /* protected by lock */
static GHashTable *by_key;      /* protected by lock */
static uint64_t next_ino = 16;  /* protected by lock */
static struct ref_node root = { .n = { .ino = 1, .kind = N_ROOT } };

static guint key_hash(gconstpointer p)
{
	const struct node *n = p;
	guint h = (guint)n->kind * 2654435761u ^ (guint)n->vid * 40503u;

	if (n->kind == N_FILE || n->kind == N_SREV || n->kind == N_SFILE)
		h ^= g_str_hash(n->name);
	return h;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	const struct node *x = a, *y = b;

	return x->kind == y->kind && x->vid == y->vid &&
	       ((x->kind != N_FILE && x->kind != N_SREV && x->kind != N_SFILE) ||
		!strcmp(x->name, y->name));
}

int node_table_init(void)
{
	by_ino = g_hash_table_new(g_int64_hash, g_int64_equal);
	by_key = g_hash_table_new(key_hash, key_equal);
	root.n.nlookup = 1;     /* never forgotten */
	g_hash_table_insert(by_ino, &root.n.ino, &root);
	return 0;
}

static void free_node(struct ref_node *r)
{
	if (r == &root)
		return;
	free(r->n.view);
	while (r->n.nold)
		free(r->n.old_views[--r->n.nold]);
	free(r->n.old_views);
	free(r->n.name);
	free(r->n.text);
	while (r->n.readers) {
		struct rtext *t = r->n.readers;

		r->n.readers = t->next;
		free(t->buf);
		free(t);
	}
	while (r->n.writers) {
		struct wtext *w = r->n.writers;

		r->n.writers = w->next;
		free(w->buf);
		free(w);
	}
	free(r);
}

void node_table_destroy(void)
{
	GHashTableIter it;
	gpointer k, val;

	g_hash_table_iter_init(&it, by_ino);
	while (g_hash_table_iter_next(&it, &k, &val))
		free_node(val);
	g_hash_table_destroy(by_ino);
	g_hash_table_destroy(by_key);
	msgnodes_destroy();
}

struct node *node_get(uint64_t ino)
{
	struct ref_node *r;

	if (msgnodes_is(ino)) {
		if (!(r = calloc(1, sizeof(*r))))
			return NULL;    /* the callers' ENOENT: no better word */
		if (msgnodes_get(ino, &r->n.vid, r->n.oid, &r->n.date, &r->n.size)) {
			free(r);
			return NULL;
		}
		r->n.ino = ino;
		r->n.kind = N_MSG;
		r->copy = 1;
		return &r->n;
	}
	pthread_mutex_lock(&lock);
	r = g_hash_table_lookup(by_ino, &ino);
	if (r)
		r->refs++;
	pthread_mutex_unlock(&lock);
	return r ? &r->n : NULL;
}

/* lock held */
static void maybe_free(struct ref_node *r)
{
	if (r == &root || r->refs || r->n.nlookup)
		return;
	g_hash_table_remove(by_ino, &r->n.ino);
	if (!r->unkeyed)
		g_hash_table_remove(by_key, &r->n);
	free_node(r);
}

void node_put(struct node *n)
{
	struct ref_node *r = (struct ref_node *)n;

	if (r->copy) {
		msgnodes_put(n->ino);
		free(r);
		return;
	}
	pthread_mutex_lock(&lock);
	r->refs--;
	maybe_free(r);
	pthread_mutex_unlock(&lock);
}

static struct node *lookup(int kind, uint64_t vid, const char *view, const char *name)
{
	struct node key = { .kind = kind, .vid = vid, .name = (char *)name };
	struct ref_node *r;

	if (kind == N_ROOT)
		return &root.n;
	if (kind == N_MSG)
		return NULL;    /* node_lookup_msg */
	pthread_mutex_lock(&lock);
	r = g_hash_table_lookup(by_key, &key);
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r || (view && !(r->n.view = strdup(view))) ||
		    (name && !(r->n.name = strdup(name)))) {
			if (r)
				free(r->n.view);
			free(r);
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		r->n.kind = kind;
		r->n.vid = vid;
		r->n.ino = next_ino++;
		g_hash_table_insert(by_ino, &r->n.ino, r);
		g_hash_table_insert(by_key, &r->n, r);
	}
	r->n.nlookup++;
	pthread_mutex_unlock(&lock);
	return &r->n;
}

uint64_t node_find_ino(int kind, uint64_t vid)
{
	struct node key = { .kind = kind, .vid = vid };
	struct ref_node *r;
	uint64_t ino = 0;

	pthread_mutex_lock(&lock);
	if ((r = g_hash_table_lookup(by_key, &key)))
		ino = r->n.ino;
	pthread_mutex_unlock(&lock);
	return ino;
}

struct node *node_lookup(int kind, uint64_t vid, const char *view)
{
	return lookup(kind, vid, view, NULL);
}

uint64_t node_lookup_msg(uint64_t vid, const struct cache_entry *e)
{
	return msgnodes_lookup(vid, e->oid, e->date, e->size);
}

void node_msg_swept(uint64_t vid)
{
	msgnodes_swept(vid);
}

long node_msg_views(const unsigned char *oid, uint64_t skip, uint64_t **vids)
{
	return msgnodes_views_of(oid, skip, vids);
}

struct node *node_lookup_named(int kind, uint64_t vid, const char *view, const char *name)
{
	return lookup(kind, vid, view, name);
}

struct node *node_lookup_file(uint64_t vid, const char *view, const char *name)
{
	return lookup(N_FILE, vid, view, name);
}

int node_rename_file(uint64_t vid, const char *from, const char *to)
{
	struct node key = { .kind = N_FILE, .vid = vid, .name = (char *)from };
	struct ref_node *r, *old;
	char *copy = strdup(to);

	if (!copy)
		return ENOMEM;
	pthread_mutex_lock(&lock);
	/* a node of the replaced file keeps its inode (open handles) but
	 * stands for no name any more */
	key.name = (char *)to;
	if ((old = g_hash_table_lookup(by_key, &key))) {
		g_hash_table_remove(by_key, &old->n);
		old->unkeyed = 1;
		free(old->n.name);
		old->n.name = NULL;     /* node_file_name(): gone */
	}
	key.name = (char *)from;
	r = g_hash_table_lookup(by_key, &key);
	if (r) {
		g_hash_table_remove(by_key, &r->n);
		free(r->n.name);
		r->n.name = copy;
		copy = NULL;
		g_hash_table_insert(by_key, &r->n, r);
	}
	pthread_mutex_unlock(&lock);
	free(copy);
	return 0;
}

void node_file_gone(uint64_t vid, const char *name)
{
	struct node key = { .kind = N_FILE, .vid = vid, .name = (char *)name };
	struct ref_node *r;

	pthread_mutex_lock(&lock);
	if ((r = g_hash_table_lookup(by_key, &key))) {
		g_hash_table_remove(by_key, &r->n);
		r->unkeyed = 1;
		free(r->n.name);
		r->n.name = NULL;       /* node_file_name(): gone */
	}
	pthread_mutex_unlock(&lock);
}

int node_rename_view(uint64_t vid, const char *view)
{
	GHashTableIter it;
	gpointer k, val;
	int err = 0;

	pthread_mutex_lock(&lock);
	g_hash_table_iter_init(&it, by_ino);
	while (g_hash_table_iter_next(&it, &k, &val)) {
		struct ref_node *r = val;
		char *copy, **olds;

		if (r == &root || r->n.vid != vid || !r->n.view || !strcmp(r->n.view, view))
			continue;
		if (!(copy = strdup(view)) ||
		    !(olds = realloc(r->n.old_views, (r->n.nold + 1) * sizeof(*olds)))) {
			free(copy);
			err = ENOMEM;
			break;
		}
		r->n.old_views = olds;
		r->n.old_views[r->n.nold++] = r->n.view;
		__atomic_store_n(&r->n.view, copy, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
	return err;
}

long node_view_inos(uint64_t vid, int lo, int hi, uint64_t **out)
{
	GHashTableIter it;
	gpointer k, val;
	size_t n = 0, cap = 0;
	uint64_t *a = NULL, *t;

	pthread_mutex_lock(&lock);
	g_hash_table_iter_init(&it, by_ino);
	while (g_hash_table_iter_next(&it, &k, &val)) {
		struct ref_node *r = val;

		if (r == &root || r->n.vid != vid || r->n.kind < lo || r->n.kind > hi)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			if (!(t = realloc(a, cap * sizeof(*a)))) {
				pthread_mutex_unlock(&lock);
				free(a);
				*out = NULL;
				return -1;
			}
			a = t;
		}
		a[n++] = r->n.ino;
	}
	pthread_mutex_unlock(&lock);
	if (lo <= N_MSG && N_MSG <= hi && msgnodes_view_inos(vid, &a, &n, &cap)) {
		free(a);
		*out = NULL;
		return -1;
	}
	*out = a;
	return (long)n;
}

void node_unkey(int kind, uint64_t vid)
{
	node_unkey_named(kind, vid, NULL);
}

void node_unkey_named(int kind, uint64_t vid, const char *name)
{
	struct node key = { .kind = kind, .vid = vid, .name = (char *)name };
	struct ref_node *r;

	pthread_mutex_lock(&lock);
	if ((r = g_hash_table_lookup(by_key, &key))) {
		g_hash_table_remove(by_key, &r->n);
		r->unkeyed = 1;
	}
	pthread_mutex_unlock(&lock);
}

char *node_file_name(const struct node *n)
{
	char *s;

	pthread_mutex_lock(&lock);
	s = n->name ? strdup(n->name) : NULL;
	pthread_mutex_unlock(&lock);
	return s;
}

void node_forget(uint64_t ino, uint64_t count)
{
	struct ref_node *r;

	if (msgnodes_is(ino)) {
		msgnodes_forget(ino, count);
		return;
	}
	pthread_mutex_lock(&lock);
	r = g_hash_table_lookup(by_ino, &ino);
	if (r && r != &root) {
		r->n.nlookup = r->n.nlookup > count ? r->n.nlookup - count : 0;
		maybe_free(r);
	}
	pthread_mutex_unlock(&lock);
}
