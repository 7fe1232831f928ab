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
	/* get_maintainer.pl: /^([A-Z]):\s*(.*)/ */
	return n >= 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] == ':';
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
	gpointer i;

	if (!f->titles || !(i = g_hash_table_lookup(f->titles, title)))
		return NULL;
	return &f->s[GPOINTER_TO_SIZE(i) - 1];
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

	if (f->titles)
		g_hash_table_destroy(f->titles);
	if (f->lists)
		g_hash_table_destroy(f->lists);
	for (i = 0; i < f->n; i++)
		free_section(&f->s[i]);
	free(f->s);
	free(f->problems);
	memset(f, 0, sizeof(*f));
}

/* the address of an L: line ("list@host (moderated ...)"), lowercase,
 * malloc'd; NULL when it holds none */
static char *list_address(const char *v)
{
	const char *p = v;
	char *t;
	size_t n, i;

	while (*p) {
		p += strspn(p, " \t");
		n = strcspn(p, " \t");
		if (memchr(p, '@', n)) {
			if (*p == '<')
				p++, n--;
			if (n && p[n - 1] == '>')
				n--;
			if (!(t = strndup(p, n)))
				return NULL;
			for (i = 0; t[i]; i++)
				t[i] = (char)tolower((unsigned char)t[i]);
			return t;
		}
		p += n;
	}
	return NULL;
}

/* a new section for the title at line `lineno`, or NULL (a title seen
 * before: said in problems, its fields dropped) */
static int open_section(struct maint_file *f, const char *title, size_t tlen, size_t lineno,
			GString *problems, struct maint_section **cur)
{
	struct maint_section *t;
	char *copy = strndup(title, tlen);
	const struct maint_section *prev;
	size_t i, named = 0;

	*cur = NULL;
	if (!copy)
		return ENOMEM;
	if ((prev = maint_find(f, copy))) {
		g_string_append_printf(problems, "line %zu: the title of line %zu again (the first "
				       "section is used): %.100s\n", lineno, prev->line, copy);
		free(copy);
		return 0;
	}
	for (i = 0; i < tlen; i++) {
		if ((unsigned char)copy[i] < 0x20 || copy[i] == 0x7f)
			break;
		named += copy[i] == '/' || copy[i] == '%' ? 3 : 1;     /* %2F, %25 */
	}
	if (i < tlen)
		g_string_append_printf(problems, "line %zu: a title holding a control character "
				       "(no view can be named for it)\n", lineno);
	else if (copy[0] == '.')
		g_string_append_printf(problems, "line %zu: a title starting with '.' (no view "
				       "can be named for it): %.100s\n", lineno, copy);
	else if (named > 255)
		g_string_append_printf(problems, "line %zu: a title of %zu bytes as a name (no view "
				       "can be named for one over 255): %.60s...\n", lineno, named, copy);
	else if (!g_utf8_validate(copy, -1, NULL))
		g_string_append_printf(problems, "line %zu: a title that is not UTF-8 (no view can "
				       "be named for it)\n", lineno);
	if (!(t = realloc(f->s, (f->n + 1) * sizeof(*t)))) {
		free(copy);
		return ENOMEM;
	}
	f->s = t;
	memset(&f->s[f->n], 0, sizeof(f->s[f->n]));
	f->s[f->n].title = copy;
	f->s[f->n].line = lineno;
	*cur = &f->s[f->n++];
	g_hash_table_insert(f->titles, copy, GSIZE_TO_POINTER(f->n));
	return 0;
}

/* a line that was taken for a title got no field under it: after the
 * first section, that is a section lost (a typo, a blank line after its
 * title), not the preamble's text */
static void lost_title(const struct maint_file *f, const char *title, size_t tlen, size_t line,
		       GString *problems)
{
	if (title && f->n)
		g_string_append_printf(problems, "line %zu: no field line under it (a typo, or a "
				       "blank line after a title?): %.*s\n", line,
				       (int)(tlen > 100 ? 100 : tlen), title);
}

