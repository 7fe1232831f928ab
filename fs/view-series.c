/*
 * A view's series/ (views.h): its patch series as b4 am writes them,
 * derived from the view's messages (hidden ones too: series never depend
 * on flags) and kept in the cache's series table, under the view's id:
 *
 *   "S"            the stamp of the messages it was made from: their
 *                  count and a SHA-1 of their blob ids, and when
 *   "F" + oid      what a message threads by (series_links) and whether
 *                  it is a patch: each message is parsed once
 *   "T" + SHA-1    the names a thread gave (the SHA-1 of its blob ids):
 *                  a thread that did not change is not read again
 *   "N" + name     a revision: struct ser_rec, its Message-ID, change-id
 *                  and subject, then am.mbx and the cover
 *   "I" + name     its info
 *   "W" + msgid    a fetch of the rest of a thread the view holds part
 *                  of (view-series-fetch.c), which the view's holder keeps
 *
 * An update threads the view's messages from the "F" records (union of
 * Message-IDs), works out only the threads whose blob ids changed, and
 * writes what changed in one transaction.  A revision keeps its name while
 * its Message-ID and revision stay (a new reply changes its thread, not
 * its name); a name that another revision holds gets "-2", "-3"...
 * One update at a time (views.series); reads need no lock and are
 * view-series-read.c's.
 */
#include <errno.h>
#include <glib.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/series.h"
#include "fs/log.h"
#include "fs/views-private.h"

#include "fs/view-series-rec.h"
#include "fs/view-series-upd.h"

/* ---- the view's messages ---- */

int ser_add_oid(void *arg, const struct cache_entry *e)
{
	struct msgs *m = arg;

	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		unsigned char *o = realloc(m->oids, cap * CACHE_OID_LEN);

		if (!o)
			return ENOMEM;
		m->oids = o;
		m->cap = cap;
	}
	memcpy(m->oids + m->n++ * CACHE_OID_LEN, e->oid, CACHE_OID_LEN);
	return 0;
}

int ser_cmp_oid(const void *a, const void *b)
{
	return memcmp(a, b, CACHE_OID_LEN);
}

static void sha1_oids(const unsigned char *oids, size_t n, unsigned char out[20])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	memset(out, 0, 20);
	if (!ctx)
		return;
	EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
	EVP_DigestUpdate(ctx, oids, n * CACHE_OID_LEN);
	EVP_DigestFinal_ex(ctx, out, NULL);
	EVP_MD_CTX_free(ctx);
}

/* ---- records being written ---- */

static void rec_free(gpointer p)
{
	struct cache_series_rec *r = p;

	free((void *)r->key);
	free((void *)r->val);
	free(r);
}

int ser_queue(GPtrArray *a, char kind, const void *sub, size_t slen, void *val,
	      size_t vlen)
{
	struct cache_series_rec *r = calloc(1, sizeof(*r));
	char *key = malloc(1 + slen);

	if (!r || !key) {
		free(r);
		free(key);
		free(val);
		return ENOMEM;
	}
	key[0] = kind;
	if (slen)               /* the stamp's key is its kind alone */
		memcpy(key + 1, sub, slen);
	r->key = key;
	r->klen = 1 + slen;
	r->val = val;
	r->vlen = vlen;
	g_ptr_array_add(a, r);
	return 0;
}

/* ---- threading ---- */

