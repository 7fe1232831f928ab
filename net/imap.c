/*
 * IMAP delivery: one session (one connection, one login) per folder per
 * delivery; see net.h for the contract.  libcurl connects and logs in
 * (CURLOPT_CONNECT_ONLY); the commands are imap-wire.c's.
 *
 * APPENDs are pipelined, each with the message's own flags: with LITERAL+
 * (RFC 7888; LITERAL- for literals of 4 KB at most) a batch goes out
 * whole and its answers are read after; without it each APPEND waits for
 * its continuation only, the next being sent before the last one's tagged
 * answer came (one round trip a message, not two).  MULTIAPPEND (RFC
 * 3502) would save no more than that, and one message it refuses fails
 * the whole command: here a refused message stops no other.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "net/imap-private.h"

/* seconds a LOGOUT waits for its answer (see net_imap_close) */
#define LOGOUT_WAIT 2L
/* a literal LITERAL- may send without waiting (RFC 7888) */
#define LITERAL_MINUS_MAX 4096

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

/* libcurl's own callbacks: nothing of the login is kept */
static size_t discard(char *data, size_t size, size_t nmemb, void *arg)
{
	(void)data, (void)arg;
	return size * nmemb;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
		       curl_off_t un)
{
	struct net_imap *h = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	return net_stopped(h->req->stop, h->req->cancel);
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
	h->fd = CURL_SOCKET_BAD;
	memcpy(h->folder, u.folder, sizeof(h->folder));
	if (asprintf(&h->base, "%s://%s:%d/", u.tls ? "imaps" : "imap", u.host, u.port) < 0) {
		h->base = NULL;
		goto nomem;
	}
	if (!(h->curl = curl_easy_init()))
		goto nomem;
	curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "imap,imaps");
	curl_easy_setopt(h->curl, CURLOPT_USERNAME, user);
	curl_easy_setopt(h->curl, CURLOPT_PASSWORD, password);
	/* the bounds and TLS settings of every request (search.c) */
	net_curl_bounds(h->curl, req, h->errbuf);
	/* libcurl waits for the login's answers with no rate to check */
	curl_easy_setopt(h->curl, CURLOPT_SERVER_RESPONSE_TIMEOUT, req->timeout);
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, discard);
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
	char sep;
	int err;

	if (!strchr(h->folder, '/'))
		return 0;
	if ((err = imap_command(h, "LIST \"\" \"\"", "LIST")))
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
	/* LIST first: CREATE only a folder the server says it lacks */
	snprintf(cmd, sizeof(cmd), "LIST \"\" \"%s\"", h->folder);
	if ((err = imap_command(h, cmd, "LIST")))
		return err;
	if (!h->ans || !strstr(h->ans, "* LIST ")) {
		snprintf(cmd, sizeof(cmd), "CREATE \"%s\"", h->folder);
		if ((err = imap_command(h, cmd, "CREATE")))
			return err;
		*created = 1;
	}
	/* selected read-only from here: UID SEARCH asks it */
	snprintf(cmd, sizeof(cmd), "EXAMINE \"%s\"", h->folder);
	if ((err = imap_command(h, cmd, "EXAMINE")))
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
	err = imap_command(h, cmd, "UID SEARCH");
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

