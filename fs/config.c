/*
 * A git-config file read by hand, as config.h says (the format, what is
 * refused and why no library): one pass over the bytes, a section
 * header, a key and its value at a time.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/config.h"

#define MAX_CONFIG (1 << 20)

struct parser {
	const char *p, *end;
	int line;
	char *why;
	size_t whylen;
};

static int fail(struct parser *ps, const char *msg)
{
	snprintf(ps->why, ps->whylen, "line %d: %s", ps->line, msg);
	return EINVAL;
}

static int peek(struct parser *ps)
{
	return ps->p < ps->end ? (unsigned char)*ps->p : EOF;
}

static int get(struct parser *ps)
{
	int c = peek(ps);

	if (c != EOF) {
		ps->p++;
		if (c == '\n')
			ps->line++;
	}
	return c;
}

static void skip_blank(struct parser *ps)
{
	while (peek(ps) == ' ' || peek(ps) == '\t' || peek(ps) == '\r')
		get(ps);
}

static void skip_line(struct parser *ps)
{
	int c;

	while ((c = get(ps)) != EOF && c != '\n')
		;
}

/* A growable string; on allocation failure `s` is NULL and stays so. */
struct buf {
	char *s;
	size_t len, cap;
	int oom;
};

static void buf_add(struct buf *b, int c)
{
	if (b->oom)
		return;
	if (b->len + 2 > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		char *s = realloc(b->s, cap);

		if (!s) {
			b->oom = 1;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	b->s[b->len++] = (char)c;
	b->s[b->len] = '\0';
}

static char *buf_take(struct buf *b)
{
	if (b->oom) {
		free(b->s);
		return NULL;
	}
	if (!b->s)
		return strdup("");
	return b->s;
}

static int name_char(int c)
{
	return isalnum(c) || c == '-' || c == '_';
}

/* [section] or [section "subsection"]; leaves the lowercased prefix in sec */
static int parse_section(struct parser *ps, struct buf *sec)
{
	int c;

	get(ps); /* [ */
	skip_blank(ps);
	while (name_char(c = peek(ps)) || c == '.') {
		buf_add(sec, tolower(c));
		get(ps);
	}
	if (!sec->len)
		return fail(ps, "empty section name");
	skip_blank(ps);
	if (peek(ps) == '"') {
		get(ps);
		buf_add(sec, '.');
		while ((c = get(ps)) != '"') {
			if (c == EOF || c == '\n')
				return fail(ps, "unterminated subsection name");
			if (c == '\\') {
				c = get(ps);
				if (c == EOF || c == '\n')
					return fail(ps, "unterminated subsection name");
			}
			buf_add(sec, c);
		}
		skip_blank(ps);
	}
	if (peek(ps) != ']')
		return fail(ps, "bad section header");
	get(ps);
	skip_blank(ps);
	c = peek(ps);
	if (c != EOF && c != '\n' && c != '#' && c != ';')
		return fail(ps, "text after a section header");
	skip_line(ps);
	return 0;
}

/* The value after '=': quotes, escapes, comments, continuations, and
 * whitespace trimmed at both ends except inside quotes, as git does. */
static int parse_value(struct parser *ps, struct buf *v)
{
	int c, quoted = 0;
	size_t keep = 0; /* length up to the last character to keep */

	skip_blank(ps);
	for (;;) {
		if (quoted && peek(ps) == '\n')
			return fail(ps, "unterminated quote");
		c = get(ps);
		if (c == EOF || c == '\n')
			break;
		if (!quoted && (c == '#' || c == ';')) {
			skip_line(ps);
			break;
		}
		if (c == '"') {
			quoted = !quoted;
			keep = v->len;
			continue;
		}
		if (c == '\\') {
			c = get(ps);
			switch (c) {
			case '\n':
				continue;
			case '\r':
				if (peek(ps) == '\n') {
					get(ps);
					continue;
				}
				return fail(ps, "bad escape in value");
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'b': c = '\b'; break;
			case '"': case '\\': break;
			default:
				return fail(ps, "bad escape in value");
			}
			buf_add(v, c);
			keep = v->len;
			continue;
		}
		if (c == '\0')
			return fail(ps, "NUL byte in value");
		buf_add(v, c);
		if (quoted || !isspace(c))
			keep = v->len;
	}
	if (quoted)
		return fail(ps, "unterminated quote");
	if (v->s)
		v->s[v->len = keep] = '\0';
	return 0;
}

static int add_item(config_t *c, const char *sec, const char *name, char *value, int line)
{
	struct config_item *it = realloc(c->items, (c->n + 1) * sizeof(*it));

	if (!it)
		return ENOMEM;
	c->items = it;
	it = &c->items[c->n];
	if (asprintf(&it->key, "%s.%s", sec, name) < 0)
		return ENOMEM;
	it->value = value;
	it->line = line;
	c->n++;
	return 0;
}

int config_parse(const char *text, size_t len, config_t *out, char *why, size_t whylen)
{
	struct parser ps = { text, text + len, 1, why, whylen };
	struct buf sec = { 0 };
	config_t c = { 0 };
	const char *nul;
	int ch, err = 0;

	*why = '\0';
	if ((nul = memchr(text, '\0', len))) {
		const char *p;
		int line = 1;

		for (p = text; p < nul; p++)
			line += *p == '\n';
		snprintf(why, whylen, "line %d: NUL byte", line);
		return EINVAL;
	}
	for (;;) {
		skip_blank(&ps);
		ch = peek(&ps);
		if (ch == EOF)
			break;
		if (ch == '\n' || ch == '#' || ch == ';') {
			skip_line(&ps);
			continue;
		}
		if (ch == '[') {
			sec.len = 0;
			if ((err = parse_section(&ps, &sec)))
				goto out;
			if (!strcmp(sec.s, "include") || !strncmp(sec.s, "includeif.", 10)) {
				err = fail(&ps, "[include] is not supported");
				goto out;
			}
			continue;
		}
		if (!isalpha(ch)) {
			err = fail(&ps, "a key must start with a letter");
			goto out;
		}
		if (!sec.len) {
			err = fail(&ps, "a key before any [section]");
			goto out;
		}
		{
			struct buf name = { 0 }, val = { 0 };
			int line = ps.line, bare;

			while (name_char(ch = peek(&ps))) {
				buf_add(&name, tolower(ch));
				get(&ps);
			}
			skip_blank(&ps);
			ch = peek(&ps);
			bare = ch == EOF || ch == '\n' || ch == '#' || ch == ';';
			if (!bare && ch != '=') {
				free(name.s);
				err = fail(&ps, "expected '=' after a key");
				goto out;
			}
			if (bare) {
				skip_line(&ps);
			} else {
				get(&ps);
				if ((err = parse_value(&ps, &val))) {
					free(name.s);
					free(val.s);
					goto out;
				}
			}
			if (name.oom || sec.oom || val.oom) {
				free(name.s);
				free(val.s);
				err = ENOMEM;
				goto out;
			}
			err = add_item(&c, sec.s, name.s, bare ? NULL : buf_take(&val), line);
			free(name.s);
			if (err)
				goto out;
			if (!bare && !c.items[c.n - 1].value) {
				err = ENOMEM;
				goto out;
			}
		}
	}
out:
	free(sec.s);
	if (!err && sec.oom)
		err = ENOMEM;
	if (err) {
		if (err == ENOMEM && !*why)
			snprintf(why, whylen, "out of memory");
		config_free(&c);
		return err;
	}
	*out = c;
	return 0;
}

int config_read_file(const char *path, config_t *out, char *why, size_t whylen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len;
	int err;

	*why = '\0';
	if (!f) {
		err = errno;
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(err));
		return err;
	}
	text = malloc(MAX_CONFIG + 1);
	if (!text) {
		fclose(f);
		return ENOMEM;
	}
	len = fread(text, 1, MAX_CONFIG + 1, f);
	if (ferror(f)) {
		err = EIO;
		snprintf(why, whylen, "cannot read %s", path);
	} else if (len > MAX_CONFIG) {
		err = EFBIG;
		snprintf(why, whylen, "%s: larger than %d bytes", path, MAX_CONFIG);
	} else {
		char sub[400];

		err = config_parse(text, len, out, sub, sizeof(sub));
		if (err)
			snprintf(why, whylen, "%s: %s", path, sub);
	}
	fclose(f);
	free(text);
	return err;
}

void config_free(config_t *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->items[i].key);
		free(c->items[i].value);
	}
	free(c->items);
	c->items = NULL;
	c->n = 0;
}