/* union-find over ids */
static size_t uf_find(size_t *parent, size_t i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

static void uf_union(size_t *parent, size_t a, size_t b)
{
	a = uf_find(parent, a);
	b = uf_find(parent, b);
	if (a != b)
		parent[a > b ? a : b] = a < b ? a : b;
}

static int parse_fact(const void *val, size_t len, struct fact *f)
{
	const char *p = val, *end = p + len;
	size_t n = 0;
	const char *q;

	if (len < 1)
		return EIO;
	f->patch = p[0] == '1';
	for (q = p + 1; q < end; q++)
		n += *q == '\0';
	f->ids = calloc(n ? n : 1, sizeof(char *));
	if (!f->ids)
		return ENOMEM;
	for (q = p + 1; q < end && f->nids < n;) {
		size_t l = strlen(q);

		if (!(f->ids[f->nids++] = strdup(q)))
			return ENOMEM;
		q += l + 1;
	}
	return 0;
}

/* a message's fact, from its record or (once) from the message */
static int get_fact(views_t *v, uint64_t id, const unsigned char *oid, struct fact *f,
		    struct writes *w)
{
	cache_t *c = v->cache;
	unsigned char key[1 + CACHE_OID_LEN];
	void *val;
	size_t vlen, i, len;
	char *raw, *buf;
	char **ids;
	int err;

	memset(f, 0, sizeof(*f));
	key[0] = 'F';
	memcpy(key + 1, oid, CACHE_OID_LEN);
	if (!(err = cache_series_get(c, id, key, sizeof(key), &val, &vlen))) {
		err = parse_fact(val, vlen, f);
		free(val);
		return err;
	}
	if (err != ENOENT)
		return err;
	/* listed but not stored yet (a first fill under way): no thread, no
	 * fact kept, and the caller stamps nothing, so the next update looks */
	if ((err = cache_msg_get(c, oid, &raw, &len)) == ENOENT) {
		f->absent = 1;
		return 0;
	}
	if (err)
		return err;
	f->patch = series_is_patch(raw, len);
	err = series_links(raw, len, &ids, &f->nids);
	free(raw);
	if (err)
		return err;
	f->ids = ids;
	for (vlen = 1, i = 0; i < f->nids; i++)
		vlen += strlen(ids[i]) + 1;
	if (!(buf = malloc(vlen)))
		return ENOMEM;
	buf[0] = f->patch ? '1' : '0';
	for (vlen = 1, i = 0; i < f->nids; i++) {
		size_t l = strlen(ids[i]) + 1;

		memcpy(buf + vlen, ids[i], l);
		vlen += l;
	}
	return ser_queue(w->put, 'F', oid, CACHE_OID_LEN, buf, vlen);
}

/* ---- revisions kept from the last update ---- */

static void old_free(gpointer p)
{
	struct old_rev *o = p;

	free(o->name);
	free(o->msgid);
	free(o->change_id);
	free(o->subject);
	free(o);
}

static char *strndup0(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

static int add_old(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
	struct olds *o = arg;
	struct ser_rec r;
	struct old_rev *x;
	const char *p = (const char *)val + sizeof(r);

	if (vlen < sizeof(r))
		return 0;       /* derived data: a bad record is made again */
	memcpy(&r, val, sizeof(r));
	if (r.magic != SER_MAGIC || (uint64_t)r.midlen + r.cidlen + r.subjlen > vlen - sizeof(r))
		return 0;
	if (!(x = calloc(1, sizeof(*x))))
		return ENOMEM;
	x->name = strndup0((const char *)key + 1, klen - 1);
	x->msgid = strndup0(p, r.midlen);
	x->change_id = strndup0(p + r.midlen, r.cidlen);
	x->subject = strndup0(p + r.midlen + r.cidlen, r.subjlen);
	x->revision = r.revision;
	x->mtime = r.mtime;
	x->date = r.date;
	if (!x->name || !x->msgid || !x->change_id || !x->subject) {
		old_free(x);
		return ENOMEM;
	}
	g_ptr_array_add(o->revs, x);
	g_hash_table_insert(o->by_name, x->name, x);
	return 0;
}

static int add_thread(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
	struct thread_names *t = arg;
	char hex[41];
	size_t i;

	if (klen != 21)
		return 0;
	for (i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)key)[1 + i]);
	/* names, each NUL-terminated, and a NUL */
	if (vlen < 1 || ((const char *)val)[vlen - 1] || (vlen > 1 && ((const char *)val)[vlen - 2]))
		return 0;
	g_hash_table_insert(t->by_sig, g_strdup(hex), g_memdup2(val, vlen));
	return 0;
}

/* ---- the update ---- */

struct revset {
	struct series_rev *r;
	size_t n;
};

