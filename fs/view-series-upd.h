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

struct fact;

struct upd {
	views_t *v;
	uint64_t id;
	struct msgs m;
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

#endif
