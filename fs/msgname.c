/*
 * Message file names: <date>.<oid>.leifs[,U=N][:2,FLAGS] (msgname.h).
 * Hand-parsed: the grammar is maildir's with leifs's own fields, small and
 * fixed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/msgname.h"

int msgname_parse(const char *name, struct msgname *m)
{
	char *end;
	const char *p;

	memset(m, 0, sizeof(*m));
	if (name[0] < '0' || name[0] > '9')
		return EINVAL;
	m->date = strtoll(name, &end, 10);
	if (*end != '.')
		return EINVAL;
	p = end + 1;
	if (strlen(p) < 2 * CACHE_OID_LEN + 6 || cache_oid_parse(p, m->oid))
		return EINVAL;
	p += 2 * CACHE_OID_LEN;
	if (strncmp(p, ".leifs", 6))
		return EINVAL;
	p += 6;
	if (!strncmp(p, ",U=", 3)) {
		unsigned long u;

		if (p[3] < '1' || p[3] > '9')
			return EINVAL;
		errno = 0;
		u = strtoul(p + 3, &end, 10);
		if (errno || u > UINT32_MAX)
			return EINVAL;
		m->uid = (uint32_t)u;
		p = end;
	}
	if (!*p)
		return 0;
	if (strncmp(p, ":2,", 3))
		return EINVAL;
	m->has_info = 1;
	return cache_flags_parse(p + 3, &m->flags);
}

void msgname_format(const struct cache_entry *e, char *buf, size_t len)
{
	char hex[2 * CACHE_OID_LEN + 1], flags[40], tag[16] = "";

	cache_oid_hex(e->oid, hex);
	if (e->uid)
		snprintf(tag, sizeof(tag), ",U=%" PRIu32, e->uid);
	/* mutt keeps flags of unread mail in new/ ("new/X:2,F") */
	if (e->where == CACHE_CUR || e->flags) {
		cache_flags_format(e->flags, flags);
		snprintf(buf, len, "%" PRId64 ".%s.leifs%s:2,%s", e->date, hex, tag, flags);
	} else {
		snprintf(buf, len, "%" PRId64 ".%s.leifs%s", e->date, hex, tag);
	}
}
