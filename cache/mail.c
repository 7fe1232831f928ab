/*
 * What leifs reads out of a message, with gmime: its date, and lei's
 * content hash (PublicInbox::ContentHash), which decides "content" dedupe.
 *
 * The hash follows ContentHash.pm field by field: References/In-Reply-To
 * ids not in Message-ID; From (else Sender), Subject, Date, To, Cc with
 * RFC 2047 decoded and addresses normalised as digest_addr() does; then
 * every leaf part with its position, filename, description and body, text
 * bodies decoded to UTF-8 as msg_part_text() does.  Where gmime's MIME
 * parse of a malformed message differs from PublicInbox::Eml's, the hashes
 * may differ too; that only matters for two copies of one message in one
 * answer, and then at worst both are kept (see QUIRKS.md).
 */
#include <ctype.h>
#include <errno.h>
#include <gmime/gmime.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache-private.h"

void cache_mail_init(void)
{
	g_mime_init();
}

/* Where gmime stops reading: after CACHE_MIME_PARTS boundary lines ("--"
 * and a boundary some "boundary=" parameter above declared), since each
 * starts a part (an object of a few hundred bytes).  PublicInbox::Eml
 * stops at 1,000 parts as well; the parts kept are whole.  Other lines
 * that start with "--" (a patch's "--- a/file", a signature) are no
 * boundaries; only far more of them than any patch has (a hostile
 * message's undeclared boundaries) stop the parse too. */
#define BOUNDARIES_MAX 256
#define DASH_LINES_MAX (20 * CACHE_MIME_PARTS)

/* the value of a boundary= parameter on this line, if any */
static size_t boundary_at(const char *p, const char *nl, const char **b)
{
	const char *q, *e;

	for (q = p; q + 9 <= nl; q++)
		if (!g_ascii_strncasecmp(q, "boundary=", 9))
			break;
	if (q + 9 > nl)
		return 0;
	q += 9;
	if (q < nl && *q == '"') {
		q++;
		e = memchr(q, '"', (size_t)(nl - q));
		if (!e)
			return 0;
	} else {
		for (e = q; e < nl && *e != ';' && *e != ' ' && *e != '\t' && *e != '\r'; e++)
			;
	}
	*b = q;
	return (size_t)(e - q);
}

