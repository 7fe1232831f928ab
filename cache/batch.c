/*
 * Ingest batches: messages gathered in memory, written in one short write
 * transaction, so that no write transaction waits on the network.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache-private.h"

#define BATCH_MAX_BYTES (4u << 20)
#define BATCH_MAX_ITEMS 256

struct item {
	unsigned char oid[CACHE_OID_LEN];
	unsigned char chash[CACHE_CHASH_LEN];
	unsigned char dkey[CACHE_CHASH_LEN];    /* dedupe key */
	int has_dkey;
	int64_t date;
	size_t len;
	char *raw;      /* NULL when the store already has the bytes */
	int borrowed;   /* raw is the caller's (a big message, see add) */
	int touch;      /* the view has it: only mark it seen (full search) */
	uint32_t flags; /* maildir flags of a new entry (flag-hits' F) */
};

struct cache_batch {
	cache_t *c;
	uint64_t view;          /* or the source's id */
	char *source;           /* the source's spec; NULL: a view's batch */
	uint32_t epoch;         /* the view's epoch the batch was made for */
	int to_cur;
	uint32_t gen;
	int full;
	int dedupe;
	struct item *items;
	size_t n, cap, bytes;
	uint64_t added, known;
	uint64_t lookups;
	uint32_t next_flags;    /* for the item cache_batch_add queues next */
	int64_t delta[3];       /* entries added by where, in the flush's txn */
	int share;              /* the view shares flags (keywords.c) */
	unsigned char *held;    /* the view's blob ids when add_stored began,
				 * sorted (see load_held) */
	size_t nheld;
	int held_loaded;
};

void cache_batch_share(cache_batch_t *b, int on)
{
	b->share = on;
}

int cache_batch_new(cache_t *c, uint64_t view, uint32_t epoch, int to_cur, uint32_t gen,
		    int full, int dedupe, cache_batch_t **out)
{
	cache_batch_t *b = calloc(1, sizeof(*b));

	*out = NULL;
	if (!b)
		return ENOMEM;
	b->c = c;
	b->view = view;
	b->epoch = epoch;
	b->to_cur = to_cur;
	b->gen = gen;
	b->full = full;
	b->dedupe = dedupe;
	*out = b;
	return 0;
}

int cache_batch_new_source(cache_t *c, const struct cache_source *s, cache_batch_t **out)
{
	int err = cache_batch_new(c, s->id, 0, 1, 0, 0, CACHE_DEDUPE_NONE, out);

	if (!err && !((*out)->source = strdup(s->spec))) {
		cache_batch_free(*out);
		*out = NULL;
		err = ENOMEM;
	}
	return err;
}

static void drop_items(cache_batch_t *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (!b->items[i].borrowed)
			free(b->items[i].raw);
	b->n = 0;
	b->bytes = 0;
}

void cache_batch_free(cache_batch_t *b)
{
	if (!b)
		return;
	drop_items(b);
	free(b->items);
	free(b->held);
	free(b->source);
	free(b);
}

uint64_t cache_batch_added(const cache_batch_t *b)
{
	return b->added;
}

uint64_t cache_batch_known(const cache_batch_t *b)
{
	return b->known;
}

/* 0 or an errno (a failed read is an error, never taken as "not
 * there": only ENOENT is).  *has: the view has it.  *stored: the store
 * has it (date and content hash then come from its record). */
static int lookup(cache_batch_t *b, struct item *it, int *has, int *stored)
{
	unsigned char key[8 + CACHE_OID_LEN];
	MDB_val k = { CACHE_OID_LEN, it->oid }, d;
	MDB_txn *txn;
	int rc;

	*has = *stored = 0;
	if ((rc = cache_rd_begin(b->c, &txn)))
		return rc;
	if (!(rc = cache_errno(mdb_get(txn, b->c->msg, &k, &d))) &&
	    d.mv_size >= sizeof(struct msg_rec)) {
		struct msg_rec r;

		memcpy(&r, d.mv_data, sizeof(r));
		it->date = r.date;
		memcpy(it->chash, r.chash, CACHE_CHASH_LEN);
		*stored = 1;
	} else if (rc && rc != ENOENT) {
		cache_rd_end(txn);
		return rc;
	}
	cache_key_id(key, b->view);
	memcpy(key + 8, it->oid, CACHE_OID_LEN);
	k.mv_size = sizeof(key);
	k.mv_data = key;
	rc = cache_errno(mdb_get(txn, b->c->entry, &k, &d));
	cache_rd_end(txn);
	if (rc && rc != ENOENT)
		return rc;
	*has = rc == 0;
	return 0;
}

