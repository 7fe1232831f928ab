/*
 * One message as b4 0.12 reads it (series-private.h): LoreSubject,
 * LoreTrailer, LoreMessage.  The patch b4 writes for it into am.mbx is
 * series-am.c's, over mailinfo.c's part of `git mailinfo`.
 */
#include <ctype.h>
#include <errno.h>
#include <gmime/gmime.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"
#include "cache/series-private.h"

/* the largest body read: a patch past it is cut (and says so in info) */
#define BODY_MAX (8u << 20)

/* Regexes are compiled for each use and used once: no G_REGEX_OPTIMIZE
 * (PCRE2's JIT costs more than it saves here, and its vector reads past a
 * string's end are what valgrind reports) */
int re_search(const char *pattern, const char *s, GRegexCompileFlags flags)
{
	GRegex *re = g_regex_new(pattern, flags, 0, NULL);
	int hit;

	if (!re)
		return 0;
	hit = g_regex_match(re, s, 0, NULL);
	g_regex_unref(re);
	return hit;
}

/* re.search with one group: a copy of group `g`, NULL when no match */
char *re_group(const char *pattern, const char *s, GRegexCompileFlags flags, int g)
{
	GRegex *re = g_regex_new(pattern, flags, 0, NULL);
	GMatchInfo *mi = NULL;
	char *out = NULL;

	if (!re)
		return NULL;
	if (g_regex_match(re, s, 0, &mi))
		out = g_match_info_fetch(mi, g);
	g_match_info_free(mi);
	g_regex_unref(re);
	return out;
}

char *re_sub(const char *pattern, const char *repl, const char *s,
		    GRegexCompileFlags flags)
{
	GRegex *re = g_regex_new(pattern, flags, 0, NULL);
	char *out;

	if (!re)
		return g_strdup(s);
	out = g_regex_replace(re, s, -1, 0, repl, 0, NULL);
	g_regex_unref(re);
	return out ? out : g_strdup(s);
}

/* ---- LoreSubject ---- */

void lsubject_clear(struct lsubject *s)
{
	g_free(s->full_subject);
	g_free(s->subject);
	if (s->prefixes)
		g_ptr_array_free(s->prefixes, TRUE);
	memset(s, 0, sizeof(*s));
}

void lsubject_parse(struct lsubject *s, const char *subject)
{
	char *subj, *old;

	memset(s, 0, sizeof(*s));
	s->revision = s->counter = s->expected = 1;
	s->revision_inferred = s->counters_inferred = 1;
	s->prefixes = g_ptr_array_new_with_free_func(g_free);
	subj = re_sub("\\s+", " ", subject, 0);
	g_strstrip(subj);
	s->full_subject = g_strdup(subj);
	if (re_search("^(Re|Aw|Fwd):", subj, G_REGEX_CASELESS) ||
	    re_search("(*UCP)^\\w{2,3}:\\s*\\[", subj, 0)) {
		s->reply = 1;
		s->subject = subj;
		return;
	}
	/* brackets inside brackets */
	for (;;) {
		char *a = re_sub("\\[([^]]*)\\[([^\\[\\]]*)]", "[\\1\\2]", subj, 0);
		char *b = re_sub("\\[([^]]*)]([^\\[\\]]*)]", "[\\1\\2]", a, 0);

		g_free(a);
		old = subj;
		subj = b;
		if (!strcmp(old, subj)) {
			g_free(old);
			break;
		}
		g_free(old);
	}
	while (subj[0] == '[') {
		char *br = re_group("^\\[([^]]*)]", subj, 0, 1), *fixed, **chunks, *rest;
		int i;

		if (!br)
			break;
		g_strstrip(br);
		fixed = re_sub("(patch)(v\\d+)", "\\1 \\2", br, G_REGEX_CASELESS);
		g_free(br);
		chunks = g_regex_split_simple("\\s+", fixed, 0, 0);
		for (i = 0; chunks[i]; i++) {
			char *c = chunks[i], *e;
			char *lc;

			if (!*c)
				continue;
			/* chunk.strip(',;') */
			while (*c == ',' || *c == ';')
				c++;
			e = c + strlen(c);
			while (e > c && (e[-1] == ',' || e[-1] == ';'))
				*--e = '\0';
			lc = g_ascii_strdown(c, -1);
			if (re_search("^\\d{1,4}/\\d{1,4}$", c, 0)) {
				s->counter = atoi(c);
				s->expected = atoi(strchr(c, '/') + 1);
				s->counters_inferred = 0;
			} else if (re_search("^v\\d+$", c, G_REGEX_CASELESS)) {
				s->revision = atoi(c + 1);
				s->revision_inferred = 0;
			} else if (!strncmp(lc, "rfc", 3)) {
				s->rfc = 1;
			} else if (!strncmp(lc, "resend", 6)) {
				s->resend = 1;
			} else if (!strncmp(lc, "patch", 5)) {
				s->patch = 1;
			}
			g_free(lc);
			g_ptr_array_add(s->prefixes, g_strdup(c));
		}
		g_strfreev(chunks);
		g_free(fixed);
		rest = re_sub("^\\s*\\[[^]]*]\\s*", "", subj, 0);
		g_free(subj);
		subj = rest;
	}
	s->subject = subj;
}