/* how many sections name each list */
static void count_lists(struct maint_file *f)
{
	size_t i, j, k;

	for (i = 0; i < f->n; i++)
		for (j = 0; j < f->s[i].nfields; j++) {
			char *a;

			if (f->s[i].fields[j][0] != 'L' ||
			    !(a = list_address(f->s[i].fields[j] + 2)))
				continue;
			for (k = 0; k < j; k++) {       /* once per section */
				char *b = f->s[i].fields[k][0] == 'L' ?
					  list_address(f->s[i].fields[k] + 2) : NULL;
				int same = b && !strcmp(a, b);

				free(b);
				if (same)
					break;
			}
			if (k < j) {
				free(a);
				continue;
			}
			g_hash_table_insert(f->lists, a, GSIZE_TO_POINTER(
				GPOINTER_TO_SIZE(g_hash_table_lookup(f->lists, a)) + 1));
		}
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
	out->titles = g_hash_table_new(g_str_hash, g_str_equal);
	out->lists = g_hash_table_new_full(g_str_hash, g_str_equal, free, NULL);
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
			if (!in_section)
				lost_title(out, title, tlen, tline, problems);
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
		if (!in_section)
			lost_title(out, title, tlen, tline, problems);
		cur = NULL, in_section = 0, title = NULL;
		if (line[0] == ' ' || line[0] == '\t')
			continue;       /* the preamble's text */
		title = line, tlen = n, tline = lineno;
		trim(&title, &tlen);
	}
	if (!err && !in_section)
		lost_title(out, title, tlen, tline, problems);
	if (err) {
		maint_free(out);
		g_string_free(problems, TRUE);
		return err;
	}
	count_lists(out);
	out->problems = g_string_free(problems, FALSE);
	return 0;
}

/* ---- derivation ---- */

static int word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

static int plain_path(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_./-", s[i]))
			return 0;
	return 1;
}

/* A term of the query: as searched, and without word wildcards (for a
 * server that refuses one past its expansion limit). */
struct term {
	char *wild, *safe;
};

static void term_free(gpointer p)
{
	struct term *t = p;

	g_free(t->wild);
	g_free(t->safe);
	g_free(t);
}

static void add_term(GPtrArray *a, char *wild, char *safe)
{
	struct term *t = g_new0(struct term, 1);

	t->wild = wild;
	t->safe = safe ? safe : g_strdup(wild);
	g_ptr_array_add(a, t);
}

/* dfn:PATH for n bytes of p, quoted when it holds more than "_./-" */
static void dfn(GString *out, const char *p, size_t n, const char *tail)
{
	if (plain_path(p, n))
		g_string_append_printf(out, "dfn:%.*s%s", (int)n, p, tail);
	else
		g_string_append_printf(out, "dfn:\"%.*s%s\"", (int)n, p, tail);
}

/* the end of the glob character at p ('*', '?', or a [...] class) */
static const char *glob_end(const char *p)
{
	const char *q;

	if (*p != '[')
		return p + 1;
	q = p + 1 + (p[1] == '!' || p[1] == '^');
	q += *q == ']';
	q = strchr(q, ']');
	return q ? q + 1 : p + strlen(p);
}

/* The terms of a glob: the whole words between its wildcards as phrases,
 * a word that a wildcard ends as WORD* (a term of its own: public-inbox
 * takes no wildcard inside a phrase), ANDed.  Its safe form: the phrases,
 * else the words without their star. */
