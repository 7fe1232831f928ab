/*
 * MAINTAINERS sections and the searches they derive to (maintainers.h).
 * Written by hand: the format is the kernel's own, a few rules of lines,
 * and no library reads it.  Strings grow in glib's GString.
 */
#include <ctype.h>
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/maintainers.h"

static int is_field(const char *s, size_t n)
{
	return n >= 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] == ':' &&
	       (n == 2 || s[2] == ' ' || s[2] == '\t');
}

static int blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return 0;
	return 1;
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t'))
		(*s)++, (*n)--;
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

static int add_field(struct maint_section *sec, char letter, const char *v, size_t n)
{
	char **t = realloc(sec->fields, (sec->nfields + 1) * sizeof(*t));
	char *f;

	if (!t)
		return ENOMEM;
	sec->fields = t;
	if (!(f = malloc(n + 3)))
		return ENOMEM;
	f[0] = letter;
	f[1] = ':';
	memcpy(f + 2, v, n);
	f[n + 2] = '\0';
	sec->fields[sec->nfields++] = f;
	return 0;
}

const struct maint_section *maint_find(const struct maint_file *f, const char *title)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->s[i].title, title))
			return &f->s[i];
	return NULL;
}

static void free_section(struct maint_section *s)
{
	size_t i;

	for (i = 0; i < s->nfields; i++)
		free(s->fields[i]);
	free(s->fields);
	free(s->title);
}

void maint_free(struct maint_file *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free_section(&f->s[i]);
	free(f->s);
	free(f->problems);
	memset(f, 0, sizeof(*f));
}

/* a new section for the title at line `lineno`, or NULL (a title seen
 * before: said in problems, its fields dropped) */
static int open_section(struct maint_file *f, const char *title, size_t tlen, size_t lineno,
			GString *problems, struct maint_section **cur)
{
	struct maint_section *t;
	char *copy = strndup(title, tlen);
	const struct maint_section *prev;
	size_t i;

	*cur = NULL;
	if (!copy)
		return ENOMEM;
	if ((prev = maint_find(f, copy))) {
		g_string_append_printf(problems, "line %zu: the title of line %zu again (the first "
				       "section is used): %.100s\n", lineno, prev->line, copy);
		free(copy);
		return 0;
	}
	for (i = 0; i < tlen; i++)
		if ((unsigned char)copy[i] < 0x20 || copy[i] == 0x7f)
			break;
	if (i < tlen)
		g_string_append_printf(problems, "line %zu: a title holding a control character "
				       "(no view can be named for it)\n", lineno);
	else if (tlen > 255)
		g_string_append_printf(problems, "line %zu: a title of %zu bytes (no view can be "
				       "named for one over 255): %.60s...\n", lineno, tlen, copy);
	if (!(t = realloc(f->s, (f->n + 1) * sizeof(*t)))) {
		free(copy);
		return ENOMEM;
	}
	f->s = t;
	memset(&f->s[f->n], 0, sizeof(f->s[f->n]));
	f->s[f->n].title = copy;
	f->s[f->n].line = lineno;
	*cur = &f->s[f->n++];
	return 0;
}