/* the key this view's strategy dedupes by */
static void dedupe_key(cache_batch_t *b, struct item *it, const char *raw, size_t len)
{
	it->has_dkey = 1;
	switch (b->dedupe) {
	case CACHE_DEDUPE_CONTENT:
		memcpy(it->dkey, it->chash, CACHE_CHASH_LEN);
		break;
	case CACHE_DEDUPE_MID:
		/* as lei: no Message-ID, then the blob id stands for it */
		if (cache_mail_mid(raw, len, it->dkey))
			EVP_Digest(it->oid, CACHE_OID_LEN, it->dkey, NULL, EVP_sha256(), NULL);
		break;
	default:
		it->has_dkey = 0;       /* entries are keyed by blob id already */
	}
}

/* the item into the batch (its raw taken over), flushed when full */
static int queue(cache_batch_t *b, struct item *it)
{
	int rc;

	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct item *p = realloc(b->items, cap * sizeof(*p));

		if (!p) {
			if (!it->borrowed)
				free(it->raw);
			return ENOMEM;
		}
		b->items = p;
		b->cap = cap;
	}
	b->items[b->n++] = *it;
	if (b->bytes >= BATCH_MAX_BYTES || b->n >= BATCH_MAX_ITEMS) {
		rc = cache_batch_flush(b);
		if (it->borrowed && b->n)
			drop_items(b);  /* not kept past the caller's bytes */
		return rc;
	}
	return 0;
}

int cache_batch_add(cache_batch_t *b, const char *raw, size_t len)
{
	struct item it = { .len = len, .flags = b->next_flags };
	int has, stored, rc;

	cache_oid(raw, len, it.oid);
	if (++b->lookups % DROP_EVERY == 0)
		cache_drop_mappings(b->c);
	if ((rc = lookup(b, &it, &has, &stored)))
		return rc;
	if (has) {
		b->known++;
		if (!b->full)
			return 0;
		it.touch = 1;
		if (!stored)
			return 0;       /* cannot be: an entry holds its message */
	} else if (!stored) {
		if (cache_mail_info(raw, len, &it.date, it.chash)) {
			/* unparseable: keep it, never dedupe it */
			EVP_Digest(it.oid, CACHE_OID_LEN, it.chash, NULL,
				   EVP_sha256(), NULL);
			it.date = 0;
		}
		if (it.date <= 0)
			it.date = 0;
		if (len >= BATCH_MAX_BYTES) {
			/* a big message is written alone, from the caller's
			 * bytes: no copy of what may be max_message long */
			if ((rc = cache_batch_flush(b)))
				return rc;
			it.raw = (char *)raw;
			it.borrowed = 1;
		} else if (!(it.raw = malloc(len ? len : 1))) {
			return ENOMEM;
		} else {
			memcpy(it.raw, raw, len);
		}
		b->bytes += len;
	}
	dedupe_key(b, &it, raw, len);
	return queue(b, &it);
}

int cache_batch_add_stored(cache_batch_t *b, const unsigned char *oid)
{
	return cache_batch_add_stored_flags(b, oid, 0);
}

/* A local search answers every hit of its query again at each refresh
 * (200,000 at a time): a lookup each (a read transaction, two b-tree
 * descents whose pages fault back in after every drop of the mappings)
 * cost ~100 us a hit.  So the view's blob ids are read once, in one walk
 * of its entries (keyed view id + blob id: already sorted), and a hit the
 * view held then is known at the cost of a binary search; any other is
 * looked up as before, so what was written since is seen.  Hidden
 * entries are held too: the view has them. */
#define HELD_AFTER 256
static int load_held(cache_batch_t *b)
{
	unsigned char pfx[8];
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, d;
	size_t cap = 0, n = 0;
	int rc, err = 0;

	b->held_loaded = 1;
	cache_key_id(pfx, b->view);
	if ((rc = cache_rd_begin(b->c, &txn)))
		return rc;
	if ((rc = cache_cursor_open(txn, b->c->entry, &cur))) {
		cache_rd_end(txn);
		return rc;
	}
	k.mv_size = sizeof(pfx);
	k.mv_data = pfx;
	rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE));
	while (!rc && k.mv_size == 8 + CACHE_OID_LEN && !memcmp(k.mv_data, pfx, 8)) {
		if (n == cap) {
			unsigned char *p;

			cap = cap ? 2 * cap : 1024;
			if (!(p = realloc(b->held, cap * CACHE_OID_LEN))) {
				err = ENOMEM;
				break;
			}
			b->held = p;
		}
		memcpy(b->held + n++ * CACHE_OID_LEN, (const char *)k.mv_data + 8, CACHE_OID_LEN);
		rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT));
		if (n % (16 * DROP_EVERY) == 0)
			cache_drop_mappings(b->c);
	}
	if (!err && rc && rc != ENOENT)
		err = rc;
	cache_cursor_close(cur);
	cache_rd_end(txn);
	cache_drop_mappings(b->c);
	b->nheld = err ? 0 : n;
	return err;
}

