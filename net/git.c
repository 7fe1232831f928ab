/*
 * git itself, for the rest of net/ and for the dates of local queries:
 * the one place leifs starts git (net_git_spawn, net_git_reap), the dates
 * of query_approxidate (net_git_dates: git rev-parse --since=X) and the
 * empty repository they are read in (net_git_dir_init).  What each caller
 * gives git (its environment, its directory, what it may read) is the
 * caller's to choose and to say; this file only starts and ends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"

extern char **environ;

int net_git_spawn(const struct net_git *g, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, def;
	int ip[2] = { -1, -1 }, op[2] = { -1, -1 }, err = 0;
	char **argv = NULL;
	size_t n = 0, i;

	*pid = -1;
	while (g->args[n])
		n++;
	if (!(argv = calloc(n + 2, sizeof(*argv))))
		return ENOMEM;
	argv[0] = "git";
	for (i = 0; i < n; i++)
		argv[i + 1] = (char *)g->args[i];
	if ((g->in && pipe2(ip, O_CLOEXEC)) || pipe2(op, O_CLOEXEC)) {
		err = errno;
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	if (g->in)
		posix_spawn_file_actions_adddup2(&fa, ip[0], 0);
	else if (g->in_fd)
		posix_spawn_file_actions_adddup2(&fa, *g->in_fd, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, op[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	/* nothing of the daemon's (data.mdb is not close-on-exec) */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawn_file_actions_addchdir_np(&fa, g->dir);
	/* FUSE's threads block SIGTERM, SIGINT, SIGHUP and SIGQUIT, and
	 * SIGPIPE is ignored: git starts with none blocked, each as default */
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGHUP);
	sigaddset(&def, SIGQUIT);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &def);
	if (g->group)
		posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				 (g->group ? POSIX_SPAWN_SETPGROUP : 0));
	err = posix_spawnp(pid, "git", &fa, &attr, argv, (char *const *)g->env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		*pid = -1;
		goto out;
	}
	if (g->in) {
		*g->in = ip[1];
		ip[1] = -1;
	}
	*g->out = op[0];
	op[0] = -1;
out:
	for (i = 0; i < 2; i++) {
		if (ip[i] >= 0)
			close(ip[i]);
		if (op[i] >= 0)
			close(op[i]);
	}
	free(argv);
	return err;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000L + (now.tv_nsec - t0->tv_nsec) / 1000000L;
}

int net_git_reap(pid_t pid, long timeout_ms)
{
	struct timespec t0;
	long step = 1;
	int st = 0, killed = 0;
	pid_t w = 0;

	if (pid <= 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (timeout_ms >= 0) {
		long left = timeout_ms - ms_since(&t0);
		struct timespec ts;

		if (left <= 0) {
			/* its group (git and what it ran), or git alone if
			 * it has none */
			if (kill(-pid, SIGKILL))
				kill(pid, SIGKILL);
			killed = 1;
			break;
		}
		if ((w = waitpid(pid, &st, WNOHANG)) == pid)
			break;
		if (w < 0 && errno != EINTR)
			return errno;
		if (step > left)
			step = left;
		ts.tv_sec = step / 1000;
		ts.tv_nsec = (step % 1000) * 1000000L;
		nanosleep(&ts, NULL);
		step = step * 2 > 50 ? 50 : step * 2;
	}
	if (w != pid)
		while ((w = waitpid(pid, &st, 0)) < 0)
			if (errno != EINTR)
				return errno;
	if (killed)
		return ETIMEDOUT;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : EIO;
}

void net_git_out_open(struct net_git_out *o, int fd, long idle_ms, atomic_int *stop)
{
	o->fd = fd;
	o->idle_ms = idle_ms;
	o->stop = stop;
	o->err = 0;
	o->pos = o->len = 0;
}

void net_git_out_close(struct net_git_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

/* more bytes into o->buf: 1, or 0 at the end or on an error (o->err) */
static int fill(struct net_git_out *o)
{
	struct timespec t0;

	if (o->fd < 0 || o->err)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = o->fd, .events = POLLIN };
		long left = o->idle_ms - ms_since(&t0);
		ssize_t r;
		int k;

		if (o->stop && atomic_load(o->stop)) {
			o->err = ECANCELED;
			return 0;
		}
		if (left <= 0) {
			o->err = ETIMEDOUT;
			return 0;
		}
		/* a quarter second at most, so that *stop is seen */
		if ((k = poll(&p, 1, left > 250 ? 250 : (int)left)) < 0 && errno != EINTR) {
			o->err = errno;
			return 0;
		}
		if (k <= 0)
			continue;
		if ((r = read(o->fd, o->buf, sizeof(o->buf))) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			o->err = errno;
			return 0;
		}
		o->pos = 0;
		o->len = (size_t)r;
		return r > 0;
	}
}