static char *unique_name(struct upd *u, const char *base)
{
	char *name = strdup(base);
	int i;

	for (i = 2; name && g_hash_table_contains(u->taken, name); i++) {
		free(name);
		name = g_strdup_printf("%s-%d", base, i);
	}
	return name;
}

static int put_rev(struct upd *u, const struct series_rev *r, const char *name,
		   int64_t mtime)
{
	struct ser_rec h = { .magic = SER_MAGIC, .revision = r->revision, .mtime = mtime,
			     .date = r->date };
	size_t len;
	char *buf, *p;

	h.midlen = (uint32_t)strlen(r->msgid);
	h.cidlen = (uint32_t)strlen(r->change_id);
	h.subjlen = (uint32_t)strlen(r->subject);
	h.amlen = (uint32_t)r->amlen;
	h.coverlen = (uint32_t)r->coverlen;
	h.has_cover = r->cover != NULL;
	len = sizeof(h) + h.midlen + h.cidlen + h.subjlen + h.amlen + h.coverlen;
	if (!(buf = malloc(len)))
		return ENOMEM;
	memcpy(buf, &h, sizeof(h));
	p = buf + sizeof(h);
	memcpy(p, r->msgid, h.midlen);
	p += h.midlen;
	memcpy(p, r->change_id, h.cidlen);
	p += h.cidlen;
	memcpy(p, r->subject, h.subjlen);
	p += h.subjlen;
	memcpy(p, r->am, h.amlen);
	p += h.amlen;
	if (h.coverlen)
		memcpy(p, r->cover, h.coverlen);
	return ser_queue(u->w.put, 'N', name, strlen(name), buf, len);
}

/* the old revision a new one takes the name of: same Message-ID and revision */
static struct old_rev *old_of(struct upd *u, const struct series_rev *r)
{
	guint i;

	for (i = 0; i < u->old.revs->len; i++) {
		struct old_rev *o = u->old.revs->pdata[i];

		if (!o->live && !o->keep && o->revision == r->revision && !strcmp(o->msgid, r->msgid))
			return o;
	}
	return NULL;
}

/* whether revision `name` of the last update had r's am.mbx and cover */
static int same_content(struct upd *u, const char *name, const struct series_rev *r)
{
	size_t kl = strlen(name), vlen;
	char *key = malloc(kl + 1);
	struct ser_rec h;
	const char *p;
	void *val = NULL;
	int same = 0;

	if (!key)
		return 0;
	key[0] = 'N';
	memcpy(key + 1, name, kl);
	if (!cache_series_get(u->v->cache, u->id, key, kl + 1, &val, &vlen) &&
	    vlen >= sizeof(h)) {
		memcpy(&h, val, sizeof(h));
		p = (const char *)val + sizeof(h) + h.midlen + h.cidlen + h.subjlen;
		same = h.magic == SER_MAGIC &&
		       (uint64_t)sizeof(h) + h.midlen + h.cidlen + h.subjlen + h.amlen + h.coverlen == vlen &&
		       h.amlen == r->amlen && h.coverlen == r->coverlen &&
		       (int)h.has_cover == (r->cover != NULL) && !memcmp(p, r->am, r->amlen) &&
		       (!r->coverlen || !memcmp(p + h.amlen, r->cover, r->coverlen));
	}
	free(val);
	free(key);
	return same;
}

