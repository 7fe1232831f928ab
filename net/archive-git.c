/*
 * public-inbox inboxes (v2 epochs git/N.git, v1 a bare repository) for
 * net/archive.c: each epoch is read from the last commit read, by git run
 * in the caller's empty repository with an environment made here and the
 * epoch's objects as an alternate, from a commit id read here; nothing in
 * the inbox is run, and no link or alternate leads outside it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "net/archive-private.h"

/* ---- public-inbox (git) ---- */

/*
 * git never runs with the archive as its repository: the archive's config
 * (log.showSignature with gpg.program, core.fsmonitor, pagers, textconv),
 * hooks, attributes, grafts and replace refs would all apply.  It runs in
 * `priv`, an empty bare repository leifs owns, in there, with an
 * environment made here, and finds the archive's objects as an alternate
 * (GIT_ALTERNATE_OBJECT_DIRECTORIES, C-quoted, so any byte of a path is
 * safe).  What it reads from is a commit id read here from the epoch's
 * HEAD, never a name: only 40 lowercase hex digits reach git.
 */
struct git {
	const char *priv;       /* --git-dir: leifs's empty bare repository */
	long idle_ms;           /* the longest wait for git's output */
	atomic_int *stop;       /* set: the daemon ends, git is killed */
	char *env[16];          /* git's whole environment, NULL-terminated */
	char *alt;              /* env's GIT_ALTERNATE_OBJECT_DIRECTORIES entry */
	char *path;             /* env's PATH entry */
};

static void git_free(struct git *g)
{
	free(g->alt);
	free(g->path);
}

/* the environment for reading the epoch `gitdir` */
static int git_init(struct git *g, const char *priv, const char *gitdir, long idle_ms,
		    atomic_int *stop)
{
	static const char *const fixed[] = {
		"HOME=/nonexistent", "XDG_CONFIG_HOME=/nonexistent", "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
		"GIT_PAGER=cat", "PAGER=cat",
	};
	static const char pfx[] = "GIT_ALTERNATE_OBJECT_DIRECTORIES=\"";
	const char *path = getenv("PATH"), *s;
	size_t i, n = 0;
	char *p;

	memset(g, 0, sizeof(*g));
	g->priv = priv;
	g->idle_ms = idle_ms;
	g->stop = stop;
	if (asprintf(&g->path, "PATH=%s", path ? path : "/usr/bin:/bin") < 0) {
		g->path = NULL;
		return ENOMEM;
	}
	/* "DIR/objects" quoted as git unquotes it: \" \\ and \ooo */
	if (!(g->alt = malloc(sizeof(pfx) + 4 * (strlen(gitdir) + sizeof("/objects")) + 1)))
		return ENOMEM;
	p = stpcpy(g->alt, pfx);
	for (i = 0; i < 2; i++)
		for (s = i ? "/objects" : gitdir; *s; s++) {
			unsigned char c = (unsigned char)*s;

			if (c == '"' || c == '\\')
				p += sprintf(p, "\\%c", c);
			else if (c < 0x20 || c >= 0x7f)
				p += sprintf(p, "\\%03o", c);
			else
				*p++ = (char)c;
		}
	*p++ = '"';
	*p = '\0';
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		g->env[n++] = (char *)fixed[i];
	g->env[n++] = g->path;
	g->env[n++] = g->alt;
	g->env[n] = NULL;
	return 0;
}

/* "git --no-pager --git-dir=PRIV ARGS..." in PRIV with g's environment
 * (net_git_spawn: stderr to /dev/null); stdin is a new pipe whose write
 * end goes to *in, else in_fd, else /dev/null (in_fd < 0); stdout a new
 * pipe whose read end goes to *out.  -1 with errno when it cannot start */