char *net_git_gets(struct net_git_out *o, char *line, size_t cap)
{
	size_t n = 0;

	if (cap < 2)
		return NULL;
	while (n < cap - 1) {
		char c;

		if (o->pos == o->len && !fill(o))
			break;
		c = o->buf[o->pos++];
		line[n++] = c;
		if (c == '\n')
			break;
	}
	line[n] = '\0';
	return n ? line : NULL;
}

int net_git_read(struct net_git_out *o, void *dst, size_t n)
{
	char *d = dst;

	while (n) {
		size_t k;

		if (o->pos == o->len && !fill(o))
			return o->err ? o->err : EIO;
		k = o->len - o->pos < n ? o->len - o->pos : n;
		memcpy(d, o->buf + o->pos, k);
		o->pos += k;
		d += k;
		n -= k;
	}
	return 0;
}

int net_git_dates(const char *git_dir, char *const *dates, size_t n, long long *out,
		  long idle_ms, atomic_int *stop, char *why, size_t whylen)
{
	const char **args = calloc(n + 3, sizeof(*args));
	char *gd = NULL, buf[64];
	struct net_git g = { 0 };
	struct net_git_out *o = NULL;
	int fd = -1, err = 0, e;
	size_t i, got = 0;
	pid_t pid = -1;

	if (!args || asprintf(&gd, "--git-dir=%s", git_dir) < 0) {
		free(args);
		return ENOMEM;
	}
	args[0] = gd;
	args[1] = "rev-parse";
	for (i = 0; i < n; i++)
		if (asprintf((char **)&args[2 + i], "--since=%s", dates[i]) < 0) {
			args[2 + i] = NULL;
			err = ENOMEM;
			goto out;
		}
	/* the user's environment as it is: git's approxidate reads TZ, and
	 * must agree with the user's lei and public-inbox */
	g.args = args;
	g.env = (const char *const *)environ;
	g.dir = git_dir;
	g.out = &fd;
	g.group = 1;
	if (!(o = malloc(sizeof(*o)))) {
		err = ENOMEM;
		goto out;
	}
	if ((err = net_git_spawn(&g, &pid))) {
		snprintf(why, whylen, "cannot read dates: git: %s", strerror(err));
		goto out;
	}
	net_git_out_open(o, fd, idle_ms, stop);
	while (net_git_gets(o, buf, sizeof(buf)))
		if (got < n && !strncmp(buf, "--max-age=", 10))
			out[got++] = strtoll(buf + 10, NULL, 10);
	if ((err = o->err))
		snprintf(why, whylen, "cannot read dates: git: %s", err == ETIMEDOUT ?
			 "no answer within the timeout" : strerror(err));
	net_git_out_close(o);
out:
	/* after an error at once: a git that hangs is killed, never waited on */
	if ((e = net_git_reap(pid, err ? 0 : idle_ms)) && !err) {
		snprintf(why, whylen, "cannot read dates: git rev-parse failed");
		err = e;
	}
	free(o);
	if (!err && got != n) {
		snprintf(why, whylen, "cannot read dates: git gave %zu of %zu", got, n);
		err = EIO;
	}
	for (i = 0; i < n; i++)
		free((char *)args[2 + i]);
	free(args);
	free(gd);
	return err;
}

int net_git_dir_init(const char *dir)
{
	char p[4096];
	FILE *f;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return errno;
	snprintf(p, sizeof(p), "%s/objects", dir);
	if (mkdir(p, 0700) && errno != EEXIST)
		return errno;
	snprintf(p, sizeof(p), "%s/refs", dir);
	if (mkdir(p, 0700) && errno != EEXIST)
		return errno;
	snprintf(p, sizeof(p), "%s/HEAD", dir);
	if (access(p, F_OK)) {
		if (!(f = fopen(p, "w")))
			return errno;
		fputs("ref: refs/heads/main\n", f);
		if (fclose(f))
			return EIO;
	}
	return 0;
}