static int glob_terms(const char *p, GString *wild, GString *safe)
{
	GPtrArray *phr = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *wc = g_ptr_array_new_with_free_func(g_free);
	const char *piece = p, *g;
	guint i;
	int ok;

	while (*piece) {
		const char *e;
		size_t n;
		int before_glob;

		g = piece + strcspn(piece, "*?[");
		before_glob = *g != '\0';
		e = g;
		/* a word the glob before this piece may have begun: not whole */
		if (piece != p)
			while (piece < e && word_char(*piece))
				piece++;
		n = (size_t)(e - piece);
		if (before_glob && n && word_char(piece[n - 1])) {
			size_t w = n;

			while (w && word_char(piece[w - 1]))
				w--;
			if (*g == '*' && n - w >= 2) {
				GString *t = g_string_new("dfn:");
				size_t k;

				for (k = w; k < n; k++)
					g_string_append_c(t, (char)tolower((unsigned char)piece[k]));
				g_string_append_c(t, '*');
				g_ptr_array_add(wc, g_string_free(t, FALSE));
			}
			n = w;
		}
		while (n && !word_char(piece[0]))
			piece++, n--;
		while (n && !word_char(piece[n - 1]))
			n--;
		if (n) {
			GString *t = g_string_new("");

			dfn(t, piece, n, "");
			g_ptr_array_add(phr, g_string_free(t, FALSE));
		}
		piece = *g ? glob_end(g) : g;
	}
	ok = phr->len + wc->len > 0;
	for (i = 0; i < phr->len + wc->len; i++)
		g_string_append_printf(wild, "%s%s", i ? " AND " : "", i < phr->len ?
				       (char *)g_ptr_array_index(phr, i) :
				       (char *)g_ptr_array_index(wc, i - phr->len));
	if (phr->len + wc->len > 1) {
		g_string_prepend_c(wild, '(');
		g_string_append_c(wild, ')');
	}
	for (i = 0; i < phr->len; i++)
		g_string_append_printf(safe, "%s%s", i ? " AND " : "",
				       (char *)g_ptr_array_index(phr, i));
	for (i = 0; !phr->len && i < wc->len; i++) {
		const char *w = g_ptr_array_index(wc, i);

		g_string_append_printf(safe, "%s%.*s", i ? " AND " : "", (int)strlen(w) - 1, w);
	}
	if ((phr->len ? phr->len : wc->len) > 1) {
		g_string_prepend_c(safe, '(');
		g_string_append_c(safe, ')');
	}
	g_ptr_array_free(phr, TRUE);
	g_ptr_array_free(wc, TRUE);
	return ok;
}

/* The dfn: term of an F: or X: path (none: not searchable, the reason
 * in notes). */
static void path_term(const char *field, GPtrArray *to, GString *notes)
{
	const char *p = field + 2, *g = strpbrk(p, "*?[");
	GString *wild, *safe;
	size_t i, n = strlen(p);

	for (i = 0; p[i]; i++)
		if (p[i] == '"' || p[i] == ' ' || p[i] == '\t' || (unsigned char)p[i] < 0x20) {
			g_string_append_printf(notes, "%.2s %s: not searchable (a quote or blank "
					       "in a path)\n", field, p);
			return;
		}
	wild = g_string_new("");
	safe = g_string_new("");
	if (!g) {
		int dir = n && p[n - 1] == '/';

		while (n && p[n - 1] == '/')
			n--;
		if (n)
			dfn(wild, p, n, dir ? "/*" : "");
	} else if (field[0] == 'X') {
		/* a wider exclusion would drop the section's mail */
		g_string_append_printf(notes, "X: %s: left out (public-inbox takes no wildcard "
				       "inside a file name: excluding more than the glob would "
				       "drop the section's mail)\n", p);
	} else if (g == p + n - 1 && *g == '*' && n >= 2 && p[n - 2] == '/') {
		/* DIR and a star: the files in DIR; the search takes those below too */
		dfn(wild, p, n - 2, "/*");
		g_string_append_printf(notes, "F: %s: searched as %s (files below it too: "
				       "wider)\n", p, wild->str);
	} else if (glob_terms(p, wild, safe)) {
		g_string_append_printf(notes, "F: %s: searched as %s (public-inbox takes no "
				       "wildcard inside a file name: wider than the glob)\n", p, wild->str);
	} else {
		g_string_append_printf(notes, "F: %s: not searchable (no whole word in it)\n", p);
	}
	if (wild->len)
		add_term(to, g_string_free(wild, FALSE), safe->len ? g_string_free(safe, FALSE) :
			 (g_string_free(safe, TRUE), NULL));
	else {
		g_string_free(wild, TRUE);
		g_string_free(safe, TRUE);
	}
}

/* The plain word of an N: or K: regular expression, lowercase, or NULL:
 * \b ^ $ and a leading character class or '/' taken off. */
static char *regex_word(const char *re)
{
	static const char *const heads[] = { "(^|/)", "^", "\\b", "[^a-z]", "[^a-z0-9]",
					     "[^A-Za-z]", "[^a-zA-Z]", "[^a-zA-Z0-9]", "/" };
	const char *s = re;
	size_t n, i;
	int again = 1;
	char *w;

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
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return NULL;
	if (!(w = strndup(s, n)))
		return NULL;
	for (i = 0; i < n; i++)         /* "AND" would be the operator */
		w[i] = (char)tolower((unsigned char)w[i]);
	return w;
}

