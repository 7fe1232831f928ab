/*
 * What view-series.c's update shares with view-series-info.c.
 */
#ifndef LEIFS_VIEW_SERIES_UPD_H
#define LEIFS_VIEW_SERIES_UPD_H

#include <glib.h>
#include <stdint.h>

#include "cache/series.h"
#include "fs/views.h"

struct msgs {
	unsigned char *oids;    /* n * CACHE_OID_LEN, sorted */
	size_t n, cap;
};

struct writes {
	GPtrArray *put, *del;   /* of struct cache_series_rec *, owning key and val */
};

struct old_rev {
	char *name;
	char *msgid;
	int revision;
	int64_t mtime;
	char *change_id, *subject;
	int64_t date;
	int keep;               /* its thread did not change */
	int live;               /* named in this update */
};

struct olds {
	GPtrArray *revs;        /* of struct old_rev * */
	GHashTable *by_name;    /* name -> struct old_rev * */
};

/* "T" records: the names each unchanged thread gave */
struct thread_names {
	GHashTable *by_sig;     /* 20-byte sig (as a string key, hex) -> names text */
};

/* a message's threading fact */
struct fact {
	int patch;
	int absent;             /* its message is not in the cache (yet) */
	char **ids;             /* [0]: its Message-ID */
	size_t nids;
};

/* the thread fetches of a view (view-series-fetch.c), "W" + Message-ID */
struct fetch_rec {
	uint32_t magic;
	uint32_t got;           /* messages its last fetch brought */
	int64_t fetched;        /* when it was last fetched; 0: to fetch */
	int64_t date;           /* the newest revision's date, when asked */
	unsigned char vsig[20]; /* SHA-1 of the view's own messages of the
				 * thread, when asked: a change asks again */
};
#define FETCH_MAGIC 0x4c465731u

struct upd {
	views_t *v;
	uint64_t id;
	struct msgs m;          /* the view's messages and its holder's */
	struct msgs own;        /* the view's own (hidden ones too) */
	struct cache_source holder;  /* its holder, when it has one */
	int has_holder;
	GArray *forget;         /* holder messages of threads the view left
				 * (oids, CACHE_OID_LEN each) */
	GHashTable *own_mids;   /* the Message-IDs of the view's own */
	int absent;             /* a message not stored yet: nothing is
				 * forgotten, nothing stamped */
	GHashTable *fetches;    /* Message-ID -> struct fetch_rec * (loaded) */
	struct fact *facts;
	struct writes w;
	struct olds old;
	struct thread_names tn;
	GHashTable *taken;      /* names of this update -> 1 */
	GPtrArray *fresh;       /* struct series_rev * made now (owned by revs) */
	GPtrArray *fresh_names; /* their names (char *) */
	GPtrArray *revsets;     /* struct revset *: what to free */
	int64_t now;
	struct series_limits lim;
};

/* a record to write (put) or delete: key kind + sub, val owned */
int ser_queue(GPtrArray *a, char kind, const void *sub, size_t slen, void *val, size_t vlen);
/* the I record of every revision of this update and of those kept */
int ser_write_infos(struct upd *u);
/* cache_entry_each's fn: an oid into struct msgs; their order */
int ser_add_oid(void *arg, const struct cache_entry *e);
int ser_cmp_oid(const void *a, const void *b);

/* view-series-fetch.c: u->m, the view's own messages (u->own, sorted
 * now) and its holder's, sorted, each once; whether message i of u->m is
 * the view's own (not only its holder's) */
int ser_with_holder(struct upd *u);
int ser_own(const struct upd *u, size_t i);

/* view-series-fetch.c: the "W" records of the view, into u->fetches */
int ser_fetch_load(struct upd *u);
/* A thread whose revisions (r, nr) lack a patch, or whose messages
 * (idx, n: indexes into u->m) reply to one the view lacks: a fetch of
 * it is queued, unless the view's share of it was asked for already. */
int ser_fetch_consider(struct upd *u, const size_t *idx, size_t n, const struct series_rev *r,
		       size_t nr);

#endif
