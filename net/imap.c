/*
 * IMAP delivery with libcurl: one session (one curl handle, so one
 * connection) per folder per delivery; see net.h for the contract.
 *
 * libcurl's APPEND always sends (\Seen); the messages' own flags are then
 * set with UID STORE, many at once, on the UIDs the server gave
 * (APPENDUID, RFC 4315), or, from a server without UIDPLUS, the ones UID
 * SEARCH finds by their Message-IDs.  Other commands go as curl custom requests: their untagged
 * answers come to the write callback, every response line to the header
 * callback, and both are read from one buffer per command.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "net/net.h"

/* what one command's answer may hold before the rest is dropped */
#define ANSWER_MAX 65536
/* seconds a LOGOUT waits for its answer (see net_imap_close) */
#define LOGOUT_WAIT 2L

struct net_imap {
	CURL *curl;
	const struct net_req *req;
	char *base;             /* scheme://host:port/ */
	char *folder_url;       /* base + folder */
	char folder[NET_IMAP_NAME_MAX];
	char *ans;              /* this command's response lines */
	size_t alen;
	const char *up;         /* APPEND: the message, and what was sent */
	size_t uplen, upoff;
	int lf_due;             /* a bare LF went out as CR: its LF comes next */
	int broken;             /* a command failed: the connection may hang */
	char errbuf[CURL_ERROR_SIZE];
	char error[CURL_ERROR_SIZE + 64];
};

static int name_char(int c)
{
	return isalnum(c) || strchr("._+-,=/", c);
}

int net_imap_parse(const char *url, struct net_imap_url *u, const char **why)
{
	const char *p, *host, *at, *slash, *colon;
	size_t n, i, o;

	memset(u, 0, sizeof(*u));
	*why = "an IMAP folder is imap://[user@]host[:port]/FOLDER or imaps://...";
	if (!strncmp(url, "imaps://", 8)) {
		u->tls = 1;
		p = url + 8;
	} else if (!strncmp(url, "imap://", 7)) {
		p = url + 7;
	} else {
		return EINVAL;
	}
	if (!(slash = strchr(p, '/')))
		return EINVAL;
	at = memrchr(p, '@', (size_t)(slash - p));
	host = at ? at + 1 : p;
	if (at) {
		if (memchr(p, ':', (size_t)(at - p))) {
			*why = "a password in an IMAP URL is refused: leifs asks git credential "
			       "for it (user@host only)";
			return EINVAL;
		}
		for (i = 0, o = 0; p + i < at; i++) {
			int c = (unsigned char)p[i];

			if (c == '%' && isxdigit((unsigned char)p[i + 1]) &&
			    isxdigit((unsigned char)p[i + 2]) && p + i + 2 < at) {
				char hex[3] = { p[i + 1], p[i + 2], 0 };

				c = (int)strtol(hex, NULL, 16);
				i += 2;
			}
			if (c <= 0x20 || c >= 0x7f || o + 1 >= sizeof(u->user))
				return EINVAL;
			u->user[o++] = (char)c;
		}
		if (!o)
			return EINVAL;
	}
	colon = memchr(host, ':', (size_t)(slash - host));
	n = (size_t)((colon ? colon : slash) - host);
	if (!n || n >= sizeof(u->host))
		return EINVAL;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)host[i]) && !strchr(".-[]:", host[i]))
			return EINVAL;
	memcpy(u->host, host, n);
	u->port = u->tls ? 993 : 143;
	if (colon) {
		char *end;
		long port = strtol(colon + 1, &end, 10);

		if (end != slash || port <= 0 || port > 65535)
			return EINVAL;
		u->port = (int)port;
	}
	p = slash + 1;
	n = strlen(p);
	if (!n || n >= sizeof(u->folder) || p[0] == '/' || p[n - 1] == '/' || strstr(p, "//")) {
		*why = "an IMAP folder name is 1 to 255 of [A-Za-z0-9._+-,=/]";
		return EINVAL;
	}
	for (i = 0; i < n; i++)
		if (!name_char((unsigned char)p[i])) {
			*why = "an IMAP folder name is 1 to 255 of [A-Za-z0-9._+-,=/]";
			return EINVAL;
		}
	/* no "." or ".." part: curl would fold them in the URLs of some
	 * commands and not in others, and two folders would be one */
	for (i = 0; i < n; i += strcspn(p + i, "/") + 1) {
		size_t seg = strcspn(p + i, "/");

		if ((seg == 1 && p[i] == '.') || (seg == 2 && p[i] == '.' && p[i + 1] == '.')) {
			*why = "an IMAP folder name has no \".\" or \"..\" part";
			return EINVAL;
		}
	}
	/* a password never crosses a network in clear: imap:// is for a
	 * server on this machine */
	if (!u->tls && strcmp(u->host, "localhost") &&
	    (strncmp(u->host, "127.", 4) || u->host[strspn(u->host, "0123456789.")])) {
		*why = "imap:// (no TLS) is for a server on this machine (127.0.0.1, "
		       "localhost); use imaps://";
		return EINVAL;
	}
	memcpy(u->folder, p, n);
	*why = NULL;
	return 0;
}

