/*
 * Maildir names of message files: <date>.<oid>.leifs in new/ (with ":2,FLAGS"
 * only when there are flags, as mutt keeps flagged unread mail), and
 * <date>.<oid>.leifs:2,FLAGS in cur/; mbsync's ",U=N" tag may stand before
 * the info.  A name is one entry's state, so parse(format(e)) gives e back.
 */
#ifndef LEIFS_MSGNAME_H
#define LEIFS_MSGNAME_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"

struct msgname {
	int64_t date;
	unsigned char oid[CACHE_OID_LEN];
	uint32_t uid;           /* ",U=N" (mbsync), 0: none */
	int has_info;           /* ":2," present */
	uint32_t flags;
};

/* 0, or EINVAL for a name that is not one leifs makes */
int msgname_parse(const char *name, struct msgname *m);
/* the name of entry e, in buf[len] */
void msgname_format(const struct cache_entry *e, char *buf, size_t len);

#endif