static size_t parse_len(const char *raw, size_t len)
{
	const char *p = raw, *end = raw + len;
	const char *bnd[BOUNDARIES_MAX];
	size_t blen[BOUNDARIES_MAX], nb = 0, parts = 0, dashes = 0, i;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		if (le - p >= 2 && p[0] == '-' && p[1] == '-') {
			for (i = 0; i < nb; i++)
				if ((size_t)(le - p) >= 2 + blen[i] &&
				    !memcmp(p + 2, bnd[i], blen[i]))
					break;
			if ((i < nb && ++parts > CACHE_MIME_PARTS + 2) ||
			    ++dashes > DASH_LINES_MAX)
				return (size_t)(p - raw);
		} else if (nb < BOUNDARIES_MAX &&
			   (blen[nb] = boundary_at(p, le, &bnd[nb])) > 0) {
			nb++;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return len;
}

GMimeMessage *cache_mail_parse(const char *raw, size_t len, GByteArray **hold)
{
	GByteArray *a = g_byte_array_new();
	GMimeStream *st;
	GMimeParser *p;
	GMimeMessage *msg;

	/* the parts read raw in place (a seekable stream keeps them as
	 * substreams): no copy of a message that may be max_message long.
	 * The array only lends the bytes; cache_mail_done takes them back.
	 * gmime's parser only reads its stream: nothing resizes the array
	 * (which would realloc the caller's buffer). */
	g_free(a->data);
	a->data = (guint8 *)raw;
	a->len = (guint)parse_len(raw, len < G_MAXUINT ? len : G_MAXUINT);
	st = g_mime_stream_mem_new_with_byte_array(a);
	g_mime_stream_mem_set_owner(GMIME_STREAM_MEM(st), FALSE);
	p = g_mime_parser_new_with_stream(st);
	g_object_unref(st);
	msg = g_mime_parser_construct_message(p, NULL);
	g_object_unref(p);
	*hold = a;
	return msg;
}

void cache_mail_done(GMimeMessage *msg, GByteArray *hold)
{
	if (msg)
		g_object_unref(msg);
	/* the bytes are the caller's: only the array goes */
	hold->data = NULL;
	hold->len = 0;
	g_byte_array_unref(hold);
}

/* cache_hdr_raw(): every value of `name`, unfolded and trimmed */
GPtrArray *cache_hdr_raw(GMimeObject *obj, const char *name)
{
	GMimeHeaderList *hl = g_mime_object_get_header_list(obj);
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	int i, n = g_mime_header_list_get_count(hl);

	for (i = 0; i < n; i++) {
		GMimeHeader *h = g_mime_header_list_get_header_at(hl, i);
		const char *v = g_mime_header_get_raw_value(h);
		GString *s;
		const char *p, *e;

		if (g_ascii_strcasecmp(g_mime_header_get_name(h), name) || !v)
			continue;
		p = v;
		while (*p && isspace((unsigned char)*p))
			p++;
		e = p + strlen(p);
		while (e > p && isspace((unsigned char)e[-1]))
			e--;
		s = g_string_sized_new((gsize)(e - p));
		while (p < e) {
			if (*p == '\r' && p + 1 < e && p[1] == '\n')
				p++;
			if (*p == '\n') {
				p++;
				while (p < e && (*p == ' ' || *p == '\t'))
					p++;
				g_string_append_c(s, ' ');
				continue;
			}
			g_string_append_c(s, *p++);
		}
		g_ptr_array_add(out, g_string_free(s, FALSE));
	}
	return out;
}

/* cache_hdr_str(): RFC 2047 decoded where the value has an encoded word */
GPtrArray *cache_hdr_str(GMimeObject *obj, const char *name)
{
	GPtrArray *v = cache_hdr_raw(obj, name);
	guint i;

	for (i = 0; i < v->len; i++) {
		char *s = v->pdata[i];

		if (strstr(s, "=?")) {
			char *d = g_mime_utils_header_decode_text(NULL, s);

			if (d) {
				g_free(s);
				v->pdata[i] = d;
			}
		}
	}
	return v;
}

static void add(EVP_MD_CTX *d, const void *p, size_t n)
{
	EVP_DigestUpdate(d, p, n);
}

static void add3(EVP_MD_CTX *d, const char *h, const char *v)
{
	add(d, h, strlen(h));
	add(d, "", 1);
	add(d, v, strlen(v));
	add(d, "", 1);
}

/* extract_mids / references: <...> ids, uniq, n/y dropped */
void cache_extract_ids(const char *v, GPtrArray *out, GHashTable *seen)
{
	const char *p = v;

	while ((p = strchr(p, '<'))) {
		const char *e = strchr(p + 1, '>');
		GString *id;
		const char *q;

		if (!e)
			break;
		if (e == p + 1) {
			p = e + 1;
			continue;
		}
		id = g_string_new(NULL);
		for (q = p + 1; q < e; q++)
			if (*q != '\n' && *q != '\t' && *q != '\r')
				g_string_append_c(id, *q);
		p = e + 1;
		if (g_hash_table_contains(seen, id->str)) {
			g_string_free(id, TRUE);
			continue;
		}
		g_hash_table_add(seen, g_strdup(id->str));
		g_ptr_array_add(out, g_string_free(id, FALSE));
	}
}

static void digest_addr(EVP_MD_CTX *d, const char *h, const char *v)
{
	GString *s = g_string_new(NULL);
	const char *p;
	size_t i;

	/* tr/"//d; then tr/\r\n\t / /s: map to ' ', squeeze runs */
	for (p = v; *p; p++) {
		char c = *p;

		if (c == '"')
			continue;
		if (c == '\r' || c == '\n' || c == '\t')
			c = ' ';
		if (c == ' ' && s->len && s->str[s->len - 1] == ' ')
			continue;
		g_string_append_c(s, c);
	}
	/* s/@([a-z0-9\_\.\-\(\)]*([A-Z])\S*)/'@'.lc($1)/ge */
	for (i = 0; i < s->len; i++) {
		size_t j, k;

		if (s->str[i] != '@')
			continue;
		for (j = i + 1; j < s->len && (islower((unsigned char)s->str[j]) ||
					       isdigit((unsigned char)s->str[j]) ||
					       strchr("_.-()", s->str[j])); j++)
			;
		if (j >= s->len || !isupper((unsigned char)s->str[j]))
			continue;
		for (k = i + 1; k < s->len && !isspace((unsigned char)s->str[k]); k++)
			s->str[k] = (char)tolower((unsigned char)s->str[k]);
		i = k - 1;
	}
	add3(d, h, s->str);
	g_string_free(s, TRUE);
}

/* bytes taken as Latin-1, as utf8::encode does to a byte string */
static char *latin1_to_utf8(const char *p, size_t n, size_t *outlen)
{
	gsize w = 0;
	char *s = g_convert(p, (gssize)n, "UTF-8", "ISO-8859-1", NULL, &w, NULL);

	*outlen = s ? w : 0;
	return s;
}

static int ascii_only(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)p[i] >= 0x80)
			return 0;
	return 1;
}

