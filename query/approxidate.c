/*
 * d:, dt: and rt: ranges made numeric, as public-inbox's Search.pm does
 * (query_approxidate, date_parse_prepare, date_parse_finalize) before
 * Xapian sees the query.
 *
 * Dates other than plain digits are git's "approxidate" ("2.weeks.ago",
 * "2024-01-02", "last.monday"): this file finds them and puts the numbers
 * back, and asks its caller for the numbers (a query_dates_fn; leifs's
 * asks git, as public-inbox does, since approxidate is a large
 * hand-written parser no library offers and the answer must be git's to
 * agree with the server).  No I/O here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/query.h"

struct buf {
	char *s;
	size_t n, cap;
	int err;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *t = realloc(b->s, cap);

		if (!t) {
			b->err = ENOMEM;
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

struct dates {
	char **arg;     /* what the caller's `resolve` reads */
	size_t n, cap;
};

static int add_date(struct dates *d, const char *s, size_t n)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		char **t = realloc(d->arg, cap * sizeof(*t));

		if (!t)
			return ENOMEM;
		d->arg = t;
		d->cap = cap;
	}
	if (!(d->arg[d->n] = strndup(s, n)))
		return ENOMEM;
	d->n++;
	return 0;
}

/* a placeholder: \001 format index \001, format d=%Y%m%d t=%Y%m%d%H%M%S
 * s=%s; index "+" is the previous one plus a day */
static void placeholder(struct buf *b, char fmt, long idx)
{
	char tmp[32];

	if (idx < 0)
		snprintf(tmp, sizeof(tmp), "\001%c+\001", fmt);
	else
		snprintf(tmp, sizeof(tmp), "\001%c%ld\001", fmt, idx);
	puts_(b, tmp);
}

static int all_digits(const char *s, size_t n, size_t min, size_t max)
{
	size_t i;

	if (n < min || n > max)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static int ymd_dash(const char *s, size_t n)
{
	return n == 10 && all_digits(s, 4, 4, 4) && s[4] == '-' && all_digits(s + 5, 2, 2, 2) &&
	       s[7] == '-' && all_digits(s + 8, 2, 2, 2);
}

/* date_parse_prepare: "pfx:range" (range has no spaces) into b */
static int prepare(struct buf *b, struct dates *d, const char *pfx, const char *r, size_t rn)
{
	const char *end = r + rn, *dots;
	char fmt;
	size_t tail = 0;
	int err = 0, two;
	const char *a, *z;
	size_t an, zn;

	/* my $end = $range =~ s/([\)\s]*)\z// */
	while (tail < rn && (r[rn - 1 - tail] == ')' || r[rn - 1 - tail] == ' ' ||
			     r[rn - 1 - tail] == '\t'))
		tail++;
	end = r + rn - tail;
	dots = NULL;
	for (a = r; a + 1 < end; a++)
		if (a[0] == '.' && a[1] == '.') {
			dots = a;
			break;
		}
	two = dots != NULL;
	a = r;
	an = (size_t)((two ? dots : end) - r);
	z = two ? dots + 2 : NULL;
	zn = two ? (size_t)(end - z) : 0;

	if (!strcmp(pfx, "d")) {
		fmt = 'd';
		if (!two) {
			if (all_digits(a, an, 8, 8)) {
				char tmp[16];

				snprintf(tmp, sizeof(tmp), "%.4s-%.2s-%.2s", a, a + 4, a + 6);
				err = add_date(d, tmp, 10);
			} else {
				err = add_date(d, a, an);
				if (!ymd_dash(a, an)) {
					pfx = "dt";
					fmt = 't';
				}
			}
			puts_(b, pfx);
			puts_(b, ":");
			placeholder(b, fmt, (long)d->n - 1);
			puts_(b, "..");
			placeholder(b, fmt, -1);
		} else {
			const char *x[2] = { a, z };
			size_t xn[2] = { an, zn };
			long idx[2] = { -2, -2 };   /* -2: keep as written */
			int i;

			for (i = 0; i < 2 && !err; i++) {
				if (!xn[i] || all_digits(x[i], xn[i], 8, 8))
					continue;
				err = add_date(d, x[i], xn[i]);
				if (!ymd_dash(x[i], xn[i]))
					pfx = "dt";
				idx[i] = (long)d->n - 1;
			}
			puts_(b, pfx);
			puts_(b, ":");
			for (i = 0; i < 2; i++) {
				if (i)
					puts_(b, "..");
				if (idx[i] >= 0) {
					placeholder(b, !strcmp(pfx, "dt") ? 't' : 'd', idx[i]);
				} else {
					put(b, x[i], xn[i]);
					/* s/\A([0-9]{8})\z/${1}000000/ once upgraded */
					if (!strcmp(pfx, "dt") && xn[i] == 8)
						puts_(b, "000000");
				}
			}
		}
	} else if (!strcmp(pfx, "dt")) {
		if (!two) {
			if (all_digits(a, an, 14, 14)) {
				char tmp[32];

				snprintf(tmp, sizeof(tmp), "%.4s-%.2s-%.2s %.2s:%.2s:%.2s",
					 a, a + 4, a + 6, a + 8, a + 10, a + 12);
				err = add_date(d, tmp, strlen(tmp));
			} else {
				err = add_date(d, a, an);
			}
			puts_(b, "dt:");
			placeholder(b, 't', (long)d->n - 1);
			puts_(b, "..");
			placeholder(b, 't', -1);
		} else {
			const char *x[2] = { a, z };
			size_t xn[2] = { an, zn };
			int i;

			puts_(b, "dt:");
			for (i = 0; i < 2 && !err; i++) {
				if (i)
					puts_(b, "..");
				if (!xn[i] || all_digits(x[i], xn[i], 14, 14)) {
					put(b, x[i], xn[i]);
					continue;
				}
				err = add_date(d, x[i], xn[i]);
				placeholder(b, 't', (long)d->n - 1);
			}
		}
	} else {        /* rt: approxidate reads "YYYY" itself */
		const char *x[2] = { a, z };
		size_t xn[2] = { an, zn };
		int i;

		puts_(b, "rt:");
		for (i = 0; i < 2 && !err; i++) {
			if (i)
				puts_(b, "..");
			if (i == 1 && !two) {
				placeholder(b, 's', -1);
				continue;
			}
			if (!xn[i] || all_digits(x[i], xn[i], 5, 64)) {
				put(b, x[i], xn[i]);
				continue;
			}
			err = add_date(d, x[i], xn[i]);
			placeholder(b, 's', (long)d->n - 1);
		}
	}
	put(b, end, tail);
	return err ? err : b->err;
}

static int word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || (unsigned char)c >= 0x80;
}

