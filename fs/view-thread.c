/*
 * Thread views: MOUNT/threads/<message-id>/, a maildir of the whole thread
 * of one message.
 *
 * A thread view is a view like any other (same record, refresh policy,
 * files, user state); what differs is its name and how a remote source is
 * asked.  Its record in the cache is keyed "threads/<name>", the path of
 * the directory under the mount: a queries/ name never holds '/', so the
 * two kinds of view cannot take each other's name, a cache from before
 * thread views needs nothing done to it, and every part of views that
 * goes by a view's name (refresh, .status, bookmarks, rmdir, the timer)
 * works on it unchanged.  Its query is "mid:<id>": what a local source
 * runs (with threads forced on); a remote source is asked for
 * <url><id>/t.mbox.gz instead (net_thread), the whole thread each time.
 * A name may also be a link to a message (lore's, patchwork's), '/'
 * written %2F: the view is the thread of the link's id, named by the id.
 */
#include <errno.h>
#include <glib.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fs/log.h"
#include "fs/views-private.h"
#include "query/query.h"

/* The Message-ID of a link to a message, as lei lcat reads one (and b4,
 * for lore's and patchwork's links): the first segment of the URL's path
 * that holds an '@'; else, for an id without one, public-inbox's form:
 * the segment before a thread's or a raw message's suffix (ID/T/, ID/t/,
 * ID/raw, ID/t.mbox.gz, ID/t.atom), or the second of exactly two
 * (INBOX/ID/).  Percent-escapes decoded (glib's, RFC 3986).  The host is
 * not looked at: the id is what names the thread, and the view's sources
 * are asked for it. */
static int link_mid(const char *url, char **mid, const char **why)
{
	static const char *const suffixes[] = { "T", "t", "raw", "t.mbox.gz", "t.atom" };
	const char *p = strstr(url, "://") + 3, *seg[64];
	size_t len[64], nseg = 0, i, pick = SIZE_MAX;
	char *path, *s;

	*mid = NULL;
	if (!(p = strchr(p, '/'))) {
		*why = "a link with no Message-ID in its path";
		return EINVAL;
	}
	if (!(path = strndup(p, strcspn(p, "?#"))))
		return ENOMEM;
	for (p = path; *p && nseg < sizeof(seg) / sizeof(seg[0]);) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		seg[nseg] = p;
		len[nseg] = strcspn(p, "/");
		p += len[nseg++];
	}
	for (i = 0; i < nseg && pick == SIZE_MAX; i++)
		if (memchr(seg[i], '@', len[i]))
			pick = i;
	for (i = 0; pick == SIZE_MAX && nseg >= 3 && i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (len[nseg - 1] == strlen(suffixes[i]) && !memcmp(seg[nseg - 1], suffixes[i], len[nseg - 1]))
			pick = nseg - 2;
	if (pick == SIZE_MAX && nseg == 2)
		pick = 1;
	if (pick == SIZE_MAX) {
		free(path);
		*why = "a link with no Message-ID in its path (no segment with '@', nor INBOX/ID/, ID/T/, ID/raw)";
		return EINVAL;
	}
	s = g_uri_unescape_segment(seg[pick], seg[pick] + len[pick], NULL);
	free(path);
	if (!s || !g_utf8_validate(s, -1, NULL)) {
		*why = "a link whose Message-ID has a bad %-escape (or is not UTF-8)";
		g_free(s);
		return EINVAL;
	}
	*mid = strdup(s);
	g_free(s);
	return *mid ? 0 : ENOMEM;
}

/* The Message-ID a directory name stands for (malloc'd): the name with
 * its angle brackets, if any, taken off, and decoded as a queries/ name
 * is ("%2F" for '/', "%25" for '%'); a name that decodes to an http(s)
 * link stands for the Message-ID in the link (link_mid). */
static int name_mid(const char *name, char **mid, const char **why)
{
	size_t n = strlen(name);
	char *s = NULL;
	int err;

	*mid = NULL;
	if (name[0] == '.') {
		*why = "names starting with '.' are reserved";
		return EINVAL;
	}
	if (n && name[0] == '<')
		name++, n--;
	if (n && name[n - 1] == '>')
		n--;
	if (!n) {
		*why = "empty Message-ID";
		return EINVAL;
	}
	if (!(s = strndup(name, n)))
		return ENOMEM;
	err = query_name_decode(s, mid, why);
	free(s);
	if (err)
		return err;
	if (!strncasecmp(*mid, "https://", 8) || !strncasecmp(*mid, "http://", 7)) {
		s = *mid;
		err = link_mid(s, mid, why);
		free(s);
		if (err)
			return err;
		if (!(*mid)[0]) {
			*why = "empty Message-ID";
			free(*mid);
			*mid = NULL;
			return EINVAL;
		}
	}
	/* the decoded id names the directory (its canonical name) */
	if ((err = view_mid_ok(*mid, why))) {
		free(*mid);
		*mid = NULL;
	}
	return err;
}

/* the key of the view a name under threads/ stands for, and its id */
static int thread_key(const char *name, char **key, char **mid, const char **why)
{
	char *m = NULL;
	int err;

	*key = NULL;
	/* canonical: "<a%2Fb>" and "a%2Fb" are one view, named "a%2Fb" */
	if (!(err = name_mid(name, &m, why)))
		err = view_prefixed_key(THREAD_PREFIX, m, key);
	if (!err && mid)
		*mid = m;
	else
		free(m);
	return err;
}

int views_create_thread(views_t *v, const char *name, char *why, size_t whylen)
{
	const char *reason = NULL;
	char *key = NULL, *mid = NULL, *query = NULL, xwhy[200];
	int err;

	why[0] = '\0';
	if ((err = thread_key(name, &key, &mid, &reason)))
		goto refused;
	if (asprintf(&query, "mid:%s", mid) < 0) {
		query = NULL;
		err = ENOMEM;
		goto out;
	}
	/* what the local sources run must parse (an id with a parenthesis) */
	if ((err = query_validate(query, &reason)) ||
	    (err = query_syntax_check(query, xwhy, sizeof(xwhy)))) {
		if (!reason)
			reason = xwhy[0] ? xwhy : "the mid: query does not parse";
		goto refused;
	}
	err = cache_view_create(v->cache, key, query, NULL);
	if (err && err != EEXIST) {
		snprintf(why, whylen, "cannot store view: %s", strerror(err));
		log_err("mkdir %s: %s", key, why);
	}
	goto out;
refused: {
		char shown[201];
		size_t i;

		/* the name may hold anything but '/' and NUL: show it safely */
		for (i = 0; name[i] && i < sizeof(shown) - 1; i++)
			shown[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
		shown[i] = '\0';
		snprintf(why, whylen, "%s", reason ? reason : strerror(err));
		views_refused(v, "mkdir refused: threads/%s: %s", shown, why);
	}
out:
	free(query);
	free(mid);
	free(key);
	return err;
}

int views_get_thread(views_t *v, const char *name, struct cache_view *out)
{
	const char *why;
	char *key;
	int err = thread_key(name, &key, NULL, &why);

	if (!err)
		err = views_get(v, key, out);
	free(key);
	return err == EINVAL ? ENOENT : err;    /* no such name can exist */
}

int views_remove_thread(views_t *v, const char *name)
{
	const char *why;
	char *key;
	int err = thread_key(name, &key, NULL, &why);

	if (!err)
		err = views_remove(v, key);
	free(key);
	return err == EINVAL ? ENOENT : err;
}
