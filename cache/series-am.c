/*
 * The patch b4 0.12 writes into am.mbx for one message (series-private.h):
 * get_am_message with fix_trailers, get_body_parts and rebuild_message,
 * over what mailinfo.c gives.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/series-private.h"

/* get_body_parts */
struct body_parts {
	GPtrArray *githeaders, *trailers;       /* of struct trailer * (owned) */
	char *message, *basement, *signature;
};

static void body_parts(const char *in, struct body_parts *bp)
{
	GPtrArray *h = g_ptr_array_new_with_free_func((GDestroyNotify)trailer_free);
	GPtrArray *o = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *mparts = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *nlines = g_ptr_array_new_with_free_func(g_free);
	char *body, *sig, *p, **bpara;
	const char *b;
	guint n, i;

	memset(bp, 0, sizeof(*bp));
	bp->trailers = g_ptr_array_new_with_free_func((GDestroyNotify)trailer_free);
	{
		GString *s = g_string_new(NULL);

		for (b = in; *b; b++)
			if (*b != '\r')
				g_string_append_c(s, *b);
		body = g_string_free(s, FALSE);
	}
	/* strip('\n') */
	for (p = body; *p == '\n'; p++)
		;
	memmove(body, p, strlen(p) + 1);
	for (p = body + strlen(body); p > body && p[-1] == '\n'; p--)
		p[-1] = '\0';
	bp->signature = g_strdup("");
	bp->basement = g_strdup("");
	/* rsplit('\n-- \n', 1) */
	sig = g_strrstr(body, "\n-- \n");
	if (sig) {
		g_free(bp->signature);
		bp->signature = g_strdup(sig + 5);
		*sig = '\0';
		for (p = body + strlen(body); p > body && p[-1] == '\n'; p--)
			p[-1] = '\0';
	}
	/* re.split('^---\n', body, maxsplit=1, flags=re.M) */
	for (p = body; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, "---\n", 4))
			break;
	if (p) {
		g_free(bp->basement);
		bp->basement = g_strdup(p + 4);
		*p = '\0';
	} else if ((p = strstr(body, "\ndiff "))) {
		g_free(bp->basement);
		bp->basement = g_strdup(p + 1);
		*p = '\0';
	}
	for (p = bp->basement + strlen(bp->basement); p > bp->basement && p[-1] == '\n'; p--)
		p[-1] = '\0';
	/* mbody = parts[0].strip('\n') */
	for (p = body; *p == '\n'; p++)
		;
	memmove(body, p, strlen(p) + 1);
	for (p = body + strlen(body); p > body && p[-1] == '\n'; p--)
		p[-1] = '\0';
	bpara = g_strsplit(body, "\n\n", -1);
	n = g_strv_length(bpara);
	if (!n) {
		g_strfreev(bpara);
		bpara = g_new0(char *, 2);
		bpara[0] = g_strdup("");
		n = 1;
	}
	find_trailers(bpara[0], 0, h, o);
	if (o->len) {
		g_ptr_array_add(mparts, g_strdup(bpara[0]));
		bp->githeaders = g_ptr_array_new_with_free_func((GDestroyNotify)trailer_free);
		g_ptr_array_free(h, TRUE);
	} else {
		bp->githeaders = h;
	}
	g_ptr_array_set_size(o, 0);
	find_trailers(bpara[n - 1], 0, bp->trailers, nlines);
	if (n == 1) {
		int same = bp->githeaders->len == bp->trailers->len;

		for (i = 0; same && i < bp->trailers->len; i++)
			same = trailer_eq(bp->githeaders->pdata[i], bp->trailers->pdata[i]);
		if (same)
			g_ptr_array_set_size(bp->githeaders, 0);
		g_ptr_array_add(nlines, NULL);
		bp->message = nlines->len > 1 ? g_strjoinv("\n", (char **)nlines->pdata) : g_strdup("");
	} else {
		GString *msg = g_string_new(NULL);

		for (i = 1; i + 1 < n; i++)
			g_ptr_array_add(mparts, g_strdup(bpara[i]));
		if (nlines->len) {
			g_ptr_array_add(nlines, NULL);
			g_ptr_array_add(mparts, g_strjoinv("\n", (char **)nlines->pdata));
		}
		for (i = 0; i < mparts->len; i++) {
			if (i)
				g_string_append(msg, "\n\n");
			g_string_append(msg, mparts->pdata[i]);
		}
		bp->message = g_string_free(msg, FALSE);
	}
	g_strfreev(bpara);
	g_free(body);
	g_ptr_array_free(o, TRUE);
	g_ptr_array_free(mparts, TRUE);
	g_ptr_array_free(nlines, TRUE);
}

static void rstrip_nl(GString *s, const char *text)
{
	size_t n = strlen(text);

	while (n && (text[n - 1] == '\r' || text[n - 1] == '\n'))
		n--;
	g_string_append_len(s, text, (gssize)n);
}

