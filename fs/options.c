/*
 * The option table, and the command line, config file, defaults and
 * --help text built from it: see options.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "fs/config.h"
#include "fs/options.h"
#include "fs/settings.h"
#include "net/net.h"

#define O(f) offsetof(struct opts, f)
#define ALL (OPTW_CMDLINE | OPTW_CONFIG)
#define VIEW (OPTW_CMDLINE | OPTW_CONFIG | OPTW_VIEW)

const struct opt_spec options[] = {
	{ "source", OPTT_SOURCE, 0, VIEW, 0, "URL|PATH",
	  "a public-inbox to search, or a mail archive on disk (mbox, maildir, "
	  "public-inbox); repeat for several", LEIFS_DEFAULT_SOURCE },
	{ "imap", OPTT_IMAP, 0, VIEW, 0, "URL",
	  "an IMAP folder a view's messages are APPENDed to after each search, "
	  "imap[s]://[user@]host[:port]/FOLDER, the password from git credential; "
	  "repeat for several", "none" },
	{ "maintainers", OPTT_MAINT, 0, ALL, 0, "FILE",
	  "a MAINTAINERS file (the kernel's format): its sections are the views "
	  "subsystems/ can make; repeat for several", "none" },
	{ "cache", OPTT_PATH, O(cache), ALL, 0, "DIR", "the cache", "$XDG_CACHE_HOME/leifs" },
	{ "refresh", OPTT_LONG, O(refresh), VIEW, 600, "SECONDS",
	  "a listing refreshes a view older than this", NULL },
	{ "timeout", OPTT_LONG, O(timeout), ALL, 30, "SECONDS",
	  "no caller waits longer for the network", NULL },
	{ "low_speed", OPTT_LONG, O(low_speed), ALL, 100, "BYTES",
	  "an answer slower than this many bytes/s over `timeout` seconds fails", NULL },
	{ "deadline", OPTT_LONG, O(deadline), ALL, 600, "SECONDS",
	  "longest one search of a source may last", NULL },
	{ "backoff_max", OPTT_LONG, O(backoff_max), ALL, 3600, "SECONDS",
	  "longest a busy server (HTTP 429, 503) is left alone: its Retry-After, "
	  "or 30 s doubling", NULL },
	{ "first_wait", OPTT_LONG, O(first_wait), ALL, 1, "SECONDS",
	  "a first listing waits this long for a new view's first fill, then "
	  "shows what came", NULL },
	{ "margin", OPTT_LONG, O(margin), ALL, 2 * 86400, "SECONDS",
	  "overlap of incremental searches", "172800, 2 days" },
	{ "refresh_all", OPTT_LONG, O(refresh_all), ALL, 0, "SECONDS",
	  "refresh every view this often, listed or not", "0, off" },
	{ "empty_confirm", OPTT_LONG, O(empty_confirm), ALL, 60, "SECONDS",
	  "an empty answer to a full search empties a view only when another "
	  "this much later agrees", NULL },
	{ "series_fetch", OPTT_BOOL, O(series_fetch), ALL, 1, "0|1",
	  "fetch the rest of a thread a view holds part of, for its series/ (in the "
	  "background; never into its maildir)", NULL },
	{ "series_refetch", OPTT_LONG, O(series_refetch), ALL, 3600, "SECONDS",
	  "the rest of a thread a view holds part of (series/) is fetched again this "
	  "often while its series is under 30 days old", "3600; 0, never again" },
	{ "max_refreshes", OPTT_LONG, O(max_refreshes), ALL, 8, "N",
	  "views searched at once; the rest wait their turn", NULL },
	{ "host_refreshes", OPTT_LONG, O(host_refreshes), ALL, 4, "N",
	  "searches at once per server, as lei's 4", NULL },
	{ "max_message", OPTT_LONG, O(max_message), ALL, 64L << 20, "BYTES",
	  "largest message accepted", "64 MiB" },
	{ "map_size", OPTT_LONG, O(map_size), ALL, 64L << 10, "MIB",
	  "most the cache may grow to", "65536 MiB" },
	{ "cafile", OPTT_PATH, O(cafile), ALL, 0, "FILE",
	  "trust the CAs in FILE for HTTPS (instead of the system's)", NULL },
	{ "proxy", OPTT_STRING, O(proxy), ALL, 0, "URL",
	  "HTTP(S) proxy (the config file's http.proxy too)", "from the *_proxy variables" },
	{ "insecure", OPTT_FLAG, O(insecure), ALL, 0, NULL,
	  "do not verify TLS certificates (never the default)", NULL },
	{ "index_remote", OPTT_BOOL, O(index_remote), ALL, 1, "0|1",
	  "index mail of remote sources in the background, for cache:URL sources", NULL },
	{ "config", OPTT_STRING, O(config), OPTW_CMDLINE, 0, "FILE",
	  "read FILE as the config file", "$XDG_CONFIG_HOME/leifs/config" },
	{ "threads", OPTT_SETTING, O(threads), VIEW, 0, "true|false|flag-hits",
	  "whole threads of the matches (lei q -t)", "false" },
	{ "dedupe", OPTT_SETTING, O(dedupe), VIEW, 0, "content|oid|mid|none",
	  "how copies of a message are told apart", "content" },
	{ "flags", OPTT_SETTING, O(flags), VIEW, 0, "shared|view",
	  "whether a message's seen, flagged, replied and trashed flags are the same "
	  "in every view that holds it (lei's keywords), or each view's own", "shared" },
	{ "limit", OPTT_LONG, O(limit), VIEW, 0, "N",
	  "keep the N newest messages of a view", "0, all" },
	{ "allow_other", OPTT_FUSE, 0, OPTW_CMDLINE, 0, NULL,
	  "let other users in (needs user_allow_other in /etc/fuse.conf)", NULL },
	{ NULL, OPTT_FUSE, 0, 0, 0, NULL, NULL, NULL }
};

enum { KEY_SOURCE = 1, KEY_IMAP, KEY_MAINT, KEY_HELP, KEY_VERSION };

static long *long_at(struct opts *o, const struct opt_spec *s)
{
	return (long *)((char *)o + s->off);
}

static int *int_at(struct opts *o, const struct opt_spec *s)
{
	return (int *)((char *)o + s->off);
}

static char **str_at(struct opts *o, const struct opt_spec *s)
{
	return (char **)((char *)o + s->off);
}

void options_init(struct opts *o)
{
	const struct opt_spec *s;

	memset(o, 0, sizeof(*o));
	for (s = options; s->name; s++)
		if (s->type == OPTT_LONG)
			*long_at(o, s) = OPT_UNSET;
		else if (s->type == OPTT_FLAG || s->type == OPTT_BOOL)
			*int_at(o, s) = -1;
}

void options_free(struct opts *o)
{
	const struct opt_spec *s;
	int i;

	for (i = 0; i < o->nsources; i++)
		free(o->sources[i]);
	free(o->sources);
	o->sources = NULL;
	o->nsources = 0;
	for (i = 0; i < o->nimaps; i++)
		free(o->imaps[i]);
	free(o->imaps);
	o->imaps = NULL;
	o->nimaps = 0;
	for (i = 0; i < o->nmaintainers; i++)
		free(o->maintainers[i]);
	free(o->maintainers);
	o->maintainers = NULL;
	o->nmaintainers = 0;
	for (s = options; s->name; s++)
		if (s->type == OPTT_STRING || s->type == OPTT_PATH || s->type == OPTT_SETTING) {
			free(*str_at(o, s));
			*str_at(o, s) = NULL;
		}
}

/* a local archive named relative to where leifs was started (or to ~/):
 * made absolute, since the daemon runs in / */
