/*
 * The grammar of a source, read here and nowhere else (net.h): a
 * public-inbox URL, "cache:" and a URL, or an archive on disk,
 * "[TYPE:]/absolute/path" (the TYPE prefixes are archive.c's).
 */
#include <errno.h>
#include <string.h>

#include "net/net.h"

static int is_url(const char *v)
{
	return !strncmp(v, "http://", 7) || !strncmp(v, "https://", 8);
}

int net_source_kind(const char *spec)
{
	if (!strncmp(spec, "cache:", 6))
		return NET_SOURCE_CACHE;
	return is_url(spec) ? NET_SOURCE_REMOTE : NET_SOURCE_ARCHIVE;
}

int net_source_parse(const char *spec, struct net_source *s)
{
	const char *p;

	memset(s, 0, sizeof(*s));
	if (!spec)
		return EINVAL;
	s->spec = spec;
	s->kind = net_source_kind(spec);
	if (s->kind != NET_SOURCE_ARCHIVE) {
		/* printable ASCII with no spaces, as a URL is */
		s->url = s->kind == NET_SOURCE_CACHE ? spec + 6 : spec;
		if (!is_url(s->url))
			return EINVAL;
		for (p = s->url; *p; p++)
			if (*p <= ' ' || *p > '~')
				return EINVAL;
		return 0;
	}
	/* an absolute path with no control characters */
	s->path = net_archive_path(spec);
	if (s->path[0] != '/')
		return EINVAL;
	for (p = s->path; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return EINVAL;
	return 0;
}
