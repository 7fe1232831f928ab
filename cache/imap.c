/*
 * The IMAP delivery tables (fs/view-imap.c delivers, this remembers):
 *   imap        view id (8, big-endian) + folder URL + '\0' + oid -> one
 *               byte, CACHE_IMAP_PENDING (an APPEND may have happened) or
 *               CACHE_IMAP_DONE (it did)
 *   imapfolder  view id + folder URL + '\0' -> the folder's UIDVALIDITY
 *               (uint32)
 *   imapcount   view id + folder URL + '\0' -> imapcount_rec: how many of
 *               the folder's records are done, for .status at the same
 *               cost for any folder; changed in the transaction that
 *               changes them (cache_imap_mark counts the records that
 *               become done or stop being done, a new UIDVALIDITY sets 0)
 * A new UIDVALIDITY drops the folder's delivery records in the same
 * transaction, so that the whole view is delivered again.  All three are
 * removed with the view (cache_view_delete).
 *
 * The counter is a table of its own, not a field of imapfolder: an older
 * leifs reads an imapfolder value of any other size than 4 as a new
 * UIDVALIDITY, and would deliver the whole view again.  What it cannot
 * know is the counter: an older leifs run on the cache marks, drops and
 * starts folders over without it.  So a counter holds the generation it
 * is exact in, and only counters of the cache's generation are read.
 *
 * A generation is a random 64-bit number (imap_newgen), never one derived
 * from LMDB's transaction ids: those are no order of time (mdb_copy -c
 * starts them again at 1), so a generation made of one could be trusted
 * wrongly or meet an old counter's.  Nor is trust judged by the order of
 * ids, only by their equality; a generation is trusted when
 *   - this process started it (c->imap_gen, c->imap_started), or
 *   - meta "imap-counts" says {gen, closed} with `closed` the id of the
 *     last transaction committed before the open: this leifs's close
 *     stamped it (cache_imap_close, in the transaction of id `closed`)
 *     and nothing was committed after it.  An older leifs, a crash (the
 *     stamp then says closed 0: a generation in use), a compaction (ids
 *     from 1 again) all leave another last id.
 * Otherwise the first write of this file after the open starts a new
 * generation (put in meta in that transaction), and each folder is counted
 * once by a walk at its next .status, as a folder of a cache from before
 * the counter is (no record).  A copy of the cache restored as it was at a
 * clean close is trusted: its counters are exact for its records.  The one
 * case not seen: a compaction, then exactly as many foreign commits as
 * bring the last id back to the stamp's, then this leifs.  The open itself
 * reads no page of meta (a damaged page waits for its reader).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache-private.h"

#define UNSETTLED UINT64_MAX    /* c->imap_gen before imap_settle */

/* view id + url + '\0' [+ oid]; malloc'd, *len set */
static unsigned char *make_key(uint64_t id, const char *url, const unsigned char *oid,
			       size_t *len)
{
	size_t ul = strlen(url) + 1;
	unsigned char *k = malloc(8 + ul + CACHE_OID_LEN);

	if (!k)
		return NULL;
	cache_key_id(k, id);
	memcpy(k + 8, url, ul);
	*len = 8 + ul;
	if (oid) {
		memcpy(k + 8 + ul, oid, CACHE_OID_LEN);
		*len += CACHE_OID_LEN;
	}
	return k;
}

struct prefix {
	const unsigned char *key;
	size_t len;
};

static enum walk drop_prefixed(void *arg, const MDB_val *k, const MDB_val *d)
{
	const struct prefix *p = arg;

	(void)d;
	return !p || (k->mv_size >= p->len && !memcmp(k->mv_data, p->key, p->len)) ?
	       WALK_DROP : WALK_KEEP;
}

/* drop every delivery record of (id, url); an errno */
static int drop_folder(cache_t *c, MDB_txn *txn, uint64_t id, const char *url)
{
	struct prefix p;
	unsigned char *key = make_key(id, url, NULL, &p.len);
	int rc;

	if (!key)
		return ENOMEM;
	p.key = key;
	rc = cache_walk_prefix(c, txn, c->imap, id, drop_prefixed, &p);
	free(key);
	return rc;
}

static const char trust_key[] = "imap-counts";

/* splitmix64's finaliser: every bit of x moves every bit of the result */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* A new generation: 64 random bits from getrandom(2), retried when a
 * signal interrupts it.  If the kernel has none to give (no getrandom, or
 * its pool not ready yet at boot: GRND_NONBLOCK, for a mount never waits
 * on it), the clocks, the process id and the transaction id mixed: what
 * matters is only that it meets no old counter's generation, and the
 * realtime clock in nanoseconds does not repeat.  Never 0 (a generation
 * of older caches) nor UNSETTLED. */
