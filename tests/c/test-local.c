/*
 * C-level tests of the local search: patch ids against git's own, the
 * approxidate rewriting, git started and ended (net_git_spawn, its
 * timeout killing the group, git credential's helpers included), the index
 * (duplicates, empty query, wildcard limit) and incremental reads of mbox
 * and maildir archives.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"
#include "cache/cache-private.h"
#include "cache/index.h"
#include "fs/msgname.h"
#include "net/net.h"
#include "query/query.h"

extern char **environ;

static int passed, failed;

#define CHECK(expr) do { \
	if (expr) { passed++; } else { failed++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr); } \
} while (0)

static char tmp[] = "/tmp/leifs-test-local.XXXXXX";

static const char patch1[] =
	"Fix the alarm.\n\nSigned-off-by: A <a@b>\n---\n"
	" drivers/rtc/a.c | 2 +-\n\n"
	"diff --git a/drivers/rtc/a.c b/drivers/rtc/a.c\n"
	"index 1111111..2222222 100644\n"
	"--- a/drivers/rtc/a.c\n+++ b/drivers/rtc/a.c\n"
	"@@ -1,3 +1,3 @@ static int f(void)\n int a;\n-int b;\n+int  c;\n int d;\n"
	"diff --git a/drivers/rtc/b.c b/drivers/rtc/b.c\n"
	"index 3333333..4444444 100644\n"
	"--- a/drivers/rtc/b.c\n+++ b/drivers/rtc/b.c\n"
	"@@ -10,2 +10,2 @@\n-x\n+y\n\\ No newline at end of file\n"
	"-- \n2.39.0\n";
static const char patch2[] =     /* two patches: only the first counts */
	"diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
	"some words between\n"
	"diff --git a/y b/y\nindex 3..4 100644\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n";

/* git patch-id --stable of text, or "" */
static void git_patch_id(const char *text, char out[41])
{
	char path[256], cmd[400];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/patch", tmp);
	if (!(f = fopen(path, "w")))
		return;
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "git patch-id --stable <%s", path);
	if (!(f = popen(cmd, "r")))
		return;
	if (fscanf(f, "%40s", out) != 1)
		out[0] = '\0';
	pclose(f);
}

static void test_patchid(void)
{
	const char *cases[] = { patch1, patch2 };
	char mine[41], git[41];
	size_t i;

	for (i = 0; i < 2; i++) {
		git_patch_id(cases[i], git);
		CHECK(strlen(git) == 40);
		CHECK(!cache_patch_id(cases[i], strlen(cases[i]), mine));
		CHECK(!strcmp(mine, git));
	}
	CHECK(cache_patch_id("no patch here\n", 14, mine) == ENOENT);
}

/* query_approxidate's dates, read by git in the repository arg */
static int git_dates(void *arg, char *const *dates, size_t n, long long *out, char *why,
		     size_t whylen)
{
	return net_git_dates(arg, dates, n, out, 30000, NULL, why, whylen);
}

/* dates without git: 1700000000, 1700000001, ... in order, each seen */
struct fixed_dates {
	int calls, fail;
	size_t n;
	char seen[256];
};

static int fixed_dates(void *arg, char *const *dates, size_t n, long long *out, char *why,
		       size_t whylen)
{
	struct fixed_dates *fd = arg;
	size_t i;

	fd->calls++;
	if (fd->fail) {
		snprintf(why, whylen, "no dates today");
		return fd->fail;
	}
	fd->n = n;
	fd->seen[0] = '\0';
	for (i = 0; i < n; i++) {
		out[i] = 1700000000 + (long long)i;
		snprintf(fd->seen + strlen(fd->seen), sizeof(fd->seen) - strlen(fd->seen), "%s|",
			 dates[i]);
	}
	return 0;
}

/* what fd gives until its end, or 5 s without a byte (*end 0) */
static size_t read_all(int fd, char *buf, size_t cap, int *end)
{
	struct pollfd p = { fd, POLLIN, 0 };
	size_t n = 0;
	ssize_t r = 1;

	while (n < cap && poll(&p, 1, 5000) > 0 && (r = read(fd, buf + n, cap - n)) > 0)
		n += (size_t)r;
	*end = r == 0;
	return n;
}

