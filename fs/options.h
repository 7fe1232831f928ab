/*
 * options: leifs's own options, from one table (options.c) that gives, for
 * each, its name, type, default, help line and where it may be set:
 *   -o NAME=VALUE on the command line   (OPTW_CMDLINE)
 *   NAME = VALUE under [leifs] in the config file, git-config syntax,
 *     "refresh-all" read as "refresh_all" (OPTW_CONFIG)
 *   a view's own .config (OPTW_VIEW: settings.c reads those; the mount's
 *     value is the default a view starts from)
 * The command-line parser (libfuse's fuse_opt table), the config keys, the
 * defaults and the --help text are all built from it, as git's
 * parse-options builds usage_with_options() from its struct option[].
 * The command line wins over the config file, which wins over the
 * defaults.  Besides the table, the config file's http.proxy (git's key)
 * is read as proxy.
 *
 * Startup only: main() calls these once, before mounting, on one thread.
 * Errors: 0 or a positive errno, with one line on stderr said by the caller
 * or (options_load_config) here, since main() exits on them.
 */
#ifndef LEIFS_OPTIONS_H
#define LEIFS_OPTIONS_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include <fuse_opt.h>    /* struct fuse_args */

#define LEIFS_DEFAULT_SOURCE "https://lore.kernel.org/all/"

/* a long option not given: filled from the config file, then the default */
#define OPT_UNSET LONG_MIN

/* what the options say; options_init() marks everything unset */
struct opts {
	char *cache;
	long refresh, timeout, first_wait, margin, refresh_all, empty_confirm, series_refetch;
	long low_speed, deadline, backoff_max;
	long max_refreshes, host_refreshes;
	long max_message;
	long map_size;          /* MiB */
	char *cafile;
	char *proxy;
	char *config;
	char *threads, *dedupe, *flags; /* view settings' defaults (settings.h) */
	long limit;
	int insecure;           /* -1: not given; else 0 or 1 */
	int index_remote;       /* -1: not given; else what -o gave (0 or 1 expected) */
	int series_fetch;       /* likewise */
	int show_help, show_version;
	char **sources;         /* absolute paths or URLs; owned */
	int nsources;
	char **imaps;           /* IMAP folder URLs (imap=); owned */
	int nimaps;
	char **maintainers;     /* MAINTAINERS files (maintainers=), absolute;
				 * owned */
	int nmaintainers;
};

enum opt_type {
	OPTT_LONG,      /* -o name=N; a git-config integer (k/m/g) in the file */
	OPTT_STRING,    /* -o name=TEXT */
	OPTT_PATH,      /* -o name=PATH; ~/ expanded in the file, never empty */
	OPTT_SETTING,   /* -o name=VALUE, a view setting checked by settings_set */
	OPTT_FLAG,      /* -o name (sets 1); a git-config bool in the file */
	OPTT_BOOL,      /* -o name=0|1; a git-config bool in the file */
	OPTT_SOURCE,    /* -o source=URL|PATH, repeated; made absolute */
	OPTT_IMAP,      /* -o imap=URL, repeated: the IMAP folders of views */
	OPTT_MAINT,     /* -o maintainers=FILE, repeated; made absolute */
	OPTT_FUSE,      /* libfuse's own (allow_other): listed in --help only */
};

#define OPTW_CMDLINE 1u
#define OPTW_CONFIG  2u
#define OPTW_VIEW    4u

struct opt_spec {
	const char *name;
	enum opt_type type;
	size_t off;             /* the field of struct opts; 0 for SOURCE,
				 * IMAP, FUSE */
	unsigned where;         /* OPTW_* */
	long def;               /* LONG, FLAG, BOOL: the default */
	const char *arg;        /* --help: "SECONDS" in "-o refresh=SECONDS" */
	const char *help;       /* --help: what it does, one sentence */
	const char *shown;      /* --help: the default as shown; NULL: `def`
				 * (LONG, BOOL) or nothing (the rest) */
};

/* Every option; ends with a NULL name. */
extern const struct opt_spec options[];

/* Everything unset. */
void options_init(struct opts *o);
/* The command line into `o` (libfuse's own options stay in `args`);
 * -1 when libfuse refused it (it said why on stderr). */
int options_parse(struct fuse_args *args, struct opts *o);
/* The config file (o->config, or $XDG_CONFIG_HOME/leifs/config when it
 * exists) under what the command line gave, then the defaults.  EINVAL
 * (or another errno) after one line on stderr. */
int options_load_config(struct opts *o);
/* The --help text, from the table. */
void options_usage(FILE *f);
/* $VAR/leifs LEAF, or ~/FALLBACK/leifs LEAF; malloc'd, NULL without HOME. */
char *options_xdg_path(const char *var, const char *fallback, const char *leaf);
void options_free(struct opts *o);

#endif
