/*
 * A message's index document (see terms.h): SearchIdx.pm's eml2doc with
 * gmime doing what PublicInbox::Eml does (RFC 2047, transfer encodings,
 * charsets, the MIME tree).  By hand where public-inbox's rules are its
 * own: which header values are joined how (Smsg populate), what counts as
 * quoted (MsgIter split_quotes), which parts are text (msg_part_text), the
 * Received date (MsgTime), the size with CRLF line ends (Smsg set_bytes).
 */
#include <ctype.h>
#include <errno.h>
#include <gmime/gmime.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache-private.h"
#include "cache/terms.h"

#define MAX_MID_SIZE 244        /* Xapian's term limit less 'Q' */

/* Smsg populate: every value, decoded, joined by ", ", \r dropped and
 * NUL, tab and newline made spaces */
static char *header_joined(GMimeObject *o, const char *name)
{
	GPtrArray *v = cache_hdr_str(o, name);
	GString *s = g_string_new(NULL);
	guint i;
	gsize j;

	for (i = 0; i < v->len; i++) {
		if (i)
			g_string_append(s, ", ");
		g_string_append(s, v->pdata[i]);
	}
	g_ptr_array_unref(v);
	for (i = 0, j = 0; i < s->len; i++) {
		char c = s->str[i];

		if (c == '\r')
			continue;
		if (c == '\t' || c == '\n')
			c = ' ';
		s->str[j++] = c;
	}
	g_string_truncate(s, j);
	return g_string_free(s, FALSE);
}

/* index_headers */
static void index_headers(struct term_doc *d, GMimeObject *o)
{
	static const char *const h[][2] = {
		{ "From", "A" }, { "To", "XTO" }, { "Cc", "XCC" }, { "Subject", "S" },
	};
	size_t i;

	for (i = 0; i < 4; i++) {
		char *v = header_joined(o, h[i][0]);

		if (*v)
			term_add(d, TERM_TEXT, h[i][1], v, strlen(v), 1);
		g_free(v);
	}
}

static int word_run(const char *s, size_t min)
{
	size_t n = 0;

	for (; *s; s++) {
		if (isalnum((unsigned char)*s) || *s == '_') {
			if (++n >= min)
				return 1;
		} else {
			n = 0;
		}
	}
	return 0;
}

/* mids_for_index + index_ids + index_list_id */
static void index_ids(struct term_doc *d, GMimeObject *o)
{
	static const char *const hdrs[] = { "Message-ID", "X-Alt-Message-ID" };
	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GPtrArray *mids = g_ptr_array_new_with_free_func(g_free), *v;
	guint i, j;

	for (j = 0; j < 2; j++) {
		v = cache_hdr_raw(o, hdrs[j]);
		for (i = 0; i < v->len; i++) {
			const char *val = v->pdata[i];

			if (strchr(val, '<') && strchr(strchr(val, '<'), '>')) {
				cache_extract_ids(val, mids, seen);
			} else {        /* extract_mids: the whole value */
				GString *m = g_string_new(NULL);
				const char *p;

				for (p = val; *p; p++)
					if (*p != '\n' && *p != '\t' && *p != '\r')
						g_string_append_c(m, *p);
				if (!g_hash_table_contains(seen, m->str)) {
					g_hash_table_add(seen, g_strdup(m->str));
					g_ptr_array_add(mids, g_string_free(m, FALSE));
				} else {
					g_string_free(m, TRUE);
				}
			}
		}
		g_ptr_array_unref(v);
	}
	for (i = 0; i < mids->len; i++) {
		char *mid = mids->pdata[i];
		size_t n = strlen(mid);

		if (n > MAX_MID_SIZE)
			mid[n = MAX_MID_SIZE] = '\0';
		term_add(d, TERM_TEXT, "XM", mid, n, 1);
		/* "because too many Message-IDs are prefixed with Pine.LNX." */
		if (word_run(mid, 12)) {
			GString *l = g_string_new(NULL);
			const char *p = mid;

			while (*p) {
				const char *q = p;

				while (*q && (isalnum((unsigned char)*q) || *q == '_'))
					q++;
				if (q - p >= 3) {
					if (l->len)
						g_string_append_c(l, ' ');
					g_string_append_len(l, p, q - p);
				}
				p = *q ? q + 1 : q;
			}
			term_add(d, TERM_TEXT, "XM", l->str, l->len, 1);
			g_string_free(l, TRUE);
		}
	}
	for (i = 0; i < mids->len; i++)
		term_add(d, TERM_BOOL, "Q", mids->pdata[i], strlen(mids->pdata[i]), 1);
	v = cache_hdr_raw(o, "List-Id");
	for (i = 0; i < v->len; i++) {
		const char *lt = strchr(v->pdata[i], '<'), *gt = lt ? strchr(lt + 1, '>') : NULL;
		char *lid;
		size_t k;

		if (!lt || !gt || gt == lt + 1)
			continue;
		lid = g_strndup(lt + 1, (gsize)(gt - lt - 1));
		for (k = 0; lid[k]; k++)
			lid[k] = (char)tolower((unsigned char)lid[k]);
		term_add(d, TERM_BOOL, "G", lid, strlen(lid), 1);
		term_add(d, TERM_TEXT, "XL", lid, strlen(lid), 1);
		g_free(lid);
	}
	g_ptr_array_unref(v);
	g_ptr_array_unref(mids);
	g_hash_table_unref(seen);
}

