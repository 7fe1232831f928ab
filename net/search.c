/*
 * public-inbox search over HTTP(S) with libcurl, streamed: curl's write
 * callback feeds the inflater, which feeds the mboxrd splitter, which hands
 * messages to the caller while the answer is still arriving.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <zlib.h>

#include "net/net.h"

/* of an error status's body, this much is read for its first line */
#define ERR_BODY_MAX 4096
/* and this much of that line is shown */
#define ERR_LINE_MAX 200

struct xfer {
	CURL *curl;
	const struct net_req *req;
	struct net_res *res;
	net_mboxrd_t *split;
	net_gunzip_t *gz;
	int checked;            /* status line seen and judged */
	int skip;               /* 404: discard the body */
	int err;                /* why the write callback stopped curl */
	int errbody;            /* an error status: its body is kept in ebody */
	char ebody[ERR_BODY_MAX];
	size_t elen;
	struct timespec start;  /* for the deadline (CLOCK_MONOTONIC) */
};

static int past_deadline(const struct xfer *x)
{
	struct timespec now;

	if (x->req->deadline <= 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - x->start.tv_sec >= x->req->deadline;
}

static void deadline_error(struct xfer *x)
{
	x->err = ETIMEDOUT;
	snprintf(x->res->error, sizeof(x->res->error),
		 "the search took longer than the deadline of %ld s", x->req->deadline);
}

int net_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : EIO;
}

void net_global_cleanup(void)
{
	curl_global_cleanup();
}

/* application/x-www-form-urlencoded, as URI->query_form writes it */
static void form_encode(char *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._~", c)) {
			*out++ = (char)c;
		} else if (c == ' ') {
			*out++ = '+';
		} else {
			*out++ = '%';
			*out++ = hex[c >> 4];
			*out++ = hex[c & 15];
		}
	}
	*out = '\0';
}

char *net_search_url(const struct net_req *req)
{
	size_t ul = strlen(req->url), ql = strlen(req->query);
	size_t n = ul + 3 * ql + 32;
	char *url = malloc(n), *p;

	if (!url)
		return NULL;
	memcpy(url, req->url, ul);
	p = url + ul;
	if (ul == 0 || url[ul - 1] != '/')
		*p++ = '/';
	memcpy(p, "?q=", 3);
	p += 3;
	form_encode(p, req->query);
	p += strlen(p);
	strcpy(p, req->threads ? "&x=m&t=1" : "&x=m");
	return url;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * nmemb;
	int err;

	if (!x->checked) {
		long code = 0;

		curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &code);
		x->res->http_status = code;
		x->checked = 1;
		if (code == 404) {
			x->skip = 1;
		} else if (code == 429 || code == 503) {
			curl_off_t ra = 0;

			if (curl_easy_getinfo(x->curl, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK &&
			    ra > 0)
				x->res->retry_after = (long)ra;
			x->err = EBUSY;
			snprintf(x->res->error, sizeof(x->res->error),
				 "server busy (HTTP %ld)", code);
			return 0;
		} else if (code != 200) {
			x->err = code >= 500 ? EIO : EPROTO;
			snprintf(x->res->error, sizeof(x->res->error),
				 "server answered HTTP %ld", code);
			x->errbody = 1;
		}
	}
	if (x->errbody) {
		/* the server's reason: the start of the body, then stop */
		size_t n = len < sizeof(x->ebody) - x->elen ? len : sizeof(x->ebody) - x->elen;

		memcpy(x->ebody + x->elen, data, n);
		x->elen += n;
		return x->elen < sizeof(x->ebody) ? len : 0;
	}
	x->res->bytes += len;
	if (x->skip)
		return len;
	if ((err = net_gunzip_feed(x->gz, data, len))) {
		x->err = err;
		return 0;
	}
	return len;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn,
		       curl_off_t ut, curl_off_t un)
{
	struct xfer *x = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	if ((x->req->stop && atomic_load(x->req->stop)) ||
	    (x->req->cancel && atomic_load(x->req->cancel))) {
		x->err = ECANCELED;
		return 1;
	}
	if (past_deadline(x)) {
		deadline_error(x);
		return 1;
	}
	return 0;
}

static int curl_errno(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		return ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return EHOSTUNREACH;
	case CURLE_OPERATION_TIMEDOUT:
		return ETIMEDOUT;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
		return EACCES;
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
		return ECONNRESET;
	default:
		return EIO;
	}
}

/* whether the connection was made (a timeout after it is the rate's) */
static int connected(CURL *curl)
{
	curl_off_t t = 0;

	return curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &t) == CURLE_OK && t > 0;
}

/* why the stream stages failed, in res->error: each stage has its own
 * errno (gunzip EPROTO, mboxrd EBADMSG), so a bad mbox is not called a
 * bad gzip; `at_end`: the error came when the answer had all arrived */
