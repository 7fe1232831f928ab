/*
 * One message as b4 0.12 reads it (series-private.h): LoreSubject,
 * LoreTrailer, LoreMessage, and the patch b4 writes for it into am.mbx
 * (get_am_message, fix_trailers, get_body_parts, rebuild_message), with the
 * part of `git mailinfo --scissors` it runs on the way (in-body headers,
 * scissors, the subject's cleanup) written here rather than run: a fork per
 * patch would cost seconds on a list's worth of series.
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

/* ---- the patch in am.mbx ---- */

/* git mailinfo's cleanup_subject and cleanup_space */
static char *cleanup_subject(const char *subject)
{
	GString *s = g_string_new(subject);
	size_t at = 0;

	while (at < s->len) {
		char c = s->str[at];

		if ((c == 'r' || c == 'R') && s->len > at + 3 &&
		    (s->str[at + 1] == 'e' || s->str[at + 1] == 'E') && s->str[at + 2] == ':') {
			g_string_erase(s, (gssize)at, 3);
			continue;
		}
		if (c == ' ' || c == '\t' || c == ':') {
			g_string_erase(s, (gssize)at, 1);
			continue;
		}
		if (c == '[') {
			const char *pos = strchr(s->str + at, ']');

			if (pos) {
				g_string_erase(s, (gssize)at, (gssize)(pos - (s->str + at) + 1));
				continue;
			}
		}
		break;
	}
	/* then cleanup_space: a run of white space is one space */
	for (at = 0; at < s->len; at++)
		if (isspace((unsigned char)s->str[at])) {
			size_t run = 0;

			s->str[at] = ' ';
			while (at + 1 + run < s->len && isspace((unsigned char)s->str[at + 1 + run]))
				run++;
			g_string_erase(s, (gssize)at + 1, (gssize)run);
		}
	return g_strstrip(g_string_free(s, FALSE));
}

/* git mailinfo's is_scissors_line */
static int is_scissors(const char *line)
{
	const char *c, *first = NULL, *last = NULL;
	int scissors = 0, gap = 0, perforation = 0, in_perforation = 0;
	long visible;

	for (c = line; *c; c++) {
		if (isspace((unsigned char)*c)) {
			if (in_perforation) {
				perforation++;
				gap++;
			}
			continue;
		}
		last = c;
		if (!first)
			first = c;
		if (*c == '-') {
			in_perforation = 1;
			perforation++;
			continue;
		}
		if (!strncmp(c, ">8", 2) || !strncmp(c, "8<", 2) || !strncmp(c, ">%", 2) ||
		    !strncmp(c, "%<", 2)) {
			in_perforation = 1;
			perforation += 2;
			scissors += 2;
			c++;
			continue;
		}
		in_perforation = 0;
	}
	if (!first)
		return 0;
	visible = last - first + 1;
	return scissors && 8 <= visible && visible < perforation * 3 && gap * 2 < perforation;
}

/* in-body "From:", "Subject:", "Date:" at the top of a body (mailinfo's
 * check_inbody_header, for the headers b4's patches carry) */
static int inbody_header(const char *line, const char **name)
{
	static const char *const hs[] = { "From", "Subject", "Date" };
	size_t i, n;

	for (i = 0; i < 3; i++) {
		n = strlen(hs[i]);
		if (!g_ascii_strncasecmp(line, hs[i], n) && line[n] == ':') {
			*name = hs[i];
			return 1;
		}
	}
	return 0;
}

/* mailinfo's patchbreak */
static int patchbreak(const char *line)
{
	size_t i, len = strlen(line);

	if (!strncmp(line, "diff -", 6) || !strncmp(line, "Index: ", 7))
		return 1;
	if (len < 3 || strncmp(line, "---", 3))
		return 0;
	if (len == 3)
		return 1;       /* "---\n" */
	if (line[3] == ' ' && len > 4 && !isspace((unsigned char)line[4]))
		return 1;
	for (i = 3; i < len; i++)
		if (!isspace((unsigned char)line[i]))
			return 0;
	return 1;
}

/* Python's email.utils writes a zone it does not know (none, "-0000",
 * a name outside RFC 2822's list) as "-0000": b4's am message has it so */
static int zone_unknown(const char *v)
{
	static const char *const known[] = { "UT", "UTC", "GMT", "Z", "AST", "ADT", "EST",
					     "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT" };
	const char *end = v + strlen(v), *tok;
	size_t i, len;

	while (end > v && g_ascii_isspace(end[-1]))
		end--;
	if (end > v && end[-1] == ')') {         /* a trailing comment: "(IST)" */
		while (end > v && end[-1] != '(')
			end--;
		if (end > v)
			end--;
		while (end > v && g_ascii_isspace(end[-1]))
			end--;
	}
	for (tok = end; tok > v && !g_ascii_isspace(tok[-1]); tok--)
		;
	len = (size_t)(end - tok);
	if (len == 5 && (*tok == '+' || *tok == '-') && g_ascii_isdigit(tok[1]))
		return !strncmp(tok, "-0000", 5);
	for (i = 0; i < G_N_ELEMENTS(known); i++)
		if (strlen(known[i]) == len && !g_ascii_strncasecmp(tok, known[i], len))
			return 0;
	return 1;
}