static int ascii_only(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] >= 0x80)
			return 0;
	return 1;
}

static int printable_utf8(const char *p, size_t n)
{
	const char *e = p + n;

	if (!g_utf8_validate(p, (gssize)n, NULL))
		return 0;
	while (p < e) {
		gunichar c = g_utf8_get_char(p);

		if (!g_unichar_isprint(c) && !g_unichar_isspace(c))
			return 0;
		p = g_utf8_next_char(p);
	}
	return 1;
}

/* msg_part_text: the decoded text of a leaf, NULL if it has none (HTML,
 * binary).  Line ends stay as they are, except that a quoted-printable
 * body gets CRLF for every LF, as Eml's dec_qp gives it: public-inbox then
 * reads a blank line of a patch as "\r", which ends the diff, and leifs
 * must do the same to find the same messages. */
static char *part_text(GMimeObject *o, size_t max, size_t *len)
{
	GMimeContentType *ct = g_mime_object_get_content_type(o);
	const char *type = ct ? g_mime_content_type_get_media_type(ct) : "text";
	const char *sub = ct ? g_mime_content_type_get_media_subtype(ct) : "plain";
	const char *cs = ct ? g_mime_content_type_get_parameter(ct, "charset") : NULL;
	GByteArray *body;
	const char *data;
	char *s = NULL;
	gsize w = 0;
	size_t i, lf = 0;
	int qp, cut;

	if (!GMIME_IS_PART(o))
		return NULL;
	if (!g_ascii_strcasecmp(sub, "html") || !g_ascii_strcasecmp(sub, "xhtml"))
		return NULL;
	body = cache_part_body_max(GMIME_PART(o), max, &cut);
	/* an empty GByteArray has no data at all: neither g_convert nor
	 * pointer arithmetic take NULL, so an empty part reads as "" */
	data = body->len ? (const char *)body->data : "";
	qp = g_mime_part_get_content_encoding(GMIME_PART(o)) ==
	     GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
	if (!g_ascii_strcasecmp(type, "text") ||
	    (!g_ascii_strcasecmp(type, "multipart") && !g_ascii_strcasecmp(sub, "mixed"))) {
		if (!cs && ascii_only((const unsigned char *)data, body->len)) {
			s = g_strndup(data, body->len);
			w = body->len;
		} else if (cs) {
			s = g_convert(data, (gssize)body->len, "UTF-8", cs,
				      NULL, &w, NULL);
		}
		if (!s && g_utf8_validate(data, (gssize)body->len, NULL)) {
			s = g_strndup(data, body->len);
			w = body->len;
		}
		if (!s)
			s = g_convert(data, (gssize)body->len, "UTF-8",
				      "ISO-8859-1", NULL, &w, NULL);
	} else if (!g_ascii_strcasecmp(type, "application") &&
		   !g_ascii_strcasecmp(sub, "octet-stream") &&
		   printable_utf8(data, body->len)) {
		s = g_strndup(data, body->len);
		w = body->len;
	}
	g_byte_array_unref(body);
	if (!s)
		return NULL;
	if (qp) {       /* s/\n/\r\n/sg */
		char *t, *q;

		for (i = 0; i < w; i++)
			lf += s[i] == '\n';
		if (!(t = g_malloc(w + lf + 1))) {
			g_free(s);
			return NULL;
		}
		for (i = 0, q = t; i < w; i++) {
			if (s[i] == '\n')
				*q++ = '\r';
			*q++ = s[i];
		}
		*q = '\0';
		g_free(s);
		s = t;
		w += lf;
	}
	*len = w;
	return s;
}