int maint_parse(const char *text, size_t len, struct maint_file *out, char *why, size_t whylen)
{
	const char *p = text, *end = text + len, *title = NULL;
	size_t lineno = 0, tlen = 0, tline = 0;
	struct maint_section *cur = NULL;
	int in_section = 0;             /* fields of a dropped section too */
	GString *problems;
	int err = 0;

	memset(out, 0, sizeof(*out));
	why[0] = '\0';
	if (memchr(text, '\0', len)) {
		snprintf(why, whylen, "not a MAINTAINERS file: it holds a NUL byte (binary)");
		return EINVAL;
	}
	problems = g_string_new("");
	while (p < end && !err) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *line = p;

		p += n + (nl != NULL);
		lineno++;
		if (n && line[n - 1] == '\r')
			n--;
		if (n > MAINT_LINE_MAX) {
			snprintf(why, whylen, "not a MAINTAINERS file: line %zu is %zu bytes long "
				 "(over %d)", lineno, n, MAINT_LINE_MAX);
			err = EINVAL;
			break;
		}
		if (blank(line, n)) {
			cur = NULL, title = NULL, in_section = 0;
			continue;
		}
		if (is_field(line, n)) {
			const char *v = line + 2;
			size_t vn = n - 2;

			if (!in_section && title) {
				if ((err = open_section(out, title, tlen, tline, problems, &cur)))
					break;
				in_section = 1;
				title = NULL;
			}
			trim(&v, &vn);
			if (cur && vn)
				err = add_field(cur, line[0], v, vn);
			continue;
		}
		cur = NULL, in_section = 0, title = NULL;
		if (line[0] == ' ' || line[0] == '\t')
			continue;       /* the preamble's text */
		title = line, tlen = n, tline = lineno;
		trim(&title, &tlen);
	}
	if (err) {
		maint_free(out);
		g_string_free(problems, TRUE);
		return err;
	}
	out->problems = g_string_free(problems, FALSE);
	return 0;
}

/* ---- derivation ---- */

static int word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static int plain_path(const char *s)
{
	for (; *s; s++)
		if (!word_char(*s) && !strchr("./-", *s))
			return 0;
	return 1;
}

/* The dfn: term of an F: or X: path into `term` (empty: not searchable,
 * the reason in notes). */
static void path_term(const char *field, GString *term, GString *notes)
{
	const char *p = field + 2, *g = strpbrk(p, "*?[");
	size_t i, n;
	int widened = 0, dir;
	GString *path;

	g_string_truncate(term, 0);
	for (i = 0; p[i]; i++)
		if (p[i] == '"' || p[i] == ' ' || p[i] == '\t' || (unsigned char)p[i] < 0x20) {
			g_string_append_printf(notes, "%.2s %s: not searchable (a quote or blank "
					       "in a path)\n", field, p);
			return;
		}
	if (!g) {
		n = strlen(p);
		dir = n && p[n - 1] == '/';
		path = g_string_new_len(p, (gssize)(dir ? n - 1 : n));
	} else {
		n = (size_t)(g - p);
		/* a bare word and a '*': public-inbox's wildcard */
		if (*g == '*' && !g[1] && n) {
			for (i = 0; i < n && word_char(p[i]); i++)
				;
			if (i == n) {
				g_string_append_printf(term, "dfn:%s", p);
				return;
			}
		}
		dir = n && p[n - 1] == '/';
		if (n && word_char(p[n - 1])) {
			/* a glob inside a word: the words before it */
			while (n && word_char(p[n - 1]))
				n--;
			widened = 1;
		}
		while (n && !word_char(p[n - 1]))
			n--;
		if (g[strspn(g, "*")] && strcmp(g + strspn(g, "*"), "/"))
			widened = 1;    /* more of the path after the glob */
		if (!n) {
			g_string_append_printf(notes, "%.2s %s: not searchable (no whole word "
					       "before its first wildcard)\n", field, p);
			return;
		}
		path = g_string_new_len(p, (gssize)n);
	}
	if (!path->len) {
		g_string_append_printf(notes, "%.2s %s: not searchable (every file)\n", field, p);
		g_string_free(path, TRUE);
		return;
	}
	if (plain_path(path->str))
		g_string_append_printf(term, "dfn:%s%s", path->str, dir ? "/*" : "");
	else
		g_string_append_printf(term, "dfn:\"%s%s\"", path->str, dir ? "/" : "");
	if (widened && field[0] == 'X') {
		/* a wider exclusion would drop mail of the section */
		g_string_append_printf(notes, "X: %s: left out (public-inbox takes no wildcard "
				       "inside a file name, and %s would exclude more)\n", p,
				       term->str);
		g_string_truncate(term, 0);
	} else if (widened) {
		g_string_append_printf(notes, "%.2s %s: searched as %s (public-inbox takes no "
				       "wildcard inside a file name: wider)\n", field, p, term->str);
	}
	g_string_free(path, TRUE);
}