static size_t on_answer(char *data, size_t size, size_t nmemb, void *arg)
{
	struct net_imap *h = arg;
	size_t len = size * nmemb, k = len;

	if (h->alen + k > ANSWER_MAX)
		k = ANSWER_MAX - h->alen;
	if (k) {
		char *t = realloc(h->ans, h->alen + k + 1);

		if (!t)
			return len;
		h->ans = t;
		memcpy(h->ans + h->alen, data, k);
		h->alen += k;
		h->ans[h->alen] = '\0';
	}
	return len;
}

/* IMAP's messages are CRLF (RFC 3501 2.2): a bare LF of the stored mail
 * goes out as CRLF, as lei converts it, since some servers (Cyrus) refuse
 * bare LFs; the stored bytes stay as they are */
static size_t wire_size(const char *raw, size_t len)
{
	size_t i, n = len;

	for (i = 0; i < len; i++)
		if (raw[i] == '\n' && (!i || raw[i - 1] != '\r'))
			n++;
	return n;
}

static size_t on_upload(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct net_imap *h = arg;
	size_t cap = size * nmemb, o = 0;

	while (o < cap && (h->lf_due || h->upoff < h->uplen)) {
		char c;

		if (h->lf_due) {
			buf[o++] = '\n';
			h->lf_due = 0;
			continue;
		}
		c = h->up[h->upoff];
		if (c == '\n' && (!h->upoff || h->up[h->upoff - 1] != '\r')) {
			c = '\r';
			h->lf_due = 1;
		}
		buf[o++] = c;
		h->upoff++;
	}
	return o;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
		       curl_off_t un)
{
	struct net_imap *h = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	return net_stopped(h->req->stop, h->req->cancel);
}

/* the server's last tagged answer (its tag left out), else curl's reason */
static int say_error(struct net_imap *h, CURLcode rc, const char *what)
{
	const char *line = NULL, *p;
	size_t n = 0;

	for (p = h->ans; p && *p; p += strcspn(p, "\n"), p += *p == '\n') {
		size_t len = strcspn(p, "\r\n");

		/* a tagged NO or BAD: "A003 NO [..] reason" */
		if (*p != '*' && *p != '+' && len) {
			const char *sp = memchr(p, ' ', len);

			if (sp && (!strncmp(sp + 1, "NO ", 3) || !strncmp(sp + 1, "BAD ", 4))) {
				line = sp + 1;
				n = len - (size_t)(sp + 1 - p);
			}
		}
	}
	if (line)
		snprintf(h->error, sizeof(h->error), "%s: %.*s", what, (int)n, line);
	else
		snprintf(h->error, sizeof(h->error), "%s: %s", what,
			 h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc));
	/* only printable ASCII reaches .status */
	for (char *q = h->error; *q; q++)
		if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
			*q = '?';
	return line != NULL;    /* the server answered: NO or BAD */
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
	case CURLE_QUOTE_ERROR:
		return EREMOTEIO;      /* the server said NO or BAD */
	default:
		return EIO;
	}
}