/* one thread (its messages' indexes into u->m, sorted by oid) */
static int do_thread(struct upd *u, const size_t *idx, size_t n, GString *names)
{
	struct series_msg *sm = calloc(n ? n : 1, sizeof(*sm));
	struct revset *rs = calloc(1, sizeof(*rs));
	size_t i, got = 0;
	int err = 0;

	if (!sm || !rs) {
		free(sm);
		free(rs);
		return ENOMEM;
	}
	g_ptr_array_add(u->revsets, rs);
	for (i = 0; i < n && i < u->lim.max_msgs; i++) {
		char *raw;
		size_t len;

		if ((err = cache_msg_get(u->v->cache, u->m.oids + idx[i] * CACHE_OID_LEN, &raw,
					 &len))) {
			if (err == ENOENT)
				continue;
			goto out;
		}
		sm[got].raw = raw;
		sm[got++].len = len;
	}
	if ((err = series_thread(sm, got, &u->lim, &rs->r, &rs->n)) ||
	    (err = ser_fetch_consider(u, idx, n, rs->r, rs->n)))
		goto out;
	if (n > u->lim.max_msgs)
		for (i = 0; i < rs->n; i++) {
			char *w = g_strdup_printf("%swarning: a thread of %zu messages: the first %zu "
						  "(by blob id) were read\n", rs->r[i].info, n,
						  u->lim.max_msgs);

			g_free(rs->r[i].info);
			rs->r[i].info = w;
		}
	for (i = 0; i < rs->n; i++) {
		struct series_rev *r = &rs->r[i];
		struct old_rev *o = old_of(u, r);
		char *name;

		/* a name another thread of this update took first (one of the
		 * same slug named anew) is not taken twice */
		if (o && g_hash_table_contains(u->taken, o->name))
			o = NULL;
		name = o ? strdup(o->name) : unique_name(u, r->name);

		if (!name) {
			err = ENOMEM;
			goto out;
		}
		if (o)
			o->live = 1;
		g_hash_table_add(u->taken, name);
		g_ptr_array_add(u->fresh, r);
		g_ptr_array_add(u->fresh_names, name);
		g_string_append(names, name);
		g_string_append_c(names, '\0');
		/* a change moves the time on, even within the second it was
		 * made (the kernel keeps pages while size and mtime hold) */
		if ((err = put_rev(u, r, name, !o ? u->now : same_content(u, name, r) ? o->mtime :
					       o->mtime >= u->now ? o->mtime + 1 : u->now)))
			goto out;
	}
out:
	for (i = 0; i < got; i++)
		free((void *)sm[i].raw);
	free(sm);
	return err;
}

static int drop_stale(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
	struct upd *u = arg;
	const char *k = key;
	char *name;
	int err = 0;

	(void)val;
	(void)vlen;
	if (klen < 1)
		return 0;
	if (k[0] == 'N' || k[0] == 'I') {
		if (!(name = strndup0(k + 1, klen - 1)))
			return ENOMEM;
		if (!g_hash_table_contains(u->taken, name))
			err = ser_queue(u->w.del, k[0], name, klen - 1, NULL, 0);
		free(name);
	} else if (k[0] == 'F' && klen == 1 + CACHE_OID_LEN) {
		if (!u->m.n || !bsearch(k + 1, u->m.oids, u->m.n, CACHE_OID_LEN, ser_cmp_oid))
			err = ser_queue(u->w.del, 'F', k + 1, CACHE_OID_LEN, NULL, 0);
	} else if (k[0] == 'T') {
		err = ser_queue(u->w.del, 'T', k + 1, klen - 1, NULL, 0);
	} else if (k[0] == 'W') {       /* a fetch of a thread the view left */
		if (!(name = strndup0(k + 1, klen - 1)))
			return ENOMEM;
		if (!g_hash_table_contains(u->own_mids, name))
			err = ser_queue(u->w.del, 'W', name, klen - 1, NULL, 0);
		free(name);
	}
	return err;
}

/* the length of a names text: names each NUL-terminated, then a NUL */
static size_t names_len(const char *names)
{
	const char *p = names;

	while (*p)
		p += strlen(p) + 1;
	return (size_t)(p - names) + 1;
}

/* the names an unchanged thread gave, if each is still a revision of the
 * last update: they are kept as they are */
static int names_kept(struct upd *u, const char *names)
{
	const char *p;

	for (p = names; *p; p += strlen(p) + 1)
		if (!g_hash_table_lookup(u->old.by_name, p) || g_hash_table_contains(u->taken, p))
			return 0;
	for (p = names; *p; p += strlen(p) + 1) {
		struct old_rev *o = g_hash_table_lookup(u->old.by_name, p);

		o->keep = 1;
		g_hash_table_add(u->taken, strdup(p));
	}
	return 1;
}