/* the transfer-decoded body of a leaf */
GByteArray *cache_part_body(GMimePart *part)
{
	GMimeDataWrapper *w = g_mime_part_get_content(part);
	GByteArray *a = g_byte_array_new();
	GMimeStream *mem;

	if (!w)
		return a;
	mem = g_mime_stream_mem_new_with_byte_array(a);
	g_mime_stream_mem_set_owner(GMIME_STREAM_MEM(mem), FALSE);
	g_mime_data_wrapper_write_to_stream(w, mem);
	g_object_unref(mem);
	return a;
}

GByteArray *cache_part_body_max(GMimePart *part, size_t max, int *cut)
{
	GMimeDataWrapper *w = g_mime_part_get_content(part);
	GMimeStream *raw, *dec;
	GByteArray *a;
	char buf[8192];
	ssize_t r;

	*cut = 0;
	if (!w || !(raw = g_mime_data_wrapper_get_stream(w)))
		return g_byte_array_new();
	/* decoded as it is read: only what is kept is ever decoded */
	g_mime_stream_reset(raw);
	dec = g_mime_stream_filter_new(raw);
	if (g_mime_data_wrapper_get_encoding(w) != GMIME_CONTENT_ENCODING_DEFAULT) {
		GMimeFilter *f = g_mime_filter_basic_new(g_mime_data_wrapper_get_encoding(w), FALSE);

		g_mime_stream_filter_add(GMIME_STREAM_FILTER(dec), f);
		g_object_unref(f);
	}
	a = g_byte_array_new();
	/* a read may give 0 before the end (a chunk that decodes to
	 * nothing): read to the end of the stream */
	while (!g_mime_stream_eos(dec) && (r = g_mime_stream_read(dec, buf, sizeof(buf))) >= 0) {
		if (a->len + (size_t)r > max) {
			g_byte_array_append(a, (guint8 *)buf, (guint)(max - a->len));
			*cut = 1;
			break;
		}
		g_byte_array_append(a, (guint8 *)buf, (guint)r);
	}
	g_object_unref(dec);
	g_mime_stream_reset(raw);
	if (*cut) {     /* whole lines only: no character is cut in two */
		while (a->len && a->data[a->len - 1] != '\n')
			a->len--;
	}
	return a;
}

static void digest_text(EVP_MD_CTX *d, char *s, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {       /* s/\r\n/\n/g */
		if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n')
			continue;
		s[o++] = s[i];
	}
	while (o && strchr(" \t\r\n\f\v", s[o - 1]))   /* s/\s*\z// */
		o--;
	add(d, s, o);
}