/* the placeholders replaced by numbers (date_parse_finalize) */
static int finalize(struct buf *out, const char *s, const long long *t)
{
	long long last = 0;

	while (*s) {
		const char *p = strchr(s, '\001'), *e;
		char fmt, tmp[32];
		long long v;
		struct tm tm;
		time_t tt;

		if (!p) {
			puts_(out, s);
			break;
		}
		put(out, s, (size_t)(p - s));
		e = strchr(p + 1, '\001');
		if (!e)
			return EINVAL;
		fmt = p[1];
		if (p[2] == '+') {
			v = last + 86400;
		} else {
			v = last = t[strtol(p + 2, NULL, 10)];
		}
		tt = (time_t)v;
		if (fmt == 's') {
			snprintf(tmp, sizeof(tmp), "%lld", v);
		} else {
			if (!gmtime_r(&tt, &tm))
				return EINVAL;
			strftime(tmp, sizeof(tmp), fmt == 'd' ? "%Y%m%d" : "%Y%m%d%H%M%S", &tm);
		}
		puts_(out, tmp);
		s = e + 1;
	}
	return out->err;
}

int query_approxidate(const char *query, query_dates_fn resolve, void *arg, char **out,
		      char *why, size_t whylen)
{
	struct buf b = { 0 }, fin = { 0 };
	struct dates d = { 0 };
	long long *t = NULL;
	const char *p = query;
	int err = 0, quoted = 0;
	size_t i;

	*out = NULL;
	if (why && whylen)
		why[0] = '\0';
	/* dates are rewritten outside "phrases" only ("" and curly quotes) */
	while (*p && !err) {
		size_t q = 0;

		if (*p == '"')
			q = 1;
		else if (!strncmp(p, "\xe2\x80\x9c", 3) || !strncmp(p, "\xe2\x80\x9d", 3))
			q = 3;
		if (q) {
			quoted = !quoted;
			put(&b, p, q);
			p += q;
			continue;
		}
		if (!quoted && (p == query || !word_char(p[-1]))) {
			const char *pfx = NULL;

			if (!strncmp(p, "d:", 2))
				pfx = "d";
			else if (!strncmp(p, "dt:", 3))
				pfx = "dt";
			else if (!strncmp(p, "rt:", 3))
				pfx = "rt";
			if (pfx) {
				const char *r = p + strlen(pfx) + 1, *e = r;

				while (*e && *e != ' ' && *e != '\t' && *e != '\n' && *e != '\r' &&
				       *e != '"' && strncmp(e, "\xe2\x80\x9c", 3) &&
				       strncmp(e, "\xe2\x80\x9d", 3))
					e++;
				if (e > r) {
					err = prepare(&b, &d, pfx, r, (size_t)(e - r));
					p = e;
					continue;
				}
			}
		}
		put(&b, p, 1);
		p++;
	}
	if (!err)
		err = b.err;
	if (!err && !b.s)
		put(&b, "", 0), err = b.err;
	if (err)
		goto out;
	if (!d.n && !strchr(b.s, '\001')) {
		*out = b.s;
		b.s = NULL;
		goto out;
	}
	if (!(t = calloc(d.n + 1, sizeof(*t)))) {
		err = ENOMEM;
		goto out;
	}
	if (d.n && !resolve) {
		if (why && whylen)
			snprintf(why, whylen, "cannot read dates: nothing to read them with");
		err = EINVAL;
		goto out;
	}
	if (d.n && (err = resolve(arg, d.arg, d.n, t, why, whylen)))
		goto out;
	if ((err = finalize(&fin, b.s, t)))
		goto out;
	*out = fin.s;
	fin.s = NULL;
out:
	for (i = 0; i < d.n; i++)
		free(d.arg[i]);
	free(d.arg);
	free(t);
	free(b.s);
	free(fin.s);
	return err;
}