/* a thread's signature: the SHA-1 of its messages' oids (in oid order) */
static int group_sig(struct upd *u, const GArray *g, unsigned char sig[20])
{
	unsigned char *oids = malloc(g->len ? g->len * CACHE_OID_LEN : 1);
	guint i;

	if (!oids)
		return ENOMEM;
	for (i = 0; i < g->len; i++)
		memcpy(oids + i * CACHE_OID_LEN,
		       u->m.oids + g_array_index(g, size_t, i) * CACHE_OID_LEN, CACHE_OID_LEN);
	sha1_oids(oids, g->len, sig);
	free(oids);
	return 0;
}

static int update(struct upd *u)
{
	cache_t *c = u->v->cache;
	struct stamp_rec st, old;
	GHashTable *ids = g_hash_table_new(g_str_hash, g_str_equal);
	size_t *parent = NULL, *order = NULL, nids = 0, i, j;
	GPtrArray *put_list, *del_list;
	void *val;
	size_t vlen;
	int err, other = 0;

	/* the view's messages, hidden ones too, and the rest of the threads
	 * it holds part of (its holder's: view-series-fetch.c) */
	if ((err = cache_entry_each(c, u->id, ser_add_oid, &u->own)) ||
	    (err = cache_hidden_each(c, u->id, ser_add_oid, &u->own)) || (err = ser_with_holder(u)))
		goto out;
	memset(&st, 0, sizeof(st));
	st.version = SER_VERSION;
	/* which of them are the view's own counts too: a message it loses
	 * that its holder keeps changes the stamp (its thread may go) */
	st.n = u->m.n + u->own.n;
	{
		unsigned char both[40];

		sha1_oids(u->m.oids, u->m.n, both);
		sha1_oids(u->own.oids, u->own.n, both + 20);
		sha1_oids(both, 40 / CACHE_OID_LEN, st.sig);
	}
	st.mtime = u->now;
	if (!(err = cache_series_get(c, u->id, "S", 1, &val, &vlen))) {
		int same = vlen == sizeof(old) && (memcpy(&old, val, sizeof(old)), 1) &&
			   old.version == SER_VERSION && old.n == st.n &&
			   !memcmp(old.sig, st.sig, 20);

		/* another leifs's threads are read again */
		other = vlen != sizeof(old) || old.version != SER_VERSION;
		free(val);
		if (same)
			goto out;
	} else if (err != ENOENT) {
		goto out;
	}
	err = 0;        /* no stamp yet: a first update (of a view empty so far, too) */
	/* what the last update made, read only now: a listing of a view
	 * that did not change reads the stamp alone */
	if ((err = cache_series_each(c, u->id, "N", 1, add_old, &u->old)) ||
	    (!other && (err = cache_series_each(c, u->id, "T", 1, add_thread, &u->tn))) ||
	    (err = ser_fetch_load(u)))
		goto out;
	/* thread them: every id a message names is one node */
	if (!(u->facts = calloc(u->m.n ? u->m.n : 1, sizeof(*u->facts)))) {
		err = ENOMEM;
		goto out;
	}
	for (i = 0; i < u->m.n; i++) {
		if ((err = get_fact(u->v, u->id, u->m.oids + i * CACHE_OID_LEN, &u->facts[i], &u->w)))
			goto out;
		if (u->facts[i].absent)
			u->absent = 1;
		else if (u->facts[i].nids && ser_own(u, i))
			g_hash_table_add(u->own_mids, u->facts[i].ids[0]);
		for (j = 0; j < u->facts[i].nids; j++)
			if (*u->facts[i].ids[j] && !g_hash_table_contains(ids, u->facts[i].ids[j]))
				g_hash_table_insert(ids, u->facts[i].ids[j],
						    GSIZE_TO_POINTER(u->m.n + nids++));
	}
	/* nodes: messages 0..n-1, then ids */
	if (!(parent = malloc((u->m.n + nids + 1) * sizeof(*parent))) ||
	    !(order = malloc((u->m.n + 1) * sizeof(*order)))) {
		err = ENOMEM;
		goto out;
	}
	for (i = 0; i < u->m.n + nids; i++)
		parent[i] = i;
	for (i = 0; i < u->m.n; i++)
		for (j = 0; j < u->facts[i].nids; j++)
			if (*u->facts[i].ids[j])
				uf_union(parent, i, GPOINTER_TO_SIZE(g_hash_table_lookup(ids, u->facts[i].ids[j])));
	/* threads: messages by root, each in oid order */
	{
		GHashTable *groups = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
							   (GDestroyNotify)g_array_unref);
		GHashTableIter it;
		gpointer k, gv;

		for (i = 0; i < u->m.n; i++) {
			size_t root = uf_find(parent, i);
			GArray *g = g_hash_table_lookup(groups, GSIZE_TO_POINTER(root + 1));

			if (!g) {
				g = g_array_new(FALSE, FALSE, sizeof(size_t));
				g_hash_table_insert(groups, GSIZE_TO_POINTER(root + 1), g);
			}
			g_array_append_val(g, i);
		}
		/* first the threads that did not change keep their names */
		g_hash_table_iter_init(&it, groups);
		while (!err && g_hash_table_iter_next(&it, &k, &gv)) {
			GArray *g = gv;
			unsigned char sig[20];
			char hex[41];
			const char *names;
			int patch = 0, own = 0;

			for (i = 0; i < g->len; i++) {
				patch |= u->facts[g_array_index(g, size_t, i)].patch;
				own |= ser_own(u, g_array_index(g, size_t, i));
			}
			/* the holder's part of a thread the view left goes */
			for (i = 0; !own && !u->absent && i < g->len; i++)
				g_array_append_vals(u->forget, u->m.oids + g_array_index(g, size_t, i) *
						    CACHE_OID_LEN, CACHE_OID_LEN);
			if (!patch || !own) {
				g_hash_table_iter_remove(&it);
				continue;
			}
			if ((err = group_sig(u, g, sig)))
				break;
			for (i = 0; i < 20; i++)
				snprintf(hex + 2 * i, 3, "%02x", sig[i]);
			if (!(names = g_hash_table_lookup(u->tn.by_sig, hex)))
				continue;
			if (!names_kept(u, names))
				continue;
			if ((err = ser_queue(u->w.put, 'T', sig, 20, g_memdup2(names, names_len(names)),
					 names_len(names))))
				break;
			g_hash_table_iter_remove(&it);
		}
		/* then the changed ones */
		g_hash_table_iter_init(&it, groups);
		while (!err && g_hash_table_iter_next(&it, &k, &gv)) {
			GArray *g = gv;
			GString *names = g_string_new(NULL);
			unsigned char sig[20];

			err = do_thread(u, (size_t *)g->data, g->len, names);
			if (!err)
				err = group_sig(u, g, sig);
			if (!err) {
				g_string_append_c(names, '\0');
				err = ser_queue(u->w.put, 'T', sig, 20, g_memdup2(names->str, names->len),
					    names->len);
			}
			g_string_free(names, TRUE);
		}
		g_hash_table_destroy(groups);
	}
	if (err)
		goto out;
	if ((err = ser_write_infos(u)) ||
	    (err = cache_series_each(c, u->id, NULL, 0, drop_stale, u)))
		goto out;
	/* stamped when whole: every message read, and nothing forgotten (the
	 * next update sees the union without it, and stamps that) */
	if (!u->absent && !u->forget->len &&
	    (err = ser_queue(u->w.put, 'S', NULL, 0, g_memdup2(&st, sizeof(st)), sizeof(st))))
		goto out;
	/* deletes first (a stale T record of a thread kept is put again) */
	put_list = u->w.put;
	del_list = u->w.del;
	{
		struct cache_series_rec *p = malloc((put_list->len + 1) * sizeof(*p));
		struct cache_series_rec *d = malloc((del_list->len + 1) * sizeof(*d));

		if (!p || !d) {
			free(p);
			free(d);
			err = ENOMEM;
			goto out;
		}
		for (i = 0; i < put_list->len; i++)
			p[i] = *(struct cache_series_rec *)put_list->pdata[i];
		for (i = 0; i < del_list->len; i++)
			d[i] = *(struct cache_series_rec *)del_list->pdata[i];
		err = cache_series_write(c, u->id, p, put_list->len, d, del_list->len);
		free(p);
		free(d);
	}
	if (!err && u->forget->len)
		err = cache_holder_forget(c, &u->holder, (unsigned char *)u->forget->data,
					  u->forget->len / CACHE_OID_LEN);
