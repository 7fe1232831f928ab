/*
 * leifs main(): options, mount, daemonize, session loop.  Fatal errors are
 * allowed only here, before the filesystem serves anything.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fs/config.h"
#include "fs/deadmount.h"
#include "fs/fs.h"
#include "fs/fs-notify.h"
#include "fs/log.h"
#include "fs/options.h"
#include "fs/settings.h"
#include "fs/version.h"

/* A password in a source on the command line would show in ps (its
 * /proc/PID/cmdline) to every user: once the options are parsed (libfuse
 * copied them), overwrite it in place with '*'. */
static void scrub_passwords(int argc, char *argv[])
{
	int i;

	for (i = 1; i < argc; i++) {
		char *p = argv[i];

		while ((p = strstr(p, "://"))) {
			char *host = p + 3, *end = host + strcspn(host, "/,"), *at = NULL, *c, *q;

			for (q = host; q < end; q++)
				if (*q == '@')
					at = q;
			if (at && (c = memchr(host, ':', (size_t)(at - host))))
				for (q = c + 1; q < at; q++)
					*q = '*';
			p = end;
		}
	}
}

/* leifs --check DIR: the cache's consistency (cache_check); exit 0 when
 * it is whole, 1 when something is wrong (each problem a line), 2 when it
 * cannot be read */
static int check_cache(const char *dir)
{
	struct cache_check r;
	cache_t *c = NULL;
	char why[512];
	int err;

	if ((err = cache_open_check(dir, &c, why, sizeof(why)))) {
		fprintf(stderr, "leifs: %s\n", why);
		return 2;
	}
	err = cache_check(c, stdout, &r);
	cache_close(c);
	if (err) {
		fprintf(stderr, "leifs: cannot check %s: %s\n", dir, strerror(err));
		return 2;
	}
	printf("%llu views, %llu messages (%llu held by entries), %llu local archives, "
	       "%llu view settings; problems: %llu orphan records, "
	       "%llu entries without their message, %llu messages held by nothing, "
	       "%llu wrong counts, %llu bad records, %llu views with wrong counters\n",
	       (unsigned long long)r.views, (unsigned long long)r.messages,
	       (unsigned long long)r.held, (unsigned long long)r.sources,
	       (unsigned long long)r.settings, (unsigned long long)r.orphans,
	       (unsigned long long)r.missing_messages, (unsigned long long)r.unheld_messages,
	       (unsigned long long)r.wrong_refs, (unsigned long long)r.bad_records,
	       (unsigned long long)r.wrong_counts);
	return cache_check_problems(&r) ? 1 : 0;
}

/*
 * SIGTERM, SIGINT, SIGHUP: libfuse's handlers end the session loop, which
 * then waits for every request being served, and views_close() for every
 * search.  Telling the views to stop first, from the handler, lets both
 * end at once; then libfuse's own handler runs.
 */
static views_t *volatile serving;
static struct sigaction fuse_act[3];
static const int stop_signals[3] = { SIGTERM, SIGINT, SIGHUP };

static void on_stop_signal(int sig)
{
	int i;

	views_stop(serving);
	for (i = 0; i < 3; i++)
		if (stop_signals[i] == sig && fuse_act[i].sa_handler != SIG_DFL &&
		    fuse_act[i].sa_handler != SIG_IGN && !(fuse_act[i].sa_flags & SA_SIGINFO))
			fuse_act[i].sa_handler(sig);
}

static int chain_stop_signals(void)
{
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		if (sigaction(stop_signals[i], NULL, &fuse_act[i]) ||
		    sigaction(stop_signals[i], &sa, NULL))
			return -1;
	return 0;
}

