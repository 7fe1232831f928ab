/*
 * git itself, for the rest of net/: the one place leifs starts git
 * (net_git_spawn) and waits for it (net_git_reap).  What each caller
 * gives git (its environment, its directory, what it may read) is the
 * caller's to choose and to say; this file only starts and ends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"

int net_git_spawn(const struct net_git *g, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
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
	posix_spawn_file_actions_addchdir_np(&fa, g->dir);
	posix_spawnattr_init(&attr);
	if (g->group) {
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
		posix_spawnattr_setpgroup(&attr, 0);
	}
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