static void stream_error(struct net_res *res, const net_mboxrd_t *split, int err,
			 int at_end)
{
	const char *why;

	switch (err) {
	case EFBIG:
		why = "a message in the answer exceeds max_message";
		break;
	case EPROTO:
		why = at_end ? "the answer was cut short (truncated gzip)"
			     : "the answer is not a gzip stream";
		break;
	case EBADMSG:
		snprintf(res->error, sizeof(res->error), "the answer is %s",
			 net_mboxrd_why(split));
		return;
	case ECANCELED:
		why = "search cancelled";
		break;
	default:
		why = strerror(err);
		break;
	}
	snprintf(res->error, sizeof(res->error), "%s", why);
}

/*
 * The first line of the text of an error status's body (gzip'd or not:
 * public-inbox says there why it refused a query, e.g. "Wildcard Sa*
 * expands to more than 100 terms"), added to res->error: markup and
 * control characters left out, at most ERR_LINE_MAX bytes, cut on a
 * UTF-8 character's boundary.
 */
static void add_body_reason(struct net_res *res, const char *body, size_t len)
{
	char text[ERR_BODY_MAX], line[ERR_LINE_MAX + 1];
	size_t tlen = 0, o = 0, i, have;
	int tag = 0;

	if (len >= 2 && (unsigned char)body[0] == 0x1f && (unsigned char)body[1] == 0x8b) {
		z_stream z = { 0 };

		if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
			return;
		z.next_in = (Bytef *)body;
		z.avail_in = (uInt)len;
		z.next_out = (Bytef *)text;
		z.avail_out = sizeof(text);
		inflate(&z, Z_SYNC_FLUSH);      /* what came, even if cut */
		tlen = sizeof(text) - z.avail_out;
		inflateEnd(&z);
	} else {
		tlen = len;
		memcpy(text, body, len);
	}
	for (i = 0; i < tlen && o < ERR_LINE_MAX; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\n' && o > 0)
			break;
		if (c == '<')
			tag = 1;
		else if (c == '>' && tag)
			tag = 0;
		else if (!tag && c >= 0x20 && c != 0x7f && (o > 0 || c != ' '))
			line[o++] = (char)c;
	}
	if (o == ERR_LINE_MAX && ((unsigned char)line[o - 1] & 0x80)) {
		/* perhaps cut inside a character: drop the last one */
		while (o > 0 && ((unsigned char)line[o - 1] & 0xc0) == 0x80)
			o--;
		if (o > 0)
			o--;
	}
	while (o > 0 && line[o - 1] == ' ')
		o--;
	line[o] = '\0';
	/* Plack's own page for a die in the app says nothing more than
	 * the status line did */
	if (!strcasecmp(line, "Internal Server Error"))
		o = 0;
	have = strlen(res->error);
	if (o > 0 && have + 2 < sizeof(res->error))
		snprintf(res->error + have, sizeof(res->error) - have, ": %s", line);
}

void net_curl_bounds(void *handle, const struct net_req *req, char *errbuf)
{
	CURL *curl = handle;

	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, req->timeout);
	/* curl checks the rate once the status line came, the body of a
	 * 404 too; 0 would switch the check off, so at least 1 byte/s */
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT,
			 req->low_speed > 0 ? req->low_speed : 1L);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, req->timeout);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	if (req->cafile)
		curl_easy_setopt(curl, CURLOPT_CAINFO, req->cafile);
	if (req->proxy)
		curl_easy_setopt(curl, CURLOPT_PROXY, req->proxy);
	if (req->insecure) {
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	/* also curl's own, in case progress calls come late */
	if (req->deadline > 0)
		curl_easy_setopt(curl, CURLOPT_TIMEOUT, req->deadline + 1);
}

/*
 * One request for a gzip'd mboxrd answer, streamed to fn: a search's POST
 * (`post`) or a thread's GET; url is malloc'd and freed here (NULL: out of
 * memory).  The answer and its bounds are the same for both.
 */
static int fetch(const struct net_req *req, char *url, int post, net_msg_fn fn, void *arg,
		 struct net_res *res)
{
	struct xfer x = { .req = req, .res = res };
	char errbuf[CURL_ERROR_SIZE] = "";
	CURLcode rc;
	int err = ENOMEM;