static void digest_leaf(EVP_MD_CTX *d, GMimeObject *obj)
{
	GMimeContentType *ct = g_mime_object_get_content_type(obj);
	const char *type = ct ? g_mime_content_type_get_media_type(ct) : "text";
	const char *sub = ct ? g_mime_content_type_get_media_subtype(ct) : "plain";
	const char *cs = ct ? g_mime_content_type_get_parameter(ct, "charset") : NULL;
	GByteArray *body;
	int text;

	if (!GMIME_IS_PART(obj))
		return;
	body = cache_part_body(GMIME_PART(obj));
	text = !g_ascii_strcasecmp(type, "text") &&
	       g_ascii_strcasecmp(sub, "html") && g_ascii_strcasecmp(sub, "xhtml");
	if (!text && !g_ascii_strcasecmp(type, "application") &&
	    !g_ascii_strcasecmp(sub, "octet-stream") && body->len &&
	    g_utf8_validate((const char *)body->data, (gssize)body->len, NULL)) {
		/* printable text sent as octet-stream is hashed as text */
		const char *p = (const char *)body->data, *e = p + body->len;

		text = 1;
		while (p < e) {
			gunichar c = g_utf8_get_char(p);

			if (!g_unichar_isprint(c) && !g_unichar_isspace(c)) {
				text = 0;
				break;
			}
			p = g_utf8_next_char(p);
		}
		if (text) {
			digest_text(d, (char *)body->data, body->len);
			g_byte_array_unref(body);
			return;
		}
	}
	if (text && body->len) {        /* an empty body hashes as nothing */
		gsize w = 0;
		size_t n = 0;
		char *s = NULL;

		/* text that needs no conversion is digested in place: the
		 * body may be max_message long.  ASCII with no charset ends
		 * at a NUL, as the copy it was hashed from (g_strndup) did. */
		if (!cs && ascii_only((const char *)body->data, body->len)) {
			digest_text(d, (char *)body->data,
				    strnlen((const char *)body->data, body->len));
			g_byte_array_unref(body);
			return;
		}
		if ((!g_ascii_strcasecmp(cs ? cs : "", "utf-8") ||
		     !g_ascii_strcasecmp(cs ? cs : "", "us-ascii")) &&
		    g_utf8_validate((const char *)body->data, (gssize)body->len, NULL)) {
			digest_text(d, (char *)body->data, body->len);
			g_byte_array_unref(body);
			return;
		}
		if (cs) {
			s = g_convert((const char *)body->data, (gssize)body->len,
				      "UTF-8", cs, NULL, &w, NULL);
		}
		if (!s && g_utf8_validate((const char *)body->data,
					  (gssize)body->len, NULL)) {
			s = g_strndup((const char *)body->data, body->len);
			w = body->len;
		}
		if (!s) {
			s = latin1_to_utf8((const char *)body->data, body->len, &n);
			w = n;
		}
		if (s) {
			g_byte_array_unref(body);
			digest_text(d, s, w);
			g_free(s);
			return;
		}
	}
	add(d, body->data, body->len);
	g_byte_array_unref(body);
}

static void digest_part(EVP_MD_CTX *d, GMimeObject *obj, int depth,
			const char *idx)
{
	char hdr[600];
	const char *fn = GMIME_IS_PART(obj) ? g_mime_part_get_filename(GMIME_PART(obj)) : NULL;
	GPtrArray *desc;
	guint i;
	int n;

	n = snprintf(hdr, sizeof(hdr), "%c%d:%s%c", 0, depth, idx, 0);
	add(d, hdr, (size_t)n);
	if (fn)
		add3(d, "fn", fn);
	desc = cache_hdr_str(obj, "Content-Description");
	for (i = 0; i < desc->len; i++)
		add3(d, "d", desc->pdata[i]);
	g_ptr_array_unref(desc);
	add(d, "b", 2);
	digest_leaf(d, obj);
}

/* each_part(): leaves in order, "1", "1.2", ... with depth = dots + 1 */
static void walk(EVP_MD_CTX *d, GMimeObject *obj, int depth, const char *idx,
		 int budget[1])
{
	if (--budget[0] < 0)
		return;
	if (GMIME_IS_MULTIPART(obj) && depth < 20) {
		GMimeMultipart *mp = GMIME_MULTIPART(obj);
		int i, n = g_mime_multipart_get_count(mp);

		for (i = 0; i < n; i++) {
			char sub[512];

			if (*idx)
				snprintf(sub, sizeof(sub), "%s.%d", idx, i + 1);
			else
				snprintf(sub, sizeof(sub), "%d", i + 1);
			walk(d, g_mime_multipart_get_part(mp, i), depth + 1, sub, budget);
		}
		return;
	}
	if (GMIME_IS_MESSAGE_PART(obj)) {
		GMimeMessage *m = g_mime_message_part_get_message(GMIME_MESSAGE_PART(obj));
		char sub[512];

		digest_part(d, obj, depth, *idx ? idx : "1");
		if (m && m->mime_part) {
			snprintf(sub, sizeof(sub), "%s.1", *idx ? idx : "1");
			walk(d, m->mime_part, depth + 1, sub, budget);
		}
		return;
	}
	digest_part(d, obj, depth, *idx ? idx : "1");
}