const char *config_get(const config_t *c, const char *key, int *found)
{
	size_t i = c->n;

	while (i-- > 0) {
		if (!strcasecmp(c->items[i].key, key)) {
			if (found)
				*found = 1;
			return c->items[i].value;
		}
	}
	if (found)
		*found = 0;
	return NULL;
}

int config_bool(const char *v, int *out)
{
	static const char *const t[] = { "true", "yes", "on", "1" };
	static const char *const f[] = { "false", "no", "off", "0", "" };
	size_t i;

	if (!v) {
		*out = 1;
		return 0;
	}
	for (i = 0; i < sizeof(t) / sizeof(*t); i++)
		if (!strcasecmp(v, t[i]))
			return *out = 1, 0;
	for (i = 0; i < sizeof(f) / sizeof(*f); i++)
		if (!strcasecmp(v, f[i]))
			return *out = 0, 0;
	return EINVAL;
}

int config_long(const char *v, long *out)
{
	char *end;
	long n, mul = 1;

	if (!v || !*v || isspace((unsigned char)*v))
		return EINVAL;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno)
		return errno;
	if (end == v)
		return EINVAL;
	switch (tolower((unsigned char)*end)) {
	case '\0': break;
	case 'k': mul = 1L << 10; end++; break;
	case 'm': mul = 1L << 20; end++; break;
	case 'g': mul = 1L << 30; end++; break;
	default: return EINVAL;
	}
	if (*end)
		return EINVAL;
	if (n > LONG_MAX / mul || n < LONG_MIN / mul)
		return ERANGE;
	*out = n * mul;
	return 0;
}