/* fix_trailers (no extras, no copyccs, no sign-off, trailer-order '*'),
 * then rebuild_message: the new body */
static char *fix_trailers(struct lmsg *m, const char *body, unsigned *added)
{
	struct body_parts bp;
	GPtrArray *fix;
	GString *s = g_string_new(NULL);
	guint i, j;

	body_parts(body, &bp);
	fix = bp.trailers;
	for (i = 0; i < m->followup_trailers->len; i++) {
		struct trailer *t = m->followup_trailers->pdata[i];
		int have = 0;

		for (j = 0; j < fix->len && !have; j++)
			have = trailer_eq(fix->pdata[j], t);
		if (have)
			continue;
		/* a copy: bp owns what fix holds */
		g_ptr_array_add(fix, trailer_new(t->name, t->value, t->extinfo));
		(*added)++;
	}
	/* rebuild_message */
	if (bp.githeaders->len) {
		for (i = 0; i < bp.githeaders->len; i++) {
			trailer_append(s, bp.githeaders->pdata[i], 1);
			g_string_append_c(s, '\n');
		}
		g_string_append_c(s, '\n');
	}
	if (*bp.message) {
		rstrip_nl(s, bp.message);
		g_string_append_c(s, '\n');
		if (fix->len)
			g_string_append_c(s, '\n');
	}
	for (i = 0; i < fix->len; i++) {
		trailer_append(s, fix->pdata[i], 0);
		g_string_append_c(s, '\n');
	}
	if (*bp.basement) {
		if (!fix->len)
			g_string_append_c(s, '\n');
		g_string_append(s, "---\n");
		rstrip_nl(s, bp.basement);
		g_string_append_c(s, '\n');
	}
	if (*bp.signature) {
		g_string_append(s, "-- \n");
		rstrip_nl(s, bp.signature);
		g_string_append_c(s, '\n');
	}
	g_ptr_array_free(bp.githeaders, TRUE);
	g_ptr_array_free(bp.trailers, TRUE);
	g_free(bp.message);
	g_free(bp.basement);
	g_free(bp.signature);
	return g_string_free(s, FALSE);
}

char *lmsg_am_subject(const struct lmsg *m, const char *use)
{
	GString *s = g_string_new("[PATCH");

	if (m->ls.rfc)
		g_string_append(s, " RFC");
	if (m->reroll_from_revision || !m->revision_inferred)
		g_string_append_printf(s, " v%d", m->revision);
	if (!m->ls.counters_inferred)
		g_string_append_printf(s, " %d/%d", m->ls.counter, m->ls.expected);
	g_string_append_printf(s, "] %s", use ? use : m->ls.subject);
	return g_string_free(s, FALSE);
}

unsigned lmsg_am_message(struct lmsg *m, int add_trailers, GString *out)
{
	unsigned added = 0;
	struct mailinfo mi;
	char *body, *subject, *fixed = NULL;
	const char *p, *nl;

	mailinfo(m, m->body ? m->body : "", &mi);
	body = g_strconcat(mi.msg->str, mi.patch->str, NULL);
	if (add_trailers) {
		fixed = fix_trailers(m, body, &added);
		g_free(body);
		body = fixed;
	}
	subject = lmsg_am_subject(m, mi.subject);
	g_string_append_printf(out, "Subject: %s\n", subject);
	/* b4 gives Python's email "Author <Email>": an author that is the
	 * address is the address alone, one with a "." is quoted; names with
	 * other specials, which Python's parser takes apart, stay as git gave */
	if (!*mi.author || strchr(mi.author, '@'))
		g_string_append_printf(out, "From: %s\n", mi.email);
	else if (strchr(mi.author, '.') && !strpbrk(mi.author, ",()<>:;\"[]\\"))
		g_string_append_printf(out, "From: \"%s\" <%s>\n", mi.author, mi.email);
	else
		g_string_append_printf(out, "From: %s <%s>\n", mi.author, mi.email);
	g_string_append_printf(out, "Date: %s\n", mi.date);
	g_string_append_printf(out, "Message-Id: <%s>\n", m->msgid ? m->msgid : "");
	/* Python's email: 7bit for an ASCII body */
	for (p = body; *p && !((unsigned char)*p & 0x80); p++)
		;
	g_string_append_printf(out, "MIME-Version: 1.0\nContent-Type: text/plain; charset=\"utf-8\"\n"
			       "Content-Transfer-Encoding: %s\n\n", *p ? "8bit" : "7bit");
	/* get_msg_as_bytes: each line without its trailing CR/LF, then \n,
	 * the split's last (empty) part included */
	for (p = body;; p = nl + 1) {
		const char *e;

		nl = strchr(p, '\n');
		e = nl ? nl : p + strlen(p);
		while (e > p && e[-1] == '\r')
			e--;
		g_string_append_len(out, p, (gssize)(e - p));
		g_string_append_c(out, '\n');
		if (!nl)
			break;
	}
	g_free(subject);
	g_free(body);
	mailinfo_clear(&mi);
	return added;
}