/* ---- LoreTrailer ---- */

static const char *const utility[] = { "fixes", "link", "buglink", "obsoleted-by",
				       "message-id", "change-id", "base-commit", NULL };

static int in_set(const char *const *set, const char *s)
{
	for (; *set; set++)
		if (!strcmp(*set, s))
			return 1;
	return 0;
}

/* email.utils.parseaddr, as far as trailers need it */
void parseaddr(const char *v, char **name, char **email)
{
	InternetAddressList *l = internet_address_list_parse(NULL, v);
	int i, n = l ? internet_address_list_length(l) : 0;

	*name = *email = NULL;
	for (i = 0; i < n; i++) {
		InternetAddress *a = internet_address_list_get_address(l, i);

		if (INTERNET_ADDRESS_IS_MAILBOX(a)) {
			const char *nm = internet_address_get_name(a);

			*name = g_strdup(nm ? nm : "");
			*email = g_strdup(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a)));
			break;
		}
	}
	if (l)
		g_object_unref(l);
	if (!*email) {
		*name = g_strdup("");
		*email = g_strdup("");
	}
}

struct trailer *trailer_new(const char *name, const char *value, const char *extinfo)
{
	struct trailer *t = g_new0(struct trailer, 1);

	t->name = g_strdup(name);
	t->value = g_strdup(value);
	t->lname = g_utf8_strdown(name, -1);
	t->extinfo = extinfo ? g_strdup(extinfo) : NULL;
	if (!in_set(utility, t->lname) && !strstr(value, "://") &&
	    re_search("\\S+@\\S+\\.\\S+", value, 0)) {
		t->person = 1;
		parseaddr(value, &t->addr_name, &t->addr_email);
	}
	return t;
}

void trailer_free(struct trailer *t)
{
	if (!t)
		return;
	g_free(t->name);
	g_free(t->lname);
	g_free(t->value);
	g_free(t->extinfo);
	g_free(t->addr_name);
	g_free(t->addr_email);
	g_free(t);
}

int trailer_eq(const struct trailer *a, const struct trailer *b)
{
	char *x, *y;
	int eq;

	if (strcmp(a->lname, b->lname))
		return 0;
	x = g_utf8_strdown(a->value, -1);
	y = g_utf8_strdown(b->value, -1);
	eq = !strcmp(x, y);
	g_free(x);
	g_free(y);
	return eq;
}

void trailer_append(GString *s, const struct trailer *t, int omit_extinfo)
{
	const char *e = t->extinfo;

	g_string_append_printf(s, "%s: %s", t->name, t->value);
	if (!e || omit_extinfo)
		return;
	while (*e && isspace((unsigned char)*e))
		e++;
	if (*e == '#')
		g_string_append(s, t->extinfo);
	else
		g_string_append_printf(s, "\n%s", t->extinfo);
}