/* The plain word of an N: or K: regular expression, or NULL: \b ^ $ and
 * a leading character class or '/' taken off. */
static char *regex_word(const char *re)
{
	static const char *const heads[] = { "(^|/)", "^", "\\b", "[^a-z]", "[^a-z0-9]",
					     "[^A-Za-z]", "[^a-zA-Z]", "[^a-zA-Z0-9]", "/" };
	const char *s = re;
	size_t n, i;
	int again = 1;

	while (again) {
		again = 0;
		for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
			if (!strncmp(s, heads[i], strlen(heads[i]))) {
				s += strlen(heads[i]);
				again = 1;
			}
	}
	n = strlen(s);
	for (again = 1; again;) {
		again = 0;
		if (n >= 2 && !strncmp(s + n - 2, "\\b", 2))
			n -= 2, again = 1;
		else if (n && s[n - 1] == '$')
			n--, again = 1;
	}
	if (n < 2)
		return NULL;
	for (i = 0; i < n; i++)
		if (!word_char(s[i]))
			return NULL;
	return strndup(s, n);
}

/* l:LISTID OR tc:ADDRESS of an L: line, or "" (notes say why) */
static void list_term(const char *field, GString *term, GString *notes)
{
	const char *p = field + 2, *at;
	char *tok = NULL;
	size_t n, i;

	g_string_truncate(term, 0);
	/* "list@host (moderated for non-subscribers)": its address */
	while (*p) {
		p += strspn(p, " \t");
		n = strcspn(p, " \t");
		if (memchr(p, '@', n)) {
			tok = strndup(p, n);
			break;
		}
		p += n;
	}
	if (tok) {
		char *t = tok;
		size_t tn = strlen(t);

		if (t[0] == '<')
			t++, tn--;
		if (tn && t[tn - 1] == '>')
			t[--tn] = '\0';
		at = strchr(t, '@');
		for (i = 0; i < tn; i++)
			if (!isalnum((unsigned char)t[i]) && !strchr("._+-@", t[i]))
				break;
		if (i == tn && at > t && at[1] && strchr(at + 1, '.') && !strchr(at + 1, '@')) {
			g_string_append(term, "l:");
			for (i = 0; i < tn; i++)
				g_string_append_c(term, t[i] == '@' ? '.' : (char)tolower((unsigned char)t[i]));
			g_string_append_printf(term, " OR tc:%s", t);
			free(tok);
			return;
		}
		free(tok);
	}
	g_string_append_printf(notes, "L: %s: not searchable (no list address in it)\n", field + 2);
}

static void join(GString *out, GPtrArray *terms, size_t from, size_t to, int paren)
{
	size_t i;

	if (paren && to - from > 1)
		g_string_append_c(out, '(');
	for (i = from; i < to; i++)
		g_string_append_printf(out, "%s%s", i > from ? " OR " : "",
				       (const char *)g_ptr_array_index(terms, i));
	if (paren && to - from > 1)
		g_string_append_c(out, ')');
}

/* (P[from..to)) AND NOT (X), or P alone without X */
static void pos_part(GString *out, GPtrArray *pos, size_t from, size_t to, GPtrArray *neg,
		     int paren)
{
	if (!neg->len) {
		join(out, pos, from, to, paren);
		return;
	}
	join(out, pos, from, to, 1);
	g_string_append(out, " AND NOT ");
	join(out, neg, 0, neg->len, 1);
}

static int add_part(struct maint_query *q, const char *s)
{
	char **t = realloc(q->parts, (q->nparts + 1) * sizeof(*t));

	if (!t)
		return ENOMEM;
	q->parts = t;
	if (!(q->parts[q->nparts] = strdup(s)))
		return ENOMEM;
	q->nparts++;
	return 0;
}

/* the parts of at most part_max bytes: runs of P (each with the X), then
 * runs of L */
