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
#include "fs/fs.h"
#include "fs/log.h"
#include "fs/settings.h"
#include "net/net.h"

/* the one place the version is written; --version and the User-Agent */
#define LEIFS_VERSION "0.1"
#define LEIFS_USER_AGENT "leifs/" LEIFS_VERSION

/* LONG_MIN: not given; filled from the config file, then the defaults */
#define UNSET LONG_MIN

struct opts {
	char *cache;
	long refresh, timeout, first_wait, margin, refresh_all, empty_confirm;
	long low_speed, deadline, backoff_max;
	long max_refreshes, host_refreshes;
	long max_message;
	long map_size;          /* MiB */
	char *cafile;
	char *proxy;
	char *config;
	char *threads, *dedupe; /* view settings' defaults (settings.h) */
	long limit;
	int insecure;           /* -1: not given */
	int index_remote;       /* -1: not given; else 0 or 1 */
	int show_help, show_version;
	char **sources;
	int nsources;
};

#define OPT(t, p) { t, offsetof(struct opts, p), 1 }
static const struct fuse_opt leifs_opts[] = {
	OPT("cache=%s", cache),
	OPT("refresh=%ld", refresh),
	OPT("timeout=%ld", timeout),
	OPT("low_speed=%ld", low_speed),
	OPT("deadline=%ld", deadline),
	OPT("backoff_max=%ld", backoff_max),
	OPT("first_wait=%ld", first_wait),
	OPT("margin=%ld", margin),
	OPT("refresh_all=%ld", refresh_all),
	OPT("empty_confirm=%ld", empty_confirm),
	OPT("max_refreshes=%ld", max_refreshes),
	OPT("host_refreshes=%ld", host_refreshes),
	OPT("max_message=%ld", max_message),
	OPT("map_size=%ld", map_size),
	OPT("cafile=%s", cafile),
	OPT("proxy=%s", proxy),
	OPT("config=%s", config),
	OPT("threads=%s", threads),
	OPT("dedupe=%s", dedupe),
	OPT("limit=%ld", limit),
	OPT("insecure", insecure),
	OPT("index_remote=%d", index_remote),
	FUSE_OPT_KEY("source=", 1),
	FUSE_OPT_KEY("-h", 2),
	FUSE_OPT_KEY("--help", 2),
	FUSE_OPT_KEY("-V", 3),
	FUSE_OPT_KEY("--version", 3),
	FUSE_OPT_END
};

/* a local archive named relative to where leifs was started (or to ~/):
 * made absolute, since the daemon runs in / */
static char *absolute_source(const char *v)
{
	const char *path;
	char cwd[4096], *out = NULL;

	if (strstr(v, "://") || !strncmp(v, "cache:", 6))
		return strdup(v);       /* a URL (checked later), never a path */
	path = net_archive_path(v);
	if (!strncmp(path, "~/", 2) && getenv("HOME")) {
		if (asprintf(&out, "%.*s%s/%s", (int)(path - v), v, getenv("HOME"), path + 2) < 0)
			return NULL;
		return out;
	}
	if (path[0] == '/' || !path[0] || !getcwd(cwd, sizeof(cwd)))
		return strdup(v);
	if (asprintf(&out, "%.*s%s/%s", (int)(path - v), v, cwd, path) < 0)
		return NULL;
	return out;
}

/* a local source (not a URL) whose path does not exist; errno says why */
static int source_missing(const char *src)
{
	struct stat st;

	if (!strncmp(src, "http://", 7) || !strncmp(src, "https://", 8))
		return 0;
	return stat(net_archive_path(src), &st) && (errno == ENOENT || errno == ENOTDIR);
}

