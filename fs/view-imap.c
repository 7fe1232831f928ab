/*
 * A view kept in IMAP folders, as `lei q -o imaps://...` and `lei up`
 * keep one: after each search the view's messages that a folder does not
 * have yet are APPENDed to it (net/imap.c), with their flags (\Seen,
 * \Flagged, \Answered from the view's S, F, R).  What was delivered is
 * the cache's imap table, per view and folder: each message is recorded
 * as pending before its APPEND and done after it, so that a crash
 * between the two is settled by asking the server (UID SEARCH by
 * Message-ID) rather than by sending it again.  A folder whose
 * UIDVALIDITY changed (deleted and made anew) is delivered whole again.
 *
 * One direction only: flags changed in the view after a message was
 * delivered, and flags changed on the server, are not carried over.
 * Each APPEND carries the message's flags; a CHUNK (at most CHUNK_BYTES
 * of mail in memory) is one pipelined batch (net_imap_append_batch).
 * Runs in the refresh thread, under no lock; every network call is
 * bounded by the timeouts of a search, and the daemon's stop or the
 * view's removal ends it at the next command.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/log.h"
#include "fs/views-private.h"
#include "net/net.h"

/* messages recorded as pending, then sent, then recorded as done, at a
 * time: one write transaction each way per this many APPENDs, which go
 * out as one pipelined batch of at most CHUNK_BYTES (a bigger message
 * goes alone) */
#define CHUNK 64
#define CHUNK_BYTES ((size_t)4 << 20)

struct pick {
	unsigned char *oids;
	uint32_t *flags;
	size_t n, cap;
};

static int collect(void *arg, const struct cache_entry *e)
{
	struct pick *p = arg;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		unsigned char *o = realloc(p->oids, cap * CACHE_OID_LEN);
		uint32_t *f;

		if (!o)
			return ENOMEM;
		p->oids = o;
		if (!(f = realloc(p->flags, cap * sizeof(*f))))
			return ENOMEM;
		p->flags = f;
		p->cap = cap;
	}
	memcpy(p->oids + p->n * CACHE_OID_LEN, e->oid, CACHE_OID_LEN);
	p->flags[p->n++] = e->flags;
	return 0;
}

/* maildir flags (cache_flags_*: D F P R S T = bits 0..5) to IMAP's */
static unsigned imap_flags(uint32_t f)
{
	return (f & (1u << 4) ? NET_IMAP_SEEN : 0) | (f & (1u << 1) ? NET_IMAP_FLAGGED : 0) |
	       (f & (1u << 3) ? NET_IMAP_ANSWERED : 0);
}

static void set_state(views_t *v, struct live *l, const char *url, int failed,
		      const char *why, const char *folder)
{
	struct imap_state *s;

	pthread_mutex_lock(&v->lock);
	for (s = l->imap; s; s = s->next)
		if (!strcmp(s->url, url))
			break;
	if (!s && (s = calloc(1, sizeof(*s)))) {
		if ((s->url = strdup(url))) {
			s->next = l->imap;
			l->imap = s;
		} else {
			free(s);
			s = NULL;
		}
	}
	if (s) {
		s->tried = 1;
		s->failed = failed;
		snprintf(s->error, sizeof(s->error), "%s", failed ? why : "");
		snprintf(s->folder, sizeof(s->folder), "%s", folder);
	}
	pthread_mutex_unlock(&v->lock);
}

/* one message: its bytes and Message-ID (*mid NULL if it has none) */
static int load(views_t *v, const unsigned char *oid, char **raw, size_t *len, char **mid)
{
	int err;

	*mid = NULL;
	if ((err = cache_msg_get(v->cache, oid, raw, len)))
		return err;
	if (cache_mail_msgid(*raw, *len, mid) == ENOMEM) {
		free(*raw);
		*raw = NULL;
		return ENOMEM;
	}
	return 0;
}

/* the pending ones the folder has (a crash came after their APPEND) are
 * marked done; the others stay to be sent (*pending cleared) */
static int settle_pending(views_t *v, struct live *l, const struct cache_view *cv,
			  const char *url, net_imap_t *h, struct pick *p, unsigned char *states)
{
	size_t i, asked = 0, had = 0;
	int err = 0;

	for (i = 0; i < p->n && !err; i++) {
		const unsigned char *oid = p->oids + i * CACHE_OID_LEN;
		char *raw = NULL, *mid = NULL;
		size_t len;
		int found = 0;

		if (states[i] != CACHE_IMAP_PENDING)
			continue;
		if ((err = load(v, oid, &raw, &len, &mid)))
			break;
		err = mid ? net_imap_find(h, mid, &found) : 0;
		asked++;
		if (err == EINVAL)      /* cannot be asked for: sent again */
			err = 0;
		if (!err && found) {
			err = cache_imap_mark(v->cache, cv->id, url, oid, 1, CACHE_IMAP_DONE);
			states[i] = CACHE_IMAP_DONE;
			had++;
		} else if (!err) {
			log_info("delivery of %s to %s: %s of an interrupted delivery is not in "
				 "the folder: sent again", l->name, url, mid ? mid : "a message");
			states[i] = 0;
		}
		free(raw);
		free(mid);
	}
	if (asked)
		log_info("delivery of %s to %s: %zu messages of an interrupted delivery, "
			 "%zu of them already in the folder", l->name, url, asked, had);
	return err;
}