/* /^(?:diff|---|\+\+\+) /ms */
static int looks_like_diff(const char *s, size_t n)
{
	const char *p = s, *e = s + n;

	while (p < e) {
		if ((e - p >= 5 && !memcmp(p, "diff ", 5)) ||
		    (e - p >= 4 && (!memcmp(p, "--- ", 4) || !memcmp(p, "+++ ", 4))))
			return 1;
		p = memchr(p, '\n', (size_t)(e - p));
		if (!p)
			break;
		p++;
	}
	return 0;
}

/* the body text: patch id, then split_quotes sections */
static void index_text_part(struct term_doc *d, char *s, size_t n)
{
	char hex[41];
	const char *p = s, *e = s + n;

	if (looks_like_diff(s, n) && !cache_patch_id(s, n, hex))
		term_add(d, TERM_RAW, "XDFID", hex, 40, 1);
	/* split(/((?:^>[^\n]*\n)+)/sm): runs of '>' lines and the rest
	 * (the text ends in '\n' for this, as split_quotes makes sure) */
	while (p < e) {
		const char *q = p;
		int quoted = *p == '>';

		while (q < e && (*q == '>') == quoted) {
			const char *nl = memchr(q, '\n', (size_t)(e - q));

			q = nl ? nl + 1 : e;
		}
		if (quoted)
			term_add(d, TERM_TEXT, "XQUOT", p, (size_t)(q - p), 0);
		else if (looks_like_diff(p, (size_t)(q - p)))
			term_diff(d, p, (size_t)(q - p));
		else
			term_add(d, TERM_TEXT, "XNQ", p, (size_t)(q - p), 1);
		p = q;
	}
}

static const char *part_filename(GMimeObject *o)
{
	GMimeContentDisposition *cd;
	const char *fn;

	if (GMIME_IS_PART(o))
		return g_mime_part_get_filename(GMIME_PART(o));
	cd = g_mime_object_get_content_disposition(o);
	if (cd && (fn = g_mime_content_disposition_get_parameter(cd, "filename")))
		return fn;
	return NULL;
}

/* index_xapian, the msg_iter callback */
static void index_part(struct term_doc *d, GMimeObject *o, GMimeMessage *sub)
{
	const char *fn = part_filename(o);
	size_t n = 0;
	char *s;

	if (fn && *fn)
		term_add(d, TERM_TEXT, "XFN", fn, strlen(fn), 1);
	if (sub) {
		index_ids(d, GMIME_OBJECT(sub));
		index_headers(d, GMIME_OBJECT(sub));
	}
	if (d->text_left &&
	    (s = part_text(sub && sub->mime_part ? sub->mime_part : o, d->text_left, &n))) {
		d->text_left -= n < d->text_left ? n : d->text_left;
		index_text_part(d, s, n);
		g_free(s);
	}
}

/* each_part: leaves in order; a message/rfc822 part is a message of its
 * own (is_submsg) whose leaves follow it */
static void walk(struct term_doc *d, GMimeObject *o, int depth, int *budget)
{
	if (--*budget < 0)
		return;
	if (GMIME_IS_MULTIPART(o) && depth < 20) {
		GMimeMultipart *mp = GMIME_MULTIPART(o);
		int i, n = g_mime_multipart_get_count(mp);

		for (i = 0; i < n; i++)
			walk(d, g_mime_multipart_get_part(mp, i), depth + 1, budget);
		return;
	}
	if (GMIME_IS_MESSAGE_PART(o)) {
		GMimeMessage *m = g_mime_message_part_get_message(GMIME_MESSAGE_PART(o));

		if (!m || !m->mime_part) {
			index_part(d, o, NULL);
			return;
		}
		if (GMIME_IS_MULTIPART(m->mime_part) && depth < 20) {
			index_part(d, GMIME_OBJECT(m), m);
			walk(d, m->mime_part, depth + 1, budget);
		} else {
			index_part(d, m->mime_part, m);
		}
		return;
	}
	index_part(d, o, NULL);
}

