/*
 * net: where mail comes from and goes to, outside the cache: public-inbox
 * searches and thread fetches over HTTP(S) (search.c, below; its stream
 * stages gunzip.c and mboxrd.c, its turns per host and for big messages
 * hosts.c and bigmsg.c), local archives on disk (archive.c; inboxes
 * archive-git.c), the grammar of a source (source.c), IMAP delivery
 * (imap.c), git credential (credential.c) and git itself (git.c: the one
 * place git is started, and the dates of local queries), each contract
 * further down.  Nothing here knows about FUSE, views or the
 * cache.
 *
 * net_search() POSTs "<url>?q=<query>&x=m[&t=1]" as lei does, inflates the
 * gzip answer (multi-member) as it arrives and splits the mboxrd stream into
 * raw messages, handing each to a callback.  Nothing holds the whole answer:
 * memory is bounded by the largest message (max_message, beyond which the
 * search fails with EFBIG).  HTTP 404 is "no match": success, zero messages.
 *
 * Bounds: connecting longer than `timeout` seconds, an answer (a 200's or
 * a 404's body alike) that brings less than `low_speed` bytes/s over
 * `timeout` seconds, and a search that lasts longer than `deadline`
 * seconds in all, fail it with ETIMEDOUT and say which in res->error.
 * `stop` (if non-NULL) is polled, so another thread can abort.
 * HTTP 429 and 503 (a busy server) fail with EBUSY, the server's
 * Retry-After (seconds form) in res->retry_after.
 * TLS is verified unless `insecure` is set; `cafile` adds a trust root.
 *
 * Thread-safe: call net_global_init() once before any thread starts; each
 * net_search() uses its own handle.  Errors are 0 or a positive errno, with
 * a one-line reason (HTTP status or curl's message, no credentials) left in
 * res->error.
 */
#ifndef LEIFS_NET_H
#define LEIFS_NET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One raw message, exactly as it will be stored (mboxrd unescaped).
 * `raw` is valid only during the call.  Return 0, or an errno to stop. */
typedef int (*net_msg_fn)(void *arg, const char *raw, size_t len);

struct net_req {
	const char *url;        /* public-inbox base, e.g. https://lore.kernel.org/all/ */
	const char *query;      /* query text, sent as is (after whitespace folding) */
	int threads;            /* add t=1: whole threads */
	long timeout;           /* seconds; see above */
	long low_speed;         /* bytes/s; see above (0: any rate will do) */
	long deadline;          /* seconds for the whole search; 0: none */
	const char *user_agent; /* the User-Agent header; NULL: none */
	size_t max_message;     /* bytes; a larger message fails the search */
	const char *cafile;     /* NULL: system trust store */
	int insecure;           /* skip TLS verification (never by default) */
	const char *proxy;      /* NULL: curl's *_proxy environment variables */
	atomic_int *stop;       /* non-zero: abort with ECANCELED */
	atomic_int *cancel;     /* the same, for one request (a removed view) */
};

struct net_res {
	long http_status;       /* 0 if no answer came */
	size_t messages;        /* messages handed to the callback */
	size_t bytes;           /* compressed bytes received */
	long retry_after;       /* seconds the server asked to wait; 0: none */
	char error[256];        /* reason when the search failed */
};

int net_global_init(void);
void net_global_cleanup(void);

int net_search(const struct net_req *req, net_msg_fn fn, void *arg,
	       struct net_res *res);

/* The URL net_search() would POST to (for logs and tests); malloc'd. */
char *net_search_url(const struct net_req *req);

/* A whole thread, as public-inbox serves it for every message: GET
 * "<url><msgid>/t.mbox.gz" (WWW.pm, Mbox.pm thread_mbox), req->query
 * being the Message-ID without angle brackets, percent-escaped as
 * public-inbox's mid_escape does.  Streamed, bounded and answered as
 * net_search(), except HTTP 404: the server has no message of that id,
 * ENOENT ("no such message" in res->error).  req->threads is unused. */
int net_thread(const struct net_req *req, net_msg_fn fn, void *arg, struct net_res *res);
/* The URL net_thread() would GET; malloc'd. */
char *net_thread_url(const struct net_req *req);