static void test_approxidate(void)
{
	static const struct { const char *in, *out; } same[] = {
		{ "d:20240102", "d:20240102..20240103" },
		{ "d:20240102..20240105", "d:20240102..20240105" },
		{ "d:2024-01-02..2024-01-05", "d:20240102..20240105" },
		{ "(s:x OR d:2024-01-02..2024-01-05) AND f:y", "(s:x OR d:20240102..20240105) AND f:y" },
		{ "dt:20240102030405..20240103000000", "dt:20240102030405..20240103000000" },
		{ "dt:20240102030405", "dt:20240102030405..20240103030405" },
		{ "rt:1704067200..", "rt:1704067200.." },
		{ "s:\"d:2024-01-02\"", "s:\"d:2024-01-02\"" },
		{ "bad:2024-01-02 nod:x", "bad:2024-01-02 nod:x" },
		{ "s:rtc", "s:rtc" },
	};
	char dir[300], why[256];
	size_t i;

	snprintf(dir, sizeof(dir), "%s/dates.git", tmp);
	CHECK(!net_git_dir_init(dir));
	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		char *out = NULL;

		CHECK(!query_approxidate(same[i].in, git_dates, dir, &out, why, sizeof(why)));
		CHECK(out && !strcmp(out, same[i].out));
		if (out && strcmp(out, same[i].out))
			fprintf(stderr, "  %s -> %s\n", same[i].in, out);
		free(out);
	}
	{
		char *out = NULL;
		long long a = 0, b = 0;

		/* approxidate: a range of two times, dt: from d: */
		CHECK(!query_approxidate("d:2.weeks.ago..1.week.ago", git_dates, dir, &out, why,
					 sizeof(why)));
		CHECK(out && sscanf(out, "dt:%14lld..%14lld", &a, &b) == 2 && a < b);
		free(out);
		CHECK(!query_approxidate("rt:2.days.ago..", git_dates, dir, &out, why,
					 sizeof(why)));
		CHECK(out && sscanf(out, "rt:%lld..", &a) == 1 && a > 1700000000);
		free(out);
		/* no repository to run in: the query fails, saying why */
		out = NULL;
		CHECK(query_approxidate("rt:2.days.ago..", git_dates, "/nonexistent", &out, why,
					sizeof(why)) != 0);
		CHECK(!out && !strncmp(why, "cannot read dates", 17));
	}
	{
		struct fixed_dates fd = { 0 };
		char *out = NULL;

		/* the caller's function gets every date at once, in order,
		 * and its numbers are put back where the dates were */
		CHECK(!query_approxidate("s:x rt:2.days.ago..1.day.ago OR d:last.monday",
					 fixed_dates, &fd, &out, why, sizeof(why)));
		CHECK(fd.calls == 1 && fd.n == 3);
		CHECK(!strcmp(fd.seen, "2.days.ago|1.day.ago|last.monday|"));
		CHECK(out && !strcmp(out, "s:x rt:1700000000..1700000001 OR "
					  "dt:20231114221322..20231115221322"));
		free(out);
		/* none: not called; its failure is the query's, with its reason */
		fd.calls = 0;
		CHECK(!query_approxidate("dt:20240102030405..20240103000000", fixed_dates, &fd, &out,
					 why, sizeof(why)));
		CHECK(fd.calls == 0);
		free(out);
		fd.fail = EIO;
		out = NULL;
		CHECK(query_approxidate("rt:2.days.ago..", fixed_dates, &fd, &out, why,
					sizeof(why)) == EIO);
		CHECK(!out && !strcmp(why, "no dates today"));
		/* dates and nothing to read them with */
		CHECK(query_approxidate("rt:2.days.ago..", NULL, NULL, &out, why, sizeof(why)) ==
		      EINVAL);
		CHECK(!out && why[0]);
		CHECK(!query_approxidate("rt:1704067200..", NULL, NULL, &out, why, sizeof(why)));
		CHECK(out && !strcmp(out, "rt:1704067200.."));
		free(out);
	}
}

/* net_git_spawn and net_git_reap: pipes both ways, git's exit status, and
 * a timeout that kills git's whole process group */
