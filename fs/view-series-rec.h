/*
 * The records of a view's series table (view-series.c writes them,
 * view-series-read.c serves them; the keys are view-series.c's header's).
 */
#ifndef LEIFS_VIEW_SERIES_REC_H
#define LEIFS_VIEW_SERIES_REC_H

#include <stdint.h>

#define SER_MAGIC 0x73657231u   /* "ser1" */

struct ser_rec {
	uint32_t magic;
	int32_t revision;
	int64_t mtime;          /* when its am.mbx or cover last changed */
	int64_t date;
	uint32_t midlen, cidlen, subjlen, amlen, coverlen, has_cover;
};

/* bumped when what series.c makes of a thread changes: a table made by
 * another leifs is made again (names kept) */
#define SER_VERSION 3u

struct stamp_rec {
	uint32_t version;
	uint32_t pad;
	uint64_t n;
	unsigned char sig[20];
	int64_t mtime;
};

#endif
