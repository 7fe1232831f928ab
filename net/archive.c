/*
 * Local archives as sources (net.h): mbox (mboxrd, mboxo), maildir, and
 * public-inbox inboxes (v2 epochs git/N.git, v1 a bare repository).
 *
 * Each read resumes from a position the previous read returned, so a
 * remount imports only what is new:
 *   mbox     "mbox DEV INO OFFSET": the byte after the last whole message;
 *            a file that shrank, or whose OFFSET no longer starts a
 *            "From " line, is read again from the start.
 *   maildir  "maildir CTIME": files changed (delivered or renamed) since,
 *            less a second for clock granularity.
 *   git      "git EPOCH COMMIT ...": per epoch, the last commit read.
 * Reading again what was read is harmless (messages are keyed by blob id).
 *
 * An archive is data (net.h): nothing in it is run or makes git run
 * anything, and nothing in it names a path leifs follows beyond the
 * archive's own files (no symbolic link inside it is followed, and an
 * inbox whose alternates lead outside it is refused).  git reads
 * repositories (archive-git.c: rev-list piped into diff-tree --raw, then
 * cat-file --batch), with arguments only, never a shell, and never with
 * the archive as its repository: it runs in the caller's empty
 * repository, with an environment made there and the archive's objects
 * as an alternate, from a commit id read there.  Inboxes must be the
 * user's or root's; a source must be a regular file or a directory, found
 * without opening it (O_PATH) and read with O_NONBLOCK, so a FIFO or a
 * device never blocks the daemon.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/archive-private.h"


/* a directory `sub` under the directory open as `dfd` */
static int is_dir(int dfd, const char *sub)
{
	struct stat st;

	return !fstatat(dfd, sub, &st, 0) && S_ISDIR(st.st_mode);
}