static void test_git_spawn(void)
{
	static const char blob_x[] = "c1b0730e0133447badcfd47fd144e254807b06e1\n";
	const char *version[] = { "--version", NULL };
	const char *hash[] = { "hash-object", "--stdin", NULL };
	const char *fail[] = { "no-such-command-of-git", NULL };
	/* git runs a shell that leaves a child behind holding stdout */
	const char *hang[] = { "-c", "alias.hang=!sleep 30 & sleep 30", "hang", NULL };
	struct net_git g = { 0 };
	struct timespec t0, t1;
	char buf[256];
	int in = -1, out = -1, err, end;
	pid_t pid = -1;
	size_t n;

	g.env = (const char *const *)environ;
	g.dir = tmp;
	g.out = &out;

	g.args = version;
	CHECK(!net_git_spawn(&g, &pid) && pid > 0 && out >= 0);
	n = read_all(out, buf, sizeof(buf), &end);
	CHECK(end && n > 12 && !strncmp(buf, "git version ", 12));
	close(out);
	CHECK(net_git_reap(pid, -1) == 0);

	g.args = hash;
	g.in = &in;
	CHECK(!net_git_spawn(&g, &pid) && in >= 0);
	CHECK(write(in, "x", 1) == 1);
	close(in);
	n = read_all(out, buf, sizeof(buf), &end);
	CHECK(end && n == 41 && !memcmp(buf, blob_x, 41));
	close(out);
	CHECK(net_git_reap(pid, 5000) == 0);
	g.in = NULL;

	g.args = fail;
	CHECK(!net_git_spawn(&g, &pid));
	read_all(out, buf, sizeof(buf), &end);
	close(out);
	CHECK(net_git_reap(pid, -1) == EIO);
	CHECK(net_git_reap(-1, 0) == 0);

	/* killed at the timeout, and its group with it: the shell's child
	 * held stdout, which ends only when every holder is gone */
	g.args = hang;
	g.group = 1;
	CHECK(!net_git_spawn(&g, &pid));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = net_git_reap(pid, 300);
	CHECK(err == ETIMEDOUT);
	n = read_all(out, buf, sizeof(buf), &end);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(end && n == 0);
	CHECK(t1.tv_sec - t0.tv_sec < 5);
	close(out);
}

/* what git inherits besides its pipes: no descriptor of the daemon's that
 * is not close-on-exec (LMDB's data.mdb is one, opened O_RDWR), and no
 * blocked signal (libfuse's worker threads block SIGTERM, SIGINT, SIGHUP
 * and SIGQUIT, and leifs starts git from threads made by them: a git, or a
 * helper it runs, that hangs would then ignore a plain kill) */
static void test_git_inherits(void)
{
	/* read by the shell git runs for an alias, in git's /proc */
	const char *probe[] = { "-c", "alias.probe=!grep ^SigBlk: /proc/$PPID/status; "
				"ls /proc/$PPID/fd", "probe", NULL };
	struct net_git g = { 0 };
	sigset_t term, old;
	char buf[4096], fdname[16], *line, *save = NULL;
	int out = -1, end, leaked = 0, blocked = -1, fd;
	pid_t pid = -1;
	size_t n;

	fd = open("/dev/null", O_RDONLY);       /* not close-on-exec */
	CHECK(fd > 2);
	snprintf(fdname, sizeof(fdname), "%d", fd);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, &old);
	g.env = (const char *const *)environ;
	g.dir = tmp;
	g.out = &out;
	g.args = probe;
	CHECK(!net_git_spawn(&g, &pid));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	n = read_all(out, buf, sizeof(buf) - 1, &end);
	buf[n] = '\0';
	close(out);
	CHECK(net_git_reap(pid, 5000) == 0);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "SigBlk:", 7))
			blocked = strspn(line + 7, "\t 0") != strlen(line + 7);
		else if (!strcmp(line, fdname))
			leaked = 1;
	}
	CHECK(blocked == 0);
	CHECK(!leaked);
	if (blocked || leaked)
		fprintf(stderr, "git inherited:%s%s\n", blocked ? " a blocked SIGTERM" : "",
			leaked ? " a descriptor not its own" : "");
	close(fd);
}

/* git credential through net_cred_*: a helper's answer read, and one that
 * hangs killed at the timeout with what it started (its late write never
 * comes) */