static pid_t spawn_git(const struct git *g, const char *const args[], int in_fd, int *in,
		       int *out)
{
	const char *argv[16];
	struct net_git ng = { 0 };
	char *gd = NULL;
	pid_t pid = -1;
	size_t n = 0;
	int err;

	if (asprintf(&gd, "--git-dir=%s", g->priv) < 0) {
		errno = ENOMEM;
		return -1;
	}
	argv[n++] = "--no-pager";
	argv[n++] = gd;
	while (*args && n < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	ng.args = argv;
	ng.env = (const char *const *)g->env;
	ng.dir = g->priv;
	ng.in_fd = in_fd >= 0 ? &in_fd : NULL;
	ng.in = in;
	ng.out = out;
	ng.group = 1;   /* killed whole when it hangs */
	if ((err = net_git_spawn(&ng, &pid)))
		errno = err;
	free(gd);
	return err ? -1 : pid;
}

static int is_oid(const char *s)
{
	size_t i;

	for (i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[40] == '\0';
}

/* a ref name as git writes one: under refs/, [A-Za-z0-9._/-], no "..",
 * no "//", no component starting with '.', no ".lock" end, bounded */
static int ref_ok(const char *r)
{
	size_t n = strlen(r), i;

	if (n < 6 || n > 200 || strncmp(r, "refs/", 5) || r[n - 1] == '/' ||
	    strstr(r, "..") || strstr(r, "//") || strstr(r, "/.") ||
	    (n > 5 && !strcmp(r + n - 5, ".lock")))
		return 0;
	for (i = 0; i < n; i++)
		if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= 'A' && r[i] <= 'Z') ||
		      (r[i] >= '0' && r[i] <= '9') || strchr("._/-", r[i])))
			return 0;
	return 1;
}

/* open the file `rel` (checked by ref_ok, or "HEAD", "packed-refs")
 * under the directory `dfd`, following no symbolic link on the way;
 * -1 with errno */
static int open_in(int dfd, const char *rel)
{
	char buf[256], *c = buf, *slash;
	int cur = dfd, fd, e;

	snprintf(buf, sizeof(buf), "%s", rel);
	while ((slash = strchr(c, '/'))) {
		*slash = '\0';
		fd = openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		if (cur != dfd)
			close(cur);
		if (fd < 0) {
			errno = e;
			return -1;
		}
		cur = fd;
		c = slash + 1;
	}
	fd = openat(cur, c, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	e = errno;
	if (cur != dfd)
		close(cur);
	errno = e;
	return fd;
}

/* a small regular file, NUL-terminated, its one final newline dropped */
static int read_small(int fd, char *buf, size_t cap)
{
	struct stat st;
	size_t n = 0;
	ssize_t r;

	if (fstat(fd, &st))
		return errno;
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size >= cap)
		return EINVAL;
	while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

/* the ref `name` in packed-refs: 0 with oid[] set, or ENOENT */
static int packed_ref(int dfd, const char *name, char oid[41])
{
	char line[512];
	int fd, whole = 1, err = ENOENT;
	struct stat st;
	FILE *f;

	if ((fd = open_in(dfd, "packed-refs")) < 0)
		return ENOENT;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return EINVAL;
	}
	/* "OID NAME" lines; "# ..." and "^PEELED" lines do not match */
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		int start = whole;

		whole = n && line[n - 1] == '\n';
		if (!start || !whole)
			continue;       /* a part of an over-long line */
		line[n - 1] = '\0';
		if (n > 42 && line[40] == ' ' && !strcmp(line + 41, name)) {
			line[40] = '\0';
			if (is_oid(line)) {
				memcpy(oid, line, 41);
				err = 0;
			} else {
				err = EINVAL;
			}
			break;
		}
	}
	fclose(f);
	return err;
}

/* the commit id HEAD of the repository `dfd` (named gitdir) points to,
 * by hand (git would read it with the archive's config): "" if HEAD
 * names a branch with no commit yet */