static int add_source(struct opts *o, const char *url)
{
	char **s = realloc(o->sources, (size_t)(o->nsources + 1) * sizeof(*s));

	if (!s)
		return -1;
	o->sources = s;
	if (!(s[o->nsources] = absolute_source(url)))
		return -1;
	o->nsources++;
	return 0;
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
	struct opts *o = data;

	(void)out;
	switch (key) {
	case 1:
		return add_source(o, arg + strlen("source="));
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

static void usage(FILE *f)
{
	fprintf(f,
"usage: leifs [-f] [-d] [-o OPT[,OPT...]] MOUNTPOINT\n"
"       leifs --check CACHEDIR   check the cache's consistency\n"
"\n"
"  -f                   stay in the foreground (log to stderr)\n"
"  -d                   debug output (implies -f)\n"
"  -h, --help           this text;  -V, --version  the version\n"
"  -o source=URL        a public-inbox to search; repeat for several\n"
"                       (default https://lore.kernel.org/all/)\n"
"  -o cache=DIR         the cache (default $XDG_CACHE_HOME/leifs)\n"
"  -o refresh=SECONDS   a listing refreshes a view older than this (default 600)\n"
"  -o timeout=SECONDS   no caller waits longer for the network (default 30)\n"
"  -o low_speed=BYTES   an answer slower than this many bytes/s over\n"
"                       `timeout` seconds fails (default 100)\n"
"  -o deadline=SECONDS  longest one search of a source may last (default 600)\n"
"  -o backoff_max=SECONDS  longest a busy server (HTTP 429, 503) is left\n"
"                       alone: its Retry-After, or 30 s doubling (default 3600)\n"
"  -o first_wait=SECONDS  a first listing waits this long for a new view's\n"
"                       first fill, then shows what came (default 1)\n"
"  -o margin=SECONDS    overlap of incremental searches (default 172800)\n"
"  -o refresh_all=SECONDS  refresh every view this often, listed or not\n"
"  -o empty_confirm=SECONDS  an empty answer to a full search empties a\n"
"                       view only when another this much later agrees (60)\n"
"  -o max_refreshes=N   views searched at once; the rest wait their turn (8)\n"
"  -o host_refreshes=N  searches at once per server, as lei's 4 (default 4)\n"
"  -o max_message=BYTES largest message accepted (default 64 MiB)\n"
"  -o map_size=MIB      most the cache may grow to (default 65536 MiB)\n"
"  -o cafile=FILE       trust the CAs in FILE for HTTPS (instead of the system's)\n"
"  -o proxy=URL         HTTP(S) proxy (default: the *_proxy variables)\n"
"  -o insecure          do not verify TLS certificates (never the default)\n"
"  -o index_remote=0|1  index mail of remote sources in the background, for\n"
"                       cache:URL sources (default 1)\n"
"  -o config=FILE       read FILE (default $XDG_CONFIG_HOME/leifs/config)\n"
"  -o threads=true|false|flag-hits  whole threads of the matches (lei q -t)\n"
"  -o dedupe=content|oid|mid|none   how copies of a message are told apart\n"
"  -o limit=N           keep the N newest messages of a view (default: all)\n"
"  -o allow_other       let other users in (needs user_allow_other)\n"
"\n"
"The config file sets the same keys in git-config syntax, under [leifs];\n"
"the command line wins; a view's own .config wins over both.\n"
"mkdir MOUNTPOINT/queries/QUERY makes a view; '%%2F' in a name stands for '/'.\n"
"Unmount with: fusermount3 -u MOUNTPOINT\n"
"See leifs(1) (from the source tree: man ./fs/leifs.1).\n");
}

static char *xdg_path(const char *var, const char *fallback, const char *leaf)
{
	const char *x = getenv(var), *home = getenv("HOME");
	char *s = NULL;

	if (x && *x)
		return asprintf(&s, "%s/leifs%s", x, leaf) < 0 ? NULL : s;
	if (!home || !*home)
		return NULL;
	return asprintf(&s, "%s/%s/leifs%s", home, fallback, leaf) < 0 ? NULL : s;
}

/* git expands ~/ in pathname values; so do we */
static char *path_value(const char *v)
{
	const char *home = getenv("HOME");
	char *s = NULL;

	if (!strncmp(v, "~/", 2) && home && *home)
		return asprintf(&s, "%s%s", home, v + 1) < 0 ? NULL : s;
	return strdup(v);
}

static int set_str(char **dst, const char *v, int path)
{
	if (*dst)
		return 0; /* the command line wins */
	*dst = path ? path_value(v) : strdup(v);
	return *dst ? 0 : ENOMEM;
}

/* [leifs] keys of the config file into what the command line left unset.
 * Returns 0, or EINVAL with one line in `why`. */
static int apply_config(struct opts *o, const config_t *c, char *why, size_t whylen)
{
	static const struct { const char *key; size_t off; } longs[] = {
		{ "refresh", offsetof(struct opts, refresh) },
		{ "timeout", offsetof(struct opts, timeout) },
		{ "first_wait", offsetof(struct opts, first_wait) },
		{ "margin", offsetof(struct opts, margin) },
		{ "low_speed", offsetof(struct opts, low_speed) },
		{ "deadline", offsetof(struct opts, deadline) },
		{ "backoff_max", offsetof(struct opts, backoff_max) },
		{ "refresh_all", offsetof(struct opts, refresh_all) },
		{ "empty_confirm", offsetof(struct opts, empty_confirm) },
		{ "max_refreshes", offsetof(struct opts, max_refreshes) },
		{ "host_refreshes", offsetof(struct opts, host_refreshes) },
		{ "max_message", offsetof(struct opts, max_message) },
		{ "map_size", offsetof(struct opts, map_size) },
		{ "limit", offsetof(struct opts, limit) },
	};
	int cmdline_sources = o->nsources > 0;
	size_t i, k;

	for (i = 0; i < c->n; i++) {
		const struct config_item *it = &c->items[i];
		char key[64];
		char *p;
		int err = 0, b;

		if (!strcasecmp(it->key, "http.proxy")) {
			if (!it->value || set_str(&o->proxy, it->value, 0))
				goto bad;
			continue;
		}
		if (strncasecmp(it->key, "leifs.", 6))
			continue; /* other programs' sections, or later ones */
		if (strlen(it->key + 6) >= sizeof(key))
			goto unknown;
		strcpy(key, it->key + 6);
		for (p = key; *p; p++)
			if (*p == '-')
				*p = '_'; /* git style refresh-all == refresh_all */
		for (k = 0; k < sizeof(longs) / sizeof(*longs); k++) {
			if (strcmp(key, longs[k].key))
				continue;
			long *dst = (long *)((char *)o + longs[k].off), n;

			if (config_long(it->value, &n))
				goto bad;
			if (*dst == UNSET)
				*dst = n;
			break;
		}
		if (k < sizeof(longs) / sizeof(*longs))
			continue;
		if (!strcmp(key, "source")) {
			if (!it->value || !*it->value)
				goto bad;
			if (!cmdline_sources && add_source(o, it->value))
				return ENOMEM;
		} else if (!strcmp(key, "cache") || !strcmp(key, "cafile")) {
			if (!it->value || !*it->value)
				goto bad;
			err = set_str(!strcmp(key, "cafile") ? &o->cafile : &o->cache, it->value, 1);
			if (err)
				return err;
		} else if (!strcmp(key, "proxy")) {
			if (!it->value || set_str(&o->proxy, it->value, 0))
				goto bad;
		} else if (!strcmp(key, "threads") || !strcmp(key, "dedupe")) {
			struct settings t = { 0 };

			if (settings_set(&t, key, it->value))
				goto bad;
			if (set_str(!strcmp(key, "threads") ? &o->threads : &o->dedupe,
				    it->value ? it->value : "true", 0))
				return ENOMEM;
		} else if (!strcmp(key, "insecure")) {
			if (config_bool(it->value, &b))
				goto bad;
			if (o->insecure < 0)
				o->insecure = b;
		} else if (!strcmp(key, "index_remote")) {
			if (config_bool(it->value, &b))
				goto bad;
			if (o->index_remote < 0)
				o->index_remote = b;
		} else {
			goto unknown;
		}
		continue;
bad:
		snprintf(why, whylen, "line %d: bad value for %s", it->line, it->key);
		return EINVAL;
unknown:
		snprintf(why, whylen, "line %d: unknown key %s", it->line, it->key);
		return EINVAL;
	}
	return 0;
}

static void set_default(long *v, long def)
{
	if (*v == UNSET)
		*v = def;
}

/* The config file, then the defaults, under what the command line gave. */
static int load_config(struct opts *o)
{
	config_t c = { 0 };
	char *path = o->config ? strdup(o->config) : xdg_path("XDG_CONFIG_HOME", ".config", "/config");
	char why[300], sub[1024];
	int err = 0;

	if (path) {
		err = config_read_file(path, &c, sub, sizeof(sub));
		if (err == ENOENT && !o->config)
			err = 0; /* no file is fine; a named one must exist */
		else if (!err && (err = apply_config(o, &c, why, sizeof(why))))
			snprintf(sub, sizeof(sub), "%.600s: %s", path, why);
		if (err)
			fprintf(stderr, "leifs: %s\n", sub);
		config_free(&c);
		free(path);
	}
	set_default(&o->refresh, 600);
	set_default(&o->timeout, 30);
	set_default(&o->first_wait, 1);
	set_default(&o->margin, 2 * 86400);
	set_default(&o->low_speed, 100);
	set_default(&o->deadline, 600);
	set_default(&o->backoff_max, 3600);
	set_default(&o->refresh_all, 0);
	set_default(&o->empty_confirm, 60);
	set_default(&o->max_refreshes, 8);
	set_default(&o->host_refreshes, 4);
	set_default(&o->max_message, 64L << 20);
	set_default(&o->map_size, 64L << 10);
	set_default(&o->limit, 0);
	if (o->insecure < 0)
		o->insecure = 0;
	if (o->index_remote < 0)
		o->index_remote = 1;
	return err;
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

	if ((err = cache_open(dir, (size_t)64 << 30, &c, why, sizeof(why)))) {
		fprintf(stderr, "leifs: %s\n", why);
		return 2;
	}
	err = cache_check(c, stdout, &r);
	cache_close(c);
	if (err) {
		fprintf(stderr, "leifs: cannot check %s: %s\n", dir, strerror(err));
		return 2;
	}
	printf("%llu views, %llu messages (%llu held by entries); problems: %llu orphan records, "
	       "%llu entries without their message, %llu messages held by nothing, "
	       "%llu wrong counts, %llu bad records, %llu views with wrong counters\n",
	       (unsigned long long)r.views, (unsigned long long)r.messages,
	       (unsigned long long)r.held, (unsigned long long)r.orphans,
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
	struct opts o = { .refresh = UNSET, .timeout = UNSET, .first_wait = UNSET,
			  .margin = UNSET,
			  .low_speed = UNSET, .deadline = UNSET, .backoff_max = UNSET,
			  .refresh_all = UNSET, .empty_confirm = UNSET, .max_message = UNSET,
			  .max_refreshes = UNSET, .host_refreshes = UNSET, .map_size = UNSET,
			  .limit = UNSET, .insecure = -1, .index_remote = -1 };
	struct settings def = { 0 };
	struct views_opts vo;
	struct fuse_session *se = NULL;
	struct fuse_loop_config *lc = NULL;
	views_t *views = NULL;
	static char *default_source[] = { "https://lore.kernel.org/all/" };
	char why[512];
	int ret = 1, i, lock_fd = -1;

	if (argc == 3 && !strcmp(argv[1], "--check"))
		return check_cache(argv[2]);

	if (fuse_opt_parse(&args, &o, leifs_opts, opt_proc) == -1) {
		ret = 2;
		goto out_opts;
	}
	scrub_passwords(argc, argv);
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
	if (load_config(&o)) {
		ret = 2;
		goto out_opts;
	}
	if (o.refresh < 0 || o.timeout <= 0 || o.first_wait < 0 || o.margin < 0 || o.max_message <= 0 || o.map_size <= 0 ||
	    o.refresh_all < 0 || o.limit < 0 || o.empty_confirm < 0) {
		fprintf(stderr, "leifs: refresh, refresh_all, empty_confirm, first_wait, margin, limit must be >= 0; timeout, max_message > 0\n");
		ret = 2;
		goto out_opts;
	}
	if (o.index_remote != 0 && o.index_remote != 1) {
		fprintf(stderr, "leifs: index_remote is 0 or 1\n");
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
	    (o.dedupe && settings_set(&def, "dedupe", o.dedupe))) {
		fprintf(stderr, "leifs: threads is true, false or flag-hits; dedupe is content, oid, mid or none\n");
		ret = 2;
		goto out_opts;
	}
	if (!o.cache && !(o.cache = xdg_path("XDG_CACHE_HOME", ".cache", ""))) {
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
		.empty_confirm = o.empty_confirm, .max_message = (size_t)o.max_message,
		.max_refreshes = (int)o.max_refreshes, .host_refreshes = (int)o.host_refreshes,
		.map_size = (size_t)o.map_size << 20, .cafile = o.cafile,
		.insecure = o.insecure, .proxy = o.proxy, .index_remote = o.index_remote,
		.threads = def.threads, .dedupe = def.dedupe, .limit = o.limit,
	};
	for (i = 0; i < vo.nsources; i++) {
		if (!settings_source_ok(vo.sources[i])) {
			fprintf(stderr, "leifs: source %s: not an http:// or https:// URL or an absolute path\n",
				vo.sources[i]);
			ret = 2;
			goto out_opts;
		}
		/* a local archive that is not there is a typo: say so now,
		 * not at the first listing of a view */
		if (strncmp(vo.sources[i], "cache:", 6) && source_missing(vo.sources[i])) {
			fprintf(stderr, "leifs: source %s: %s\n", net_archive_path(vo.sources[i]),
				strerror(errno));
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
	if (net_global_init()) {
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
		log_to_syslog();
	cache_lock_moved(lock_fd);
	vo.changed = fs_view_changed;
	vo.changed_arg = se;
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
	net_global_cleanup();
out_session:
	fuse_session_destroy(se);
	if (lock_fd >= 0)
		close(lock_fd);
	if (ret != 2)
		ret = ret ? 1 : 0;
out_opts:
	free(cl.mountpoint);
	fuse_opt_free_args(&args);
	for (i = 0; i < o.nsources; i++)
		free(o.sources[i]);
	free(o.sources);
	free(o.cache);
	free(o.cafile);
	free(o.proxy);
	free(o.config);
	free(o.threads);
	free(o.dedupe);
	return ret;
}