/* a reason into why[whylen], cut to fit (paths may be long) */
__attribute__((format(printf, 3, 4)))
static void why_is(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* a git repository of the archive must be ours or root's, as git's
 * safe.directory wants (st: the repository's directory) */
int archive_owned(const char *path, const struct stat *st, char *why, size_t whylen)
{
	if (st->st_uid == geteuid() || st->st_uid == 0)
		return 0;
	why_is(why, whylen, "%s is owned by uid %u, not by uid %u or root: refused",
		 path, (unsigned)st->st_uid, (unsigned)geteuid());
	return EPERM;
}

int net_archive_kind(const char *spec, int *kind, const char **path, char *why, size_t whylen)
{
	struct stat st;
	int fd, err = 0;

	*kind = net_archive_type(spec);
	*path = net_archive_path(spec);
	if ((*path)[0] != '/') {
		snprintf(why, whylen, "a local source is an absolute path: %s", *path);
		return EINVAL;
	}
	/* O_PATH opens nothing: a FIFO cannot block it, a device sees no
	 * open; its type is what fstat says of what was found */
	if ((fd = open(*path, O_PATH | O_CLOEXEC)) < 0 || fstat(fd, &st)) {
		err = errno;
		snprintf(why, whylen, "cannot read %s: %s", *path, strerror(err));
		goto out;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "%s is not a regular file or a directory", *path);
		err = EINVAL;
		goto out;
	}
	if (*kind < 0) {
		if (S_ISREG(st.st_mode))
			*kind = NET_MBOXRD;
		else if (is_dir(fd, "cur") || is_dir(fd, "new"))
			*kind = NET_MAILDIR;
		else if (is_dir(fd, "git/0.git"))
			*kind = NET_PI_V2;
		else if (is_dir(fd, "objects") && is_dir(fd, "refs"))
			*kind = NET_PI_V1;
		if (*kind < 0) {
			snprintf(why, whylen, "%s is no mbox, maildir or public-inbox", *path);
			err = EINVAL;
			goto out;
		}
	}
	switch (*kind) {
	case NET_MBOXRD:
	case NET_MBOXO:
		if (!S_ISREG(st.st_mode)) {
			snprintf(why, whylen, "%s is not an mbox (a directory)", *path);
			err = EINVAL;
		}
		break;
	case NET_MAILDIR:
		if (!S_ISDIR(st.st_mode) || (!is_dir(fd, "cur") && !is_dir(fd, "new"))) {
			snprintf(why, whylen, "%s is not a maildir (no cur/ and new/)", *path);
			err = EINVAL;
		}
		break;
	case NET_PI_V2:
		if (!S_ISDIR(st.st_mode) || !is_dir(fd, "git/0.git")) {
			snprintf(why, whylen, "%s is not a public-inbox v2 inbox (no git/0.git)",
				 *path);
			err = EINVAL;
		} else {
			err = archive_owned(*path, &st, why, whylen);
		}
		break;
	case NET_PI_V1:
		if (!S_ISDIR(st.st_mode) || !is_dir(fd, "objects") || !is_dir(fd, "refs")) {
			snprintf(why, whylen,
				 "%s is not a public-inbox v1 repository (no objects/ and refs/)",
				 *path);
			err = EINVAL;
		} else {
			err = archive_owned(*path, &st, why, whylen);
		}
		break;
	}
out:
	if (fd >= 0)
		close(fd);
	return err;
}

/* the reason of a failed read (paths may be long: cut to fit) */
__attribute__((format(printf, 2, 3)))
void archive_say(struct net_res *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
}

int archive_stopped(atomic_int *stop)
{
	return stop && atomic_load(stop);
}

/* ---- mbox ---- */

static int read_mbox(const char *path, int mboxo, const char *from, size_t max,
		     atomic_int *stop, net_msg_fn fn, void *arg, char **next,
		     struct net_res *res)
{
	unsigned long long dev = 0, ino = 0, off = 0;
	net_mboxrd_t *m = NULL;
	struct stat st;
	char buf[65536];
	off_t pos = 0;
	ssize_t r;
	int fd, err = 0;

	/* never blocks: what net_archive_kind saw may have become a FIFO */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st)) {
		err = errno;
		archive_say(res, "cannot read %s: %s", path, strerror(err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		archive_say(res, "%s is not a regular file", path);
		close(fd);
		return EINVAL;
	}
	if (sscanf(from, "mbox %llu %llu %llu", &dev, &ino, &off) == 3 &&
	    dev == (unsigned long long)st.st_dev && ino == (unsigned long long)st.st_ino &&
	    off <= (unsigned long long)st.st_size) {
		char head[5];

		if (off == (unsigned long long)st.st_size ||
		    (pread(fd, head, 5, (off_t)off) == 5 && !memcmp(head, "From ", 5)))
			pos = (off_t)off;
	}
	if (!(m = net_mboxrd_new(max, fn, arg))) {
		close(fd);
		return ENOMEM;
	}
	net_mboxrd_set_mboxo(m, mboxo);
	net_mboxrd_set_stop(m, stop, NULL);
	/* what was there when we began: a writer appending meanwhile is read
	 * next time */
	while (pos < st.st_size && !err) {
		size_t want = sizeof(buf);

		if (archive_stopped(stop)) {
			err = ECANCELED;
			break;
		}
		if ((off_t)want > st.st_size - pos)
			want = (size_t)(st.st_size - pos);
		r = pread(fd, buf, want, pos);
		if (r <= 0) {
			err = r < 0 ? errno : EIO;
			break;
		}
		pos += r;
		res->bytes += (size_t)r;
		err = net_mboxrd_feed(m, buf, (size_t)r);
	}
	if (!err)
		err = net_mboxrd_finish(m);
	res->messages = net_mboxrd_count(m);
	close(fd);
	if (err == EBADMSG)
		archive_say(res, "%s is %s", path, net_mboxrd_why(m));
	else if (err == EFBIG)
		archive_say(res, "a message of %s is over the size limit",
			 path);
	net_mboxrd_free(m);
	if (!err && asprintf(next, "mbox %llu %llu %llu", (unsigned long long)st.st_dev,
			     (unsigned long long)st.st_ino, (unsigned long long)pos) < 0)
		err = ENOMEM;
	return err;
}

/* ---- maildir ---- */

static int read_file(const char *p, size_t max, char **out, size_t *len)
{
	struct stat st;
	ssize_t r;
	size_t n = 0;
	char *buf;
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return EINVAL;
	}
	if ((size_t)st.st_size > max) {
		close(fd);
		return EFBIG;
	}
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return ENOMEM;
	}
	while (n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)r;
	close(fd);
	*out = buf;
	*len = n;
	return 0;
}