static int read_head(int dfd, const char *gitdir, char head[41], struct net_res *res)
{
	char name[256] = "HEAD", buf[300];
	int depth, fd, err;

	head[0] = '\0';
	for (depth = 0; depth < 5; depth++) {
		if ((fd = open_in(dfd, name)) < 0) {
			err = errno;
			if (err == ENOENT && depth > 0) {
				err = packed_ref(dfd, name, head);
				if (err == ENOENT)
					return 0;       /* an unborn branch: an empty epoch */
				if (!err)
					return 0;
			}
			archive_say(res, "cannot read %s/%s: %s", gitdir, name, strerror(err));
			return err;
		}
		err = read_small(fd, buf, sizeof(buf));
		close(fd);
		if (!err && is_oid(buf)) {
			memcpy(head, buf, 41);
			return 0;
		}
		if (err || strncmp(buf, "ref: ", 5) || !ref_ok(buf + 5)) {
			archive_say(res, "%s/%s is not a commit id or a ref", gitdir, name);
			return EINVAL;
		}
		snprintf(name, sizeof(name), "%s", buf + 5);
	}
	archive_say(res, "%s/HEAD: too many symbolic refs", gitdir);
	return ELOOP;
}

/* the blob ids an epoch added from commit `last` (""/NULL: from the
 * start) to commit `head`, oldest first, into *ids (41 bytes each).
 * rev-list streams newest first (--reverse would print nothing until it
 * had walked every commit: a long silence that -o timeout would take for
 * a hung git), and the ids are turned around here. */