/* APPEND what the folder lacks, CHUNK at a time; *sent counts them.  A
 * message the server refuses (NO: too big, a bad header) stays pending and
 * is tried again at the next refresh, but stops no other: *refused counts
 * them, the first one's reason in `reason`. */
static int send_new(views_t *v, const struct cache_view *cv, const char *url, net_imap_t *h,
		    struct pick *p, const unsigned char *states, uint64_t *sent, int *net,
		    uint64_t *refused, char *reason, size_t reasonlen)
{
	unsigned char *chunk = malloc(2 * CHUNK * CACHE_OID_LEN), *ok;
	struct net_imap_msg m[CHUNK];
	size_t idx[CHUNK], i = 0, j, k, n, bytes;
	int err = 0;

	*net = 0;
	if (!chunk)
		return ENOMEM;
	ok = chunk + CHUNK * CACHE_OID_LEN;     /* the ones the server took */
	memset(m, 0, sizeof(m));
	while (i < p->n && !err) {
		for (k = 0; i < p->n && k < CHUNK; i++)
			if (states[i] != CACHE_IMAP_DONE) {
				memcpy(chunk + k * CACHE_OID_LEN, p->oids + i * CACHE_OID_LEN,
				       CACHE_OID_LEN);
				idx[k++] = i;
			}
		if (!k)
			break;
		if ((err = cache_imap_mark(v->cache, cv->id, url, chunk, k, CACHE_IMAP_PENDING)))
			break;
		/* the chunk in batches of at most CHUNK_BYTES */
		for (j = 0, n = 0; j < k && !err; ) {
			size_t b, first = j;

			for (bytes = 0; j < k && (j == first || bytes < CHUNK_BYTES); j++) {
				char *raw = NULL, *mid = NULL;

				if ((err = load(v, chunk + j * CACHE_OID_LEN, &raw, &m[j].len, &mid)))
					break;
				free(mid);
				m[j].raw = raw;
				m[j].flags = imap_flags(p->flags[idx[j]]);
				m[j].err = EINPROGRESS;  /* no answer yet */
				bytes += m[j].len;
			}
			if (!err) {
				err = net_imap_append_batch(h, m + first, j - first);
				*net = err != 0;
			}
			/* what the server confirmed is done, even from a
			 * batch the session failed in */
			for (b = first; b < j; b++) {
				if (m[b].err == EBADMSG && !(*refused)++)
					snprintf(reason, reasonlen, "%s", net_imap_error(h));
				if (!m[b].err)
					memcpy(ok + n++ * CACHE_OID_LEN, chunk + b * CACHE_OID_LEN,
					       CACHE_OID_LEN);
				free((char *)m[b].raw);
				m[b].raw = NULL;
			}
		}
		/* what was sent is done; the rest of the chunk stays pending,
		 * looked for by Message-ID next time (a refused one is sent
		 * again at the next refresh) */
		if (n) {
			int e = cache_imap_mark(v->cache, cv->id, url, ok, n, CACHE_IMAP_DONE);

			if (!err)
				err = e;
			*sent += n;
		}
	}
	free(chunk);
	return err;
}

/* one folder; 0, or an errno with why set; `folder` gets its name on the
 * server when that is not the URL's (another separator), else "" */
