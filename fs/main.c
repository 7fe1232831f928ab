/*
 * leifs main(): options, mount, daemonize, session loop.  Fatal errors are
 * allowed only here, before the filesystem serves anything.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/fs.h"
#include "fs/log.h"
#include "net/net.h"

#define LEIFS_VERSION "0.1"

struct opts {
	char *cache;
	long refresh, timeout, margin, refresh_all;
	long max_message;
	long map_size;          /* MiB */
	char *cafile;
	int insecure;
	int show_help, show_version;
	char **sources;
	int nsources;
};

#define OPT(t, p) { t, offsetof(struct opts, p), 1 }
static const struct fuse_opt leifs_opts[] = {
	OPT("cache=%s", cache),
	OPT("refresh=%ld", refresh),
	OPT("timeout=%ld", timeout),
	OPT("margin=%ld", margin),
	OPT("refresh_all=%ld", refresh_all),
	OPT("max_message=%ld", max_message),
	OPT("map_size=%ld", map_size),
	OPT("cafile=%s", cafile),
	OPT("insecure", insecure),
	FUSE_OPT_KEY("source=", 1),
	FUSE_OPT_KEY("-h", 2),
	FUSE_OPT_KEY("--help", 2),
	FUSE_OPT_KEY("-V", 3),
	FUSE_OPT_KEY("--version", 3),
	FUSE_OPT_END
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
	struct opts *o = data;
	char **s;

	(void)out;
	switch (key) {
	case 1:
		s = realloc(o->sources, (size_t)(o->nsources + 1) * sizeof(*s));
		if (!s || !(s[o->nsources] = strdup(arg + strlen("source="))))
			return -1;
		o->sources = s;
		o->nsources++;
		return 0;
	case 2:
		o->show_help = 1;
		return 0;
	case 3:
		o->show_version = 1;
		return 0;
	default:
		return 1;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: leifs [-f] [-d] [-o OPT[,OPT...]] MOUNTPOINT\n"
"\n"
"  -f                   stay in the foreground (log to stderr)\n"
"  -d                   debug output (implies -f)\n"
"  -o source=URL        a public-inbox to search; repeat for several\n"
"                       (default https://lore.kernel.org/all/)\n"
"  -o cache=DIR         the cache (default $XDG_CACHE_HOME/leifs)\n"
"  -o refresh=SECONDS   a listing refreshes a view older than this (default 600)\n"
"  -o timeout=SECONDS   no caller waits longer for the network (default 30)\n"
"  -o margin=SECONDS    overlap of incremental searches (default 172800)\n"
"  -o refresh_all=SECONDS  refresh every view this often, listed or not\n"
"  -o max_message=BYTES largest message accepted (default 64 MiB)\n"
"  -o map_size=MIB      most the cache may grow to (default 65536 MiB)\n"
"  -o cafile=FILE       trust this CA for HTTPS\n"
"  -o insecure          do not verify TLS certificates (never the default)\n"
"\n"
"mkdir MOUNTPOINT/queries/QUERY makes a view; '%%2F' in a name stands for '/'.\n"
"Unmount with: fusermount3 -u MOUNTPOINT\n");
}