static int epoch_blobs(const struct git *g, int v1, const char *last, const char *head,
		       char **ids, size_t *n)
{
	char not[42], line[1024];
	const char *rl[] = { "rev-list", head, last && *last ? not : NULL, NULL };
	const char *dt[] = { "diff-tree", "--stdin", "-r", "--raw", "--no-renames", "--root",
			     "--no-abbrev", "--no-commit-id", NULL };
	struct net_git_out *o;
	size_t cap = 0, i;
	pid_t rpid, dpid;
	int rfd, fd, err = 0, e2;

	*n = 0;
	if (last && *last)
		snprintf(not, sizeof(not), "^%s", last);
	/* rev-list's commits go straight into diff-tree */
	if ((rpid = spawn_git(g, rl, -1, NULL, &rfd)) < 0)
		return errno ? errno : EIO;
	dpid = spawn_git(g, dt, rfd, NULL, &fd);
	close(rfd);
	if (dpid < 0) {
		err = errno ? errno : EIO;
		net_git_reap(rpid, 0);
		return err;
	}
	if (!(o = malloc(sizeof(*o)))) {
		close(fd);
		net_git_reap(dpid, 0);
		net_git_reap(rpid, 0);
		return ENOMEM;
	}
	net_git_out_open(o, fd, g->idle_ms, g->stop);
	while (net_git_gets(o, line, sizeof(line))) {
		char *tab, *sp;

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
	if (!err)
		err = o->err;
	net_git_out_close(o);
	free(o);
	/* after an error at once: a git that hangs is killed, never waited on */
	e2 = net_git_reap(dpid, err ? 0 : g->idle_ms);
	if (!err)
		err = e2;
	e2 = net_git_reap(rpid, err ? 0 : g->idle_ms);
	if (!err)
		err = e2;
	for (i = 0; !err && i < *n / 2; i++) {        /* oldest first */
		char t[41];

		memcpy(t, *ids + i * 41, 41);
		memcpy(*ids + i * 41, *ids + (*n - 1 - i) * 41, 41);
		memcpy(*ids + (*n - 1 - i) * 41, t, 41);
	}
	return err;
}

static int cat_blobs(const struct git *g, const char *gitdir, const char *ids, size_t n,
		     size_t max, atomic_int *stop, net_msg_fn fn, void *arg, struct net_res *res)
{
	const char *args[] = { "cat-file", "--batch", NULL };
	char *buf = NULL, line[256];
	struct net_git_out *o;
	size_t i, cap = 0;
	int in, out, err = 0, big = 0;
	pid_t pid;

	if ((pid = spawn_git(g, args, -1, &in, &out)) < 0)
		return errno ? errno : EIO;
	if (!(o = malloc(sizeof(*o)))) {
		close(out);
		close(in);
		net_git_reap(pid, 0);
		return ENOMEM;
	}
	net_git_out_open(o, out, g->idle_ms, stop);
	/* one request, one answer: pipes never fill up */
	for (i = 0; i < n && !err; i++) {
		unsigned long long size;
		char type[32];

		if (archive_stopped(stop)) {
			err = ECANCELED;
			break;
		}
		snprintf(line, sizeof(line), "%s\n", ids + i * 41);
		if (write(in, line, strlen(line)) != (ssize_t)strlen(line)) {
			err = EIO;
			break;
		}
		if (!net_git_gets(o, line, sizeof(line))) {
			err = o->err ? o->err : EIO;
			break;
		}
		if (sscanf(line, "%*s %31s %llu", type, &size) != 2)
			continue;       /* "missing" */
		if (size > max) {
			/* git, in the middle of its answer, is killed below */
			archive_say(res, "a message of %s is over the size limit",
				 gitdir);
			err = EFBIG;
			break;
		}
		/* a big message waits for the process's turn, and its
		 * buffer goes with it */
		if (size > NET_BIG_MESSAGE) {
			if ((err = net_big_enter(stop, NULL)))
				break;
			big = 1;
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
		if ((err = net_git_read(o, buf, (size_t)size + 1)))
			break;
		res->bytes += (size_t)size;
		res->messages++;
		err = fn(arg, buf, (size_t)size);
		if (big) {
			free(buf);
			buf = NULL;
			cap = 0;
			net_big_leave();
			big = 0;
		}
	}
	if (big)
		net_big_leave();
	close(in);
	net_git_out_close(o);
	free(o);
	/* after an error at once: a git that hangs is killed, never waited on */
	if (net_git_reap(pid, err ? 0 : g->idle_ms) && !err)
		err = EIO;
	free(buf);
	return err;
}

/* a directory of the archive that is no symbolic link (a link would lead
 * leifs to files outside the archive) */
static int real_dir(const char *p, struct net_res *res)
{
	struct stat st;

	if (lstat(p, &st)) {
		archive_say(res, "cannot read %s: %s", p, strerror(errno));
		return errno;
	}
	if (S_ISLNK(st.st_mode)) {
		archive_say(res, "%s is a symbolic link: refused (it may lead outside the archive)", p);
		return EPERM;
	}
	if (!S_ISDIR(st.st_mode)) {
		archive_say(res, "%s is not a directory", p);
		return ENOTDIR;
	}
	return 0;
}

/*
 * git follows a repository's objects/info/alternates, and theirs in turn:
 * an archive may share objects within itself (a mirror's epochs), but an
 * entry leading outside the archive `root` (a real path) would make leifs
 * read another repository's mail.  0 when every entry, at every depth git
 * goes to, stays inside.
 */
static int alternates_inside(const char *root, const char *objdir, int depth,
			     struct net_res *res)
{
	char p[4200], buf[4096], *line, *save = NULL;
	int fd, n, err = 0;

	snprintf(p, sizeof(p), "%s/info/alternates", objdir);
	if ((fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return 0;
		archive_say(res, "cannot read %s: %s: refused", p, strerror(errno));
		return EPERM;
	}
	n = read_small(fd, buf, sizeof(buf));
	close(fd);
	if (n) {
		archive_say(res, "%s is too large or unreadable: refused", p);
		return EPERM;
	}
	for (line = strtok_r(buf, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		char alt[4200], real[PATH_MAX];
		size_t rl = strlen(root);

		if (!*line || *line == '#')
			continue;
		if (*line == '"' || depth >= 5) {
			archive_say(res, "%s: an alternate leifs does not follow: refused", p);
			return EPERM;
		}
		if (*line == '/')
			snprintf(alt, sizeof(alt), "%s", line);
		else
			snprintf(alt, sizeof(alt), "%s/%s", objdir, line);
		if (!realpath(alt, real))
			continue;       /* git skips one that is not there */
		if (strncmp(real, root, rl) || (real[rl] != '/' && real[rl] != '\0')) {
			archive_say(res, "%s names objects outside the archive (%s): refused", p, real);
			return EPERM;
		}
		err = alternates_inside(root, real, depth + 1, res);
	}
	return err;
}

/* the epoch's own directories are real ones, and its objects stay in the
 * archive `path` */
static int epoch_inside(const char *path, const char *gitdir, int v1, struct net_res *res)
{
	char p[4200], root[PATH_MAX];
	int err;

	if (!realpath(path, root)) {
		archive_say(res, "cannot read %s: %s", path, strerror(errno));
		return errno;
	}
	if (!v1) {
		snprintf(p, sizeof(p), "%s/git", path);
		if ((err = real_dir(p, res)) || (err = real_dir(gitdir, res)))
			return err;
	}
	snprintf(p, sizeof(p), "%s/objects", gitdir);
	if ((err = real_dir(p, res)))
		return err;
	return alternates_inside(root, p, 0, res);
}

int archive_read_git(const char *path, int v1, const char *priv, const char *from, size_t max,
		    long idle_ms, atomic_int *stop, net_msg_fn fn, void *arg, char **next, struct net_res *res)
{
	char *pos = NULL, *ids = NULL;
	size_t plen = 0;
	int err = 0, e;

	if (!priv) {
		archive_say(res, "no private repository to read %s with", path);
		return EINVAL;
	}
	if (!(pos = strdup("git")))
		return ENOMEM;
	plen = 3;
	for (e = 0; !err; e++) {
		char gitdir[4096], head[41] = "", key[32], last[41] = "";
		struct git g = { 0 };
		struct stat st;
		const char *p;
		size_t n = 0;
		int dfd;
		char *t;

		if (v1 && e > 0)
			break;
		if (v1)
			snprintf(gitdir, sizeof(gitdir), "%s", path);
		else
			snprintf(gitdir, sizeof(gitdir), "%s/git/%d.git", path, e);
		if ((dfd = open(gitdir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
			if (errno == ENOENT && e > 0)
				break;          /* the last epoch was the one before */
			err = errno;
			archive_say(res, "cannot read %s: %s", gitdir, strerror(err));
			break;
		}
		if (fstat(dfd, &st))
			err = errno;
		else
			err = archive_owned(gitdir, &st, res->error, sizeof(res->error));
		if (!err)
			err = epoch_inside(path, gitdir, v1, res);
		if (!err)
			err = read_head(dfd, gitdir, head, res);
		close(dfd);
		if (err)
			break;
		/* " E COMMIT" in the old position (leifs wrote it; checked all
		 * the same, as only commit ids reach git) */
		snprintf(key, sizeof(key), " %d ", e);
		if ((p = strstr(from, key)) && strlen(p + strlen(key)) >= 40) {
			memcpy(last, p + strlen(key), 40);
			last[40] = '\0';
			if (!is_oid(last))
				last[0] = '\0';
		}
		if (!*head || !strcmp(head, last)) {
			/* an empty epoch, or nothing new */
			if (!*head)
				memcpy(head, last, sizeof(head));
			goto keep;
		}
		if ((err = git_init(&g, priv, gitdir, idle_ms, stop))) {
			git_free(&g);
			break;
		}
		err = epoch_blobs(&g, v1, last, head, &ids, &n);
		if (err == EIO && *last) {
			/* git failed on the commit: it is gone (a rewritten
			 * epoch), read it all (not after a timeout or a stop) */
			last[0] = '\0';
			err = epoch_blobs(&g, v1, NULL, head, &ids, &n);
		}
		if (err == ETIMEDOUT)
			archive_say(res, "cannot read %s with git: no answer within the timeout (-o timeout)",
				    gitdir);
		else if (err)
			archive_say(res, "cannot read %s with git", gitdir);
		else if (n)
			err = cat_blobs(&g, gitdir, ids, n, max, stop, fn, arg, res);
		git_free(&g);
		if (err == ETIMEDOUT && !res->error[0])
			archive_say(res, "cannot read %s with git: no answer within the timeout (-o timeout)",
				    gitdir);
		else if (err && !res->error[0])
			archive_say(res, "cannot read %s with git: %s", gitdir, strerror(err));
		if (err)
			break;
keep:
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

