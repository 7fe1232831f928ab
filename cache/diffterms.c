/*
 * The diff prefixes: SearchIdx.pm's index_diff, line for line, over one
 * non-quoted section of a body that looks like a patch.  File names (XDFN),
 * removed (XDFA) and added (XDFB) lines, context (XDFCTX), hunk header
 * context (XDFHH), blob ids with every abbreviation down to 7 hex digits
 * (XDFPRE, XDFPOST); what is not diff goes to XNQ, in the order it came.
 * By hand because the rules are public-inbox's regular expressions, which
 * no library offers; each branch names the Perl it follows.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/terms.h"

struct diffst {
	struct term_doc *d;
	char *xnq;              /* pending non-diff lines, '\n' joined */
	size_t xlen, xcap;
	char **seen;            /* file names indexed so far */
	size_t nseen, capseen;
	/* $in_diff: undef, false (0) or true (1 or an old file name) */
	int defined, truth;
	char *oldname;          /* set when in_diff holds a name */
};

static void push_xnq(struct diffst *s, const char *l, size_t n)
{
	if (s->xlen + n + 2 > s->xcap) {
		size_t cap = (s->xlen + n + 2) * 2;
		char *t = realloc(s->xnq, cap);

		if (!t) {
			s->d->err = ENOMEM;
			return;
		}
		s->xnq = t;
		s->xcap = cap;
	}
	if (s->xlen)
		s->xnq[s->xlen++] = '\n';
	memcpy(s->xnq + s->xlen, l, n);
	s->xlen += n;
	s->xnq[s->xlen] = '\0';
}

static void flush_xnq(struct diffst *s)
{
	if (s->xlen)
		term_add(s->d, TERM_TEXT, "XNQ", s->xnq, s->xlen, 1);
	s->xlen = 0;
}

/* index_diff_inc */
static void inc(struct diffst *s, const char *t, size_t n, const char *pfx)
{
	flush_xnq(s);
	term_add(s->d, TERM_TEXT, pfx, t, n, 1);
}

/* $seen{$fn}++ or index_diff_inc($fn, 'XDFN') */
static void file_name(struct diffst *s, const char *fn)
{
	size_t i;
	char **t;

	for (i = 0; i < s->nseen; i++)
		if (!strcmp(s->seen[i], fn))
			return;
	if (s->nseen == s->capseen) {
		size_t cap = s->capseen ? s->capseen * 2 : 8;

		if (!(t = realloc(s->seen, cap * sizeof(*t)))) {
			s->d->err = ENOMEM;
			return;
		}
		s->seen = t;
		s->capseen = cap;
	}
	if (!(s->seen[s->nseen] = strdup(fn))) {
		s->d->err = ENOMEM;
		return;
	}
	s->nseen++;
	inc(s, fn, strlen(fn), "XDFN");
}

/* "?[^/]+/.+ over the whole of [p, e) */
static int path_like(const char *p, const char *e)
{
	const char *q = p;

	if (q < e && *q == '"')
		q++;
	const char *sl = memchr(q, '/', (size_t)(e - q));

	return sl && sl > q && sl + 1 < e;
}

/* git_unquote, then (split m'/', $x, 2)[1]: the name after "a/" */
static char *strip_side(const char *p, size_t n)
{
	char *u = malloc(n + 1), *o = u, *r;
	size_t i;

	if (!u)
		return NULL;
	if (n >= 2 && p[0] == '"' && p[n - 1] == '"') {
		for (i = 1; i + 1 < n; i++) {
			if (p[i] != '\\' || i + 2 >= n) {
				*o++ = p[i];
				continue;
			}
			i++;
			switch (p[i]) {
			case 'a': *o++ = '\a'; break;
			case 'b': *o++ = '\b'; break;
			case 'f': *o++ = '\f'; break;
			case 'n': *o++ = '\n'; break;
			case 'r': *o++ = '\r'; break;
			case 't': *o++ = '\t'; break;
			case 'v': *o++ = '\v'; break;
			case '0': case '1': case '2': case '3':
				if (i + 2 < n && p[i + 1] >= '0' && p[i + 1] <= '7' &&
				    p[i + 2] >= '0' && p[i + 2] <= '7') {
					*o++ = (char)((p[i] - '0') * 64 + (p[i + 1] - '0') * 8 +
						      (p[i + 2] - '0'));
					i += 2;
				} else {
					*o++ = '\\';
					*o++ = p[i];
				}
				break;
			default: *o++ = p[i]; break;
			}
		}
	} else {
		memcpy(u, p, n);
		o = u + n;
	}
	*o = '\0';
	r = strchr(u, '/');
	if (!r) {       /* (split)[1] is undef: nothing is indexed */
		free(u);
		return NULL;
	}
	memmove(u, r + 1, strlen(r + 1) + 1);
	return u;
}