/* LoreTrailer.email_eq(fuzzy=True) */
static int email_eq(const struct trailer *t, const char *cmp)
{
	char *our, *their, *o2, *t2, *oat, *tat;
	int eq = 0;

	if (!t->person || !t->addr_email)
		return 0;
	our = g_utf8_strdown(t->addr_email, -1);
	their = g_utf8_strdown(cmp, -1);
	if (!strcmp(our, their)) {
		eq = 1;
		goto out;
	}
	if (!strchr(our, '@') || !strchr(their, '@'))
		goto out;
	o2 = re_sub("\\+[^@]+@", "@", our, 0);
	t2 = re_sub("\\+[^@]+@", "@", their, 0);
	g_free(our);
	g_free(their);
	our = o2;
	their = t2;
	if (!strcmp(our, their)) {
		eq = 1;
		goto out;
	}
	oat = strchr(our, '@');
	tat = strchr(their, '@');
	if (oat - our == tat - their && !strncmp(our, their, (size_t)(oat - our))) {
		const char *od = oat + 1, *td = tat + 1, *p;
		int oc = 0, tc = 0;
		size_t ol = strlen(od), tl = strlen(td);

		for (p = od; *p; p++)
			oc += *p == '.';
		for (p = td; *p; p++)
			tc += *p == '.';
		if (abs(oc - tc) == 1 &&
		    ((ol > tl && od[ol - tl - 1] == '.' && !strcmp(od + ol - tl, td)) ||
		     (tl > ol && td[tl - ol - 1] == '.' && !strcmp(td + tl - ol, od))))
			eq = 1;
	}
out:
	g_free(our);
	g_free(their);
	return eq;
}

void find_trailers(const char *body, int followup, GPtrArray *trailers, GPtrArray *others)
{
	static const char *const ignores[] = { "phone", "email", NULL };
	static const char *const headers[] = { "subject", "date", "from", NULL };
	static const char *const nonperson[] = { "fixes", "subject", "date", "link", "buglink",
						 "obsoleted-by", "change-id", "base-commit", NULL };
	const char *sig = strstr(body, "\n-- \n");
	char *b = sig ? g_strndup(body, (gsize)(sig - body)) : g_strdup(body), *c, **lines;
	GRegex *tre = g_regex_new("(*UCP)^\\s*(\\w\\S+):\\s+(\\S.*)", G_REGEX_CASELESS, 0, NULL);
	int was_trailer = 0, i;

	g_strstrip(b);
	c = g_strconcat(b, "\n", NULL);
	g_free(b);
	b = re_sub("^(\\S+:\\s+[\\da-f]+\\s+\\([^)]+)\\n([^\\n]+\\))", "\\1 \\2", c, G_REGEX_MULTILINE);
	g_free(c);
	c = re_sub("^(\\S+:\\s+[^<]+)\\n(<[^>]+>)$", "\\1 \\2", b, G_REGEX_MULTILINE);
	g_free(b);
	lines = g_strsplit(c, "\n", -1);
	g_free(c);
	for (i = 0; lines[i]; i++) {
		char *line = lines[i], *e = line + strlen(line);
		GMatchInfo *mi = NULL;

		/* line.strip('\r') */
		while (*line == '\r')
			line++;
		while (e > line && e[-1] == '\r')
			*--e = '\0';
		if (tre && g_regex_match(tre, line, 0, &mi)) {
			char *oname = g_match_info_fetch(mi, 1), *ovalue = g_match_info_fetch(mi, 2);
			char *lname = g_utf8_strdown(oname, -1), *extinfo = NULL, *v;
			int skip = in_set(ignores, lname) || (others->len && in_set(headers, lname));
			const char *q;

			for (q = lname; followup && !skip && *q; q++)
				if ((unsigned char)*q >= 0x80)
					skip = 1;
			if (followup && !skip &&
			    ((!re_search("\\S+@\\S+\\.\\S+", ovalue, 0) && !in_set(nonperson, lname)) ||
			     re_search("https?://", ovalue, 0)))
				skip = 1;
			g_match_info_free(mi);
			if (skip) {
				g_free(oname);
				g_free(ovalue);
				g_free(lname);
				continue;
			}
			if ((v = re_group("(.*\\S+)(\\s+#[^#]+)$", ovalue, 0, 1))) {
				extinfo = re_group("(.*\\S+)(\\s+#[^#]+)$", ovalue, 0, 2);
				g_free(ovalue);
				ovalue = v;
			}
			was_trailer = 1;
			g_ptr_array_add(trailers, trailer_new(oname, ovalue, extinfo));
			g_free(oname);
			g_free(ovalue);
			g_free(lname);
			g_free(extinfo);
			continue;
		}
		g_match_info_free(mi);
		if (strlen(line) > 2 && was_trailer && re_search("^\\s*\\[[^]]+]\\s*$", line, 0)) {
			struct trailer *t = trailers->pdata[trailers->len - 1];

			g_free(t->extinfo);
			t->extinfo = g_strdup(line);
			was_trailer = 0;
			continue;
		}
		was_trailer = 0;
		g_ptr_array_add(others, g_strdup(line));
	}
	g_strfreev(lines);
	if (tre)
		g_regex_unref(tre);
}

