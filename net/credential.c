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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
 * (NUL-terminated, at most CRED_OUT_MAX - 1 bytes) if out is non-NULL;
 * all of it, git's exit included, within `timeout` seconds */
static int run_git(const char *action, const char *in, char *out, long timeout)
{
	const char *args[] = { "credential", action, NULL };
	struct net_git g = { 0 };
	struct timespec t0;
	const char **env = NULL;
	size_t n = 0, i, inlen = strlen(in), sent = 0, got = 0;
	int ifd = -1, ofd = -1, err = 0, e;
	long left;
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
	g.args = args;
	g.env = env;
	g.dir = "/";
	g.in = &ifd;
	g.out = &ofd;
	g.group = 1;    /* killed whole: git and the helpers it runs */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((err = net_git_spawn(&g, &pid)))
		goto out;
	fcntl(ifd, F_SETFL, O_NONBLOCK);
	while (ofd >= 0) {
		struct pollfd p[2] = { { ofd, POLLIN, 0 }, { ifd, POLLOUT, 0 } };
		int np = ifd >= 0 ? 2 : 1;

		left = timeout * 1000L - ms_since(&t0);
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
			ssize_t w = write(ifd, in + sent, inlen - sent);

			if (w > 0)
				sent += (size_t)w;
			if (w < 0 || sent == inlen) {
				close(ifd);
				ifd = -1;
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[1024];
			ssize_t r = read(ofd, buf, sizeof(buf));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				close(ofd);
				ofd = -1;
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
	if (ifd >= 0)
		close(ifd);
	if (ofd >= 0)
		close(ofd);
	/* after a failure at once, else within what is left of the timeout
	 * (a git that has just ended is not blamed): then its process group
	 * goes (net_git_reap) */
	left = err ? 0 : timeout * 1000L - ms_since(&t0);
	e = net_git_reap(pid, err ? 0 : left > 1 ? left : 1);
	if (!err && e)
		err = e == ETIMEDOUT ? ETIMEDOUT : EACCES;
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