static void test_credential(void)
{
	char cfg[300], late[300], why[256];
	struct net_cred c = { "imaps", "127.0.0.1:1", NULL, NULL };
	struct timespec t0, t1, ts = { 2, 500000000L };
	FILE *f;

	snprintf(cfg, sizeof(cfg), "%s/gitconfig", tmp);
	snprintf(late, sizeof(late), "%s/late", tmp);
	setenv("GIT_CONFIG_GLOBAL", cfg, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);

	CHECK((f = fopen(cfg, "w")) != NULL);
	if (!f)
		return;
	fputs("[credential]\n\thelper = \"!f() { cat >/dev/null; echo username=u; "
	      "echo password=pw; }; f\"\n", f);
	fclose(f);
	CHECK(!net_cred_fill(&c, 10, why, sizeof(why)));
	CHECK(c.username && !strcmp(c.username, "u") && c.password && !strcmp(c.password, "pw"));
	net_cred_free(&c);

	CHECK((f = fopen(cfg, "w")) != NULL);
	if (!f)
		return;
	fprintf(f, "[credential]\n\thelper = \"!f() { sleep 2; echo late >%s; }; f\"\n", late);
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(net_cred_fill(&c, 1, why, sizeof(why)) == ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 2);
	CHECK(strstr(why, "longer than 1 s") != NULL);
	CHECK(!c.password);
	nanosleep(&ts, NULL);
	CHECK(access(late, F_OK) && errno == ENOENT);
	net_cred_free(&c);
	unsetenv("GIT_CONFIG_GLOBAL");
	unsetenv("GIT_CONFIG_NOSYSTEM");
}

static const char msg_a[] =
	"From: Ann <ann@example.org>\nTo: list@example.org\nSubject: rtc: fix alarm\n"
	"Date: Tue, 02 Jan 2024 10:00:00 +0000\nMessage-ID: <a@x>\n"
	"List-Id: <linux-rtc.vger.kernel.org>\n\nThe alarm fires late.\n> quoted words\n";
static const char msg_a2[] =     /* another copy of <a@x>: left out */
	"Received: by x; Tue, 02 Jan 2024 10:00:01 +0000\n"
	"From: Ann <ann@example.org>\nTo: list@example.org\nSubject: rtc: fix alarm\n"
	"Date: Tue, 02 Jan 2024 10:00:00 +0000\nMessage-ID: <a@x>\n\nThe alarm fires late.\n";
static const char msg_b[] =
	"From: Bob <bob@example.org>\nSubject: Re: rtc: fix alarm\n"
	"Date: Wed, 03 Jan 2024 10:00:00 +0000\nMessage-ID: <b@x>\n\n> The alarm fires late.\nTrue.\n";

struct hits {
	int n;
	unsigned char oid[4][CACHE_OID_LEN];
};

static int hit(void *arg, const unsigned char *oid)
{
	struct hits *h = arg;

	if (h->n < 4)
		memcpy(h->oid[h->n], oid, CACHE_OID_LEN);
	h->n++;
	return 0;
}

static int search(cache_index_t *x, const char *q)
{
	struct hits h = { 0 };
	char why[256];

	if (cache_index_search(x, q, hit, &h, why, sizeof(why)))
		return -1;
	return h.n;
}

static void test_index(void)
{
	cache_index_t *x = NULL;
	unsigned char oid[CACHE_OID_LEN];
	char dir[300], why[256];
	int added = -1, i;

	snprintf(dir, sizeof(dir), "%s/index", tmp);
	CHECK(!cache_index_open(dir, &x, why, sizeof(why)));
	if (!x)
		return;
	cache_oid(msg_a, strlen(msg_a), oid);
	CHECK(!cache_index_add(x, oid, msg_a, strlen(msg_a), &added, why, sizeof(why)) && added == 1);
	CHECK(!cache_index_add(x, oid, msg_a, strlen(msg_a), &added, why, sizeof(why)) && added == 0);
	cache_oid(msg_a2, strlen(msg_a2), oid);
	CHECK(!cache_index_add(x, oid, msg_a2, strlen(msg_a2), &added, why, sizeof(why)) && added == 2);
	cache_oid(msg_b, strlen(msg_b), oid);
	CHECK(!cache_index_add(x, oid, msg_b, strlen(msg_b), &added, why, sizeof(why)) && added == 1);
	CHECK(!cache_index_commit(x, why, sizeof(why)));
	CHECK(cache_index_count(x) == 2);
	CHECK(search(x, "s:alarm") == 2);
	CHECK(search(x, "nq:late") == 1);      /* b quotes it */
	CHECK(search(x, "q:late") == 1);
	CHECK(search(x, "f:bob") == 1);
	CHECK(search(x, "mid:a@x") == 1);
	CHECK(search(x, "l:linux-rtc.vger.kernel.org") == 1);
	CHECK(search(x, "d:20240103..") == 1);
	CHECK(search(x, "") == 2);             /* every message, as Mbox.pm */
	CHECK(search(x, "s:nothing") == 0);
	cache_index_close(x);
	/* reopened: what was committed is there; a second writer is refused */
	CHECK(!cache_index_open(dir, &x, why, sizeof(why)));
	if (x) {
		cache_index_t *y = NULL;

		CHECK(cache_index_open(dir, &y, why, sizeof(why)) == EAGAIN);
		CHECK(search(x, "alarm") == 2);
		/* 101 words under one prefix: over the wildcard limit */
		for (i = 0; i < 101; i++) {
			char m[300];

			snprintf(m, sizeof(m), "From: w@x\nSubject: wild%03d\nMessage-ID: <w%d@x>\n\nx\n",
				 i, i);
			cache_oid(m, strlen(m), oid);
			cache_index_add(x, oid, m, strlen(m), NULL, why, sizeof(why));
		}
		CHECK(search(x, "s:wild00*") == 10);
		{
			struct hits h = { 0 };

			CHECK(cache_index_search(x, "s:wild*", hit, &h, why, sizeof(why)) == EINVAL);
			CHECK(strstr(why, "Wildcard") != NULL);
		}
		cache_index_close(x);
	}
}

