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
 * git does the reading of repositories (log --raw, cat-file --batch), run
 * with arguments only, never a shell.
 *
 * A source must be a regular file or a directory, found without opening it
 * (O_PATH) and read with O_NONBLOCK, so a FIFO or a device never blocks
 * the daemon; a typed one must be what its type says.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"

extern char **environ;

static const struct {
	const char *pfx;
	int kind;
} kinds[] = {
	{ "mboxrd:", NET_MBOXRD }, { "mboxo:", NET_MBOXO }, { "maildir:", NET_MAILDIR },
	{ "v2:", NET_PI_V2 }, { "v1:", NET_PI_V1 },
};

/* a directory `sub` under the directory open as `dfd` */
static int is_dir(int dfd, const char *sub)
{
	struct stat st;

	return !fstatat(dfd, sub, &st, 0) && S_ISDIR(st.st_mode);
}

const char *net_archive_path(const char *spec)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(spec, kinds[i].pfx, strlen(kinds[i].pfx)))
			return spec + strlen(kinds[i].pfx);
	return spec;
}

int net_archive_kind(const char *spec, int *kind, const char **path, char *why, size_t whylen)
{
	struct stat st;
	size_t i;
	int fd, err = 0;

	*kind = -1;
	*path = net_archive_path(spec);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (*path != spec && !strncmp(spec, kinds[i].pfx, strlen(kinds[i].pfx)))
			*kind = kinds[i].kind;
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
		}
		break;
	case NET_PI_V1:
		if (!S_ISDIR(st.st_mode) || !is_dir(fd, "objects") || !is_dir(fd, "refs")) {
			snprintf(why, whylen,
				 "%s is not a public-inbox v1 repository (no objects/ and refs/)",
				 *path);
			err = EINVAL;
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
static void say(struct net_res *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
}

static int stopped(atomic_int *stop)
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
		say(res, "cannot read %s: %s", path, strerror(err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		say(res, "%s is not a regular file", path);
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
	/* what was there when we began: a writer appending meanwhile is read
	 * next time */
	while (pos < st.st_size && !err) {
		size_t want = sizeof(buf);

		if (stopped(stop)) {
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
	net_mboxrd_free(m);
	close(fd);
	if (err == EPROTO)
		say(res, "%s is not an mbox", path);
	else if (err == EFBIG)
		say(res, "a message of %s is over the size limit",
			 path);
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
	int err = 0, i;

	if (sscanf(from, "maildir %lld", &since) != 1)
		since = 0;
	for (i = 0; i < 2 && !err; i++) {
		char dir[4096];
		struct dirent *de;
		DIR *d;

		snprintf(dir, sizeof(dir), "%s/%s", path, subs[i]);
		if (!(d = opendir(dir)))
			continue;
		while (!err && (de = readdir(d))) {
			char p[4096 + 256], *raw = NULL;
			struct stat st;
			size_t len = 0;

			if (de->d_name[0] == '.')
				continue;
			if (stopped(stop)) {
				err = ECANCELED;
				break;
			}
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			if (lstat(p, &st) || !S_ISREG(st.st_mode) || st.st_ctime < since - 1)
				continue;
			if (st.st_ctime > newest)
				newest = st.st_ctime;
			if ((err = read_file(p, max, &raw, &len))) {
				if (err == ENOENT) {    /* renamed meanwhile: seen in cur/ */
					err = 0;
					continue;
				}
				say(res, "cannot read %s: %s", p,
					 err == EFBIG ? "over the size limit" : strerror(err));
				break;
			}
			res->bytes += len;
			res->messages++;
			err = fn(arg, raw, len);
			free(raw);
		}
		closedir(d);
	}
	if (!newest || newest > (long long)began)
		newest = began;
	if (!err && asprintf(next, "maildir %lld", newest) < 0)
		err = ENOMEM;
	return err;
}

/* ---- public-inbox (git) ---- */

static pid_t spawn_git(char *const argv[], int *in, int *out)
{
	posix_spawn_file_actions_t fa;
	int ip[2] = { -1, -1 }, op[2] = { -1, -1 };
	pid_t pid = -1;

	if ((in && pipe2(ip, O_CLOEXEC)) || pipe2(op, O_CLOEXEC))
		goto fail;
	posix_spawn_file_actions_init(&fa);
	if (in)
		posix_spawn_file_actions_adddup2(&fa, ip[0], 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, op[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "git", &fa, NULL, argv, environ))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	if (pid < 0)
		goto fail;
	if (in) {
		close(ip[0]);
		*in = ip[1];
	}
	close(op[1]);
	*out = op[0];
	return pid;
fail:
	for (int i = 0; i < 2; i++) {
		if (ip[i] >= 0)
			close(ip[i]);
		if (op[i] >= 0)
			close(op[i]);
	}
	return -1;
}

static int reap(pid_t pid)
{
	int st = 0;

	if (pid <= 0)
		return 0;
	if (waitpid(pid, &st, 0) < 0)
		return errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : EIO;
}

/* the blob ids an epoch added since commit `last` (NULL: all), oldest
 * first, into *ids (41 bytes each); *head gets the newest commit */
static int epoch_blobs(const char *gitdir, int v1, const char *last, char **ids, size_t *n,
		       char head[41])
{
	char gd[4200], range[100], line[1024];
	char *argv[] = { "git", gd, "log", "--reverse", "--raw", "--no-abbrev", "--no-renames",
			 "--format=commit %H", range, NULL };
	size_t cap = 0;
	pid_t pid;
	FILE *f;
	int fd, err = 0;

	snprintf(gd, sizeof(gd), "--git-dir=%s", gitdir);
	if (last && *last)
		snprintf(range, sizeof(range), "%s..HEAD", last);
	else
		snprintf(range, sizeof(range), "HEAD");
	*n = 0;
	if ((pid = spawn_git(argv, NULL, &fd)) < 0)
		return errno ? errno : EIO;
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		reap(pid);
		return ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tab, *sp;

		if (!strncmp(line, "commit ", 7) && strlen(line) >= 47) {
			memcpy(head, line + 7, 40);
			head[40] = '\0';
			continue;
		}
		/* ":100644 100644 OLD NEW M\tm" */
		if (line[0] != ':' || !(tab = strchr(line, '\t')))
			continue;
		tab[strcspn(tab, "\n")] = '\0';
		if (!v1 && strcmp(tab + 1, "m"))
			continue;
		if (tab[-1] != 'A' && tab[-1] != 'M')
			continue;
		sp = tab - 2;   /* the status letter's space */
		if (sp - line < 41)
			continue;
		if (*n == cap) {
			char *t = realloc(*ids, (cap = cap ? cap * 2 : 1024) * 41);

			if (!t) {
				err = ENOMEM;
				break;
			}
			*ids = t;
		}
		memcpy(*ids + *n * 41, sp - 40, 40);
		(*ids)[*n * 41 + 40] = '\0';
		(*n)++;
	}
	fclose(f);
	if (!err && (err = reap(pid)) && !(last && *last))
		err = 0;        /* an empty epoch has no HEAD yet */
	else if (err)
		reap(pid);
	return err;
}

static int cat_blobs(const char *gitdir, const char *ids, size_t n, size_t max,
		     atomic_int *stop, net_msg_fn fn, void *arg, struct net_res *res)
{
	char gd[4200];
	char *argv[] = { "git", gd, "cat-file", "--batch", NULL };
	char *buf = NULL, line[256];
	size_t i, cap = 0;
	int in, out, err = 0;
	FILE *f;
	pid_t pid;

	snprintf(gd, sizeof(gd), "--git-dir=%s", gitdir);
	if ((pid = spawn_git(argv, &in, &out)) < 0)
		return errno ? errno : EIO;
	if (!(f = fdopen(out, "r"))) {
		close(out);
		close(in);
		reap(pid);
		return ENOMEM;
	}
	/* one request, one answer: pipes never fill up */
	for (i = 0; i < n && !err; i++) {
		unsigned long long size;
		char type[32];

		if (stopped(stop)) {
			err = ECANCELED;
			break;
		}
		snprintf(line, sizeof(line), "%s\n", ids + i * 41);
		if (write(in, line, strlen(line)) != (ssize_t)strlen(line)) {
			err = EIO;
			break;
		}
		if (!fgets(line, sizeof(line), f)) {
			err = EIO;
			break;
		}
		if (sscanf(line, "%*s %31s %llu", type, &size) != 2)
			continue;       /* "missing" */
		if (size > max) {
			/* skip it whole: the answer must be read */
			unsigned long long k;

			for (k = 0; k <= size; k++)
				if (fgetc(f) == EOF)
					break;
			say(res, "a message of %s is over the size limit",
				 gitdir);
			err = EFBIG;
			break;
		}
		if (size + 1 > cap) {
			char *t = realloc(buf, (size_t)size + 1);

			if (!t) {
				err = ENOMEM;
				break;
			}
			buf = t;
			cap = (size_t)size + 1;
		}
		if (fread(buf, 1, (size_t)size + 1, f) != (size_t)size + 1) {
			err = EIO;
			break;
		}
		res->bytes += (size_t)size;
		res->messages++;
		err = fn(arg, buf, (size_t)size);
	}
	close(in);
	fclose(f);
	if (reap(pid) && !err)
		err = EIO;
	free(buf);
	return err;
}

static int read_git(const char *path, int v1, const char *from, size_t max, atomic_int *stop,
		    net_msg_fn fn, void *arg, char **next, struct net_res *res)
{
	char *pos = NULL, *ids = NULL;
	size_t plen = 0;
	int err = 0, e;

	if (!(pos = strdup("git")))
		return ENOMEM;
	plen = 3;
	for (e = 0; !err; e++) {
		char gitdir[4096], head[41] = "", key[32], last[41] = "";
		const char *p;
		size_t n = 0;
		char *t;

		if (v1) {
			if (e > 0)
				break;
			snprintf(gitdir, sizeof(gitdir), "%s", path);
		} else {
			struct stat st;

			snprintf(gitdir, sizeof(gitdir), "%s/git/%d.git", path, e);
			if (stat(gitdir, &st))
				break;
		}
		/* " E COMMIT" in the old position */
		snprintf(key, sizeof(key), " %d ", e);
		if ((p = strstr(from, key)) && strlen(p + strlen(key)) >= 40) {
			memcpy(last, p + strlen(key), 40);
			last[40] = '\0';
		}
		err = epoch_blobs(gitdir, v1, last, &ids, &n, head);
		if (err && *last) {
			/* the commit is gone (a rewritten epoch): read it all */
			last[0] = '\0';
			err = epoch_blobs(gitdir, v1, NULL, &ids, &n, head);
		}
		if (err) {
			say(res, "cannot read %s with git", gitdir);
			break;
		}
		if (n)
			err = cat_blobs(gitdir, ids, n, max, stop, fn, arg, res);
		if (err && !res->error[0])
			say(res, "cannot read %s with git: %s",
				 gitdir, strerror(err));
		if (!*head)
			memcpy(head, last, sizeof(head));
		if (!*head)
			continue;
		if (!(t = realloc(pos, plen + 64))) {
			err = ENOMEM;
			break;
		}
		pos = t;
		plen += (size_t)snprintf(pos + plen, 64, " %d %s", e, head);
	}
	free(ids);
	if (err) {
		free(pos);
		return err;
	}
	*next = pos;
	return 0;
}

int net_archive_read(const char *spec, const char *from, size_t max_message, atomic_int *stop,
		     net_msg_fn fn, void *arg, char **next, struct net_res *res)
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
		return read_git(path, kind == NET_PI_V1, from, max_message, stop, fn, arg, next, res);
	}
}