/* ---- LoreMessage ---- */

/* get_clean_msgid: the first <...> of a header, NULL when none */
static char *clean_msgid(GMimeObject *o, const char *h)
{
	GPtrArray *v = cache_hdr_str(o, h);
	char *id = NULL;

	if (v->len)
		id = re_group("<([^>]+)>", v->pdata[0], 0, 1);
	g_ptr_array_unref(v);
	return id;
}

static char *first_hdr(GMimeObject *o, const char *h, int decoded)
{
	GPtrArray *v = decoded ? cache_hdr_str(o, h) : cache_hdr_raw(o, h);
	const char *h0 = v->len ? (const char *)v->pdata[0] : "";
	/* valid UTF-8 always (raw 8-bit bytes are no text): GLib's regexes
	 * fail on anything else, and the name is made of it */
	char *s = g_utf8_make_valid(h0, -1);

	g_ptr_array_unref(v);
	return s;
}

/* a text part's bytes as UTF-8 (errors='replace') */
static char *part_text(GMimePart *part, const char *mcharset)
{
	GMimeContentType *ct = g_mime_object_get_content_type(GMIME_OBJECT(part));
	const char *cs = ct ? g_mime_content_type_get_parameter(ct, "charset") : NULL;
	GByteArray *a;
	int cut;
	char *out = NULL;

	a = cache_part_body_max(part, BODY_MAX, &cut);
	if (!cs || !*cs)
		cs = mcharset;
	if (g_ascii_strcasecmp(cs, "utf-8") && g_ascii_strcasecmp(cs, "us-ascii"))
		out = g_convert_with_fallback((const char *)a->data, a->len, "UTF-8", cs, "\xef\xbf\xbd",
					      NULL, NULL, NULL);
	if (!out)       /* an empty part has no data at all */
		out = a->len ? g_utf8_make_valid((const char *)a->data, a->len) : g_strdup("");
	g_byte_array_unref(a);
	return out;
}

struct walk_ctx {
	struct lmsg *m;
	const char *mcharset;
};

static void walk_part(GMimeObject *parent, GMimeObject *part, gpointer data)
{
	struct walk_ctx *w = data;
	GMimeContentType *ct;
	const char *sub;
	char *text;

	(void)parent;
	if (!GMIME_IS_PART(part))
		return;
	ct = g_mime_object_get_content_type(part);
	sub = ct ? g_mime_content_type_get_media_subtype(ct) : NULL;
	if (!sub || (g_ascii_strcasecmp(sub, "plain") && g_ascii_strcasecmp(sub, "x-patch")))
		return;
	text = part_text(GMIME_PART(part), w->mcharset);
	if (!w->m->body) {
		w->m->body = text;
		return;
	}
	/* a later part with a diff is the one */
	if (re_search("^(---.*\\n\\+\\+\\+|GIT binary patch|diff --git \\w/\\S+ \\w/\\S+)", text,
		      G_REGEX_MULTILINE | G_REGEX_CASELESS)) {
		g_free(w->m->body);
		w->m->body = text;
	} else {
		g_free(text);
	}
}

