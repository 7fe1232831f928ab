/*
 * IMAP commands by hand over the connection libcurl logged in on
 * (CURLOPT_CONNECT_ONLY: greeting, STARTTLS, TLS verification and the
 * login stay libcurl's; curl_easy_send and curl_easy_recv carry the rest,
 * TLS or not).  Written here because libcurl sends one command at a time
 * and waits for each answer: an APPEND costs two round trips (its
 * continuation, its tagged OK), which made a delivery slower than mbsync,
 * which pipelines them.  Only what a delivery needs: tagged commands,
 * response lines with their literals, continuations.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "net/imap-private.h"

/* a response line (without its literals) longer than this is refused */
#define LINE_MAX_BYTES 16384

double imap_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int fail(struct net_imap *h, int err, const char *what, const char *why)
{
	h->broken = 1;
	snprintf(h->error, sizeof(h->error), "%s: %s", what, why);
	return err;
}

/* wait until fd is ready for `events`; `since`: the last progress */
static int wait_fd(struct net_imap *h, short events, double since, const char *what)
{
	struct pollfd p = { .fd = h->fd, .events = events };
	char why[96];

	for (;;) {
		double t = imap_now();

		if (net_stopped(h->req->stop, h->req->cancel))
			return fail(h, ECANCELED, what, "stopped");
		/* a server that trickles (a line now and then, never the
		 * answer) is bounded by the deadline, as a search is */
		if (h->started > 0 && h->req->deadline > 0 &&
		    t - h->started >= (double)h->req->deadline) {
			snprintf(why, sizeof(why), "no answer within the deadline of %ld s "
				 "(timed out)", h->req->deadline);
			return fail(h, ETIMEDOUT, what, why);
		}
		if (t - since >= (double)h->req->timeout) {
			snprintf(why, sizeof(why), "no answer within %ld s (timed out)",
				 h->req->timeout);
			return fail(h, ETIMEDOUT, what, why);
		}
		if (poll(&p, 1, 1000) > 0)
			return 0;       /* ready, or an error the next call says */
	}
}

int imap_send(struct net_imap *h, const char *buf, size_t len, const char *what)
{
	double since = imap_now();

	while (len) {
		size_t n = 0;
		CURLcode rc = curl_easy_send(h->curl, buf, len, &n);
		int err;

		if (rc == CURLE_OK) {
			buf += n;
			len -= n;
			since = imap_now();
			continue;
		}
		if (rc != CURLE_AGAIN)
			return fail(h, EIO, what, curl_easy_strerror(rc));
		if ((err = wait_fd(h, POLLOUT, since, what)))
			return err;
	}
	return 0;
}

/* more of the server's bytes into h->in */
static int fill(struct net_imap *h, const char *what)
{
	double since = imap_now();

	if (h->icap - h->ilen < 4096) {
		size_t cap = h->icap ? 2 * h->icap : 16384;
		char *p;

		if (cap > 4 * (ANSWER_MAX + LINE_MAX_BYTES))
			return fail(h, EPROTO, what, "the server's answer is too long");
		if (!(p = realloc(h->in, cap)))
			return fail(h, ENOMEM, what, "out of memory");
		h->in = p;
		h->icap = cap;
	}
	for (;;) {
		size_t n = 0;
		CURLcode rc = curl_easy_recv(h->curl, h->in + h->ilen, h->icap - h->ilen, &n);
		int err;

		if (rc == CURLE_OK && !n)
			return fail(h, ECONNRESET, what, "the server closed the connection");
		if (rc == CURLE_OK) {
			h->ilen += n;
			return 0;
		}
		if (rc != CURLE_AGAIN)
			return fail(h, EIO, what, curl_easy_strerror(rc));
		if ((err = wait_fd(h, POLLIN, since, what)))
			return err;
	}
}

/* take n bytes of h->in, kept in the answer while it has room */
static void take(struct net_imap *h, size_t n)
{
	size_t k = n;

	if (h->alen + k > ANSWER_MAX)
		k = ANSWER_MAX - h->alen;
	if (k) {
		char *t = realloc(h->ans, h->alen + k + 1);

		if (t) {
			h->ans = t;
			memcpy(h->ans + h->alen, h->in, k);
			h->alen += k;
			h->ans[h->alen] = '\0';
		}
	}
	memmove(h->in, h->in + n, h->ilen - n);
	h->ilen -= n;
}

/* One response line into `line` (its first part, without CRLF; the
 * literals it carries and the rest of it go only to h->ans). */
int imap_line(struct net_imap *h, char *line, size_t cap, const char *what)
{
	int first = 1, untagged = 0, err;

	line[0] = '\0';
	for (;;) {
		char *nl;
		size_t n, k;
		unsigned long long lit = 0;
		int has_lit = 0;

		while (!h->ilen || !(nl = memchr(h->in, '\n', h->ilen))) {
			if (h->ilen > LINE_MAX_BYTES)
				return fail(h, EPROTO, what, "a response line is too long");
			if ((err = fill(h, what)))
				return err;
		}
		n = (size_t)(nl - h->in) + 1;
		k = n - 1 - (n >= 2 && h->in[n - 2] == '\r');
		if (first) {
			size_t c = k < cap - 1 ? k : cap - 1;

			memcpy(line, h->in, c);
			line[c] = '\0';
			first = 0;
			untagged = k && h->in[0] == '*';
		}
		/* a literal ends the line: "{123}" then 123 bytes, then the
		 * rest; only untagged data carries them (a tagged answer's or
		 * a continuation's text is text, whatever it ends with) */
		if (untagged && k >= 3 && h->in[k - 1] == '}') {
			size_t i = k - 1;

			while (i > 0 && h->in[i - 1] >= '0' && h->in[i - 1] <= '9')
				i--;
			if (i > 0 && h->in[i - 1] == '{' && i < k - 1) {
				lit = strtoull(h->in + i, NULL, 10);
				has_lit = 1;
			}
		}
		take(h, n);
		if (!has_lit)
			return 0;
		if (lit > ANSWER_MAX)
			return fail(h, EPROTO, what, "a literal in the answer is too long");
		while (h->ilen < lit)
			if ((err = fill(h, what)))
				return err;
		take(h, (size_t)lit);
	}
}

