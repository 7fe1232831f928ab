/*
 * Message inodes (msgnodes.h): records in slabs of SLAB records, found by
 * slot from the inode number and by (view, oid) through a chained hash of
 * slot numbers.  Free records are chained for reuse; slabs are never
 * given back (a view's files come back at the next grep, and a slab is
 * 224 KiB).  The views that have records are counted in a small table,
 * so that the views holding one message are found by a probe each.  Written by hand: a GHashTable costs two pointers and a hash a
 * bucket, and each value would still be a malloc of its own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fs/msgnodes.h"

#define SLAB_BITS 12
#define SLAB (1u << SLAB_BITS)
#define MAX_SLOTS ((uint32_t)1 << 30)

struct rec {
	uint64_t vid;
	int64_t date;                   /* the entry's, at the last lookup */
	unsigned char oid[CACHE_OID_LEN];
	uint32_t nlookup;               /* stays at UINT32_MAX once there (the
					 * record is kept: never freed early) */
	uint16_t refs;                  /* handlers hold few at once */
	uint16_t sweep;                 /* its view's sweeps at the last lookup */
	uint32_t gen;                   /* bumped each time the slot is freed */
	uint32_t next;                  /* hash chain, or the free chain: slot + 1 */
	uint32_t size;                  /* likewise; UINT32_MAX: larger */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rec **slabs;      /* all below protected by lock */
static uint32_t nslabs, used;   /* slots handed out so far */
static uint32_t free_head;      /* slot + 1; 0: none */
static uint32_t *buckets;       /* slot + 1; 0: empty */
static uint32_t nbuckets;       /* a power of two, or 0 */
static size_t live;
static struct vcount {
	uint64_t vid;
	size_t n;                       /* live records of the view */
	uint16_t sweep;                 /* sweeps that dropped entries, mod 2^16 */
} *views;
static size_t nviews;

static struct vcount *view_of(uint64_t vid)
{
	size_t i;

	for (i = 0; i < nviews; i++)
		if (views[i].vid == vid)
			return &views[i];
	return NULL;
}

/* count one more (d 1) or one fewer (d -1) record of vid; 0 or ENOMEM */
static int count_view(uint64_t vid, int d)
{
	size_t i;

	for (i = 0; i < nviews && views[i].vid != vid; i++)
		;
	if (i == nviews) {
		struct vcount *t;

		if (d < 0 || !(t = realloc(views, (nviews + 1) * sizeof(*t))))
			return ENOMEM;
		views = t;
		views[nviews].vid = vid;
		views[nviews].sweep = 0;
		views[nviews++].n = 0;
	}
	if (d > 0)
		views[i].n++;
	else if (!--views[i].n)
		views[i] = views[--nviews];
	return 0;
}

static struct rec *at(uint32_t slot)
{
	return &slabs[slot >> SLAB_BITS][slot & (SLAB - 1)];
}

static uint32_t hash(uint64_t vid, const unsigned char *oid)
{
	uint32_t h;

	memcpy(&h, oid, sizeof(h));     /* an object id is already a hash */
	return h ^ (uint32_t)(vid * 2654435761u);
}

/* The low half is the slot xor the generation: a 32-bit kernel folds an
 * inode number to its two halves xored (fuse_squash_ino), which gives
 * slot ^ 1 << 30 here, one number a live record, none of them below 2^30
 * where the other inodes are. */
static uint64_t ino_of(uint32_t slot, const struct rec *r)
{
	return MSGNODE_BIT | (uint64_t)r->gen << 32 | (slot ^ r->gen);
}

/* the live record of ino, or NULL */
static struct rec *find_ino(uint64_t ino, uint32_t *slot)
{
	struct rec *r;

	uint32_t gen = (uint32_t)(ino >> 32) & 0x3fffffff;