/* The bounds and TLS settings of every request on a curl handle (a CURL *,
 * void here so that net.h needs no curl header): connect timeout, low
 * speed, deadline, cafile, insecure, proxy; errbuf gets curl's reasons
 * (CURL_ERROR_SIZE).  search.c's, shared with imap.c. */
void net_curl_bounds(void *curl, const struct net_req *req, char *errbuf);

/*
 * IMAP delivery (imap.c): APPEND a view's messages to a folder, as
 * `lei q -o imaps://...` does.  A folder is named by a URL,
 * imap://[user@]host[:port]/FOLDER or imaps://... (TLS from the start,
 * verified unless req->insecure; req->cafile adds a trust root); imap://
 * is plain text, so it is refused (EINVAL) for any host but this machine
 * (localhost, 127.x).  A password in the URL is refused (EINVAL): it
 * comes from git credential (below).  A folder name is
 * [A-Za-z0-9._+-,=/] only, with no "." or ".." part, so that it goes to
 * the server as written.
 *
 * A session is one connection (libcurl logs in, the commands are sent by
 * hand), for any number of commands; every wait on the server is bounded
 * by req->timeout without progress (the login as net_search()'s requests
 * are); *req->stop or *req->cancel abort
 * with ECANCELED, within a second, and net_imap_close then waits for no
 * LOGOUT; otherwise the LOGOUT's answer is waited for 2 s at most).  One thread at a time per session; sessions are
 * independent.  Errors: 0 or a positive errno (EACCES: the server refused
 * the login; EREMOTEIO: it refused a command; ETIMEDOUT, ECONNREFUSED,
 * EPERM for TLS, ...), with net_imap_error() saying why in one line: the
 * server's own NO/BAD answer when it gave one, never the password.
 */
#define NET_IMAP_NAME_MAX 256
struct net_imap_url {
	int tls;                /* imaps:// */
	char user[NET_IMAP_NAME_MAX];   /* "" when not given */
	char host[NET_IMAP_NAME_MAX];
	int port;               /* 993 or 143 when not given */
	char folder[NET_IMAP_NAME_MAX];
};
/* Check and split a folder URL (no I/O); EINVAL with a reason in *why. */
int net_imap_parse(const char *url, struct net_imap_url *u, const char **why);

typedef struct net_imap net_imap_t;
/* A session for folder req->url (connecting at the first command); req
 * must outlive it.  user and password are copied. */
int net_imap_open(const struct net_req *req, const char *user, const char *password,
		  net_imap_t **out);
/* EXAMINE the folder (CREATE it first if the server says it has none,
 * *created = 1) and give its UIDVALIDITY.  A '/' of the folder path is the
 * server's own hierarchy separator (LIST "" ""): on a server with '.',
 * lore/rtc is the folder lore.rtc (EPROTO for a separator other than '/'
 * or '.'). */
int net_imap_select(net_imap_t *h, uint32_t *uidvalidity, int *created);
/* The folder's name on the server, as net_imap_select mapped it. */
const char *net_imap_folder(const net_imap_t *h);
/* Whether the folder has a message with Message-ID mid ("<...>"): UID
 * SEARCH HEADER Message-ID.  EINVAL for an id that cannot be asked for. */
int net_imap_find(net_imap_t *h, const char *mid, int *found);
enum { NET_IMAP_SEEN = 1, NET_IMAP_FLAGGED = 2, NET_IMAP_ANSWERED = 4 };
struct net_imap_msg {
	const char *raw;        /* the message as stored (bare LFs go out as
				 * CRLF, IMAP's line ends) */
	size_t len;
	unsigned flags;         /* NET_IMAP_*: its flags in the folder */
	int err;                /* out: 0, or EBADMSG: the server refused it */
};
/* APPEND n messages, pipelined (imap.c says how), each with its flags.
 * A message the server refuses (NO/BAD) has err EBADMSG, the first
 * reason in net_imap_error(), and stops no other; the return is 0 once
 * every message has its answer, else the session's failure (then a
 * message still without one has err EINPROGRESS). */