static int cmp_oid(const void *a, const void *b)
{
	return memcmp(a, b, CACHE_OID_LEN);
}

int cache_batch_add_stored_flags(cache_batch_t *b, const unsigned char *oid, uint32_t flags)
{
	struct item it = { .flags = flags };
	int has, stored, rc;
	char *raw = NULL;

	/* after a few lookups: a search that answers a few (what came since
	 * its last one) need not walk the whole view */
	if (!b->full && !b->source && b->lookups >= HELD_AFTER) {
		if (!b->held_loaded && (rc = load_held(b)))
			return rc;
		if (b->nheld && bsearch(oid, b->held, b->nheld, CACHE_OID_LEN, cmp_oid)) {
			b->known++;
			return 0;
		}
	}
	memcpy(it.oid, oid, CACHE_OID_LEN);
	if (++b->lookups % DROP_EVERY == 0)
		cache_drop_mappings(b->c);
	if ((rc = lookup(b, &it, &has, &stored)))
		return rc;
	if (has) {
		b->known++;
		if (!b->full)
			return 0;
		it.touch = 1;
	}
	if (!stored)
		return ENOENT;
	/* the store has the bytes: the item carries its record's date and
	 * hash; only a Message-ID dedupe needs the message itself */
	if (b->dedupe == CACHE_DEDUPE_MID) {
		if ((rc = cache_msg_get(b->c, oid, &raw, &it.len)))
			return rc;
	} else if ((rc = cache_msg_size(b->c, oid, &it.len))) {
		return rc;
	}
	dedupe_key(b, &it, raw, it.len);
	free(raw);
	return queue(b, &it);
}

/* Take the item's dedupe key for it: *other is set if another copy
 * holds it, else the key is (now) the item's; 0 or an errno. */
static int claim(cache_batch_t *b, MDB_txn *txn, const struct item *it, int *other)
{
	unsigned char key[8 + CACHE_CHASH_LEN];
	MDB_val k = { sizeof(key), key }, d;
	int rc;

	*other = 0;
	cache_key_id(key, b->view);
	memcpy(key + 8, it->dkey, CACHE_CHASH_LEN);
	rc = cache_errno(mdb_get(txn, b->c->dedupe, &k, &d));
	if (rc == 0) {
		*other = d.mv_size != CACHE_OID_LEN || memcmp(d.mv_data, it->oid, CACHE_OID_LEN);
		return 0;
	}
	if (rc != ENOENT)
		return rc;
	d.mv_size = CACHE_OID_LEN;
	d.mv_data = (void *)it->oid;
	return cache_errno(mdb_put(txn, b->c->dedupe, &k, &d, 0));
}