	if (!msgnodes_is(ino) || ((uint32_t)ino ^ gen) >= used)
		return NULL;
	*slot = (uint32_t)ino ^ gen;
	r = at(*slot);
	if (r->gen != gen || (!r->nlookup && !r->refs))
		return NULL;
	return r;
}

static int grow_buckets(void)
{
	uint32_t n = nbuckets ? 2 * nbuckets : 1024, i, *b;

	if (!(b = calloc(n, sizeof(*b))))
		return ENOMEM;
	for (i = 0; i < used; i++) {
		struct rec *r = at(i);
		uint32_t h;

		if (!r->nlookup && !r->refs)
			continue;
		h = hash(r->vid, r->oid) & (n - 1);
		r->next = b[h];
		b[h] = i + 1;
	}
	free(buckets);
	buckets = b;
	nbuckets = n;
	return 0;
}

/* a slot for a new record, or -1 */
static int64_t new_slot(void)
{
	uint32_t slot;

	if (free_head) {
		slot = free_head - 1;
		free_head = at(slot)->next;
		return slot;
	}
	if (used == MAX_SLOTS)
		return -1;
	if (used == nslabs * SLAB) {
		struct rec **s = realloc(slabs, (nslabs + 1) * sizeof(*s));

		if (!s)
			return -1;
		slabs = s;
		if (!(slabs[nslabs] = calloc(SLAB, sizeof(struct rec))))
			return -1;
		nslabs++;
	}
	return used++;
}

static void set_attr(struct rec *r, int64_t date, uint64_t size)
{
	r->date = date;
	r->size = size < UINT32_MAX ? (uint32_t)size : UINT32_MAX;
}

uint64_t msgnodes_lookup(uint64_t vid, const unsigned char *oid, int64_t date, uint64_t size)
{
	uint32_t slot, h;
	int64_t s;
	struct rec *r;
	uint64_t ino = 0;

	pthread_mutex_lock(&lock);
	if (live >= nbuckets && grow_buckets() && !nbuckets)
		goto out;       /* else longer chains until memory comes back */
	h = hash(vid, oid) & (nbuckets - 1);
	for (slot = buckets[h]; slot; slot = r->next) {
		r = at(slot - 1);
		if (r->vid == vid && !memcmp(r->oid, oid, CACHE_OID_LEN)) {
			if (r->nlookup < UINT32_MAX)
				r->nlookup++;
			set_attr(r, date, size);
			r->sweep = view_of(vid)->sweep;
			ino = ino_of(slot - 1, r);
			goto out;
		}
	}
	if (count_view(vid, 1))
		goto out;
	if ((s = new_slot()) < 0) {
		count_view(vid, -1);
		goto out;
	}
	r = at((uint32_t)s);
	r->vid = vid;
	memcpy(r->oid, oid, CACHE_OID_LEN);
	r->nlookup = 1;
	r->refs = 0;
	set_attr(r, date, size);
	r->sweep = view_of(vid)->sweep;
	r->next = buckets[h];
	buckets[h] = (uint32_t)s + 1;
	live++;
	ino = ino_of((uint32_t)s, r);
out:
	pthread_mutex_unlock(&lock);
	return ino;
}

int msgnodes_get(uint64_t ino, uint64_t *vid, unsigned char oid[CACHE_OID_LEN],
		 int64_t *date, uint64_t *size)
{
	struct rec *r;
	uint32_t slot;

	pthread_mutex_lock(&lock);
	if ((r = find_ino(ino, &slot)) && r->refs == UINT16_MAX)
		r = NULL;       /* not met: a hold is one request's */
	if (r) {
		struct vcount *vc = view_of(r->vid);

		r->refs++;
		*vid = r->vid;
		memcpy(oid, r->oid, CACHE_OID_LEN);
		*date = r->date;
		/* a sweep since its lookup may have dropped it: ask the cache */
		*size = r->size < UINT32_MAX && vc && vc->sweep == r->sweep ?
			r->size : UINT64_MAX;
	}
	pthread_mutex_unlock(&lock);
	return r ? 0 : ENOENT;
}