static int deliver_folder(views_t *v, struct live *l, const struct cache_view *cv,
			  const char *url, uint64_t *sent, char *why, size_t whylen,
			  char folder[NET_IMAP_NAME_MAX])
{
	struct net_imap_url u;
	struct net_cred cred = { 0 };
	struct net_req req = {
		.url = url, .timeout = v->o.timeout, .low_speed = v->o.low_speed,
		/* a password goes over it: -o insecure (for HTTPS sources) does
		 * not loosen it; cafile= adds a trust root */
		.deadline = v->o.deadline, .cafile = v->o.cafile, .insecure = 0,
		.proxy = v->o.proxy,
		.stop = &v->stop, .cancel = &l->cancel,
	};
	struct pick p = { 0 };
	unsigned char *states = NULL;
	net_imap_t *h = NULL;
	const char *reason;
	char host[NET_IMAP_NAME_MAX + 8];
	uint32_t uidvalidity = 0;
	uint64_t refused = 0;
	char reason_buf[300] = "";
	int err, created = 0, changed = 0, net = 0;

	*sent = 0;
	folder[0] = '\0';
	if ((err = net_imap_parse(url, &u, &reason))) {
		snprintf(why, whylen, "%s", reason);
		return err;
	}
	if (u.port == (u.tls ? 993 : 143))
		snprintf(host, sizeof(host), "%s", u.host);
	else
		snprintf(host, sizeof(host), "%s:%d", u.host, u.port);
	cred.protocol = u.tls ? "imaps" : "imap";
	cred.host = host;
	if (u.user[0] && !(cred.username = strdup(u.user)))
		return ENOMEM;
	if ((err = net_cred_fill(&cred, v->o.timeout, why, whylen)))
		goto out;
	if ((err = net_imap_open(&req, cred.username, cred.password, &h)))
		goto net_fail;
	if ((err = net_imap_select(h, &uidvalidity, &created))) {
		if (err == EACCES) {
			/* the server refused this password: the helper forgets it */
			net_cred_report(&cred, 0, v->o.timeout);
			snprintf(why, whylen, "authentication failed: %s", net_imap_error(h));
			goto out;
		}
		goto net_fail;
	}
	net_cred_report(&cred, 1, v->o.timeout);
	if (strcmp(net_imap_folder(h), u.folder))
		snprintf(folder, NET_IMAP_NAME_MAX, "%s", net_imap_folder(h));
	if ((err = cache_imap_folder(v->cache, cv->id, url, uidvalidity, created, &changed)))
		goto cache_fail;
	if (changed || created)
		log_info("IMAP folder of %s %s: delivering the view whole", l->name,
			 created ? "made" : "made anew (UIDVALIDITY changed)");
	if ((err = cache_entry_each(v->cache, cv->id, collect, &p)))
		goto cache_fail;
	if (p.n && !(states = malloc(p.n))) {
		err = ENOMEM;
		goto cache_fail;
	}
	if (p.n && (err = cache_imap_states(v->cache, cv->id, url, p.oids, p.n, states)))
		goto cache_fail;
	if ((err = settle_pending(v, l, cv, url, h, &p, states)))
		goto any_fail;
	err = send_new(v, cv, url, h, &p, states, sent, &net, &refused, reason_buf,
		       sizeof(reason_buf));
	if (err && net)
		goto net_fail;
	if (!err && refused) {
		snprintf(why, whylen, "%llu refused by the server, tried again at the next "
			 "refresh: %s", (unsigned long long)refused, reason_buf);
		err = EREMOTEIO;
		goto out;
	}
any_fail:
	if (!err)
		goto out;
	if (h && net_imap_error(h)[0] && err != ENOENT && err != ENOMEM && err != EIO)
		goto net_fail;
cache_fail:
	snprintf(why, whylen, "%s", strerror(err));
	goto out;
net_fail:
	snprintf(why, whylen, "%s", h && net_imap_error(h)[0] ? net_imap_error(h) : strerror(err));
out:
	net_imap_close(h);
	net_cred_free(&cred);
	free(p.oids);
	free(p.flags);
	free(states);
	return err;
}

void view_imap_deliver(views_t *v, struct live *l, const struct cache_view *cv,
		       const struct settings *set)
{
	int i;

	for (i = 0; i < set->nimaps; i++) {
		char why[400] = "", shown[600], folder[NET_IMAP_NAME_MAX];
		uint64_t sent = 0;
		int err;

		if (atomic_load(&v->stop) || atomic_load(&l->cancel))
			return;
		err = deliver_folder(v, l, cv, set->imaps[i], &sent, why, sizeof(why), folder);
		snprintf(shown, sizeof(shown), "%s", set->imaps[i]);
		if (err == ECANCELED)
			return;         /* stopping: the next refresh goes on */
		if (err)
			log_err("delivery of %s to %s failed: %s", l->name, shown,
				why[0] ? why : strerror(err));
		else if (sent)
			log_info("delivery of %s to %s: %llu appended", l->name, shown,
				 (unsigned long long)sent);
		if (folder[0] && !err)
			log_info("delivery of %s to %s: the server separates folders with '.': "
				 "folder %s", l->name, shown, folder);
		set_state(v, l, set->imaps[i], err != 0, why[0] ? why : strerror(err), folder);
	}
}

void view_imap_status(views_t *v, const struct cache_view *cv, const struct settings *set,
		      FILE *f)
{
	int i;

	for (i = 0; i < set->nimaps; i++) {
		struct imap_state *s;
		char error[400] = "", folder[NET_IMAP_NAME_MAX] = "";
		uint64_t n = 0;
		int tried = 0, failed = 0;

		pthread_mutex_lock(&v->lock);
		for (struct live *l = v->live; l; l = l->next)
			if (l->id == cv->id)
				for (s = l->imap; s; s = s->next)
					if (!strcmp(s->url, set->imaps[i])) {
						tried = s->tried;
						failed = s->failed;
						memcpy(error, s->error, sizeof(error));
						memcpy(folder, s->folder, sizeof(folder));
					}
		pthread_mutex_unlock(&v->lock);
		cache_imap_count(v->cache, cv->id, set->imaps[i], &n);
		/* as written: it holds no password (settings_imap_ok) */
		fprintf(f, "imap: %s", set->imaps[i]);
		if (failed)
			fprintf(f, ": failed: %s (%llu delivered)\n", error, (unsigned long long)n);
		else if ((tried || n) && folder[0])
			fprintf(f, ": ok, %llu delivered (the server's folder %s)\n",
				(unsigned long long)n, folder);
		else if (tried || n)
			fprintf(f, ": ok, %llu delivered\n", (unsigned long long)n);
		else
			fputs(": not delivered yet\n", f);
	}
}