/* libfuse's handlers again, for fuse_remove_signal_handlers() */
static void restore_stop_signals(void)
{
	int i;

	for (i = 0; i < 3; i++)
		if (fuse_act[i].sa_handler || (fuse_act[i].sa_flags & SA_SIGINFO))
			sigaction(stop_signals[i], &fuse_act[i], NULL);
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cl = { 0 };
	struct opts o;
	struct settings def = { 0 };
	struct views_opts vo;
	struct fuse_session *se = NULL;
	struct fuse_loop_config *lc = NULL;
	views_t *views = NULL;
	static char *default_source[] = { LEIFS_DEFAULT_SOURCE };
	char why[512];
	int ret = 1, i, lock_fd = -1;

	if (argc == 3 && !strcmp(argv[1], "--check"))
		return check_cache(argv[2]);

	options_init(&o);
	if (options_parse(&args, &o) == -1) {
		ret = 2;
		goto out_opts;
	}
	scrub_passwords(argc, argv);
	if (o.show_help) {
		options_usage(stdout);
		ret = 0;
		goto out_opts;
	}
	if (o.show_version) {
		printf("leifs %s (libfuse %s)\n", LEIFS_VERSION, fuse_pkgversion());
		ret = 0;
		goto out_opts;
	}
	if (fuse_parse_cmdline(&args, &cl) != 0) {
		ret = 2;
		goto out_opts;
	}
	if (!cl.mountpoint) {
		fprintf(stderr, "leifs: no mountpoint given (see leifs --help)\n");
		ret = 2;
		goto out_opts;
	}
	if (options_load_config(&o)) {
		ret = 2;
		goto out_opts;
	}
	if (o.refresh < 0 || o.timeout <= 0 || o.first_wait < 0 || o.margin < 0 || o.max_message <= 0 || o.map_size <= 0 ||
	    o.refresh_all < 0 || o.limit < 0 || o.empty_confirm < 0 ||
	    o.series_refetch < 0) {
		fprintf(stderr, "leifs: refresh, refresh_all, empty_confirm, series_refetch, first_wait, margin, limit must be >= 0; timeout, max_message > 0\n");
		ret = 2;
		goto out_opts;
	}
	if ((o.index_remote != 0 && o.index_remote != 1) ||
	    (o.series_fetch != 0 && o.series_fetch != 1)) {
		fprintf(stderr, "leifs: %s is 0 or 1\n",
			o.index_remote != 0 && o.index_remote != 1 ? "index_remote" : "series_fetch");
		ret = 2;
		goto out_opts;
	}
	if (o.low_speed < 0 || o.deadline <= 0 || o.backoff_max <= 0 ||
	    o.max_refreshes <= 0 || o.host_refreshes <= 0 || o.max_refreshes > 1024 ||
	    o.host_refreshes > 1024) {
		fprintf(stderr, "leifs: low_speed must be >= 0; deadline, backoff_max > 0; "
			"max_refreshes, host_refreshes 1 to 1024\n");
		ret = 2;
		goto out_opts;
	}
	if ((o.threads && settings_set(&def, "threads", o.threads)) ||
	    (o.dedupe && settings_set(&def, "dedupe", o.dedupe)) ||
	    (o.flags && settings_set(&def, "flags", o.flags))) {
		fprintf(stderr, "leifs: threads is true, false or flag-hits; dedupe is content, oid, mid or none; flags is shared or view\n");
		ret = 2;
		goto out_opts;
	}
	if (!o.cache && !(o.cache = options_xdg_path("XDG_CACHE_HOME", ".cache", ""))) {
		fprintf(stderr, "leifs: no cache directory: set HOME or -o cache=DIR\n");
		ret = 2;
		goto out_opts;
	}
	if (cl.debug)
		log_set_debug(1);
	/* private by default: the kernel checks modes, no allow_other; with
	 * allow_other, the mode of .config (0600) keeps its passwords from
	 * other users */
	fuse_opt_add_arg(&args, "-odefault_permissions");
	fuse_opt_add_arg(&args, "-ofsname=leifs");
	fuse_opt_add_arg(&args, "-osubtype=leifs");

	vo = (struct views_opts){
		.sources = o.nsources ? o.sources : default_source,
		.nsources = o.nsources ? o.nsources : 1,
		.cache_dir = o.cache, .refresh = o.refresh, .timeout = o.timeout,
		.low_speed = o.low_speed, .deadline = o.deadline,
		.backoff_max = o.backoff_max, .user_agent = LEIFS_USER_AGENT,
		.first_wait = o.first_wait,
		.margin = o.margin, .refresh_all = o.refresh_all,
		.empty_confirm = o.empty_confirm, .series_refetch = o.series_refetch, .max_message = (size_t)o.max_message,
		.max_refreshes = (int)o.max_refreshes, .host_refreshes = (int)o.host_refreshes,
		.map_size = (size_t)o.map_size << 20, .cafile = o.cafile,
		.insecure = o.insecure, .proxy = o.proxy, .index_remote = o.index_remote,
		.series_fetch = o.series_fetch,
		.threads = def.threads, .dedupe = def.dedupe, .limit = o.limit,
		.own_flags = def.own_flags,
		.imaps = o.imaps, .nimaps = o.nimaps,
		.maintainers = o.maintainers, .nmaintainers = o.nmaintainers,
	};
	/* a MAINTAINERS file not there is said now; it may come later (a
	 * checkout under way), so the mount goes on */
	for (i = 0; i < vo.nmaintainers; i++)
		if (access(vo.maintainers[i], R_OK))
			fprintf(stderr, "leifs: warning: maintainers=%s: %s (subsystems/.status "
				"will say when it can be read)\n", vo.maintainers[i], strerror(errno));
	for (i = 0; i < vo.nimaps; i++) {
		char why[300];

		if (settings_imap_ok(vo.imaps[i], why, sizeof(why))) {
			fprintf(stderr, "leifs: imap=%s: %s\n", vo.imaps[i], why);
			ret = 2;
			goto out_opts;
		}
	}
	for (i = 0; i < vo.nsources; i++) {
		char why[600];

		/* a local archive that is not there is a typo: say so now,
		 * not at the first listing of a view */
		if (views_source_check(vo.sources[i], why, sizeof(why))) {
			fprintf(stderr, "leifs: %s\n", why);
			ret = 2;
			goto out_opts;
		}
	}
	/* a mount point a killed daemon left: unmounted if it is this
	 * user's, else named with what to do (libfuse's own message says
	 * only "Transport endpoint is not connected") */
	if (cl.mountpoint) {
		int cleared;

		if (deadmount_clear(cl.mountpoint, &cleared, why, sizeof(why))) {
			fprintf(stderr, "leifs: %s\n", why);
			ret = 1;
			goto out_opts;
		}
		if (cleared)
			fprintf(stderr, "leifs: %s was a dead FUSE mount of this user (no process served it): "
				"unmounted it\n", cl.mountpoint);
	}
	/* a MAINTAINERS file under the mount point would be read from the
	 * mount itself, its own subsystems/ files included */
	if (cl.mountpoint) {
		char *mp = realpath(cl.mountpoint, NULL);
		size_t n = mp ? strlen(mp) : 0;
		int inside = 0;

		for (i = 0; mp && i < vo.nmaintainers; i++) {
			char *rp = realpath(vo.maintainers[i], NULL);
			const char *f = rp ? rp : vo.maintainers[i];

			if (!strncmp(f, mp, n) && (f[n] == '/' || !f[n] || !strcmp(mp, "/"))) {
				fprintf(stderr, "leifs: maintainers=%s is inside the mount point %s "
					"(leifs would read its own files)\n", vo.maintainers[i], mp);
				inside = 1;
			}
			free(rp);
		}
		free(mp);
		if (inside) {
			ret = 2;
			goto out_opts;
		}
	}
	/* libfuse's own options are checked here, before anything is made */
	se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), &views);
	if (!se) {
		ret = 2; /* libfuse said which option it did not know */
		goto out_opts;
	}
	/* one daemon per cache, before anything is made or mounted; the
	 * lock passes through fork() to the daemon that serves */
	if (cache_lock(o.cache, &lock_fd, why, sizeof(why))) {
		fprintf(stderr, "leifs: %s\n", why);
		ret = 1;
		goto out_session;
	}
	/* LMDB must not cross fork(): try the cache now for a clear error,
	 * open it for real after daemonizing */
	if (views_open(&vo, &views, why, sizeof(why))) {
		fprintf(stderr, "leifs: %s\n", why);
		ret = 1;
		goto out_session;
	}
	views_close(views);
	views = NULL;
	if (views_global_init()) {
		fprintf(stderr, "leifs: cannot initialise libcurl\n");
		ret = 1;
		goto out_session;
	}
	cache_mail_init();
	fs_init();

	if (fuse_set_signal_handlers(se) || chain_stop_signals() || cache_guard_install())
		goto out_destroy;
	if (fuse_session_mount(se, cl.mountpoint))
		goto out_handlers;
	if (fuse_daemonize(cl.foreground))
		goto out_unmount;
	if (!cl.foreground)
		log_detach(o.cache);
	cache_lock_moved(lock_fd);
	vo.changed = fs_view_changed;
	vo.changed_arg = se;
	fs_notify_session(se);
	if (views_open(&vo, &views, why, sizeof(why))) {
		log_err("%s", why);
		goto out_unmount;
	}
	serving = views;
	if (views_start(views)) {
		log_err("cannot start the refresh_all schedule");
		goto out_unmount;
	}
	lc = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(lc, 16);
	fuse_loop_cfg_set_clone_fd(lc, 0);
	ret = cl.singlethread ? fuse_session_loop(se) : fuse_session_loop_mt(se, lc);
	fuse_loop_cfg_destroy(lc);
	serving = NULL;
out_unmount:
	fuse_session_unmount(se);
out_handlers:
	restore_stop_signals();
	fuse_remove_signal_handlers(se);
out_destroy:
	views_close(views);
	fs_destroy();
	views_global_cleanup();
out_session:
	fuse_session_destroy(se);
	if (lock_fd >= 0)
		close(lock_fd);
	if (ret != 2)
		ret = ret ? 1 : 0;
out_opts:
	free(cl.mountpoint);
	fuse_opt_free_args(&args);
	options_free(&o);
	return ret;
}
