/*
 * Passwords from git's credential helpers: `git credential fill`, then
 * `approve` once the server took it or `reject` once it refused it, as
 * git does for its own remotes (gitcredentials(7)).  git runs with a fixed
 * argv (no shell), in /, with the daemon's environment plus
 * GIT_TERMINAL_PROMPT=0 (a daemon has no terminal to ask on) and an empty
 * GIT_ASKPASS (which also keeps core.askPass and SSH_ASKPASS from opening
 * a window at each refresh), stderr to /dev/null, in a process group of
 * its own that is killed whole (helpers included) if it takes longer than
 * the timeout.  What
 * leifs writes to it is checked (no newline, no NUL); what it answers is
 * only read as key=value lines, never used as a path or run.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"

extern char **environ;

#define CRED_OUT_MAX 8192

static int field_ok(const char *v)
{
	return v && !strpbrk(v, "\n\r") && strlen(v) < 1024;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000L + (now.tv_nsec - t0->tv_nsec) / 1000000L;
}

/* run `git credential ACTION` with `in` on its stdin; its stdout into out
 * (NUL-terminated, at most CRED_OUT_MAX - 1 bytes) if out is non-NULL */
static int run_git(const char *action, const char *in, char *out, long timeout)
{
	char *argv[] = { "git", "credential", (char *)action, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	struct timespec t0;
	char **env = NULL;
	size_t n = 0, i, inlen = strlen(in), sent = 0, got = 0;
	int ip[2] = { -1, -1 }, op[2] = { -1, -1 }, st = 0, err = 0;
	pid_t pid = -1;

	while (environ[n])
		n++;
	if (!(env = calloc(n + 3, sizeof(*env))))
		return ENOMEM;
	for (i = 0, n = 0; environ[i]; i++)
		if (strncmp(environ[i], "GIT_TERMINAL_PROMPT=", 20) &&
		    strncmp(environ[i], "GIT_ASKPASS=", 12))
			env[n++] = environ[i];
	env[n++] = "GIT_TERMINAL_PROMPT=0";
	env[n++] = "GIT_ASKPASS=";
	env[n] = NULL;
	if (pipe2(ip, O_CLOEXEC) || pipe2(op, O_CLOEXEC)) {
		err = errno;
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, ip[0], 0);
	posix_spawn_file_actions_adddup2(&fa, op[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addchdir_np(&fa, "/");
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	err = posix_spawnp(&pid, "git", &fa, &attr, argv, env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(ip[0]);
	close(op[1]);
	ip[0] = op[1] = -1;
	if (err) {
		pid = -1;
		goto out;
	}
	fcntl(ip[1], F_SETFL, O_NONBLOCK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (op[0] >= 0) {
		struct pollfd p[2] = { { op[0], POLLIN, 0 }, { ip[1], POLLOUT, 0 } };
		long left = timeout * 1000L - ms_since(&t0);
		int np = ip[1] >= 0 ? 2 : 1;

		if (left <= 0) {
			err = ETIMEDOUT;
			break;
		}
		if (poll(p, (nfds_t)np, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		if (np == 2 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = write(ip[1], in + sent, inlen - sent);

			if (w > 0)
				sent += (size_t)w;
			if (w < 0 || sent == inlen) {
				close(ip[1]);
				ip[1] = -1;
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[1024];
			ssize_t r = read(op[0], buf, sizeof(buf));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				close(op[0]);
				op[0] = -1;
			} else if (out) {
				size_t k = (size_t)r;

				if (got + k > CRED_OUT_MAX - 1)
					k = CRED_OUT_MAX - 1 - got;
				memcpy(out + got, buf, k);
				got += k;
			}
			explicit_bzero(buf, sizeof(buf));       /* a password */
		}
	}
out:
	if (out)
		out[got] = '\0';
	for (i = 0; i < 2; i++) {
		if (ip[i] >= 0)
			close(ip[i]);
		if (op[i] >= 0)
			close(op[i]);
	}
	if (pid > 0) {
		pid_t w;

		if (err)
			kill(-pid, SIGKILL);    /* git and the helpers it ran */
		while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
			;
		if (!err && (w != pid || !(WIFEXITED(st) && !WEXITSTATUS(st))))
			err = EACCES;
	}
	free(env);
	return err;
}

static void net_cred_free_password(struct net_cred *c)
{
	if (c->password) {
		explicit_bzero(c->password, strlen(c->password));
		free(c->password);
	}
	c->password = NULL;
}

/* the lines git reads: protocol, host, username[, password], then a blank */
static char *request(const struct net_cred *c, int with_password)
{
	const char *u = c->username, *pw = with_password ? c->password : NULL;
	char *s = NULL;

	if (!field_ok(c->protocol) || !field_ok(c->host) || (u && !field_ok(u)) ||
	    (with_password && !field_ok(pw)))
		return NULL;
	if (asprintf(&s, "protocol=%s\nhost=%s\n%s%s%s%s%s%s\n", c->protocol, c->host,
		     u ? "username=" : "", u ? u : "", u ? "\n" : "",
		     pw ? "password=" : "", pw ? pw : "", pw ? "\n" : "") < 0)
		return NULL;
	return s;
}

int net_cred_fill(struct net_cred *c, long timeout, char *why, size_t whylen)
{
	char *in = NULL, *out = NULL, *line, *save = NULL;
	int err;

	why[0] = '\0';
	net_cred_free_password(c);
	if (!(in = request(c, 0))) {
		snprintf(why, whylen, "cannot ask git credential: a bad host or user name");
		return EINVAL;
	}
	if (!(out = malloc(CRED_OUT_MAX))) {
		free(in);
		return ENOMEM;
	}
	err = run_git("fill", in, out, timeout);
	if (err == ETIMEDOUT)
		snprintf(why, whylen, "git credential fill took longer than %ld s", timeout);
	else if (err)
		snprintf(why, whylen, "no password: git credential fill found none (%s)",
			 err == ENOENT ? "git is not installed" : "no credential helper has one");
	for (line = err ? NULL : strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "password=", 9)) {
			net_cred_free_password(c);
			c->password = strdup(line + 9);
		} else if (!strncmp(line, "username=", 9) && !c->username) {
			c->username = strdup(line + 9);
		}
	}
	if (!err && (!c->password || !c->username)) {
		snprintf(why, whylen, "no password: git credential fill gave none");
		err = EACCES;
	}
	explicit_bzero(out, CRED_OUT_MAX);
	free(out);
	free(in);
	return err;
}

int net_cred_report(const struct net_cred *c, int ok, long timeout)
{
	char *in = request(c, 1);
	int err;

	if (!in)
		return EINVAL;
	err = run_git(ok ? "approve" : "reject", in, NULL, timeout);
	explicit_bzero(in, strlen(in));
	free(in);
	return err;
}

void net_cred_free(struct net_cred *c)
{
	net_cred_free_password(c);
	free(c->username);
	c->username = NULL;
}
