/*
 * What imap.c (the session: folder, APPEND, SEARCH) and imap-wire.c (the
 * connection: commands and their answers, by hand over the socket libcurl
 * logged in on) share.  Nothing outside net/ includes it.
 */
#ifndef LEIFS_NET_IMAP_PRIVATE_H
#define LEIFS_NET_IMAP_PRIVATE_H

#include <stddef.h>
#include <curl/curl.h>

#include "net/net.h"

/* what one command's answer may hold before the rest is dropped */
#define ANSWER_MAX 65536

/* the server's capabilities that change how APPENDs go */
enum { CAP_LITERAL_PLUS = 1, CAP_LITERAL_MINUS = 2 };

struct net_imap {
	CURL *curl;
	const struct net_req *req;
	char *base;             /* scheme://host:port/ */
	char folder[NET_IMAP_NAME_MAX];
	int connected;          /* logged in; fd is the connection */
	curl_socket_t fd;
	unsigned caps;          /* CAP_* */
	unsigned tag;           /* the last tag sent */
	double started;         /* when this command began (req->deadline) */
	char *ans;              /* this command's response lines */
	size_t alen;
	char *in;               /* read from the server, not yet taken */
	size_t ilen, icap;
	int broken;             /* a command failed: the connection may hang */
	char errbuf[CURL_ERROR_SIZE];
	char error[CURL_ERROR_SIZE + 64];
};

/* imap-wire.c.  Each is bounded by req->timeout without progress (and
 * req->deadline from the command's start, when set) and ends with ECANCELED at a stop,
 * within a second; an error marks the session broken. */
/* Log in (libcurl: greeting, STARTTLS, LOGIN or AUTHENTICATE), then ask
 * CAPABILITY; a no-op once connected. */
int imap_connect(struct net_imap *h);
/* Send len bytes (a command line, a literal). */
int imap_send(struct net_imap *h, const char *buf, size_t len, const char *what);
/* One response line into `line` (its first cap - 1 bytes, no CRLF); the
 * whole of it, literals too, goes to h->ans while that has room. */
int imap_line(struct net_imap *h, char *line, size_t cap, const char *what);
/* Read the answer to tag: untagged lines and the tagged one go to h->ans
 * (at most ANSWER_MAX bytes kept); 0 for OK, EREMOTEIO for NO or BAD (the
 * reason in h->error).  With `cont`, a continuation ("+ ...") ends the
 * read too, returning EINPROGRESS. */
int imap_answer(struct net_imap *h, unsigned tag, int cont, const char *what);
/* CLOCK_MONOTONIC in seconds (h->started) */
double imap_now(void);
/* One command (a line, no literal): send it tagged, read its answer. */
int imap_command(struct net_imap *h, const char *cmd, const char *what);
/* The reason of a tagged NO/BAD in h->ans, or `fallback`, into h->error;
 * 1 if the server answered so. */
int imap_say_error(struct net_imap *h, const char *what, const char *fallback);

#endif
