/*
 * Query validation, normalisation and the incremental suffix.
 *
 * The check is lexical (prefixes, quotes, parentheses, dangling operators):
 * it refuses what public-inbox would misread or reject, before a view that
 * can never succeed is remembered.  It deliberately accepts anything
 * Xapian's QueryParser accepts leniently (bare words, unknown words ending
 * in ':' followed by a space), since refusing a query lore answers would be
 * worse than sending one it ignores.
 */
#include <ctype.h>
#include <glib.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/prefix.h"
#include "query/query.h"

/* a prefix leifs searches with (query_prefixes[], prefix.h) */
static int known_prefix(const char *p, size_t len)
{
	const struct query_prefix *x = query_prefix_find(p, len);

	return x && !(x->flags & QP_UNSUPPORTED);
}

static int is_op(const char *w, size_t len)
{
	return (len == 3 && (!memcmp(w, "AND", 3) || !memcmp(w, "NOT", 3) ||
			     !memcmp(w, "XOR", 3))) ||
	       (len == 2 && !memcmp(w, "OR", 2));
}

int query_validate(const char *query, const char **why)
{
	const char *p = query;
	int depth = 0, need_operand = 0, saw_term = 0;
	size_t n = strlen(query);

	if (n > QUERY_MAX) {
		if (why)
			*why = "query too long";
		return E2BIG;
	}
	if (!g_utf8_validate(query, (gssize)n, NULL)) {
		if (why)
			*why = "query is not valid UTF-8";
		return EINVAL;
	}
	while (*p) {
		const char *w;
		size_t len;

		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			if (why)
				*why = "control character in query";
			return EINVAL;
		}
		if (*p == '(') {
			depth++;
			p++;
			continue;
		}
		if (*p == ')') {
			if (--depth < 0) {
				if (why)
					*why = "unbalanced ')'";
				return EINVAL;
			}
			if (need_operand) {
				if (why)
					*why = "operator without operand before ')'";
				return EINVAL;
			}
			p++;
			continue;
		}
		/* one token: up to space or parenthesis, quotes kept whole */
		w = p;
		while (*p && !isspace((unsigned char)*p) && *p != '(' && *p != ')') {
			if (*p == '"') {
				const char *e = strchr(p + 1, '"');

				if (!e) {
					if (why)
						*why = "unbalanced '\"'";
					return EINVAL;
				}
				p = e;
			}
			p++;
		}
		len = (size_t)(p - w);
		if (is_op(w, len)) {
			/* NOT may start a query or follow AND/OR */
			if (len == 3 && !memcmp(w, "NOT", 3)) {
				need_operand = 1;
				continue;
			}
			if (need_operand || !saw_term) {
				if (why)
					*why = "operator without operand";
				return EINVAL;
			}
			need_operand = 1;
			continue;
		}
		{
			const char *colon = memchr(w, ':', len);
			size_t i, plen = colon ? (size_t)(colon - w) : 0;
			int word = plen > 0;

			for (i = 0; i < plen; i++)
				if (!isalpha((unsigned char)w[i]))
					word = 0;
			if (word) {
				const struct query_prefix *x = query_prefix_find(w, plen);

				if (x && (x->flags & QP_UNSUPPORTED)) {
					if (why)
						*why = x->why;
					return EINVAL;
				}
			}
			/* "foo:bar" with an unknown foo is almost always a
			 * typo of a prefix; "https://" and "Re: x" are not */
			if (word && colon + 1 < w + len && colon[1] != '/' &&
			    !known_prefix(w, plen)) {
				if (why)
					*why = "unknown search prefix";
				return EINVAL;
			}
			if (word && colon + 1 == w + len && known_prefix(w, plen)) {
				if (!*p || isspace((unsigned char)*p) || *p == ')') {
					if (why)
						*why = "search prefix without a term";
					return EINVAL;
				}
			}
		}
		need_operand = 0;
		saw_term = 1;
	}
	if (depth > 0) {
		if (why)
			*why = "unbalanced '('";
		return EINVAL;
	}
	if (need_operand) {
		if (why)
			*why = "operator without operand";
		return EINVAL;
	}
	if (!saw_term) {
		if (why)
			*why = "empty query";
		return EINVAL;
	}
	/* Xapian drops punctuation: "/" or "*" alone would search for nothing
	 * (or everything), never what the name says */
	for (p = query; *p; p++)
		if (isalnum((unsigned char)*p) || (unsigned char)*p >= 0x80)
			return 0;
	if (why)
		*why = "no word to search for";
	return EINVAL;
}

int query_normalize(const char *query, char **out)
{
	size_t n = strlen(query), o = 0, i;
	char *s = malloc(n + 1);

	*out = NULL;
	if (!s)
		return ENOMEM;
	/* lei: chomp, then s/[ \n\t]+/ /sg */
	while (n && query[n - 1] == '\n')
		n--;
	for (i = 0; i < n; i++) {
		if (query[i] == ' ' || query[i] == '\n' || query[i] == '\t') {
			while (i + 1 < n && (query[i + 1] == ' ' ||
					     query[i + 1] == '\n' || query[i + 1] == '\t'))
				i++;
			s[o++] = ' ';
		} else {
			s[o++] = query[i];
		}
	}
	s[o] = '\0';
	*out = s;
	return 0;
}

int query_incremental(const char *query, time_t since, char **out)
{
	struct tm tm;
	char dt[32];
	size_t n;
	char *s;

	*out = NULL;
	if (since <= 0) {
		*out = strdup(query);
		return *out ? 0 : ENOMEM;
	}
	if (!gmtime_r(&since, &tm))
		return EINVAL;
	strftime(dt, sizeof(dt), "dt:%Y%m%d%H%M%S..", &tm);
	n = strlen(query) + strlen(dt) + 16;
	s = malloc(n);
	if (!s)
		return ENOMEM;
	snprintf(s, n, "(%s) AND %s", query, dt);
	*out = s;
	return 0;
}