/* MsgTime msg_received_at: "DD Mon YYYY HH:MM(:SS) +ZZZZ" in a Received */
static int64_t received_at(GMimeObject *o)
{
	static regex_t re;
	static int ready;
	static GMutex lock;
	GPtrArray *v = cache_hdr_raw(o, "Received");
	int64_t t = 0;
	guint i;

	g_mutex_lock(&lock);
	if (!ready)
		ready = !regcomp(&re, "[0-9]+[[:space:]]+[a-zA-Z]+[[:space:]]+[0-9]{2,4}"
				 "[[:space:]]+[0-9]+[^0-9][0-9]+([^0-9][0-9]+)"
				 "[[:space:]]+[-+][0-9]+", REG_EXTENDED);
	g_mutex_unlock(&lock);
	for (i = 0; ready && i < v->len && !t; i++) {
		regmatch_t m[1];

		if (!regexec(&re, v->pdata[i], 1, m, 0)) {
			char *s = g_strndup((char *)v->pdata[i] + m[0].rm_so,
					    (gsize)(m[0].rm_eo - m[0].rm_so));
			GDateTime *dt = g_mime_utils_header_decode_date(s);

			if (dt) {
				t = g_date_time_to_unix(dt);
				g_date_time_unref(dt);
			}
			g_free(s);
		}
	}
	g_ptr_array_unref(v);
	return t;
}

static int64_t date_only(GMimeObject *o)
{
	GPtrArray *v = cache_hdr_raw(o, "Date");
	int64_t t = 0;
	guint i;

	for (i = 0; i < v->len && !t; i++) {
		GDateTime *dt = g_mime_utils_header_decode_date(v->pdata[i]);

		if (dt) {
			t = g_date_time_to_unix(dt);
			g_date_time_unref(dt);
		}
	}
	g_ptr_array_unref(v);
	return t;
}

static double ymd(int64_t t, int with_time)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (!gmtime_r(&tt, &tm))
		return 0;
	double v = (tm.tm_year + 1900) * 10000.0 + (tm.tm_mon + 1) * 100.0 + tm.tm_mday;

	if (with_time)
		v = v * 1000000.0 + tm.tm_hour * 10000.0 + tm.tm_min * 100.0 + tm.tm_sec;
	return v;
}

int cache_terms(const char *raw, size_t len, struct term_doc *d)
{
	GByteArray *hold;
	GMimeMessage *msg;
	GMimeObject *top;
	int64_t recv, date, ts, ds;
	int budget = CACHE_MIME_PARTS;
	size_t i, lf = 0;

	memset(d, 0, sizeof(*d));
	d->text_left = CACHE_INDEX_TEXT_MAX;
	msg = cache_mail_parse(raw, len, &hold);
	if (!msg) {
		cache_mail_done(NULL, hold);
		return EINVAL;
	}
	top = GMIME_OBJECT(msg);
	recv = received_at(top);
	date = date_only(top);
	ts = recv ? recv : date ? date : (int64_t)time(NULL);
	ds = date ? date : recv ? recv : (int64_t)time(NULL);
	/* set_bytes: the size with every bare LF counted as CRLF */
	for (i = 0; i < len; i++)
		if (raw[i] == '\n' && (i == 0 || raw[i - 1] != '\r'))
			lf++;
	d->ts = (double)ts;
	d->yyyymmdd = ymd(ds, 0);
	d->dt = ymd(ds, 1);
	d->bytes = (double)(len + lf);

	index_headers(d, top);
	if (msg->mime_part)
		walk(d, msg->mime_part, 0, &budget);
	index_ids(d, top);
	term_refs(d, top);
	cache_mail_done(msg, hold);
	if (d->err) {
		cache_terms_free(d);
		return ENOMEM;
	}
	return 0;
}

int cache_thread_ids(const char *raw, size_t len, struct term_doc *d)
{
	GByteArray *hold;
	GMimeMessage *msg;

	memset(d, 0, sizeof(*d));
	msg = cache_mail_parse(raw, len, &hold);
	if (!msg) {
		cache_mail_done(NULL, hold);
		return EINVAL;
	}
	index_ids(d, GMIME_OBJECT(msg));
	term_refs(d, GMIME_OBJECT(msg));
	cache_mail_done(msg, hold);
	if (d->err) {
		int err = d->err;

		cache_terms_free(d);
		return err;
	}
	return 0;
}