static char *absolute_source(const char *v)
{
	const char *path;
	char cwd[4096], *out = NULL;

	if (strstr(v, "://") || net_source_kind(v) != NET_SOURCE_ARCHIVE)
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

static int add_imap(struct opts *o, const char *url)
{
	char **s = realloc(o->imaps, (size_t)(o->nimaps + 1) * sizeof(*s));

	if (!s)
		return -1;
	o->imaps = s;
	if (!(s[o->nimaps] = strdup(url)))
		return -1;
	o->nimaps++;
	return 0;
}

/* a MAINTAINERS file: ~/ expanded, made absolute (the daemon runs in /) */
static int add_maint(struct opts *o, const char *path)
{
	char **s = realloc(o->maintainers, (size_t)(o->nmaintainers + 1) * sizeof(*s));
	const char *home = getenv("HOME");
	char cwd[4096], *p = NULL;
	int n;

	if (!s)
		return -1;
	o->maintainers = s;
	if (!strncmp(path, "~/", 2) && home && *home)
		n = asprintf(&p, "%s%s", home, path + 1);
	else if (path[0] != '/' && getcwd(cwd, sizeof(cwd)))
		n = asprintf(&p, "%s/%s", cwd, path);
	else
		n = (p = strdup(path)) ? 0 : -1;
	if (n < 0)
		return -1;
	s[o->nmaintainers++] = p;
	return 0;
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
	struct opts *o = data;

	(void)out;
	switch (key) {
	case KEY_SOURCE:
		return add_source(o, arg + strlen("source="));
	case KEY_IMAP:
		return add_imap(o, arg + strlen("imap="));
	case KEY_MAINT:
		if (!arg[strlen("maintainers=")]) {
			fprintf(stderr, "leifs: maintainers= needs a file\n");
			return -1;
		}
		return add_maint(o, arg + strlen("maintainers="));
	case KEY_HELP:
		o->show_help = 1;
		return 0;
	case KEY_VERSION:
		o->show_version = 1;
		return 0;
	default:
		return 1;       /* libfuse's, or unknown: libfuse says */
	}
}

int options_parse(struct fuse_args *args, struct opts *o)
{
	static const char *const fixed[] = { "-h", "--help", "-V", "--version" };
	struct fuse_opt *fo;
	size_t n = 0, i, k = 0, ntable;
	int ret = -1;

	while (options[n].name)
		n++;
	if (!(fo = calloc(n + 6, sizeof(*fo))))
		return -1;
	for (i = 0; i < n; i++) {
		const struct opt_spec *s = &options[i];
		const char *fmt = NULL;
		char *t = NULL;

		if (!(s->where & OPTW_CMDLINE) || s->type == OPTT_FUSE)
			continue;
		switch (s->type) {
		case OPTT_LONG:
			fmt = "%s=%%ld";
			break;
		case OPTT_STRING:
		case OPTT_PATH:
		case OPTT_SETTING:
			fmt = "%s=%%s";
			break;
		case OPTT_BOOL:
			fmt = "%s=%%d";
			break;
		case OPTT_FLAG:
			fmt = "%s";
			break;
		case OPTT_SOURCE:
		case OPTT_IMAP:
		case OPTT_MAINT:
			fmt = "%s=";
			break;
		case OPTT_FUSE:
			break;
		}
		if (asprintf(&t, fmt, s->name) < 0)
			goto out;
		if (s->type == OPTT_SOURCE)
			fo[k++] = (struct fuse_opt)FUSE_OPT_KEY(t, KEY_SOURCE);
		else if (s->type == OPTT_IMAP)
			fo[k++] = (struct fuse_opt)FUSE_OPT_KEY(t, KEY_IMAP);
		else if (s->type == OPTT_MAINT)
			fo[k++] = (struct fuse_opt)FUSE_OPT_KEY(t, KEY_MAINT);
		else
			fo[k++] = (struct fuse_opt){ t, s->off, 1 };
	}
	ntable = k;
	for (i = 0; i < 4; i++)
		fo[k++] = (struct fuse_opt)FUSE_OPT_KEY(fixed[i], i < 2 ? KEY_HELP : KEY_VERSION);
	ret = fuse_opt_parse(args, o, fo, opt_proc);
	k = ntable;
out:
	for (i = 0; i < k; i++)
		free((char *)fo[i].templ);     /* asprintf'd above */
	free(fo);
	return ret;
}

/* --help: `text` from column `col`, words wrapped at 79 columns, later
 * lines indented to HELP_COL */
#define HELP_COL 23
static void put_wrapped(FILE *f, int col, const char *text)
{
	const char *p = text;
	int first = 1;

	while (*p) {
		int n = (int)strcspn(p, " ");

		if (!first && col + 1 + n > 79) {
			fprintf(f, "\n%*s", HELP_COL, "");
			col = HELP_COL;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", n, p);
		col += n;
		p += n;
		while (*p == ' ')
			p++;
		first = 0;
	}
	fputc('\n', f);
}

/* the names of the options set in `where` and not in `not`, as a list */
static void put_names(FILE *f, unsigned where, unsigned not)
{
	const struct opt_spec *s;
	const char *sep = "";

	for (s = options; s->name; s++)
		if ((s->where & where) && !(s->where & not)) {
			fprintf(f, "%s%s", sep, s->name);
			sep = ", ";
		}
}

void options_usage(FILE *f)
{
	const struct opt_spec *s;

	fprintf(f,
"usage: leifs [-f] [-d] [-o OPT[,OPT...]] MOUNTPOINT\n"
"       leifs --check CACHEDIR   check the cache's consistency\n"
"\n"
"  -f                   stay in the foreground (log to stderr)\n"
"  -d                   debug output (implies -f)\n"
"  -h, --help           this text;  -V, --version  the version\n");
	for (s = options; s->name; s++) {
		char left[80], help[400], def[80] = "";
		int col;

		if (!(s->where & OPTW_CMDLINE))
			continue;
		col = snprintf(left, sizeof(left), "  -o %s%s%s", s->name,
			       s->arg ? "=" : "", s->arg ? s->arg : "");
		fputs(left, f);
		if (col <= HELP_COL - 2) {
			fprintf(f, "%*s", HELP_COL - col, "");
			col = HELP_COL;
		} else {
			fputs("  ", f);
			col += 2;
		}
		if (s->shown)
			snprintf(def, sizeof(def), " (default %s)", s->shown);
		else if (s->type == OPTT_LONG || s->type == OPTT_BOOL)
			snprintf(def, sizeof(def), " (default %ld)", s->def);
		snprintf(help, sizeof(help), "%s%s", s->help, def);
		put_wrapped(f, col, help);
	}
	fputs("\nThe config file sets the same keys in git-config syntax, under [leifs]\n"
	      "(all but ", f);
	put_names(f, OPTW_CMDLINE, OPTW_CONFIG);
	fputs("); the command line wins.  A view's own .config\nmay set ", f);
	put_names(f, OPTW_VIEW, 0);
	fputs(", and wins over both.\n"
"mkdir MOUNTPOINT/queries/QUERY makes a view; '%2F' in a name stands for '/'.\n"
"Unmount with: fusermount3 -u MOUNTPOINT\n"
"See leifs(1) (from the source tree: man ./fs/leifs.1).\n", f);
}

char *options_xdg_path(const char *var, const char *fallback, const char *leaf)
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

/* One [leifs] key (lowercased, '-' read as '_') of the config file into
 * what the command line left unset: 0, EINVAL for a bad value, ENOENT for
 * an unknown key, ENOMEM. */
static int apply_key(struct opts *o, const char *key, const char *v, int cmdline_sources,
		     int cmdline_imaps, int cmdline_maint)
{
	const struct opt_spec *s;
	struct settings t = { 0 };
	long n;
	int b;

	for (s = options; s->name; s++)
		if ((s->where & OPTW_CONFIG) && !strcmp(key, s->name))
			break;
	if (!s->name)
		return ENOENT;
	switch (s->type) {
	case OPTT_LONG:
		if (config_long(v, &n))
			return EINVAL;
		if (*long_at(o, s) == OPT_UNSET)
			*long_at(o, s) = n;
		return 0;
	case OPTT_FLAG:
	case OPTT_BOOL:
		if (config_bool(v, &b))
			return EINVAL;
		if (*int_at(o, s) < 0)
			*int_at(o, s) = b;
		return 0;
	case OPTT_SOURCE:
		if (!v || !*v)
			return EINVAL;
		if (!cmdline_sources && add_source(o, v))
			return ENOMEM;
		return 0;
	case OPTT_IMAP:
		if (!v || !*v)
			return EINVAL;
		if (!cmdline_imaps && add_imap(o, v))
			return ENOMEM;
		return 0;
	case OPTT_MAINT:
		if (!v || !*v)
			return EINVAL;
		if (!cmdline_maint && add_maint(o, v))
			return ENOMEM;
		return 0;
	case OPTT_PATH:
		if (!v || !*v)
			return EINVAL;
		return set_str(str_at(o, s), v, 1);
	case OPTT_STRING:
		if (!v)
			return EINVAL;
		return set_str(str_at(o, s), v, 0);
	case OPTT_SETTING:
		if (settings_set(&t, key, v))
			return EINVAL;
		return set_str(str_at(o, s), v ? v : "true", 0);
	case OPTT_FUSE:
		break;
	}
	return ENOENT;
}

/* The config file's keys.  0, or EINVAL with one line in `why`. */
static int apply_config(struct opts *o, const config_t *c, char *why, size_t whylen)
{
	int cmdline_sources = o->nsources > 0, cmdline_imaps = o->nimaps > 0;
	int cmdline_maint = o->nmaintainers > 0;
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct config_item *it = &c->items[i];
		char key[64], *p;
		int err;

		if (!strcasecmp(it->key, "http.proxy")) {       /* git's key */
			err = it->value ? set_str(&o->proxy, it->value, 0) : EINVAL;
		} else if (strncasecmp(it->key, "leifs.", 6)) {
			continue; /* other programs' sections: [core], [lei] */
		} else if (strlen(it->key + 6) >= sizeof(key)) {
			err = ENOENT;
		} else {
			strcpy(key, it->key + 6);
			for (p = key; *p; p++)
				if (*p == '-')
					*p = '_'; /* git style refresh-all == refresh_all */
			err = apply_key(o, key, it->value, cmdline_sources, cmdline_imaps,
					cmdline_maint);
		}
		if (err == ENOMEM) {
			snprintf(why, whylen, "out of memory");
			return err;
		}
		if (err == EINVAL) {
			snprintf(why, whylen, "line %d: bad value for %s", it->line, it->key);
			return EINVAL;
		}
		if (err) {
			snprintf(why, whylen, "line %d: unknown key %s", it->line, it->key);
			return EINVAL;
		}
	}
	return 0;
}

int options_load_config(struct opts *o)
{
	const struct opt_spec *s;
	config_t c = { 0 };
	char *path = o->config ? strdup(o->config)
			       : options_xdg_path("XDG_CONFIG_HOME", ".config", "/config");
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
	for (s = options; s->name; s++)
		if (s->type == OPTT_LONG && *long_at(o, s) == OPT_UNSET)
			*long_at(o, s) = s->def;
		else if ((s->type == OPTT_FLAG || s->type == OPTT_BOOL) && *int_at(o, s) < 0)
			*int_at(o, s) = (int)s->def;
	return err;
}