out:
	free(parent);
	free(order);
	g_hash_table_destroy(ids);
	return err;
}

/* ---- views.h ---- */

static void upd_free(struct upd *u)
{
	guint i;
	size_t k, j;

	free(u->m.oids);
	free(u->own.oids);
	if (u->has_holder)
		cache_source_release(&u->holder);
	g_array_free(u->forget, TRUE);
	g_hash_table_destroy(u->own_mids);
	if (u->fetches)
		g_hash_table_destroy(u->fetches);
	if (u->facts) {
		for (k = 0; k < u->m.n; k++) {
			for (j = 0; j < u->facts[k].nids; j++)
				free(u->facts[k].ids[j]);
			free(u->facts[k].ids);
		}
		free(u->facts);
	}
	g_ptr_array_free(u->w.put, TRUE);
	g_ptr_array_free(u->w.del, TRUE);
	g_ptr_array_free(u->old.revs, TRUE);
	g_hash_table_destroy(u->old.by_name);
	g_hash_table_destroy(u->tn.by_sig);
	g_hash_table_destroy(u->taken);
	g_ptr_array_free(u->fresh, TRUE);
	g_ptr_array_free(u->fresh_names, TRUE);
	for (i = 0; i < u->revsets->len; i++) {
		struct revset *rs = u->revsets->pdata[i];

		series_revs_free(rs->r, rs->n);
		free(rs);
	}
	g_ptr_array_free(u->revsets, TRUE);
}