int net_imap_append_batch(net_imap_t *h, struct net_imap_msg *m, size_t n);
/* Why the last command failed; valid until the next one. */
const char *net_imap_error(const net_imap_t *h);
void net_imap_close(net_imap_t *h);

/*
 * Passwords (credential.c) from `git credential fill`, and `approve` or
 * `reject` after the server took or refused them, as git does
 * (gitcredentials(7)).  git runs with a fixed argv and no shell, in /,
 * with GIT_TERMINAL_PROMPT=0, killed after `timeout` seconds; nothing it
 * answers is used but the username and password lines.  The password is
 * never logged; net_cred_free wipes it.  Any thread.
 */
struct net_cred {
	const char *protocol;   /* "imap" or "imaps"; the caller's */
	const char *host;       /* "host" or "host:port"; the caller's */
	char *username;         /* in: the URL's (malloc'd) or NULL; out: git's */
	char *password;         /* out: malloc'd */
};
/* EACCES (or ETIMEDOUT, EINVAL) with a reason in why when no password came. */
int net_cred_fill(struct net_cred *c, long timeout, char *why, size_t whylen);
/* ok: approve (the server took it); else reject. */
int net_cred_report(const struct net_cred *c, int ok, long timeout);
void net_cred_free(struct net_cred *c);

/*
 * git (git.c).  Every git leifs runs is started by net_git_spawn: "git"
 * from the daemon's PATH with a fixed argv (no shell), the environment
 * `env` alone, in the directory `dir`; stdout a new pipe, stderr
 * /dev/null, stdin a given fd, a new pipe or /dev/null; optionally in a
 * process group of its own, so that net_git_reap's timeout kills it whole
 * (git and the helpers it ran).  git inherits no descriptor but those
 * three (LMDB's data.mdb is not close-on-exec), no blocked signal (FUSE's
 * threads block SIGTERM and others) and default dispositions for the
 * signals that end it.  Which environment is safe and what git may read
 * are the caller's to choose: archive-git.c and credential.c say theirs.
 * Its output is read through net_git_out, so that a git that hangs (a
 * FIFO in an archive, a wedged filesystem) costs a search `idle_ms` at
 * most, never the daemon.  Any thread.
 */
struct net_git {
	const char *const *args;        /* git's arguments after "git", NULL-ended */
	const char *const *env;         /* its whole environment, NULL-ended */
	const char *dir;                /* its working directory */
	const int *in_fd;               /* non-NULL: stdin this fd (the caller's, left open) */
	int *in;                        /* non-NULL: stdin a new pipe, its write end here */
	int *out;                       /* stdout a new pipe, its read end here */
	int group;                      /* a process group of its own */
};
/* Start git as g says: 0 with *pid set and the pipe ends given to the
 * caller (close them, then net_git_reap), or an errno (ENOENT: no git in
 * PATH) with nothing left open and *pid -1. */
int net_git_spawn(const struct net_git *g, pid_t *pid);
/* Wait for git to end (EINTR-safe): 0 when it exited 0, EIO when it
 * failed, ETIMEDOUT when `timeout_ms` passed first (-1: no limit; 0: at
 * once): then its process group, or git alone if it has none, is killed
 * (SIGKILL) and waited for.  pid <= 0: nothing to wait for, 0. */
int net_git_reap(pid_t pid, long timeout_ms);

/* git's stdout, read with bounds: no wait for a byte lasts over idle_ms
 * (ETIMEDOUT), and *stop (if given) ends a wait within a quarter second
 * (ECANCELED).  After a short read, err says why (0: git's end).  One
 * reader per pipe, one thread at a time; it owns fd from open to close. */
struct net_git_out {
	int fd;
	long idle_ms;
	atomic_int *stop;
	int err;
	size_t pos, len;
	char buf[16384];
};
void net_git_out_open(struct net_git_out *o, int fd, long idle_ms, atomic_int *stop);
/* A line as fgets reads one (NUL-ended, its '\n' kept if it fits in cap);
 * NULL at the end or on an error (o->err). */