static void content_hash(GMimeMessage *msg, unsigned char out[CACHE_CHASH_LEN])
{
	GMimeObject *top = GMIME_OBJECT(msg);
	EVP_MD_CTX *d = EVP_MD_CTX_new();
	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GPtrArray *ids = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *v;
	static const char *const refh[] = { "References", "In-Reply-To" };
	static const char *const from[] = { "From", "Sender" };
	static const char *const plain[] = { "Subject", "Date" };
	static const char *const rcpt[] = { "To", "Cc" };
	int budget[1] = { CACHE_MIME_PARTS };
	guint i, j;

	EVP_DigestInit_ex(d, EVP_sha256(), NULL);
	/* Message-IDs are "seen" so they never count as references */
	v = cache_hdr_raw(top, "Message-ID");
	for (i = 0; i < v->len; i++) {
		GPtrArray *tmp = g_ptr_array_new_with_free_func(g_free);

		cache_extract_ids(v->pdata[i], tmp, seen);
		if (!tmp->len && !g_hash_table_contains(seen, v->pdata[i]))
			g_hash_table_add(seen, g_strdup(v->pdata[i]));
		g_ptr_array_unref(tmp);
	}
	g_ptr_array_unref(v);
	g_hash_table_add(seen, g_strdup("y"));
	g_hash_table_add(seen, g_strdup("n"));
	for (j = 0; j < 2; j++) {
		v = cache_hdr_raw(top, refh[j]);
		for (i = 0; i < v->len; i++)
			cache_extract_ids(v->pdata[i], ids, seen);
		g_ptr_array_unref(v);
	}
	for (i = 0; i < ids->len; i++)
		add3(d, "ref", ids->pdata[i]);
	for (j = 0; j < 2; j++) {
		v = cache_hdr_str(top, from[j]);
		for (i = 0; i < v->len; i++)
			digest_addr(d, from[j], v->pdata[i]);
		i = v->len;
		g_ptr_array_unref(v);
		if (i)
			break;
	}
	for (j = 0; j < 2; j++) {
		v = cache_hdr_str(top, plain[j]);
		for (i = 0; i < v->len; i++)
			add3(d, plain[j], v->pdata[i]);
		g_ptr_array_unref(v);
	}
	for (j = 0; j < 2; j++) {
		v = cache_hdr_str(top, rcpt[j]);
		for (i = 0; i < v->len; i++)
			digest_addr(d, rcpt[j], v->pdata[i]);
		g_ptr_array_unref(v);
	}
	if (msg->mime_part)
		walk(d, msg->mime_part, 0, "", budget);
	EVP_DigestFinal_ex(d, out, NULL);
	EVP_MD_CTX_free(d);
	g_ptr_array_unref(ids);
	g_hash_table_unref(seen);
}

#define MAX_DATE INT64_C(253402300799)     /* 9999-12-31T23:59:59Z */

int cache_mail_info(const char *raw, size_t len, int64_t *date,
		    unsigned char chash[CACHE_CHASH_LEN])
{
	GByteArray *hold;
	GMimeMessage *msg = cache_mail_parse(raw, len, &hold);
	GDateTime *dt;

	if (!msg) {
		cache_mail_done(NULL, hold);
		return EINVAL;
	}
	dt = g_mime_message_get_date(msg);
	*date = dt ? g_date_time_to_unix(dt) : 0;
	/* names start with the date: no sign, at most year 9999 */
	if (*date < 0 || *date > MAX_DATE)
		*date = 0;
	content_hash(msg, chash);
	cache_mail_done(msg, hold);
	return 0;
}

/* lei's dedupe=mid key: the raw Message-ID (the first, unfolded, trimmed) */
int cache_mail_mid(const char *raw, size_t len, unsigned char out[CACHE_CHASH_LEN])
{
	GByteArray *hold;
	GMimeMessage *msg = cache_mail_parse(raw, len, &hold);
	GPtrArray *v;
	int err = ENOENT;

	if (!msg) {
		cache_mail_done(NULL, hold);
		return EINVAL;
	}
	v = cache_hdr_raw(GMIME_OBJECT(msg), "Message-ID");
	if (v->len && *(const char *)v->pdata[0]) {
		const char *m = v->pdata[0];

		EVP_Digest(m, strlen(m), out, NULL, EVP_sha256(), NULL);
		err = 0;
	}
	g_ptr_array_unref(v);
	cache_mail_done(msg, hold);
	return err;
}

int cache_mail_msgid(const char *raw, size_t len, char **mid)
{
	GByteArray *hold;
	GMimeMessage *msg = cache_mail_parse(raw, len, &hold);
	const char *m;
	int err = ENOENT;

	*mid = NULL;
	if (!msg) {
		cache_mail_done(NULL, hold);
		return EINVAL;
	}
	m = g_mime_message_get_message_id(msg);
	if (m && *m) {
		err = asprintf(mid, "<%s>", m) < 0 ? ENOMEM : 0;
		if (err)
			*mid = NULL;
	}
	cache_mail_done(msg, hold);
	return err;
}