/* index_old_diff_fn: the longest common trailing path of fa and fb */
static int old_diff_fn(struct diffst *s, const char *fa, const char *fb)
{
	const char *a = fa, *b = fb;

	while (*a && *b) {
		if (!strcmp(a, b)) {
			file_name(s, a);
			return 1;
		}
		/* shift @fa; shift @fb: drop one component of each */
		const char *na = strchr(a, '/'), *nb = strchr(b, '/');

		if (!na || !nb)
			break;
		a = na + 1;
		b = nb + 1;
	}
	return 0;
}

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static void set_in_diff(struct diffst *s, int defined, int truth, const char *name)
{
	free(s->oldname);
	s->oldname = name ? strdup(name) : NULL;
	s->defined = defined;
	s->truth = truth;
}

/* $BASE85 line, or a blank one */
static int base85_or_blank(const char *l)
{
	static const char b85[] = "!#$%&()*+-;<=>?@^_`{|}~";
	const char *p;
	int blank = 1;

	for (p = l; *p; p++)
		if (!isspace((unsigned char)*p))
			blank = 0;
	if (blank)
		return 1;
	for (p = l; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(b85, *p))
			return 0;
	return 1;
}

static int hexrun(const char *p)
{
	int n = 0;

	while ((p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'f'))
		n++;
	return n;
}

/* index_git_blob_id: the id and its abbreviations down to 7 digits */
static void blob_id(struct diffst *s, const char *pfx, const char *id, int n)
{
	for (; n >= 7; n--)
		term_add(s->d, TERM_RAW, pfx, id, (size_t)n, 1);
}

/* /^@@ (?:\S+) (?:\S+) @@\s*(\S+.*)?$/: 1 and the context, or 0 */
static int hunk_header(const char *l, const char **ctx)
{
	const char *p = l + 3;
	int i;

	if (!starts(l, "@@ "))
		return 0;
	for (i = 0; i < 2; i++) {
		const char *q = p;

		while (*q && !isspace((unsigned char)*q))
			q++;
		if (q == p || *q != ' ')
			return 0;
		p = q + 1;
	}
	if (!starts(p, "@@"))
		return 0;
	p += 2;
	while (*p && isspace((unsigned char)*p))
		p++;
	*ctx = *p ? p : NULL;
	return 1;
}

static int ignored(const char *l)
{
	static const char *const pfx[] = {
		"similarity index", "dissimilarity index", "old mode", "new mode",
		"deleted file mode", "new file mode", "copy from ", "copy to ",
		"rename from ", "rename to ", "\\ No newline at end of file",
	};
	size_t i, n = strlen(l);

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (starts(l, pfx[i]))
			return 1;
	/* /^Binary files .* differ/ */
	return starts(l, "Binary files ") && n >= 20 && strstr(l + 13, " differ") != NULL;
}