/* l:LISTID OR tc:ADDRESS of an L: line (none: notes say why) */
static void list_term(const struct maint_file *f, const char *field, GPtrArray *to,
		      GString *notes)
{
	char *t = list_address(field + 2);
	const char *at = t ? strchr(t, '@') : NULL;
	size_t i, tn = t ? strlen(t) : 0, users;

	for (i = 0; i < tn; i++)
		if (!isalnum((unsigned char)t[i]) && !strchr("._+-@", t[i]))
			break;
	if (!t || i < tn || at == t || !at[1] || !strchr(at + 1, '.') || strchr(at + 1, '@')) {
		g_string_append_printf(notes, "L: %s: not searchable (no list address in it)\n",
				       field + 2);
		free(t);
		return;
	}
	users = f && f->lists ? GPOINTER_TO_SIZE(g_hash_table_lookup(f->lists, t)) : 0;
	if (users > MAINT_UMBRELLA) {
		g_string_append_printf(notes, "L: %s: left out (%zu sections name it: what it "
				       "carries is not all this section's)\n", t, users);
	} else {
		GString *w = g_string_new("l:");

		for (i = 0; i < tn; i++)
			g_string_append_c(w, t[i] == '@' ? '.' : t[i]);
		g_string_append_printf(w, " OR tc:%s", t);
		add_term(to, g_string_free(w, FALSE), NULL);
	}
	free(t);
}

static void join(GString *out, GPtrArray *terms, size_t from, size_t to, int paren, int safe)
{
	size_t i;

	if (paren && to - from > 1)
		g_string_append_c(out, '(');
	for (i = from; i < to; i++) {
		const struct term *t = g_ptr_array_index(terms, i);

		g_string_append_printf(out, "%s%s", i > from ? " OR " : "", safe ? t->safe : t->wild);
	}
	if (paren && to - from > 1)
		g_string_append_c(out, ')');
}

/* (P[from..to)) AND NOT (X), or P alone without X */
static void pos_part(GString *out, GPtrArray *pos, size_t from, size_t to, GPtrArray *neg,
		     int safe)
{
	if (!neg->len) {
		join(out, pos, from, to, 0, safe);
		return;
	}
	join(out, pos, from, to, 1, safe);
	g_string_append(out, " AND NOT ");
	join(out, neg, 0, neg->len, 1, safe);
}

static int add_part(struct maint_query *q, const char *wild, const char *safe)
{
	char **t;

	if (q->nparts >= MAINT_PARTS_MAX)
		return E2BIG;
	if (!(t = realloc(q->parts, (q->nparts + 1) * sizeof(*t))))
		return ENOMEM;
	q->parts = t;
	if (!(t = realloc(q->safe, (q->nparts + 1) * sizeof(*t))))
		return ENOMEM;
	q->safe = t;
	q->parts[q->nparts] = strdup(wild);
	q->safe[q->nparts] = strdup(safe);
	q->nparts++;
	return q->parts[q->nparts - 1] && q->safe[q->nparts - 1] ? 0 : ENOMEM;
}

/* the part of terms [from, to) of pass (0: P with the X, 1: L), both ways */
static void part_text(GString *w, GString *sf, GPtrArray *a, size_t from, size_t to,
		      GPtrArray *neg, int pass)
{
	g_string_truncate(w, 0);
	g_string_truncate(sf, 0);
	if (pass) {
		join(w, a, from, to, 0, 0);
		join(sf, a, from, to, 0, 1);
	} else {
		pos_part(w, a, from, to, neg, 0);
		pos_part(sf, a, from, to, neg, 1);
	}
}

/* the parts of at most part_max bytes: runs of P (each with the X), then
 * runs of L */