/* lock held: unchain and free r if nothing holds it */
static void maybe_free(struct rec *r, uint32_t slot)
{
	uint32_t *p;

	if (r->nlookup || r->refs)
		return;
	for (p = &buckets[hash(r->vid, r->oid) & (nbuckets - 1)]; *p; p = &at(*p - 1)->next)
		if (*p == slot + 1) {
			*p = r->next;
			break;
		}
	r->gen = (r->gen + 1) & 0x3fffffff;
	r->next = free_head;
	free_head = slot + 1;
	live--;
	count_view(r->vid, -1);
}

void msgnodes_put(uint64_t ino)
{
	struct rec *r;
	uint32_t slot;

	pthread_mutex_lock(&lock);
	if ((r = find_ino(ino, &slot)) && r->refs) {
		r->refs--;
		maybe_free(r, slot);
	}
	pthread_mutex_unlock(&lock);
}

void msgnodes_forget(uint64_t ino, uint64_t count)
{
	struct rec *r;
	uint32_t slot;

	pthread_mutex_lock(&lock);
	if ((r = find_ino(ino, &slot))) {
		if (r->nlookup < UINT32_MAX)
			r->nlookup = r->nlookup > count ? r->nlookup - (uint32_t)count : 0;
		maybe_free(r, slot);
	}
	pthread_mutex_unlock(&lock);
}

int msgnodes_view_inos(uint64_t vid, uint64_t **a, size_t *n, size_t *cap)
{
	uint32_t i;
	int err = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; i < used && !err; i++) {
		struct rec *r = at(i);

		if ((!r->nlookup && !r->refs) || r->vid != vid)
			continue;
		if (*n == *cap) {
			size_t c = *cap ? 2 * *cap : 16;
			uint64_t *t = realloc(*a, c * sizeof(*t));

			if (!t) {
				err = ENOMEM;
				break;
			}
			*a = t;
			*cap = c;
		}
		(*a)[(*n)++] = ino_of(i, r);
	}
	pthread_mutex_unlock(&lock);
	return err;
}

long msgnodes_views_of(const unsigned char *oid, uint64_t skip, uint64_t **vids)
{
	uint64_t *a = NULL;
	size_t i, n = 0;
	uint32_t h, slot;

	pthread_mutex_lock(&lock);
	if (nviews && !(a = malloc(nviews * sizeof(*a)))) {
		pthread_mutex_unlock(&lock);
		*vids = NULL;
		return -1;
	}
	for (i = 0; i < nviews && nbuckets; i++) {
		struct rec *r;

		if (views[i].vid == skip)
			continue;
		h = hash(views[i].vid, oid) & (nbuckets - 1);
		for (slot = buckets[h]; slot; slot = r->next) {
			r = at(slot - 1);
			if (r->vid == views[i].vid && !memcmp(r->oid, oid, CACHE_OID_LEN)) {
				if (r->nlookup)
					a[n++] = r->vid;
				break;
			}
		}
	}
	pthread_mutex_unlock(&lock);
	if (!n) {
		free(a);
		a = NULL;
	}
	*vids = a;
	return (long)n;
}

void msgnodes_swept(uint64_t vid)
{
	struct vcount *vc;

	pthread_mutex_lock(&lock);
	if ((vc = view_of(vid)))
		vc->sweep++;
	pthread_mutex_unlock(&lock);
}

size_t msgnodes_count(void)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = live;
	pthread_mutex_unlock(&lock);
	return n;
}

void msgnodes_destroy(void)
{
	pthread_mutex_lock(&lock);
	while (nslabs)
		free(slabs[--nslabs]);
	free(slabs);
	free(buckets);
	free(views);
	slabs = NULL;
	buckets = NULL;
	views = NULL;
	nviews = 0;
	nbuckets = used = free_head = 0;
	live = 0;
	pthread_mutex_unlock(&lock);
}