/* one command: a custom request on url (NULL: the base) */
static int command(struct net_imap *h, const char *url, const char *cmd, const char *what)
{
	CURLcode rc;

	h->alen = 0;
	if (h->ans)
		h->ans[0] = '\0';
	h->errbuf[0] = '\0';
	curl_easy_setopt(h->curl, CURLOPT_URL, url ? url : h->base);
	curl_easy_setopt(h->curl, CURLOPT_UPLOAD, 0L);
	curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, cmd);
	rc = curl_easy_perform(h->curl);
	if (rc == CURLE_OK)
		return 0;
	h->broken = 1;
	say_error(h, rc, rc == CURLE_LOGIN_DENIED ? "login" : what);
	return curl_err(rc);
}

int net_imap_open(const struct net_req *req, const char *user, const char *password,
		  net_imap_t **out)
{
	struct net_imap_url u;
	struct net_imap *h;
	const char *why;
	int err;

	*out = NULL;
	if ((err = net_imap_parse(req->url, &u, &why)))
		return err;
	if (!(h = calloc(1, sizeof(*h))))
		return ENOMEM;
	h->req = req;
	memcpy(h->folder, u.folder, sizeof(h->folder));
	if (asprintf(&h->base, "%s://%s:%d/", u.tls ? "imaps" : "imap", u.host, u.port) < 0) {
		h->base = NULL;
		goto nomem;
	}
	if (asprintf(&h->folder_url, "%s%s", h->base, u.folder) < 0) {
		h->folder_url = NULL;
		goto nomem;
	}
	if (!(h->curl = curl_easy_init()))
		goto nomem;
	curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "imap,imaps");
	curl_easy_setopt(h->curl, CURLOPT_USERNAME, user);
	curl_easy_setopt(h->curl, CURLOPT_PASSWORD, password);
	/* the bounds and TLS settings of every request (search.c) */
	net_curl_bounds(h->curl, req, h->errbuf);
	/* libcurl waits for a command's answer with no rate to check (the
	 * tagged OK of an APPEND, after its literal): 120 s unless told */
	curl_easy_setopt(h->curl, CURLOPT_SERVER_RESPONSE_TIMEOUT, req->timeout);
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_answer);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, on_answer);
	curl_easy_setopt(h->curl, CURLOPT_HEADERDATA, h);
	curl_easy_setopt(h->curl, CURLOPT_READFUNCTION, on_upload);
	curl_easy_setopt(h->curl, CURLOPT_READDATA, h);
	curl_easy_setopt(h->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h->curl, CURLOPT_XFERINFODATA, h);
	curl_easy_setopt(h->curl, CURLOPT_NOPROGRESS, 0L);
	*out = h;
	return 0;
nomem:
	net_imap_close(h);
	return ENOMEM;
}

const char *net_imap_error(const net_imap_t *h)
{
	return h->error;
}

/* the number after `key` in the answer ("[UIDVALIDITY 123]") */
static int find_number(const char *ans, const char *key, uint64_t *n)
{
	const char *p = ans ? strstr(ans, key) : NULL;
	char *end;

	if (!p)
		return ENOENT;
	p += strlen(key);
	*n = strtoull(p, &end, 10);
	return end == p ? ENOENT : 0;
}

/*
 * The server's hierarchy separator, from LIST "" "" (RFC 3501 6.3.8):
 * '/' of the folder path is mapped to it, as a user of a server with '.'
 * (Dovecot's maildir layout, Courier) would write it.  A flat server (NIL)
 * keeps the name as written; a separator that cannot stand in a folder
 * name here is refused.
 */