/* patchwork's hash of a diff (get_patchwork_hash) */
static char *pw_hash(const char *diff)
{
	GChecksum *h = g_checksum_new(G_CHECKSUM_SHA1);
	GRegex *hunk = g_regex_new("^@@ -\\d+(?:,(\\d+))? \\+\\d+(?:,(\\d+))? @@", 0, 0, NULL);
	GRegex *fname = g_regex_new("^(---|\\+\\+\\+) (\\S+)", 0, 0, NULL);
	char **lines = g_strsplit(diff, "\n", -1), *out;
	int i;

	for (i = 0; lines[i]; i++) {
		char *line = lines[i];
		GMatchInfo *mi = NULL;
		GString *s = NULL;

		if (!*line)
			continue;
		if (g_regex_match(fname, line, 0, &mi)) {
			char *g1 = g_match_info_fetch(mi, 1), *g2 = g_match_info_fetch(mi, 2);
			const char *slash = strchr(g2, '/');

			s = g_string_new(g1);
			g_string_append(s, !strcmp(g1, "---") ? " a/" : " b/");
			g_string_append(s, slash ? slash + 1 : "");
			g_free(g1);
			g_free(g2);
		} else {
			g_match_info_free(mi);
			mi = NULL;
			if (g_regex_match(hunk, line, 0, &mi)) {
				char *a = g_match_info_fetch(mi, 1), *b = g_match_info_fetch(mi, 2);

				s = g_string_new(NULL);
				g_string_printf(s, "@@ -%d +%d @@", a && *a ? atoi(a) : 1,
						b && *b ? atoi(b) : 1);
				g_free(a);
				g_free(b);
			} else if (line[0] == '-' || line[0] == '+' || line[0] == ' ') {
				s = g_string_new(line);
			}
		}
		g_match_info_free(mi);
		if (s) {
			g_string_append_c(s, '\n');
			g_checksum_update(h, (const guchar *)s->str, (gssize)s->len);
			g_string_free(s, TRUE);
		}
	}
	out = g_strdup(g_checksum_get_string(h));
	g_strfreev(lines);
	g_regex_unref(hunk);
	g_regex_unref(fname);
	g_checksum_free(h);
	return out;
}

struct lmsg *lmsg_new(const char *raw, size_t len)
{
	static const char *const bad[] = { "from", "author", "cc", "to", NULL };
	GByteArray *hold;
	GMimeMessage *msg = cache_mail_parse(raw, len, &hold);
	GMimeObject *o;
	struct lmsg *m;
	InternetAddressList *from;
	GDateTime *dt;
	GMimeContentType *ct;
	struct walk_ctx w;
	char *subj;
	guint i;

	if (!msg) {
		cache_mail_done(NULL, hold);
		return NULL;
	}
	o = GMIME_OBJECT(msg);
	m = g_new0(struct lmsg, 1);
	m->raw = raw;
	m->len = len;
	m->trailers = g_ptr_array_new_with_free_func((GDestroyNotify)trailer_free);
	m->followup_trailers = g_ptr_array_new();
	m->msgid = clean_msgid(o, "Message-Id");
	m->in_reply_to = clean_msgid(o, "In-Reply-To");
	m->references = first_hdr(o, "References", 0);
	m->from_hdr = first_hdr(o, "From", 0);
	m->date_hdr = first_hdr(o, "Date", 0);
	m->subject_hdr = first_hdr(o, "Subject", 0);
	subj = first_hdr(o, "Subject", 1);
	lsubject_parse(&m->ls, subj);
	g_free(subj);
	m->reply = m->ls.reply;
	m->revision = m->ls.revision;
	m->counter = m->ls.counter;
	m->expected = m->ls.expected;
	m->revision_inferred = m->ls.revision_inferred;
	m->counters_inferred = m->ls.counters_inferred;
	if (m->counter > m->expected)   /* [PATCH 6/5] */
		m->expected = m->counter;
	from = g_mime_message_get_from(msg);
	m->fromname = g_strdup("");
	m->fromemail = g_strdup("");
	if (from && internet_address_list_length(from) > 0) {
		InternetAddress *a = internet_address_list_get_address(from, 0);

		if (INTERNET_ADDRESS_IS_MAILBOX(a)) {
			const char *nm = internet_address_get_name(a);

			g_free(m->fromname);
			g_free(m->fromemail);
			m->fromemail = g_strdup(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a)));
			char *t = g_strstrip(g_strdup(nm ? nm : ""));