static uint64_t imap_newgen(MDB_txn *txn)
{
	struct timespec rt = { 0 }, mono = { 0 };
	uint64_t g;
	ssize_t n;

	do {
		do
			n = getrandom(&g, sizeof(g), GRND_NONBLOCK);
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(g)) {
			clock_gettime(CLOCK_REALTIME, &rt);
			clock_gettime(CLOCK_MONOTONIC, &mono);
			g = mix((uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec) ^
			    mix((uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec +
				((uint64_t)getpid() << 32)) ^
			    mix((uint64_t)mdb_txn_id(txn) + (uint64_t)(uintptr_t)&g);
		}
	} while (g == 0 || g == UNSETTLED);
	return g;
}

/* The counters' generation, in a write transaction of this file (writers
 * are serialised): c->imap_gen once settled; else what meta says if it is
 * trusted (see the top of this file); else a new one, put in meta in txn
 * with closed 0 and noted in c->imap_started (another thread may settle
 * on it after the commit, before imap_settled).  imap_settled makes it
 * c->imap_gen once txn is committed.  0 or an errno. */
static int imap_settle(cache_t *c, MDB_txn *txn, uint64_t *gen)
{
	MDB_val k = { sizeof(trust_key) - 1, (void *)trust_key }, d;
	struct imap_trust t;
	int rc;

	if ((*gen = atomic_load(&c->imap_gen)) != UNSETTLED)
		return 0;
	rc = cache_errno(mdb_get(txn, c->meta, &k, &d));
	if (rc && rc != ENOENT)
		return rc;
	if (!rc && d.mv_size == sizeof(t)) {
		memcpy(&t, d.mv_data, sizeof(t));
		/* stamped by this leifs's close, nothing committed since; or
		 * a generation this process started (another thread) */
		if ((t.closed != 0 && t.closed == c->imap_open_last) ||
		    t.gen == c->imap_started) {
			*gen = t.gen;
			return 0;
		}
	}
	t.gen = *gen = c->imap_started = imap_newgen(txn);
	t.closed = 0;
	d.mv_size = sizeof(t);
	d.mv_data = &t;
	return cache_errno(mdb_put(txn, c->meta, &k, &d, 0));
}

static void imap_settled(cache_t *c, uint64_t gen)
{
	atomic_store(&c->imap_gen, gen);
}

/* the counter of the folder whose key (view id + url + '\0') is k: 0 with
 * *done set; ENOENT if there is none, or one not known exact (of another
 * generation, or of a size this leifs does not write) */
static int count_get(cache_t *c, MDB_txn *txn, MDB_val *k, uint64_t gen, uint64_t *done)
{
	struct imapcount_rec r;
	MDB_val d;
	int rc;

	if ((rc = cache_errno(mdb_get(txn, c->imapcount, k, &d))))
		return rc;
	if (d.mv_size != sizeof(r))
		return ENOENT;
	memcpy(&r, d.mv_data, sizeof(r));
	if (r.gen != gen)
		return ENOENT;
	*done = r.done;
	return 0;
}

static int count_put(cache_t *c, MDB_txn *txn, MDB_val *k, uint64_t gen, uint64_t done)
{
	struct imapcount_rec r = { .done = done, .gen = gen };
	MDB_val d = { sizeof(r), &r };

	return cache_errno(mdb_put(txn, c->imapcount, k, &d, 0));
}

/* add delta to the counter at k, if it is known exact (else its walk,
 * later, sees this transaction's records) */
static int count_add(cache_t *c, MDB_txn *txn, MDB_val *k, uint64_t gen, int64_t delta)
{
	uint64_t done;
	int rc = count_get(c, txn, k, gen, &done);

	if (rc)
		return rc == ENOENT ? 0 : rc;
	if (delta < 0 && (uint64_t)-delta > done) {
		/* cannot be while it is exact: counted again by a walk */
		rc = cache_errno(mdb_del(txn, c->imapcount, k, NULL));
		return rc == ENOENT ? 0 : rc;
	}
	return count_put(c, txn, k, gen, done + (uint64_t)delta);
}

/* the done records of the folder whose key is `prefix`, by a walk */
static int count_walk(cache_t *c, MDB_txn *txn, const MDB_val *prefix, uint64_t *done)
{
	MDB_cursor *cur;
	MDB_val k = *prefix, d;
	uint64_t n = 0;
	int rc;

	*done = 0;
	if ((rc = cache_cursor_open(txn, c->imap, &cur)))
		return rc;
	for (rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE));
	     !rc && k.mv_size >= prefix->mv_size &&
	     !memcmp(k.mv_data, prefix->mv_data, prefix->mv_size);
	     rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT))) {
		if (d.mv_size == 1 && *(unsigned char *)d.mv_data == CACHE_IMAP_DONE)
			(*done)++;
		if (++n % DROP_EVERY == 0)
			cache_drop_mappings(c);
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

int cache_imap_folder(cache_t *c, uint64_t id, const char *url, uint32_t uidvalidity,
		      int fresh, int *changed)
{
	MDB_txn *txn;
	MDB_val k, d;
	size_t klen;
	unsigned char *key = make_key(id, url, NULL, &klen);
	uint32_t old = 0;
	uint64_t gen;
	int rc, err;

	*changed = 0;
	if (!key)
		return ENOMEM;
	if ((rc = mdb_txn_begin(c->env, NULL, 0, &txn))) {
		free(key);
		return cache_errno(rc);
	}
	if ((err = cache_view_alive(c, txn, id, NULL)) || (err = imap_settle(c, txn, &gen)))
		goto fail;
	k.mv_size = klen;
	k.mv_data = key;
	rc = mdb_get(txn, c->imapfolder, &k, &d);
	if (!rc && d.mv_size == sizeof(old))
		memcpy(&old, d.mv_data, sizeof(old));
	else if (rc && rc != MDB_NOTFOUND)
		goto fail_rc;
	if (!rc && old == uidvalidity && !fresh) {
		mdb_txn_abort(txn);
		free(key);
		return 0;
	}
	*changed = !rc;         /* a folder made anew, not a first delivery */
	if (rc == MDB_NOTFOUND)
		rc = 0;
	d.mv_size = sizeof(uidvalidity);
	d.mv_data = &uidvalidity;
	/* none is delivered to the folder now: its counter is exact at 0 */
	if ((rc = drop_folder(c, txn, id, url)) ||
	    (rc = mdb_put(txn, c->imapfolder, &k, &d, 0)) ||
	    (rc = count_put(c, txn, &k, gen, 0)))
		goto fail_rc;
	free(key);
	if ((err = cache_errno(mdb_txn_commit(txn))))
		return err;
	imap_settled(c, gen);
	return 0;
fail_rc:
	err = rc == ENOMEM ? ENOMEM : cache_errno(rc);
fail:
	mdb_txn_abort(txn);
	free(key);
	return err;
}

int cache_imap_states(cache_t *c, uint64_t id, const char *url, const unsigned char *oids,
		      size_t n, unsigned char *states)
{
	MDB_txn *txn;
	MDB_val k, d;
	size_t klen, i;
	unsigned char *key = make_key(id, url, oids, &klen);
	int rc, err = 0;

	if (!key)
		return ENOMEM;
	if ((rc = cache_rd_begin(c, &txn))) {
		free(key);
		return cache_errno(rc);
	}
	k.mv_size = klen;
	k.mv_data = key;
	for (i = 0; i < n; i++) {
		memcpy(key + klen - CACHE_OID_LEN, oids + i * CACHE_OID_LEN, CACHE_OID_LEN);
		rc = mdb_get(txn, c->imap, &k, &d);
		if (rc == MDB_NOTFOUND) {
			states[i] = 0;
		} else if (rc || d.mv_size != 1) {
			err = rc ? cache_errno(rc) : EIO;
			break;
		} else {
			states[i] = *(unsigned char *)d.mv_data;
		}
	}
	cache_rd_end(txn);
	free(key);
	return err;
}

int cache_imap_mark(cache_t *c, uint64_t id, const char *url, const unsigned char *oids,
		    size_t n, unsigned char state)
{
	MDB_txn *txn;
	MDB_val k, d, fk;
	size_t klen, i;
	unsigned char *key = make_key(id, url, oids, &klen);
	int64_t delta = 0;
	uint64_t gen;
	int rc = 0, err;

	if (!key)
		return ENOMEM;
	if ((rc = mdb_txn_begin(c->env, NULL, 0, &txn))) {
		free(key);
		return cache_errno(rc);
	}
	/* never records under a removed view */
	if ((err = cache_view_alive(c, txn, id, NULL)) || (err = imap_settle(c, txn, &gen)))
		goto fail;
	k.mv_size = klen;
	k.mv_data = key;
	for (i = 0; i < n; i++) {
		unsigned char was = 0;

		memcpy(key + klen - CACHE_OID_LEN, oids + i * CACHE_OID_LEN, CACHE_OID_LEN);
		if ((rc = mdb_get(txn, c->imap, &k, &d)) && rc != MDB_NOTFOUND) {
			err = cache_errno(rc);
			goto fail;
		}
		if (!rc && d.mv_size == 1)
			was = *(unsigned char *)d.mv_data;
		if (was == state)
			continue;       /* marked so already (or earlier in oids) */
		d.mv_size = 1;
		d.mv_data = &state;
		if ((rc = mdb_put(txn, c->imap, &k, &d, 0))) {
			err = cache_errno(rc);
			goto fail;
		}
		/* only what becomes done, or stops being done, counts */
		delta += (state == CACHE_IMAP_DONE) - (was == CACHE_IMAP_DONE);
	}
	fk.mv_size = klen - CACHE_OID_LEN;      /* the folder's key */
	fk.mv_data = key;
	if (delta && (err = count_add(c, txn, &fk, gen, delta)))
		goto fail;
	free(key);
	if ((err = cache_errno(mdb_txn_commit(txn))))
		return err;
	imap_settled(c, gen);
	return 0;
fail:
	mdb_txn_abort(txn);
	free(key);
	return err;
}

int cache_imap_count(cache_t *c, uint64_t id, const char *url, uint64_t *done)
{
	MDB_txn *txn;
	MDB_val k;
	size_t klen;
	unsigned char *key = make_key(id, url, NULL, &klen);
	uint64_t gen = atomic_load(&c->imap_gen);
	int err;

	*done = 0;
	if (!key)
		return ENOMEM;
	k.mv_size = klen;
	k.mv_data = key;
	if (gen != UNSETTLED) {
		if ((err = cache_rd_begin(c, &txn)))
			goto out;
		err = count_get(c, txn, &k, gen, done);
		cache_rd_end(txn);
		if (err != ENOENT)
			goto out;
	}
	/* not counted in this generation (a cache from before the counter,
	 * or written by an older leifs since): once, by a walk, in a write
	 * transaction, so that no mark comes between the walk and the
	 * counter it leaves */
	if ((err = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		goto out;
	if ((err = imap_settle(c, txn, &gen)))
		goto abort;
	/* no record under a removed view (the walk's count stands); and a
	 * counter that cannot be stored (no room) fails nothing: the count
	 * is right, and the next .status walks again */
	if ((err = count_get(c, txn, &k, gen, done)) == ENOENT &&
	    !(err = count_walk(c, txn, &k, done)) &&
	    (cache_view_alive(c, txn, id, NULL) || count_put(c, txn, &k, gen, *done)))
		goto abort;
	if (err)
		goto abort;
	if (!mdb_txn_commit(txn))
		imap_settled(c, gen);
	goto out;
abort:
	mdb_txn_abort(txn);
out:
	free(key);
	return err;
}

int cache_imap_drop_view(cache_t *c, MDB_txn *txn, uint64_t id)
{
	int rc;

	if ((rc = cache_walk_prefix(c, txn, c->imap, id, drop_prefixed, NULL)) ||
	    (rc = cache_walk_prefix(c, txn, c->imapfolder, id, drop_prefixed, NULL)) ||
	    (rc = cache_walk_prefix(c, txn, c->imapcount, id, drop_prefixed, NULL)))
		return rc;
	return 0;
}

int cache_imap_open(cache_t *c, MDB_txn *txn)
{
	/* a write transaction's id is the last committed one's + 1: only
	 * compared for equality with a stamp's (no page read) */
	c->imap_open_last = mdb_txn_id(txn) - 1;
	c->imap_started = UNSETTLED;
	atomic_store(&c->imap_gen, UNSETTLED);
	return 0;
}

void cache_imap_close(cache_t *c)
{
	MDB_val k = { sizeof(trust_key) - 1, (void *)trust_key }, d;
	struct imap_trust t = { .gen = atomic_load(&c->imap_gen) };
	MDB_txn *txn;

	/* unsettled: meta was not read since the open (the cache may be
	 * damaged), and a new generation is only a walk per folder; a damaged
	 * map is not written (a fault there aborts) */
	if (!c->mounted || t.gen == UNSETTLED || cache_damaged(c, NULL, 0) ||
	    mdb_txn_begin(c->env, NULL, 0, &txn))
		return;
	/* settled on the stamp of the last close, nothing committed since:
	 * that stamp stands */
	if (mdb_txn_id(txn) - 1 == c->imap_open_last) {
		mdb_txn_abort(txn);
		return;
	}
	/* the id this commit takes: the last one at the next open if
	 * nothing else commits (never 0: ids start at 1) */
	t.closed = mdb_txn_id(txn);
	d.mv_size = sizeof(t);
	d.mv_data = &t;
	if (mdb_put(txn, c->meta, &k, &d, 0))
		mdb_txn_abort(txn);
	else
		(void)mdb_txn_commit(txn);
}