static int read_maildir(const char *path, const char *from, size_t max, atomic_int *stop,
			net_msg_fn fn, void *arg, char **next, struct net_res *res)
{
	static const char *const subs[] = { "new", "cur" };
	long long since = 0, newest = 0;
	time_t began = time(NULL);
	int err = 0, i, big;

	if (sscanf(from, "maildir %lld", &since) != 1)
		since = 0;
	for (i = 0; i < 2 && !err; i++) {
		char dir[4096];
		struct stat dst;
		struct dirent *de;
		DIR *d;

		snprintf(dir, sizeof(dir), "%s/%s", path, subs[i]);
		if (lstat(dir, &dst))
			continue;       /* a maildir may lack new/ or cur/ */
		if (S_ISLNK(dst.st_mode)) {
			archive_say(res, "%s is a symbolic link: refused (it may lead outside the maildir)",
			    dir);
			err = EPERM;
			continue;
		}
		if (!(d = opendir(dir)))
			continue;
		while (!err && (de = readdir(d))) {
			char p[4096 + 256], *raw = NULL;
			struct stat st;
			size_t len = 0;

			if (de->d_name[0] == '.')
				continue;
			if (archive_stopped(stop)) {
				err = ECANCELED;
				break;
			}
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			if (lstat(p, &st) || !S_ISREG(st.st_mode) || st.st_ctime < since - 1)
				continue;
			if (st.st_ctime > newest)
				newest = st.st_ctime;
			/* a big message waits for the process's turn */
			big = st.st_size > NET_BIG_MESSAGE;
			if (big && (err = net_big_enter(stop, NULL)))
				break;
			if ((err = read_file(p, max, &raw, &len))) {
				if (big)
					net_big_leave();
				if (err == ENOENT) {    /* renamed meanwhile: seen in cur/ */
					err = 0;
					continue;
				}
				archive_say(res, "cannot read %s: %s", p,
					 err == EFBIG ? "over the size limit" : strerror(err));
				break;
			}
			res->bytes += len;
			res->messages++;
			err = fn(arg, raw, len);
			free(raw);
			if (big)
				net_big_leave();
		}
		closedir(d);
	}
	if (!newest || newest > (long long)began)
		newest = began;
	if (!err && asprintf(next, "maildir %lld", newest) < 0)
		err = ENOMEM;
	return err;
}

int net_archive_read(const char *spec, const char *from, const char *git_dir,
		     size_t max_message, long idle_ms, atomic_int *stop, net_msg_fn fn, void *arg,
		     char **next, struct net_res *res)
{
	const char *path;
	int kind, err;

	memset(res, 0, sizeof(*res));
	*next = NULL;
	if ((err = net_archive_kind(spec, &kind, &path, res->error, sizeof(res->error))))
		return err;
	if (!from)
		from = "";
	switch (kind) {
	case NET_MBOXRD:
	case NET_MBOXO:
		return read_mbox(path, kind == NET_MBOXO, from, max_message, stop, fn, arg, next, res);
	case NET_MAILDIR:
		return read_maildir(path, from, max_message, stop, fn, arg, next, res);
	default:
		return archive_read_git(path, kind == NET_PI_V1, git_dir, from, max_message,
					idle_ms, stop, fn, arg, next, res);
	}
}