/* "L12 OK ..." -> 12 and the status word's position; 0 if not tagged */
static unsigned tag_of(const char *line, const char **status)
{
	char *end;
	unsigned long t;

	if (line[0] != 'L')
		return 0;
	t = strtoul(line + 1, &end, 10);
	if (end == line + 1 || *end != ' ')
		return 0;
	*status = end + 1;
	return (unsigned)t;
}

int imap_say_error(struct net_imap *h, const char *what, const char *fallback)
{
	const char *line = NULL, *p;
	size_t n = 0;

	for (p = h->ans; p && *p; p += strcspn(p, "\n"), p += *p == '\n') {
		size_t len = strcspn(p, "\r\n");

		/* a tagged NO or BAD: "L3 NO [..] reason" */
		if (*p != '*' && *p != '+' && len) {
			const char *sp = memchr(p, ' ', len);

			if (sp && (!strncasecmp(sp + 1, "NO ", 3) || !strncasecmp(sp + 1, "BAD ", 4))) {
				line = sp + 1;
				n = len - (size_t)(sp + 1 - p);
			}
		}
	}
	if (line)
		snprintf(h->error, sizeof(h->error), "%s: %.*s", what, (int)n, line);
	else
		snprintf(h->error, sizeof(h->error), "%s: %s", what, fallback);
	/* only printable ASCII reaches .status */
	for (char *q = h->error; *q; q++)
		if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
			*q = '?';
	return line != NULL;
}

int imap_answer(struct net_imap *h, unsigned tag, int cont, const char *what)
{
	char line[512];
	const char *st = "";
	int err;

	for (;;) {
		if ((err = imap_line(h, line, sizeof(line), what)))
			return err;
		if (line[0] == '+') {
			if (cont)
				return EINPROGRESS;
			continue;       /* not asked for: nothing to send */
		}
		if (tag_of(line, &st) != tag)
			continue;       /* untagged, or an earlier command's */
		if (!strncasecmp(st, "OK", 2))
			return 0;
		imap_say_error(h, what, "refused");
		return EREMOTEIO;
	}
}

int imap_command(struct net_imap *h, const char *cmd, const char *what)
{
	char *line = NULL;
	int n, err;

	if ((err = imap_connect(h)))
		return err;
	h->started = imap_now();
	h->alen = 0;
	if (h->ans)
		h->ans[0] = '\0';
	if ((n = asprintf(&line, "L%u %s\r\n", ++h->tag, cmd)) < 0)
		return fail(h, ENOMEM, what, "out of memory");
	err = imap_send(h, line, (size_t)n, what);
	free(line);
	if (!err)
		err = imap_answer(h, h->tag, 0, what);
	if (err)
		h->broken = 1;
	return err;
}

static int curl_err(CURLcode rc)
{
	switch (rc) {
	case CURLE_LOGIN_DENIED:
		return EACCES;
	case CURLE_OPERATION_TIMEDOUT:
		return ETIMEDOUT;
	case CURLE_ABORTED_BY_CALLBACK:
		return ECANCELED;
	case CURLE_COULDNT_CONNECT:
		return ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
		return EHOSTUNREACH;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CACERT_BADFILE:
		return EPERM;
	default:
		return EIO;
	}
}

int imap_connect(struct net_imap *h)
{
	CURLcode rc;
	const char *p;
	int err;

	if (h->connected)
		return 0;
	if (h->broken)
		return fail(h, EIO, "connect", "the connection failed before");
	h->errbuf[0] = '\0';
	curl_easy_setopt(h->curl, CURLOPT_URL, h->base);
	curl_easy_setopt(h->curl, CURLOPT_CONNECT_ONLY, 1L);
	rc = curl_easy_perform(h->curl);
	if (rc == CURLE_OK &&
	    (curl_easy_getinfo(h->curl, CURLINFO_ACTIVESOCKET, &h->fd) != CURLE_OK ||
	     h->fd == CURL_SOCKET_BAD))
		rc = CURLE_COULDNT_CONNECT;
	if (rc != CURLE_OK) {
		h->broken = 1;
		snprintf(h->error, sizeof(h->error), "%s: %s",
			 rc == CURLE_LOGIN_DENIED ? "login" : "connect",
			 h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc));
		return curl_err(rc);
	}
	h->connected = 1;
	/* what libcurl saw of the login is not an answer of ours */
	h->alen = 0;
	if (h->ans)
		h->ans[0] = '\0';
	if ((err = imap_command(h, "CAPABILITY", "CAPABILITY")))
		return err;
	for (p = h->ans; p && (p = strcasestr(p, "LITERAL")); p += 7) {
		if (p[7] == '+')
			h->caps |= CAP_LITERAL_PLUS;
		else if (p[7] == '-')
			h->caps |= CAP_LITERAL_MINUS;
	}
	return 0;
}