/* Empty parts (issue #14): an empty text/plain part with a charset made
 * g_convert assert "str != NULL" (a GLib-CRITICAL, on real mail too), an
 * empty application/octet-stream part did NULL + 0 (UBSan).  Criticals are
 * fatal here, so the old code aborts this driver. */
static const char msg_empty[] =
	"From: Eve <eve@example.org>\nSubject: empty parts\n"
	"Date: Thu, 04 Jan 2024 10:00:00 +0000\nMessage-ID: <empty@x>\n"
	"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b\"\n\n"
	"--b\nContent-Type: text/plain; charset=iso-8859-1\n\n"
	"--b\nContent-Type: text/plain; charset=iso-8859-1\n"
	"Content-Transfer-Encoding: quoted-printable\n\n"
	"--b\nContent-Type: text/plain\n\n"
	"--b\nContent-Type: application/octet-stream\n\n"
	"--b\nContent-Type: application/octet-stream\n"
	"Content-Transfer-Encoding: base64\n\n"
	"--b\nContent-Type: text/plain; charset=utf-8\n\nlast words\n"
	"--b--\n";

static void test_empty_parts(void)
{
	GLogLevelFlags old = g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
	cache_index_t *x = NULL;
	unsigned char oid[CACHE_OID_LEN], h[CACHE_CHASH_LEN];
	char dir[300], why[256];
	int64_t date = -1;
	int added = -1;

	snprintf(dir, sizeof(dir), "%s/index-empty", tmp);
	CHECK(!cache_index_open(dir, &x, why, sizeof(why)));
	if (x) {
		cache_oid(msg_empty, strlen(msg_empty), oid);
		CHECK(!cache_index_add(x, oid, msg_empty, strlen(msg_empty), &added, why,
				       sizeof(why)) && added == 1);
		CHECK(!cache_index_commit(x, why, sizeof(why)));
		CHECK(search(x, "s:empty") == 1);
		CHECK(search(x, "nq:last") == 1);
		cache_index_close(x);
	}
	CHECK(!cache_mail_info(msg_empty, strlen(msg_empty), &date, h));
	g_log_set_always_fatal(old);
}

struct got {
	int n;
	char last[256];
};

static int take(void *arg, const char *raw, size_t len)
{
	struct got *g = arg;

	g->n++;
	snprintf(g->last, sizeof(g->last), "%.*s", (int)len, raw);
	return 0;
}

static void append(const char *path, const char *s)
{
	FILE *f = fopen(path, "a");

	if (f) {
		fputs(s, f);
		fclose(f);
	}
}