static int map_separator(net_imap_t *h)
{
	const char *p, *q;
	char sep, *url;
	int err;

	if (!strchr(h->folder, '/'))
		return 0;
	if ((err = command(h, NULL, "LIST \"\" \"\"", "LIST")))
		return err;
	if (!h->ans || !(p = strstr(h->ans, "* LIST (")) || !(q = strchr(p + 8, ')')))
		return 0;       /* no answer to go by: the name as written */
	q++;
	while (*q == ' ')
		q++;
	if (!strncasecmp(q, "NIL", 3))
		return 0;
	if (q[0] != '"' || !q[1] || q[1] == '"')
		return 0;
	sep = q[1] == '\\' ? q[2] : q[1];
	if (sep == '/')
		return 0;
	if (sep != '.') {
		snprintf(h->error, sizeof(h->error),
			 "the server's folder separator is '%c', which a folder name here "
			 "cannot hold; name the folder without '/'",
			 isprint((unsigned char)sep) ? sep : '?');
		return EPROTO;
	}
	for (char *c = h->folder; *c; c++)
		if (*c == '/')
			*c = sep;
	if (asprintf(&url, "%s%s", h->base, h->folder) < 0)
		return ENOMEM;
	free(h->folder_url);
	h->folder_url = url;
	return 0;
}

const char *net_imap_folder(const net_imap_t *h)
{
	return h->folder;
}

int net_imap_select(net_imap_t *h, uint32_t *uidvalidity, int *created)
{
	char cmd[NET_IMAP_NAME_MAX + 32];
	uint64_t n;
	int err;

	*created = 0;
	if ((err = map_separator(h)))
		return err;
	/* LIST first: a command the server refuses makes libcurl drop the
	 * connection, and the delivery would need another */
	snprintf(cmd, sizeof(cmd), "LIST \"\" \"%s\"", h->folder);
	if ((err = command(h, NULL, cmd, "LIST")))
		return err;
	if (!h->ans || !strstr(h->ans, "* LIST ")) {
		snprintf(cmd, sizeof(cmd), "CREATE \"%s\"", h->folder);
		if ((err = command(h, NULL, cmd, "CREATE")))
			return err;
		*created = 1;
	}
	snprintf(cmd, sizeof(cmd), "EXAMINE \"%s\"", h->folder);
	if ((err = command(h, NULL, cmd, "EXAMINE")))
		return err;
	if (find_number(h->ans, "[UIDVALIDITY ", &n) || n > UINT32_MAX) {
		snprintf(h->error, sizeof(h->error), "EXAMINE: the server gave no UIDVALIDITY");
		return EPROTO;
	}
	*uidvalidity = (uint32_t)n;
	return 0;
}

/* a Message-ID that can go in a quoted string as is */
static int mid_ok(const char *mid)
{
	const unsigned char *p;

	if (!mid || !*mid || strlen(mid) > 900)
		return 0;
	for (p = (const unsigned char *)mid; *p; p++)
		if (*p < 0x21 || *p >= 0x7f || *p == '"' || *p == '\\')
			return 0;
	return 1;
}

/* the highest UID of a message with Message-ID mid in the folder; 0: none */
static int search_mid(net_imap_t *h, const char *mid, uint64_t *uid)
{
	char *cmd = NULL, *p;
	int err;

	*uid = 0;
	if (!mid_ok(mid))
		return EINVAL;
	if (asprintf(&cmd, "UID SEARCH HEADER Message-ID \"%s\"", mid) < 0)
		return ENOMEM;
	err = command(h, h->folder_url, cmd, "UID SEARCH");
	free(cmd);
	if (err)
		return err;
	for (p = h->ans ? strstr(h->ans, "* SEARCH") : NULL; p; ) {
		p += 8;
		while (*p == ' ') {
			char *end;
			uint64_t n = strtoull(p + 1, &end, 10);

			if (end == p + 1)
				break;
			if (n > *uid)
				*uid = n;
			p = end;
		}
		break;
	}
	return 0;
}

int net_imap_find(net_imap_t *h, const char *mid, int *found)
{
	uint64_t uid;
	int err = search_mid(h, mid, &uid);

	*found = !err && uid;
	return err;
}

