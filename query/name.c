/*
 * View names <-> query text.  Written by hand: the coding is two escapes
 * and no URI library encodes exactly that set (a full percent-decoder would
 * give one query several names, and names must be unique per view).
 */
#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/query.h"

int query_name_decode(const char *name, char **out, const char **why)
{
	size_t n = strlen(name), i, o = 0;
	int blank = 1;
	char *q;

	*out = NULL;
	if (n == 0) {
		if (why)
			*why = "empty query";
		return EINVAL;
	}
	q = malloc(n + 1);
	if (!q)
		return ENOMEM;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c < 0x20 || c == 0x7f) {
			if (why)
				*why = "control character in query";
			goto bad;
		}
		if (c == '%') {
			if (!strncmp(name + i, "%2F", 3))
				c = '/';
			else if (!strncmp(name + i, "%25", 3))
				c = '%';
			else if (!strncasecmp(name + i, "%2F", 3)) {
				/* "%2f" would be a second name of the view
				 * "%2F" names: one query, one name */
				if (why)
					*why = "bad escape: write %2F, not %2f";
				goto bad;
			} else {
				if (why)
					*why = "bad escape: only %2F and %25 are allowed";
				goto bad;
			}
			i += 2;
		}
		if (c != ' ')
			blank = 0;
		q[o++] = (char)c;
	}
	q[o] = '\0';
	/* public-inbox reads queries as UTF-8; a stray byte would reach the
	 * server as a different query than the name shows */
	if (!g_utf8_validate(q, (gssize)o, NULL)) {
		if (why)
			*why = "query is not valid UTF-8";
		goto bad;
	}
	if (blank) {
		if (why)
			*why = "blank query";
		goto bad;
	}
	*out = q;
	return 0;
bad:
	free(q);
	return EINVAL;
}

int query_name_encode(const char *query, char **out)
{
	size_t n = strlen(query), i, o = 0;
	char *s = malloc(3 * n + 1);

	*out = NULL;
	if (!s)
		return ENOMEM;
	for (i = 0; i < n; i++) {
		if (query[i] == '/') {
			memcpy(s + o, "%2F", 3);
			o += 3;
		} else if (query[i] == '%') {
			memcpy(s + o, "%25", 3);
			o += 3;
		} else {
			s[o++] = query[i];
		}
	}
	s[o] = '\0';
	if (o > NAME_MAX) {
		free(s);
		return ENAMETOOLONG;
	}
	*out = s;
	return 0;
}