int views_series_update(views_t *v, uint64_t id)
{
	struct upd u = { .v = v, .id = id, .now = time(NULL),
			 .lim = { .max_msgs = 5000, .max_patches = 9999 } };
	unsigned i, seen = SERIES_SEEN;
	uint64_t txn;
	int err;

	pthread_mutex_lock(&v->series);
	/* nothing written to the cache since the series were found up to
	 * date: a listing reads no entry (a walk of a big view's is the
	 * cost of a warm `ls series/`) */
	txn = cache_version(v->cache);
	for (i = 0; i < SERIES_SEEN && seen == SERIES_SEEN; i++)
		if (v->series_seen[i].id == id)
			seen = i;
	if (txn && seen < SERIES_SEEN && v->series_seen[seen].txn == txn) {
		pthread_mutex_unlock(&v->series);
		/* a refetch may be due, or a fetch no source answered */
		view_series_fetch_kick(v, id);
		return 0;
	}
	u.w.put = g_ptr_array_new_with_free_func(rec_free);
	u.w.del = g_ptr_array_new_with_free_func(rec_free);
	u.old.revs = g_ptr_array_new_with_free_func(old_free);
	u.old.by_name = g_hash_table_new(g_str_hash, g_str_equal);
	u.tn.by_sig = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	u.taken = g_hash_table_new_full(g_str_hash, g_str_equal, free, NULL);
	u.fresh = g_ptr_array_new();
	u.fresh_names = g_ptr_array_new();     /* owned by taken */
	u.revsets = g_ptr_array_new();
	u.forget = g_array_new(FALSE, FALSE, 1);
	u.own_mids = g_hash_table_new(g_str_hash, g_str_equal);     /* facts' */
	err = update(&u);
	/* up to date as of txn only if nothing at all was written meanwhile
	 * (its own write too: the next listing finds the stamp and says so) */
	if (!err && txn && cache_version(v->cache) == txn) {
		if (seen == SERIES_SEEN)
			seen = v->series_seen_next++ % SERIES_SEEN;
		v->series_seen[seen].id = id;
		v->series_seen[seen].txn = txn;
	}
	pthread_mutex_unlock(&v->series);
	upd_free(&u);
	/* threads to fetch the rest of, queued now or by an earlier mount */
	if (!err)
		view_series_fetch_kick(v, id);
	return err;
}