char *net_git_gets(struct net_git_out *o, char *line, size_t cap);
/* Exactly n bytes: 0, or o->err (EIO if the output ended first). */
int net_git_read(struct net_git_out *o, void *dst, size_t n);
void net_git_out_close(struct net_git_out *o);

/* The unix times of n dates in git's approxidate ("2.weeks.ago",
 * "2024-01-02"), for query_approxidate: `git rev-parse --since=DATE...`
 * in git_dir (an empty repository, net_git_dir_init), with the daemon's
 * environment as it is (approxidate reads TZ, and must agree with the
 * user's lei and public-inbox).  The dates are arguments, never a shell's
 * words.  EIO with a reason in why when git cannot say; ETIMEDOUT when it
 * says nothing for idle_ms, ECANCELED once *stop is set (git is killed). */
int net_git_dates(const char *git_dir, char *const *dates, size_t n, long long *out,
		  long idle_ms, atomic_int *stop, char *why, size_t whylen);
/* Make the empty bare repository net_git_dates runs in (idempotent). */
int net_git_dir_init(const char *dir);

/*
 * The stream stages, exposed for tests and fuzzing.  A splitter takes
 * mboxrd bytes in any chunking and calls fn per message; an inflater
 * takes gzip bytes and feeds a splitter.
 */
typedef struct net_mboxrd net_mboxrd_t;
net_mboxrd_t *net_mboxrd_new(size_t max_message, net_msg_fn fn, void *arg);
/* mboxo: only ">From " loses its '>' (">>From " stays); default mboxrd */
void net_mboxrd_set_mboxo(net_mboxrd_t *m, int mboxo);
/* EFBIG: a message (or From_ line) over max_message; EBADMSG: not an mbox
 * (text, or a line longer than max_message, before the first From_ line) */
int net_mboxrd_feed(net_mboxrd_t *m, const char *buf, size_t len);
int net_mboxrd_finish(net_mboxrd_t *m);   /* flush the last message */
size_t net_mboxrd_count(const net_mboxrd_t *m);
/* the flags that make the splitter give up (ECANCELED) while it waits for
 * its turn to hold a big message (see net_big_enter) */
void net_mboxrd_set_stop(net_mboxrd_t *m, atomic_int *stop, atomic_int *cancel);

/* Messages above NET_BIG_MESSAGE bytes are held one at a time in the whole
 * process (bigmsg.c): net_big_enter waits for the turn (ECANCELED once
 * *stop or *cancel is set; either may be NULL), net_big_leave ends it. */
#define NET_BIG_MESSAGE (1u << 20)

/* At most `max` searches at once per server host (hosts.c): enter waits
 * for a slot (ECANCELED once *stop or *cancel is set) and gives a ticket
 * to hand back to leave (NULL ticket: nothing to leave). */
int net_host_enter(const char *url, int max, atomic_int *stop, atomic_int *cancel,
		   char **ticket);
void net_host_leave(char *ticket);

/* For the waits above (bigmsg.c): whether either flag is set (either may
 * be NULL); wait on c (m held) for a signal or 50 ms, whichever first. */
int net_stopped(atomic_int *stop, atomic_int *cancel);
void net_wait_slice(pthread_cond_t *c, pthread_mutex_t *m);
int net_big_enter(atomic_int *stop, atomic_int *cancel);
void net_big_leave(void);
/* after EBADMSG: what the stream is instead, e.g. "not an mbox (its lines
 * end in CR only, with no LF)"; a static string */
const char *net_mboxrd_why(const net_mboxrd_t *m);
void net_mboxrd_free(net_mboxrd_t *m);

typedef struct net_gunzip net_gunzip_t;
net_gunzip_t *net_gunzip_new(net_mboxrd_t *sink);
/* EPROTO: not gzip; else the splitter's errors */
int net_gunzip_feed(net_gunzip_t *g, const void *buf, size_t len);
/* EPROTO if the stream is cut (or empty); else the splitter's errors */
int net_gunzip_finish(net_gunzip_t *g);
void net_gunzip_free(net_gunzip_t *g);