static int split(struct maint_query *q, GPtrArray *pos, GPtrArray *neg, GPtrArray *lists,
		 size_t part_max, char *why, size_t whylen)
{
	GString *w = g_string_new(""), *sf = g_string_new("");
	size_t from, to;
	int err = 0, pass;

	for (pass = 0; pass < 2 && !err; pass++) {
		GPtrArray *a = pass ? lists : pos;

		for (from = 0; from < a->len && !err; from = to) {
			/* the longest run that fits (the safe form is no longer) */
			for (to = from; to < a->len; to++) {
				part_text(w, sf, a, from, to + 1, neg, pass);
				if (w->len > part_max)
					break;
			}
			if (to == from) {
				snprintf(why, whylen, "a search of one %s term%s is longer than %zu "
					 "bytes: %.80s", pass ? "L:" : "F:", neg->len && !pass ?
					 " and the X: terms" : "", part_max, w->str);
				err = EINVAL;
				break;
			}
			part_text(w, sf, a, from, to, neg, pass);
			if ((err = add_part(q, w->str, sf->str)) == E2BIG) {
				snprintf(why, whylen, "its query would take more than %d searches",
					 MAINT_PARTS_MAX);
				err = EINVAL;
			}
		}
	}
	g_string_free(w, TRUE);
	g_string_free(sf, TRUE);
	return err;
}

/* the whole query, as searched (safe 0) or without word wildcards */
static void whole(GString *all, GPtrArray *pos, GPtrArray *neg, GPtrArray *lists, int safe)
{
	if (pos->len) {
		if (neg->len && lists->len)
			g_string_append_c(all, '(');
		pos_part(all, pos, 0, pos->len, neg, safe);
		if (neg->len && lists->len)
			g_string_append_c(all, ')');
	}
	if (pos->len && lists->len)
		g_string_append(all, " OR ");
	join(all, lists, 0, lists->len, 0, safe);
}

int maint_derive(const struct maint_file *f, const struct maint_section *s, size_t part_max,
		 struct maint_query *q, char *why, size_t whylen)
{
	GPtrArray *pos = g_ptr_array_new_with_free_func(term_free);
	GPtrArray *neg = g_ptr_array_new_with_free_func(term_free);
	GPtrArray *lists = g_ptr_array_new_with_free_func(term_free);
	GString *notes = g_string_new(""), *all = g_string_new(""), *safe = g_string_new("");
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
	size_t i;
	int err = 0;

	memset(q, 0, sizeof(*q));
	why[0] = '\0';
	for (i = 0; i < s->nfields; i++) {
		const char *fl = s->fields[i];
		char *w;

		/* a line given twice is searched once */
		if (strchr("FXNKL", fl[0]) && !g_hash_table_add(seen, (gpointer)fl))
			continue;
		switch (fl[0]) {
		case 'F':
		case 'X':
			path_term(fl, fl[0] == 'F' ? pos : neg, notes);
			break;
		case 'N':
		case 'K':
			if (!(w = regex_word(fl + 2))) {
				g_string_append_printf(notes, "%.2s %s: not searchable (a regular "
						       "expression, not a plain word)\n", fl, fl + 2);
				break;
			}
			if (fl[0] == 'N')
				add_term(pos, g_strdup_printf("dfn:%s*", w), g_strdup_printf("dfn:%s", w));
			else
				add_term(pos, g_strdup_printf("(dfa:%s OR dfb:%s)", w, w), NULL);
			free(w);
			break;
		case 'L':
			list_term(f, fl, lists, notes);
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
	whole(all, pos, neg, lists, 0);
	whole(safe, pos, neg, lists, 1);
	if (all->len <= part_max)
		err = add_part(q, all->str, safe->str);
	else
		err = split(q, pos, neg, lists, part_max, why, whylen);
	if (!err && (!(q->query = strdup(all->str)) || !(q->notes = strdup(notes->str))))
		err = ENOMEM;
out:
	if (err)
		maint_query_free(q);
	g_hash_table_destroy(seen);
	g_ptr_array_free(pos, TRUE);
	g_ptr_array_free(neg, TRUE);
	g_ptr_array_free(lists, TRUE);
	g_string_free(notes, TRUE);
	g_string_free(all, TRUE);
	g_string_free(safe, TRUE);
	return err;
}

void maint_query_free(struct maint_query *q)
{
	size_t i;

	for (i = 0; i < q->nparts; i++) {
		free(q->parts[i]);
		if (q->safe)
			free(q->safe[i]);
	}
	free(q->parts);
	free(q->safe);
	free(q->query);
	free(q->notes);
	memset(q, 0, sizeof(*q));
}