static int put_item(cache_batch_t *b, MDB_txn *txn, const struct item *it)
{
	unsigned char ekey[8 + CACHE_OID_LEN];
	MDB_val k = { sizeof(ekey), ekey }, d;
	struct entry_rec er = {
		.date = it->date, .size = it->len, .gen = b->gen,
		.where = b->to_cur ? CACHE_CUR : CACHE_NEW, .flags = it->flags,
	};
	int rc, other;

	cache_key_id(ekey, b->view);
	memcpy(ekey + 8, it->oid, CACHE_OID_LEN);
	if ((rc = cache_errno(mdb_get(txn, b->c->entry, &k, &d))) != ENOENT) {
		if (rc || d.mv_size != sizeof(er))
			return rc ? rc : EIO;
		if (!it->touch)
			b->known++;     /* twice in one answer */
		if (!b->full)
			return 0;
		memcpy(&er, d.mv_data, sizeof(er));
		if (er.gen == b->gen)
			return 0;
		/* another copy holds its dedupe key: this one goes at the sweep */
		if (it->has_dkey && ((rc = claim(b, txn, it, &other)) || other))
			return rc;
		er.gen = b->gen;        /* seen by this full search: it stays */
		d.mv_size = sizeof(er);
		d.mv_data = &er;
		return cache_errno(mdb_put(txn, b->c->entry, &k, &d, 0));
	}
	if (it->touch)
		return 0;       /* the view lost it meanwhile (a limit): nothing to mark */
	if (it->has_dkey && ((rc = claim(b, txn, it, &other)) || other))
		return rc;      /* other: a copy is in the view already */
	/* back in the view: as the user left it */
	if (!(rc = cache_errno(mdb_get(txn, b->c->away, &k, &d))) &&
	    d.mv_size == sizeof(struct away_rec)) {
		struct away_rec a;

		memcpy(&a, d.mv_data, sizeof(a));
		er.where = a.where;
		er.was = a.was;
		er.flags = a.flags;
		er.uid = a.uid;
		if ((rc = cache_errno(mdb_del(txn, b->c->away, &k, NULL))))
			return rc;
	} else if (rc && rc != ENOENT) {
		return rc;
	}
	if (b->share) {
		uint32_t kw;

		/* what another view made of the message counts here too */
		if ((rc = cache_kw_read(b->c, txn, it->oid, &kw)))
			return rc;
		/* what it has now: a message back has it already (its record
		 * followed the changes made meanwhile: cache_entry_update_shared), a new
		 * one keeps a flagged hit's F (lei q -tt) besides */
		er.flags |= kw;
		if (er.where == CACHE_NEW && (er.flags & CACHE_FLAG_SEEN))
			er.where = CACHE_CUR;
	}
	if (it->raw) {
		struct msg_rec mr = { .magic = MSG_REC_MAGIC, .date = it->date };

		memcpy(mr.chash, it->chash, CACHE_CHASH_LEN);
		k.mv_size = CACHE_OID_LEN;
		k.mv_data = (void *)it->oid;
		d.mv_size = sizeof(mr) + it->len;
		rc = cache_errno(mdb_put(txn, b->c->msg, &k, &d, MDB_NOOVERWRITE | MDB_RESERVE));
		if (rc == 0) {
			memcpy(d.mv_data, &mr, sizeof(mr));
			memcpy((char *)d.mv_data + sizeof(mr), it->raw, it->len);
		} else if (rc != EEXIST) {
			return rc;
		}
	}
	k.mv_size = sizeof(ekey);
	k.mv_data = ekey;
	d.mv_size = sizeof(er);
	d.mv_data = &er;
	if ((rc = cache_errno(mdb_put(txn, b->c->entry, &k, &d, 0))) ||
	    (rc = cache_ref(b->c, txn, it->oid, 1)))
		return rc;
	b->delta[er.where < 3 ? er.where : CACHE_NEW]++;
	b->added++;
	return 0;
}

int cache_batch_flush(cache_batch_t *b)
{
	MDB_txn *txn;
	uint64_t added = b->added, known = b->known;
	uint32_t epoch;
	size_t i;
	int rc;

	if (!b->n)
		return 0;
	if ((rc = cache_errno(mdb_txn_begin(b->c->env, NULL, 0, &txn))))
		return rc;
	/* nothing goes under a view removed, or searched anew, meanwhile;
	 * nor under a source removed */
	epoch = b->epoch;
	if ((rc = b->source ? cache_source_alive(b->c, txn, b->source, b->view) :
		  cache_view_alive(b->c, txn, b->view, &epoch)) || epoch != b->epoch) {
		mdb_txn_abort(txn);
		drop_items(b);
		return rc && rc != ENOENT ? rc : ECANCELED;
	}
	memset(b->delta, 0, sizeof(b->delta));
	for (i = 0; i < b->n; i++) {
		if ((rc = put_item(b, txn, &b->items[i])))
			break;
		if (i % DROP_EVERY == DROP_EVERY - 1)
			cache_drop_mappings(b->c);
	}
	if (!rc && !b->source)  /* a source's entries are counted by no one */
		rc = cache_count_add(b->c, txn, b->view, b->delta);
	if (rc) {
		mdb_txn_abort(txn);
		b->added = added;       /* nothing of this batch was written */
		b->known = known;
		return rc;
	}
	if ((rc = cache_errno(mdb_txn_commit(txn)))) {
		b->added = added;
		b->known = known;
		return rc;
	}
	drop_items(b);
	cache_drop_mappings(b->c);
	return 0;
}
