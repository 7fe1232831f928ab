/*
 * View settings: parsing a view's .config over the defaults, and back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cache/cache.h"
#include "fs/config.h"
#include "fs/settings.h"
#include "net/net.h"

static const char *const dedupe_names[] = {
	[CACHE_DEDUPE_CONTENT] = "content", [CACHE_DEDUPE_OID] = "oid",
	[CACHE_DEDUPE_MID] = "mid", [CACHE_DEDUPE_NONE] = "none",
};

const char *settings_dedupe_name(int dedupe)
{
	return dedupe >= 0 && dedupe <= CACHE_DEDUPE_NONE ? dedupe_names[dedupe] : "?";
}

static void free_list(char ***list, int *n)
{
	int i;

	for (i = 0; i < *n; i++)
		free((*list)[i]);
	free(*list);
	*list = NULL;
	*n = 0;
}

void settings_free(struct settings *s)
{
	free_list(&s->sources, &s->nsources);
	free_list(&s->imaps, &s->nimaps);
}

static int add_to(char ***list, int *n, const char *url)
{
	char **v = realloc(*list, (size_t)(*n + 1) * sizeof(*v));

	if (!v)
		return ENOMEM;
	*list = v;
	if (!(v[*n] = strdup(url)))
		return ENOMEM;
	(*n)++;
	return 0;
}

static int add_source(struct settings *s, const char *url)
{
	return add_to(&s->sources, &s->nsources, url);
}

int settings_copy(const struct settings *from, struct settings *to)
{
	int i, err;

	*to = *from;
	to->sources = NULL;
	to->nsources = 0;
	to->imaps = NULL;
	to->nimaps = 0;
	for (i = 0; i < from->nsources; i++)
		if ((err = add_source(to, from->sources[i]))) {
			settings_free(to);
			return err;
		}
	for (i = 0; i < from->nimaps; i++)
		if ((err = add_to(&to->imaps, &to->nimaps, from->imaps[i]))) {
			settings_free(to);
			return err;
		}
	return 0;
}

int settings_set(struct settings *s, const char *key, const char *v)
{
	long n;
	int b, i;

	if (!strcmp(key, "threads")) {
		if (v && !strcasecmp(v, "flag-hits"))
			s->threads = THREADS_FLAG_HITS;
		else if (!config_bool(v, &b))
			s->threads = b ? THREADS_ON : THREADS_OFF;
		else
			return EINVAL;
		return 0;
	}
	if (!strcmp(key, "dedupe")) {
		for (i = 0; v && i <= CACHE_DEDUPE_NONE; i++)
			if (!strcasecmp(v, dedupe_names[i])) {
				s->dedupe = i;
				return 0;
			}
		return EINVAL;
	}
	if (!strcmp(key, "flags")) {
		if (v && !strcasecmp(v, "shared"))
			s->own_flags = 0;
		else if (v && !strcasecmp(v, "view"))
			s->own_flags = 1;
		else
			return EINVAL;
		return 0;
	}
	if (!strcmp(key, "limit") || !strcmp(key, "refresh")) {
		if (config_long(v, &n) || n < 0)
			return EINVAL;
		*(!strcmp(key, "limit") ? &s->limit : &s->refresh) = n;
		return 0;
	}
	return ENOENT;
}

/* a source as net_source_parse reads it */
int settings_source_ok(const char *v)
{
	struct net_source s;

	return !net_source_parse(v, &s);
}

int settings_imap_ok(const char *v, char *why, size_t whylen)
{
	struct net_imap_url u;
	const char *reason = NULL;

	if (!v || net_imap_parse(v, &u, &reason)) {
		snprintf(why, whylen, "%s", reason ? reason : "not an IMAP folder URL");
		return EINVAL;
	}
	return 0;
}

/* a value as git-config reads it back: quoted when it holds # ; " or \ */
static void put_value(FILE *f, const char *v)
{
	const char *p;

	if (!strpbrk(v, "#;\"\\")) {
		fputs(v, f);
		return;
	}
	fputc('"', f);
	for (p = v; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

int settings_parse(const struct settings *def, const char *text, size_t len,
		   struct settings *out, char *why, size_t whylen)
{
	config_t c = { 0 };
	int err, sources = 0, imaps = 0;
	size_t i;

	why[0] = '\0';
	if ((err = settings_copy(def, out)))
		return err;
	if ((err = config_parse(text, len, &c, why, whylen)))
		goto fail;
	for (i = 0; i < c.n; i++) {
		const struct config_item *it = &c.items[i];
		const char *key = it->key + 6;

		if (strncmp(it->key, "leifs.", 6)) {
			snprintf(why, whylen, "line %d: unknown key %s (keys go under [leifs])",
				 it->line, it->key);
			err = EINVAL;
			goto fail;
		}
		if (!strcmp(key, "source")) {
			if (!settings_source_ok(it->value)) {
				snprintf(why, whylen, "line %d: source must be an http:// or https:// URL or an absolute path",
					 it->line);
				err = EINVAL;
				goto fail;
			}
			if (!sources++)         /* the view's sources replace the defaults */
				free_list(&out->sources, &out->nsources);
			if ((err = add_source(out, it->value)))
				goto fail;
			continue;
		}
		if (!strcmp(key, "imap")) {
			char r[200];

			if (settings_imap_ok(it->value, r, sizeof(r))) {
				snprintf(why, whylen, "line %d: imap: %s", it->line, r);
				err = EINVAL;
				goto fail;
			}
			if (!imaps++)           /* the view's folders replace the defaults */
				free_list(&out->imaps, &out->nimaps);
			if ((err = add_to(&out->imaps, &out->nimaps, it->value)))
				goto fail;
			continue;
		}
		err = settings_set(out, key, it->value);
		if (err == ENOENT) {
			snprintf(why, whylen, "line %d: unknown key %s (threads, dedupe, source, imap, limit, refresh, flags)",
				 it->line, it->key);
			err = EINVAL;
		} else if (err == EINVAL) {
			snprintf(why, whylen, "line %d: bad value for %s%s", it->line, it->key,
				 !strcmp(key, "threads") ? " (true, false or flag-hits)" :
				 !strcmp(key, "dedupe") ? " (content, oid, mid or none)" :
				 !strcmp(key, "flags") ? " (shared or view)" :
				 " (a number, 0 or more)");
		}
		if (err)
			goto fail;
	}
	config_free(&c);
	return 0;
fail:
	config_free(&c);
	settings_free(out);
	return err;
}

char *settings_format(const struct settings *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i;

	if (!f)
		return NULL;
	fprintf(f, "[leifs]\n\tthreads = %s\n\tdedupe = %s\n\tlimit = %ld\n\trefresh = %ld\n"
		"\tflags = %s\n",
		s->threads == THREADS_FLAG_HITS ? "flag-hits" : s->threads ? "true" : "false",
		settings_dedupe_name(s->dedupe), s->limit, s->refresh,
		s->own_flags ? "view" : "shared");
	for (i = 0; i < s->nsources; i++) {
		fputs("\tsource = ", f);
		put_value(f, s->sources[i]);
		fputc('\n', f);
	}
	for (i = 0; i < s->nimaps; i++) {
		fputs("\timap = ", f);
		put_value(f, s->imaps[i]);
		fputc('\n', f);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
