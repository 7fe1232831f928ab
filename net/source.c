/*
 * The grammar of a source, read here and nowhere else (net.h): a
 * public-inbox URL, "cache:" and a URL, or an archive on disk,
 * "[TYPE:]/absolute/path" with TYPE one of mboxrd, mboxo, maildir, v2, v1
 * (none: archive.c tells by what is there).
 */
#include <errno.h>
#include <string.h>

#include "net/net.h"

static const struct {
	const char *pfx;
	int type;               /* NET_MBOXRD... */
} types[] = {
	{ "mboxrd:", NET_MBOXRD }, { "mboxo:", NET_MBOXO }, { "maildir:", NET_MAILDIR },
	{ "v2:", NET_PI_V2 }, { "v1:", NET_PI_V1 },
};

/* the type an archive's spec names (-1: none) and its path past the name */
static const char *typed(const char *spec, int *type)
{
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strncmp(spec, types[i].pfx, strlen(types[i].pfx))) {
			*type = types[i].type;
			return spec + strlen(types[i].pfx);
		}
	*type = -1;
	return spec;
}

const char *net_archive_path(const char *spec)
{
	int type;

	return typed(spec, &type);
}

int net_archive_type(const char *spec)
{
	int type;

	typed(spec, &type);
	return type;
}

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
	s->type = -1;
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
	s->path = typed(spec, &s->type);
	if (s->path[0] != '/')
		return EINVAL;
	for (p = s->path; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return EINVAL;
	return 0;
}