			m->fromname = g_strdup(*t ? nm : m->fromemail);
			g_free(t);
		}
	}
	dt = g_mime_message_get_date(msg);
	if (dt) {
		char *d = g_date_time_format(dt, "%Y%m%d");

		m->date = g_date_time_to_unix(dt);
		g_strlcpy(m->datestamp, d ? d : "19700101", sizeof(m->datestamp));
		g_free(d);
	} else {
		GDateTime *now = g_date_time_new_now_utc();
		char *d = g_date_time_format(now, "%Y%m%d");

		m->date = g_date_time_to_unix(now);
		g_strlcpy(m->datestamp, d, sizeof(m->datestamp));
		g_free(d);
		g_date_time_unref(now);
	}
	ct = g_mime_object_get_content_type(o);
	w.m = m;
	w.mcharset = ct && g_mime_content_type_get_parameter(ct, "charset") ?
		     g_mime_content_type_get_parameter(ct, "charset") : "utf-8";
	if (GMIME_IS_PART(g_mime_message_get_mime_part(msg)))
		walk_part(NULL, g_mime_message_get_mime_part(msg), &w);
	else
		g_mime_message_foreach(msg, walk_part, &w);
	cache_mail_done(msg, hold);
	if (!m->body)
		return m;
	m->has_diffstat = re_search("^\\s*\\d+ file.*\\d+ (insertion|deletion)", m->body,
				    G_REGEX_MULTILINE | G_REGEX_CASELESS);
	m->has_diff = re_search("^(---.*\\n\\+\\+\\+|GIT binary patch|diff --git \\w/\\S+ \\w/\\S+)",
				m->body, G_REGEX_MULTILINE | G_REGEX_CASELESS);
	if (m->has_diff)
		m->pwhash = pw_hash(m->body);
	{
		GPtrArray *tr = g_ptr_array_new_with_free_func((GDestroyNotify)trailer_free);
		GPtrArray *others = g_ptr_array_new_with_free_func(g_free);

		find_trailers(m->body, 1, tr, others);
		if (tr->len && m->in_reply_to && !m->has_diff)
			m->reply = 1;   /* a follow-up missing its Re: */
		for (i = 0; m->reply && i < tr->len; i++) {
			struct trailer *t = tr->pdata[i];

			if (!in_set(bad, t->lname)) {
				g_ptr_array_add(m->trailers, t);
				tr->pdata[i] = NULL;
			}
		}
		g_ptr_array_free(tr, TRUE);
		g_ptr_array_free(others, TRUE);
	}
	return m;
}

void lmsg_free(struct lmsg *m)
{
	if (!m)
		return;
	g_free(m->msgid);
	g_free(m->in_reply_to);
	g_free(m->references);
	lsubject_clear(&m->ls);
	g_free(m->fromname);
	g_free(m->fromemail);
	g_free(m->from_hdr);
	g_free(m->date_hdr);
	g_free(m->subject_hdr);
	g_free(m->body);
	g_free(m->pwhash);
	g_ptr_array_free(m->trailers, TRUE);
	g_ptr_array_free(m->followup_trailers, TRUE);
	g_free(m);
}

void lmsg_get_trailers(struct lmsg *m, GPtrArray *out, GPtrArray *mism)
{
	guint i;

	for (i = 0; i < m->trailers->len; i++) {
		struct trailer *t = m->trailers->pdata[i];
		char *tl, *hl;
		int nmatch;

		t->from = m;
		if (!t->person || email_eq(t, m->fromemail)) {
			g_ptr_array_add(out, t);
			continue;
		}
		tl = g_utf8_strdown(t->addr_name ? t->addr_name : "", -1);
		hl = g_utf8_strdown(m->fromname, -1);
		/* b4 looks for each comma-separated part of the From name in
		 * the From name itself: a comma in it is a match */
		nmatch = !strcmp(tl, hl) || strchr(hl, ',') > hl;
		g_free(tl);
		g_free(hl);
		if (nmatch)
			g_ptr_array_add(out, t);
		else if (mism)
			g_ptr_array_add(mism, t);
	}
}