static void line(struct diffst *s, char *l, char **rest, size_t nrest, size_t *used)
{
	size_t n = strlen(l);
	const char *ctx;

	if (s->truth && starts(l, "GIT binary patch")) {
		push_xnq(s, l, n);
		while (*used < nrest && (starts(rest[*used], "literal ") ||
					 starts(rest[*used], "delta "))) {
			push_xnq(s, rest[*used], strlen(rest[*used]));
			(*used)++;
			while (*used < nrest && base85_or_blank(rest[*used]))
				(*used)++;
		}
	} else if (s->truth && l[0] == ' ') {
		inc(s, l + 1, n - 1, "XDFCTX");
	} else if (!strcmp(l, "-- ")) {
		set_in_diff(s, 0, 0, NULL);
	} else if (starts(l, "diff --git ")) {
		/* ("?[^/]+/.+) ("?[^/]+/.+)\z, the first greedy: the last
		 * space that splits the rest into two such paths */
		const char *p = l + 11, *e = l + n, *sp;

		for (sp = e - 1; sp > p; sp--)
			if (*sp == ' ' && path_like(p, sp) && path_like(sp + 1, e))
				break;
		if (sp > p) {
			char *fa, *fb;

			push_xnq(s, l, n);
			set_in_diff(s, 1, 1, NULL);
			fa = strip_side(p, (size_t)(sp - p));
			fb = strip_side(sp + 1, (size_t)(e - sp - 1));
			if (fa)
				file_name(s, fa);
			if (fb)
				file_name(s, fb);
			free(fa);
			free(fb);
			return;
		}
		goto traditional;
	} else {
		goto traditional;
	}
	return;
traditional:
	if (starts(l, "diff -")) {
		/* ^diff -(.+) (\S+) (\S+)$ */
		char *b = strrchr(l, ' '), *a = NULL, *q;

		if (b && b > l + 6 && b[1]) {
			for (q = b - 1; q > l + 6 && *q != ' '; q--)
				;
			if (*q == ' ' && q > l + 6 && q + 1 < b)
				a = q;
		}
		if (a && !memchr(a + 1, '\t', (size_t)(b - a - 1)) && !strchr(b + 1, '\t')) {
			char *opt = strndup(l + 6, (size_t)(a - l - 6));
			char *fa = strndup(a + 1, (size_t)(b - a - 1));

			push_xnq(s, l, n);
			if (opt && fa && (strchr(opt, 'u') || strchr(opt, 'U'))) {
				int r = old_diff_fn(s, fa, b + 1);

				set_in_diff(s, 1, r, NULL);
			}
			free(opt);
			free(fa);
			return;
		}
	}
	if (starts(l, "--- ") && path_like(l + 4, l + n)) {
		char *fn = strip_side(l + 4, n - 4);

		if (fn)
			file_name(s, fn);
		free(fn);
		set_in_diff(s, 1, 1, NULL);
	} else if (starts(l, "+++ ") && path_like(l + 4, l + n)) {
		char *fn = strip_side(l + 4, n - 4);

		if (fn)
			file_name(s, fn);
		free(fn);
		set_in_diff(s, 1, 1, NULL);
	} else if (starts(l, "--- ") && l[4] && !isspace((unsigned char)l[4])) {
		char *e = l + 4;

		while (*e && !isspace((unsigned char)*e))
			e++;
		char *name = strndup(l + 4, (size_t)(e - l - 4));

		/* $in_diff = $1: true unless the name is "0" */
		set_in_diff(s, 1, name && strcmp(name, "0"), name);
		free(name);
		push_xnq(s, l, n);
	} else if (s->defined && starts(l, "+++ ") && l[4] && !isspace((unsigned char)l[4])) {
		char *e = l + 4, *fb;

		while (*e && !isspace((unsigned char)*e))
			e++;
		fb = strndup(l + 4, (size_t)(e - l - 4));
		if (fb) {
			int r = old_diff_fn(s, s->oldname ? s->oldname :
					    (s->truth ? "1" : "0"), fb);

			set_in_diff(s, 1, r, NULL);
		}
		free(fb);
	} else if (s->truth && l[0] == '+') {
		inc(s, l + 1, n - 1, "XDFB");
	} else if (s->truth && l[0] == '-') {
		inc(s, l + 1, n - 1, "XDFA");
	} else if (starts(l, "index ") && hexrun(l + 6) &&
		   starts(l + 6 + hexrun(l + 6), "..") &&
		   hexrun(l + 8 + hexrun(l + 6))) {
		int na = hexrun(l + 6);
		const char *b = l + 8 + na;

		blob_id(s, "XDFPRE", l + 6, na);
		blob_id(s, "XDFPOST", b, hexrun(b));
		set_in_diff(s, 1, 1, NULL);
	} else if (hunk_header(l, &ctx)) {
		if (ctx)
			inc(s, ctx, strlen(ctx), "XDFHH");
	} else if (ignored(l)) {
		push_xnq(s, l, n);
	} else if (!n) {
		/* a bare "\n" may be diff context */
	} else {
		push_xnq(s, l, n);
		set_in_diff(s, 0, 0, NULL);
	}
}

void term_diff(struct term_doc *d, const char *txt, size_t len)
{
	struct diffst s = { .d = d };
	char *copy = malloc(len + 1), **lines = NULL, *p;
	size_t n = 0, cap = 0, i;

	if (!copy) {
		d->err = ENOMEM;
		return;
	}
	memcpy(copy, txt, len);
	copy[len] = '\0';
	/* split(/\n/): trailing empty lines go */
	for (p = copy; *p || p == copy; ) {
		char *nl = strchr(p, '\n');

		if (n == cap) {
			char **t = realloc(lines, (cap = cap ? cap * 2 : 64) * sizeof(*t));

			if (!t) {
				d->err = ENOMEM;
				goto out;
			}
			lines = t;
		}
		lines[n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
		if (!*p)
			break;
	}
	while (n && !*lines[n - 1])
		n--;
	for (i = 0; i < n; ) {
		size_t used = i + 1;

		line(&s, lines[i], lines, n, &used);
		i = used;
	}
	flush_xnq(&s);
out:
	for (i = 0; i < s.nseen; i++)
		free(s.seen[i]);
	free(s.seen);
	free(s.xnq);
	free(s.oldname);
	free(lines);
	free(copy);
}