static char *default_cache(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *s = NULL;

	if (x && *x)
		return asprintf(&s, "%s/leifs", x) < 0 ? NULL : s;
	if (!home || !*home)
		return NULL;
	return asprintf(&s, "%s/.cache/leifs", home) < 0 ? NULL : s;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cl = { 0 };
	struct opts o = { .refresh = 600, .timeout = 30, .margin = 2 * 86400,
			  .max_message = 64L << 20, .map_size = 64L << 10 };
	struct views_opts vo;
	struct fuse_session *se = NULL;
	struct fuse_loop_config *lc = NULL;
	views_t *views = NULL;
	static char *default_source[] = { "https://lore.kernel.org/all/" };
	char why[512];
	int ret = 1, i;

	if (fuse_opt_parse(&args, &o, leifs_opts, opt_proc) == -1) {
		ret = 2;
		goto out_opts;
	}
	if (o.show_help) {
		usage(stdout);
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
	if (o.refresh < 0 || o.timeout <= 0 || o.margin < 0 || o.max_message <= 0 || o.map_size <= 0 ||
	    o.refresh_all < 0) {
		fprintf(stderr, "leifs: refresh, refresh_all, margin must be >= 0; timeout, max_message > 0\n");
		ret = 2;
		goto out_opts;
	}
	if (!o.cache && !(o.cache = default_cache())) {
		fprintf(stderr, "leifs: no cache directory: set HOME or -o cache=DIR\n");
		ret = 2;
		goto out_opts;
	}
	if (cl.debug)
		log_set_debug(1);
	/* private by default: the kernel checks modes, no allow_other */
	fuse_opt_add_arg(&args, "-odefault_permissions");
	fuse_opt_add_arg(&args, "-ofsname=leifs");
	fuse_opt_add_arg(&args, "-osubtype=leifs");

	vo = (struct views_opts){
		.sources = o.nsources ? o.sources : default_source,
		.nsources = o.nsources ? o.nsources : 1,
		.cache_dir = o.cache, .refresh = o.refresh, .timeout = o.timeout,
		.margin = o.margin, .refresh_all = o.refresh_all, .max_message = (size_t)o.max_message,
		.map_size = (size_t)o.map_size << 20, .cafile = o.cafile,
		.insecure = o.insecure,
	};
	for (i = 0; i < vo.nsources; i++) {
		if (strncmp(vo.sources[i], "http://", 7) &&
		    strncmp(vo.sources[i], "https://", 8)) {
			fprintf(stderr, "leifs: source %s: only http:// and https:// URLs are supported\n",
				vo.sources[i]);
			ret = 2;
			goto out_opts;
		}
	}
	/* LMDB must not cross fork(): try the cache now for a clear error,
	 * open it for real after daemonizing */
	if (views_open(&vo, &views, why, sizeof(why))) {
		fprintf(stderr, "leifs: %s\n", why);
		ret = 1;
		goto out_opts;
	}
	views_close(views);
	views = NULL;
	if (net_global_init()) {
		fprintf(stderr, "leifs: cannot initialise libcurl\n");
		ret = 1;
		goto out_opts;
	}
	cache_mail_init();
	fs_init();

	/* userdata points at `views`, which is set only after the fork */
	se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), &views);
	if (!se)
		goto out;
	if (fuse_set_signal_handlers(se))
		goto out_destroy;
	if (fuse_session_mount(se, cl.mountpoint))
		goto out_handlers;
	if (fuse_daemonize(cl.foreground))
		goto out_unmount;
	if (!cl.foreground)
		log_to_syslog();
	if (views_open(&vo, &views, why, sizeof(why))) {
		log_err("%s", why);
		goto out_unmount;
	}
	if (views_start(views)) {
		log_err("cannot start the refresh_all schedule");
		goto out_unmount;
	}
	lc = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(lc, 16);
	fuse_loop_cfg_set_clone_fd(lc, 0);
	ret = cl.singlethread ? fuse_session_loop(se) : fuse_session_loop_mt(se, lc);
	fuse_loop_cfg_destroy(lc);
out_unmount:
	fuse_session_unmount(se);
out_handlers:
	fuse_remove_signal_handlers(se);
out_destroy:
	fuse_session_destroy(se);
out:
	views_close(views);
	fs_destroy();
	net_global_cleanup();
	ret = ret ? 1 : 0;
out_opts:
	free(cl.mountpoint);
	fuse_opt_free_args(&args);
	for (i = 0; i < o.nsources; i++)
		free(o.sources[i]);
	free(o.sources);
	free(o.cache);
	free(o.cafile);
	return ret;
}