int net_imap_append(net_imap_t *h, const char *raw, size_t len, const char *mid,
		    uint64_t *uid)
{
	uint64_t v;
	CURLcode rc;
	int err;

	*uid = 0;
	h->alen = 0;
	if (h->ans)
		h->ans[0] = '\0';
	h->errbuf[0] = '\0';
	h->up = raw;
	h->uplen = len;
	h->upoff = 0;
	h->lf_due = 0;
	curl_easy_setopt(h->curl, CURLOPT_URL, h->folder_url);
	curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(h->curl, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(h->curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)wire_size(raw, len));
	rc = curl_easy_perform(h->curl);
	h->up = NULL;
	if (rc != CURLE_OK) {
		h->broken = 1;
		/* a NO to this message (too big, refused): the session goes on */
		if (say_error(h, rc, "APPEND") && rc != CURLE_ABORTED_BY_CALLBACK &&
		    rc != CURLE_OPERATION_TIMEDOUT)
			return EBADMSG;
		return curl_err(rc);
	}
	if (h->ans && strstr(h->ans, "[APPENDUID ") &&
	    sscanf(strstr(h->ans, "[APPENDUID "), "[APPENDUID %" SCNu64 " %" SCNu64 "]", &v,
		   uid) == 2)
		return 0;
	*uid = 0;
	if (mid && (err = search_mid(h, mid, uid)))
		return err == EINVAL ? 0 : err; /* no id to find it by */
	return 0;
}

/* at most this many UIDs per STORE (a command line stays short) */
#define STORE_MAX 500

int net_imap_set_flags(net_imap_t *h, const uint64_t *uids, size_t n, unsigned flags)
{
	char *cmd = NULL, *set = NULL;
	size_t len = 0, i, k;
	FILE *f;
	int err = 0;

	for (i = 0; i < n && !err; i += k) {
		if (!(f = open_memstream(&set, &len)))
			return ENOMEM;
		for (k = 0; i + k < n && k < STORE_MAX; k++)
			fprintf(f, "%s%" PRIu64, k ? "," : "", uids[i + k]);
		if (fclose(f) || asprintf(&cmd, "UID STORE %s FLAGS.SILENT (%s%s%s%s%s)", set,
					  flags & NET_IMAP_SEEN ? "\\Seen" : "",
					  (flags & NET_IMAP_SEEN) && (flags & ~NET_IMAP_SEEN) ? " " : "",
					  flags & NET_IMAP_FLAGGED ? "\\Flagged" : "",
					  (flags & NET_IMAP_FLAGGED) && (flags & NET_IMAP_ANSWERED) ? " " : "",
					  flags & NET_IMAP_ANSWERED ? "\\Answered" : "") < 0) {
			free(set);
			return ENOMEM;
		}
		free(set);
		set = NULL;
		err = command(h, h->folder_url, cmd, "UID STORE");
		free(cmd);
		cmd = NULL;
	}
	return err;
}

void net_imap_close(net_imap_t *h)
{
	curl_socket_t fd;

	if (!h)
		return;
	/* libcurl's own LOGOUT, at cleanup, waits for its answer with no stop
	 * to heed (120 s for a server that stalls).  A whole session sends
	 * it here instead, as any command (ended by a stop), and the
	 * connection is then shut, so that libcurl's wait ends at once:
	 * SIGTERM exits in a moment, whatever the server does.  Its answer
	 * tells nothing (all was confirmed before), so it is waited for
	 * LOGOUT_WAIT s at most, not the timeout: a server that never
	 * answers it does not hold the delivery's end */
	if (h->curl && curl_easy_getinfo(h->curl, CURLINFO_ACTIVESOCKET, &fd) == CURLE_OK &&
	    fd != CURL_SOCKET_BAD) {
		if (!h->broken && !net_stopped(h->req->stop, h->req->cancel)) {
			curl_easy_setopt(h->curl, CURLOPT_SERVER_RESPONSE_TIMEOUT,
					 h->req->timeout < LOGOUT_WAIT ? h->req->timeout : LOGOUT_WAIT);
			(void)command(h, NULL, "LOGOUT", "LOGOUT");
		}
		if (curl_easy_getinfo(h->curl, CURLINFO_ACTIVESOCKET, &fd) == CURLE_OK &&
		    fd != CURL_SOCKET_BAD)
			shutdown(fd, SHUT_RDWR);
	}
	if (h->curl)
		curl_easy_cleanup(h->curl);
	free(h->ans);
	free(h->base);
	free(h->folder_url);
	free(h);
}