/*
 * Local archives (archive.c): a source that is a path, optionally typed as
 * lei types its inputs: "mboxrd:PATH", "mboxo:PATH", "maildir:PATH",
 * "v2:PATH" (a public-inbox v2 inbox: git/N.git), "v1:PATH" (a v1 inbox, a
 * bare repository); an untyped absolute PATH is told by what it is (a file
 * is mboxrd).  A read hands each message added since position `from` ("":
 * all) to fn and returns the new position in *next (malloc'd), to be given
 * to the next read; res counts messages and bytes and says why it failed.
 *
 * An archive is data, never code or a pointer elsewhere:
 *  - nothing in it is executed or makes leifs execute anything.  git (it
 *    must be in PATH) reads inboxes, but never with the archive as its
 *    repository: it runs in `git_dir`, an empty bare repository leifs owns
 *    (the caller's; it is only read), with an environment leifs makes (no
 *    system or global config, no pager, no replace objects), and sees the
 *    archive's objects only as an alternate.  The archive's config, hooks,
 *    attributes, grafts and replace refs never apply.  Only commit ids
 *    (40 hex digits read from HEAD and its ref by archive-git.c) reach git.
 *  - no name in it is used as a path beyond the archive's own files:
 *    HEAD's ref is checked (refs/..., no "..", no dot components) and read
 *    following no symbolic link.  objects/info/alternates may point only
 *    inside the archive (one elsewhere, quoted, or over 5 deep: EPERM);
 *    git follows those to read objects (only).
 *  - a public-inbox inbox (v1: the repository; v2: the inbox and each
 *    epoch) must belong to the daemon's user or root, as git's
 *    safe.directory wants; another's is refused (EPERM).
 *  - the source must be a regular file or a directory (a FIFO, socket or
 *    device is refused, EINVAL, and nothing ever blocks opening one), and
 *    be what its type says: an mbox a file, a maildir a directory with
 *    cur/ or new/, a v2 inbox one with git/0.git, a v1 one with objects/
 *    and refs/; otherwise res->error says what it is not.
 */
enum { NET_MBOXRD, NET_MBOXO, NET_MAILDIR, NET_PI_V2, NET_PI_V1 };

/* source.c: a source as written, parsed once.  Its fields point into
 * spec (nothing is allocated). */
enum { NET_SOURCE_REMOTE, NET_SOURCE_CACHE, NET_SOURCE_ARCHIVE };
struct net_source {
	int kind;               /* NET_SOURCE_* */
	const char *spec;       /* as written */
	const char *url;        /* REMOTE, CACHE: the public-inbox URL */
	const char *path;       /* ARCHIVE: past its TYPE: prefix */
	int type;               /* ARCHIVE: the TYPE named (NET_MBOXRD...), or
				 * -1: net_archive_kind tells by what is there */
};
/* The kind of spec by its prefix alone (no checks): "http(s)://" remote,
 * "cache:" cache, anything else an archive. */
int net_source_kind(const char *spec);
/* Parse spec: EINVAL unless it is an http(s) URL of printable ASCII with
 * no space (after
 * "cache:" if given) or "[TYPE:]" and an absolute path with no control
 * characters.  No I/O: whether an archive is there is net_archive_kind's. */
int net_source_parse(const char *spec, struct net_source *s);
/* The path of a spec: past its type prefix, if it has one, and the type
 * it names, or -1 (no I/O). */
const char *net_archive_path(const char *spec);
int net_archive_type(const char *spec);
/* The kind of spec and its path, checked as above (type, owner). */
int net_archive_kind(const char *spec, int *kind, const char **path, char *why,
		     size_t whylen);
/* Read what spec gained since `from`; git_dir: see above (NULL: an inbox
 * cannot be read, EINVAL).  git that says nothing for idle_ms (a FIFO
 * among an inbox's objects blocks it) fails the read, ETIMEDOUT, and is
 * killed; so is it, ECANCELED, once *stop is set. */
int net_archive_read(const char *spec, const char *from, const char *git_dir,
		     size_t max_message, long idle_ms, atomic_int *stop, net_msg_fn fn,
		     void *arg, char **next, struct net_res *res);

#endif