/* mailinfo's Date: the date as RFC 2822 writes it, in its own zone
 * ("Wed, 05 Jun 2019 15:26:13 +0300"); as it is when it does not parse */
static char *rfc2822_date(const char *v)
{
	static const char *const wd[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };
	static const char *const mo[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul",
					  "Aug", "Sep", "Oct", "Nov", "Dec" };
	GDateTime *dt = v && *v ? g_mime_utils_header_decode_date(v) : NULL;
	GTimeSpan off;
	char *s;
	long mins;

	if (!dt)
		return g_strdup(v ? v : "");
	off = g_date_time_get_utc_offset(dt);
	mins = (long)(off / G_TIME_SPAN_MINUTE);
	s = g_strdup_printf("%s, %02d %s %d %02d:%02d:%02d %c%02ld%02ld",
			    wd[g_date_time_get_day_of_week(dt) - 1], g_date_time_get_day_of_month(dt),
			    mo[g_date_time_get_month(dt) - 1], g_date_time_get_year(dt),
			    g_date_time_get_hour(dt), g_date_time_get_minute(dt),
			    g_date_time_get_second(dt), mins < 0 || zone_unknown(v) ? '-' : '+',
			    labs(mins) / 60,
			    labs(mins) % 60);
	g_date_time_unref(dt);
	return s;
}

struct mailinfo {
	char *author, *email, *subject, *date;
	GString *msg, *patch;
};

/* the part of `git mailinfo --encoding=UTF-8 --scissors` b4's am reads:
 * Author, Email, Subject, Date, and the message and patch of the body */
static void mailinfo(const struct lmsg *m, const char *body, struct mailinfo *mi)
{
	char **lines = g_strsplit(body, "\n", -1), *from, *subj;
	int i, header_stage = 1, in_patch = 0;
	char *ib_from = NULL, *ib_subject = NULL, *ib_date = NULL;

	mi->msg = g_string_new(NULL);
	mi->patch = g_string_new(NULL);
	/* handle_commit_msg, line by line */
	for (i = 0; lines[i]; i++) {
		char *line = lines[i];
		const char *hn;
		size_t l = strlen(line);

		if (!lines[i + 1] && !l)
			break;  /* the split's empty tail */
		if (in_patch) {
			g_string_append_printf(mi->patch, "%s\n", line);
			continue;
		}
		if (header_stage && !l) {
			if (ib_from || ib_subject || ib_date)
				header_stage = 0;
			continue;
		}
		if (header_stage && inbody_header(line, &hn)) {
			char *v = g_strstrip(g_strdup(line + strlen(hn) + 1));
			char **slot = !strcmp(hn, "From") ? &ib_from :
				      !strcmp(hn, "Subject") ? &ib_subject : &ib_date;

			if (!*slot) {
				*slot = v;
				continue;
			}
			g_free(v);
		}
		header_stage = 0;
		if (is_scissors(line)) {
			/* what came before the scissors is not the message */
			g_string_truncate(mi->msg, 0);
			g_free(ib_from);
			g_free(ib_subject);
			g_free(ib_date);
			ib_from = ib_subject = ib_date = NULL;
			header_stage = 1;
			continue;
		}
		if (patchbreak(line)) {
			in_patch = 1;
			g_string_append_printf(mi->patch, "%s\n", line);
			continue;
		}
		g_string_append_printf(mi->msg, "%s\n", line);
	}
	g_strfreev(lines);
	/* handle_info: in-body headers count only with a patch ("---" on):
	 * a cover letter keeps its mail's From, Subject and Date */
	if (!mi->patch->len) {
		g_free(ib_from);
		g_free(ib_subject);
		g_free(ib_date);
		ib_from = ib_subject = ib_date = NULL;
	}
	from = ib_from ? ib_from : g_mime_utils_header_decode_text(NULL, m->from_hdr);
	{
		char *n = NULL, *e = NULL;

		parseaddr(from, &n, &e);
		/* get_sane_name: no name, or one that is no name, is the address */
		if (!*n || strlen(n) > 60 || strpbrk(n, "@<>")) {
			g_free(n);
			n = g_strdup(e);
		}
		mi->author = n;
		mi->email = e;
	}
	if (from != ib_from)
		g_free(from);
	subj = ib_subject ? ib_subject : g_mime_utils_header_decode_text(NULL, m->subject_hdr);
	mi->subject = cleanup_subject(subj);
	g_free(subj);
	mi->date = rfc2822_date(ib_date ? ib_date : m->date_hdr);
	g_free(ib_date);
	g_free(ib_from);
}

static void mailinfo_clear(struct mailinfo *mi)
{
	g_free(mi->author);
	g_free(mi->email);
	g_free(mi->subject);
	g_free(mi->date);
	g_string_free(mi->msg, TRUE);
	g_string_free(mi->patch, TRUE);
}

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