	memset(res, 0, sizeof(*res));
	x.split = net_mboxrd_new(req->max_message, fn, arg);
	if (x.split)
		net_mboxrd_set_stop(x.split, req->stop, req->cancel);
	x.gz = x.split ? net_gunzip_new(x.split) : NULL;
	x.curl = curl_easy_init();
	if (!x.split || !x.gz || !url || !x.curl) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		goto out;
	}
	curl_easy_setopt(x.curl, CURLOPT_URL, url);
	if (post) {
		curl_easy_setopt(x.curl, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(x.curl, CURLOPT_POSTFIELDSIZE, 0L);
	}
	if (req->user_agent)
		curl_easy_setopt(x.curl, CURLOPT_USERAGENT, req->user_agent);
	curl_easy_setopt(x.curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(x.curl, CURLOPT_FOLLOWLOCATION, 0L);
	net_curl_bounds(x.curl, req, errbuf);
	curl_easy_setopt(x.curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x.curl, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(x.curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(x.curl, CURLOPT_XFERINFODATA, &x);
	curl_easy_setopt(x.curl, CURLOPT_NOPROGRESS, 0L);
	clock_gettime(CLOCK_MONOTONIC, &x.start);
	rc = curl_easy_perform(x.curl);
	if (!x.checked)
		curl_easy_getinfo(x.curl, CURLINFO_RESPONSE_CODE, &res->http_status);
	if (x.err) {
		err = x.err;
		if (!res->error[0])
			stream_error(res, x.split, err, 0);
		if (x.errbody)
			add_body_reason(res, x.ebody, x.elen);
		/* no reason given: public-inbox's search dies so (Xapian's
		 * wildcard limit, set_max_wildcard_expansion 100), and the
		 * user is better told what it likely was */
		if (res->http_status == 500 && !strcmp(res->error, "server answered HTTP 500"))
			snprintf(res->error, sizeof(res->error),
				 "the server failed the query (HTTP 500; public-inbox answers so when "
				 "a wildcard expands to more than 100 terms)");
		goto out;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT && past_deadline(&x)) {
		deadline_error(&x);
		err = x.err;
		goto out;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT && connected(x.curl)) {
		err = ETIMEDOUT;
		snprintf(res->error, sizeof(res->error),
			 "too slow: the server sent less than %ld bytes/s for %ld s",
			 req->low_speed > 0 ? req->low_speed : 1L, req->timeout);
		goto out;
	}
	if (rc != CURLE_OK) {
		err = curl_errno(rc);
		snprintf(res->error, sizeof(res->error), "%s",
			 errbuf[0] ? errbuf : curl_easy_strerror(rc));
		goto out;
	}
	if (!x.checked) {       /* a status with no body at all */
		if (res->http_status == 404) {
			err = 0;
			goto out;
		}
		if (res->http_status == 429 || res->http_status == 503) {
			curl_off_t ra = 0;

			if (curl_easy_getinfo(x.curl, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK &&
			    ra > 0)
				res->retry_after = (long)ra;
			err = EBUSY;
			snprintf(res->error, sizeof(res->error),
				 "server busy (HTTP %ld)", res->http_status);
		} else if (res->http_status == 200) {
			err = EPROTO;
			snprintf(res->error, sizeof(res->error), "empty answer");
		} else {
			err = EIO;
			snprintf(res->error, sizeof(res->error),
				 "server answered HTTP %ld", res->http_status);
		}
		goto out;
	}
	err = 0;
	if (!x.skip && (err = net_gunzip_finish(x.gz))) {
		stream_error(res, x.split, err, 1);
		goto out;
	}
out:
	if (x.split)
		res->messages = net_mboxrd_count(x.split);
	if (x.curl)
		curl_easy_cleanup(x.curl);
	net_gunzip_free(x.gz);
	net_mboxrd_free(x.split);
	free(url);
	return err;
}

int net_search(const struct net_req *req, net_msg_fn fn, void *arg,
	       struct net_res *res)
{
	return fetch(req, net_search_url(req), 1, fn, arg, res);
}

/* RFC 3986's pchar, as public-inbox's mid_escape (MID.pm) leaves them:
 * every other byte is %XX, '/' among them, so the id is one path segment */
static int mid_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("-._~!$&'()*+,;=:@", c));
}

char *net_thread_url(const struct net_req *req)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t ul = strlen(req->url), ml = strlen(req->query);
	char *url = malloc(ul + 3 * ml + 16), *p;
	const unsigned char *m;

	if (!url)
		return NULL;
	memcpy(url, req->url, ul);
	p = url + ul;
	if (ul == 0 || url[ul - 1] != '/')
		*p++ = '/';
	for (m = (const unsigned char *)req->query; *m; m++) {
		if (mid_plain(*m)) {
			*p++ = (char)*m;
		} else {
			*p++ = '%';
			*p++ = hex[*m >> 4];
			*p++ = hex[*m & 15];
		}
	}
	strcpy(p, "/t.mbox.gz");
	return url;
}

int net_thread(const struct net_req *req, net_msg_fn fn, void *arg, struct net_res *res)
{
	int err = fetch(req, net_thread_url(req), 0, fn, arg, res);

	/* for a search 404 is "no match"; here it is an unknown id */
	if (!err && res->http_status == 404) {
		snprintf(res->error, sizeof(res->error), "no such message");
		err = ENOENT;
	}
	return err;
}