static void test_archive(void)
{
	char path[300], spec[320], *pos = NULL, *next = NULL;
	struct net_res res;
	struct got g = { 0 };
	int kind = -1;
	const char *p;

	snprintf(path, sizeof(path), "%s/a.mbox", tmp);
	append(path, "From a@b Thu Jan  1 00:00:00 1970\nSubject: one\n\n>From here\n\n"
		     "From a@b Thu Jan  1 00:00:00 1970\nSubject: two\n\n>>From there\n\n");
	snprintf(spec, sizeof(spec), "mboxo:%s", path);
	CHECK(!net_archive_kind(path, &kind, &p, res.error, sizeof(res.error)) && kind == NET_MBOXRD);
	CHECK(!net_archive_kind(spec, &kind, &p, res.error, sizeof(res.error)) && kind == NET_MBOXO);
	CHECK(net_archive_kind("relative.mbox", &kind, &p, res.error, sizeof(res.error)) == EINVAL);
	CHECK(!net_archive_read(spec, "", NULL, 1 << 20, 30000, NULL, take, &g, &pos, &res));
	CHECK(g.n == 2 && !strcmp(g.last, "Subject: two\n\n>>From there\n"));  /* mboxo */
	/* nothing new: nothing read; then one more message: only it */
	g.n = 0;
	CHECK(!net_archive_read(path, pos, NULL, 1 << 20, 30000, NULL, take, &g, &next, &res) && g.n == 0);
	free(next);
	append(path, "From a@b Thu Jan  1 00:00:00 1970\nSubject: three\n\n>>From x\n\n");
	CHECK(!net_archive_read(path, pos, NULL, 1 << 20, 30000, NULL, take, &g, &next, &res));
	CHECK(g.n == 1 && !strcmp(g.last, "Subject: three\n\n>From x\n"));   /* mboxrd */
	free(next);
	/* a position that no longer starts a message: read from the start */
	g.n = 0;
	CHECK(!net_archive_read(path, "mbox 1 1 5", NULL, 1 << 20, 30000, NULL, take, &g, &next, &res));
	CHECK(g.n == 3);
	free(next);
	free(pos);
	pos = NULL;

	/* a maildir: new files are read, old ones not */
	snprintf(path, sizeof(path), "%s/md", tmp);
	mkdir(path, 0700);
	snprintf(spec, sizeof(spec), "%s/md/cur", tmp);
	mkdir(spec, 0700);
	snprintf(spec, sizeof(spec), "%s/md/new", tmp);
	mkdir(spec, 0700);
	snprintf(spec, sizeof(spec), "%s/md/cur/1:2,S", tmp);
	append(spec, "Subject: m1\n\nbody\n");
	g.n = 0;
	CHECK(!net_archive_read(path, "", NULL, 1 << 20, 30000, NULL, take, &g, &pos, &res) && g.n == 1);
	CHECK(!net_archive_kind(path, &kind, &p, res.error, sizeof(res.error)) && kind == NET_MAILDIR);
	g.n = 0;
	CHECK(!net_archive_read(path, "maildir 4000000000", NULL, 1 << 20, 30000, NULL, take, &g, &next, &res) &&
	      g.n == 0);
	free(next);
	free(pos);
}

/* message file names: what format writes, parse reads back */
static void test_msgname(void)
{
	struct cache_entry e = { .date = 1700000000, .where = CACHE_CUR, .flags = 0, .uid = 0 };
	struct msgname m;
	char name[128];
	int i;

	for (i = 0; i < CACHE_OID_LEN; i++)
		e.oid[i] = (unsigned char)(i * 13);
	msgname_format(&e, name, sizeof(name));
	CHECK(strlen(name) == 10 + 1 + 40 + 6 + 3 && !strcmp(name + 57, ":2,"));
	CHECK(msgname_parse(name, &m) == 0 && m.has_info && !m.flags && !m.uid &&
	      m.date == e.date && !memcmp(m.oid, e.oid, CACHE_OID_LEN));
	e.flags = (1u << 1) | (1u << 4);        /* F S */
	e.uid = 7;
	msgname_format(&e, name, sizeof(name));
	CHECK(strstr(name, ".leifs,U=7:2,FS") != NULL);
	CHECK(msgname_parse(name, &m) == 0 && m.flags == e.flags && m.uid == 7);
	/* flagged unread mail in new/ keeps its info; plain new mail has none */
	e.where = CACHE_NEW;
	msgname_format(&e, name, sizeof(name));
	CHECK(strstr(name, ":2,FS") != NULL);
	e.flags = 0;
	e.uid = 0;
	msgname_format(&e, name, sizeof(name));
	CHECK(msgname_parse(name, &m) == 0 && !m.has_info && strchr(name, ':') == NULL);
	CHECK(msgname_parse("x.leifs", &m) == EINVAL);
	CHECK(msgname_parse("1700000000.zz.leifs", &m) == EINVAL);
	snprintf(name + strlen(name), sizeof(name) - strlen(name), ":2,Q");
	CHECK(msgname_parse(name, &m) == EINVAL);       /* no such flag */
}

int main(void)
{
	char cmd[100];

	cache_mail_init();
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_patchid();
	test_approxidate();
	test_git_spawn();
	test_git_inherits();
	test_credential();
	test_index();
	test_empty_parts();
	test_archive();
	test_msgname();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", tmp);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