/* the flag list of an APPEND, " (\\Seen \\Flagged)", or "" */
static void flag_list(unsigned flags, char *out, size_t len)
{
	snprintf(out, len, "%s%s%s%s%s%s%s", flags ? " (" : "",
		 flags & NET_IMAP_SEEN ? "\\Seen" : "",
		 (flags & NET_IMAP_SEEN) && (flags & ~NET_IMAP_SEEN) ? " " : "",
		 flags & NET_IMAP_FLAGGED ? "\\Flagged" : "",
		 (flags & NET_IMAP_FLAGGED) && (flags & NET_IMAP_ANSWERED) ? " " : "",
		 flags & NET_IMAP_ANSWERED ? "\\Answered" : "", flags ? ")" : "");
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

/* the message as a literal, CRLF line ends, then the command's CRLF */
static int send_literal(net_imap_t *h, const char *raw, size_t len)
{
	char buf[65536];
	size_t i, o = 0;
	int err;

	for (i = 0; i < len; i++) {
		if (o + 2 > sizeof(buf)) {
			if ((err = imap_send(h, buf, o, "APPEND")))
				return err;
			o = 0;
		}
		if (raw[i] == '\n' && (!i || raw[i - 1] != '\r'))
			buf[o++] = '\r';
		buf[o++] = raw[i];
	}
	if (o && (err = imap_send(h, buf, o, "APPEND")))
		return err;
	return imap_send(h, "\r\n", 2, "APPEND");
}

/* a tagged answer to one of the batch's APPENDs (tags first .. first + n
 * - 1); 1 if line was one */
static int appended(net_imap_t *h, const char *line, unsigned first, struct net_imap_msg *m,
		    size_t n, size_t *answered)
{
	const char *st;
	char *end;
	unsigned long t;

	if (line[0] != 'L')
		return 0;
	t = strtoul(line + 1, &end, 10);
	if (end == line + 1 || *end != ' ' || t < first || t - first >= n)
		return 0;
	st = end + 1;
	if (m[t - first].err != EINPROGRESS)
		return 0;       /* answered already: not ours */
	if (!strncasecmp(st, "OK", 2)) {
		m[t - first].err = 0;
	} else {
		m[t - first].err = EBADMSG;
		if (!h->error[0] || strncmp(h->error, "APPEND: ", 8)) {
			snprintf(h->error, sizeof(h->error), "APPEND: %s", st);
			for (char *q = h->error; *q; q++)
				if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
					*q = '?';
		}
	}
	(*answered)++;
	return 1;
}

int net_imap_append_batch(net_imap_t *h, struct net_imap_msg *m, size_t n)
{
	char line[512], flags[64];
	unsigned first;
	size_t i, answered = 0;
	int err;

	if ((err = imap_connect(h)))
		return err;
	h->error[0] = '\0';
	h->started = imap_now();
	h->alen = 0;
	if (h->ans)
		h->ans[0] = '\0';
	first = h->tag + 1;
	for (i = 0; i < n; i++)
		m[i].err = EINPROGRESS;
	for (i = 0; i < n; i++) {
		size_t wire = wire_size(m[i].raw, m[i].len);
		int nonsync = (h->caps & CAP_LITERAL_PLUS) ||
			      ((h->caps & CAP_LITERAL_MINUS) && wire <= LITERAL_MINUS_MAX);
		int k;

		flag_list(m[i].flags, flags, sizeof(flags));
		k = snprintf(line, sizeof(line), "L%u APPEND \"%s\"%s {%zu%s}\r\n", ++h->tag,
			     h->folder, flags, wire, nonsync ? "+" : "");
		if ((err = imap_send(h, line, (size_t)k, "APPEND")))
			return err;
		/* a synchronizing literal: its continuation first (answers
		 * of the APPENDs before it may come meanwhile); a NO
		 * instead refuses this message before its bytes */
		while (!nonsync) {
			if ((err = imap_line(h, line, sizeof(line), "APPEND")))
				return err;
			if (line[0] == '+')
				break;
			if (appended(h, line, first, m, n, &answered) && m[i].err != EINPROGRESS)
				break;
		}
		if (m[i].err == EINPROGRESS && (err = send_literal(h, m[i].raw, m[i].len)))
			return err;
	}
	while (answered < n) {
		if ((err = imap_line(h, line, sizeof(line), "APPEND")))
			return err;
		appended(h, line, first, m, n, &answered);
	}
	return 0;
}

void net_imap_close(net_imap_t *h)
{
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
	if (h->connected && h->fd != CURL_SOCKET_BAD) {
		if (!h->broken && !net_stopped(h->req->stop, h->req->cancel)) {
			const struct net_req *req = h->req;
			struct net_req short_req = *req;

			short_req.timeout = req->timeout < LOGOUT_WAIT ? req->timeout : LOGOUT_WAIT;
			short_req.deadline = short_req.timeout;
			h->req = &short_req;
			(void)imap_command(h, "LOGOUT", "LOGOUT");
			h->req = req;
		}
		shutdown(h->fd, SHUT_RDWR);
	}
	if (h->curl)
		curl_easy_cleanup(h->curl);
	free(h->ans);
	free(h->in);
	free(h->base);
	free(h);
}