static int split(struct maint_query *q, GPtrArray *pos, GPtrArray *neg, GPtrArray *lists,
		 size_t part_max, char *why, size_t whylen)
{
	GString *s = g_string_new(""), *try = g_string_new("");
	size_t from, to;
	int err = 0, pass;

	for (pass = 0; pass < 2 && !err; pass++) {
		GPtrArray *a = pass ? lists : pos;

		for (from = 0; from < a->len && !err; from = to) {
			g_string_truncate(s, 0);
			for (to = from; to < a->len; to++) {
				g_string_truncate(try, 0);
				if (pass)
					join(try, a, from, to + 1, 0);
				else
					pos_part(try, a, from, to + 1, neg, 0);
				if (try->len > part_max)
					break;
				g_string_assign(s, try->str);
			}
			if (to == from) {
				snprintf(why, whylen, "a search of one %s term%s is longer than %zu "
					 "bytes: %.80s", pass ? "L:" : "F:", neg->len && !pass ?
					 " and the X: terms" : "", part_max, try->str);
				err = EINVAL;
			} else {
				err = add_part(q, s->str);
			}
		}
	}
	g_string_free(s, TRUE);
	g_string_free(try, TRUE);
	return err;
}

int maint_derive(const struct maint_section *s, size_t part_max, struct maint_query *q,
		 char *why, size_t whylen)
{
	GPtrArray *pos = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *neg = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *lists = g_ptr_array_new_with_free_func(g_free);
	GString *term = g_string_new(""), *notes = g_string_new(""), *all = g_string_new("");
	size_t i;
	int err = 0;

	memset(q, 0, sizeof(*q));
	why[0] = '\0';
	for (i = 0; i < s->nfields; i++) {
		const char *f = s->fields[i];
		char *w;

		switch (f[0]) {
		case 'F':
		case 'X':
			path_term(f, term, notes);
			if (term->len)
				g_ptr_array_add(f[0] == 'F' ? pos : neg, g_strdup(term->str));
			break;
		case 'N':
		case 'K':
			if (!(w = regex_word(f + 2))) {
				g_string_append_printf(notes, "%.2s %s: not searchable (a regular "
						       "expression, not a plain word)\n", f, f + 2);
				break;
			}
			g_ptr_array_add(pos, f[0] == 'N' ? g_strdup_printf("dfn:%s*", w) :
					g_strdup_printf("(dfa:%s OR dfb:%s)", w, w));
			free(w);
			break;
		case 'L':
			list_term(f, term, notes);
			if (term->len)
				g_ptr_array_add(lists, g_strdup(term->str));
			break;
		default:
			break;
		}
	}
	if (!pos->len && neg->len)
		g_string_append(notes, "X: lines exclude files of F:, N: and K: lines: "
			       "none here to exclude from\n");
	if (!pos->len && !lists->len) {
		snprintf(why, whylen, "no F:, N:, K: or L: line that can be searched");
		err = EINVAL;
		goto out;
	}
	if (pos->len) {
		if (neg->len && lists->len)
			g_string_append_c(all, '(');
		pos_part(all, pos, 0, pos->len, neg, 0);
		if (neg->len && lists->len)
			g_string_append_c(all, ')');
	}
	if (pos->len && lists->len)
		g_string_append(all, " OR ");
	join(all, lists, 0, lists->len, 0);
	if (all->len <= part_max)
		err = add_part(q, all->str);
	else
		err = split(q, pos, neg, lists, part_max, why, whylen);
	if (!err && (!(q->query = strdup(all->str)) || !(q->notes = strdup(notes->str))))
		err = ENOMEM;
out:
	if (err)
		maint_query_free(q);
	g_ptr_array_free(pos, TRUE);
	g_ptr_array_free(neg, TRUE);
	g_ptr_array_free(lists, TRUE);
	g_string_free(term, TRUE);
	g_string_free(notes, TRUE);
	g_string_free(all, TRUE);
	return err;
}

void maint_query_free(struct maint_query *q)
{
	size_t i;

	for (i = 0; i < q->nparts; i++)
		free(q->parts[i]);
	free(q->parts);
	free(q->query);
	free(q->notes);
	memset(q, 0, sizeof(*q));
}
