/*
 * config: git-config files, the syntax lei and public-inbox use for theirs.
 * Parsed by hand: none of our libraries reads this format and git itself
 * is not a dependency.  Supported as git does: [section] and
 * [section "subsection"] headers, `key = value`, a bare `key` (true),
 * comments from '#' or ';' outside quotes, "quoted" parts, the escapes
 * \\ \" \n \t \b, and a backslash ending a line to continue it.  Section
 * and key names are case-insensitive (stored lowercased); subsections are
 * not.  Not supported: [include], [includeIf] (refused, not ignored).
 *
 * Errors: 0 or a positive errno; EINVAL with "line N: reason" in `why`.
 */
#ifndef LEIFS_CONFIG_H
#define LEIFS_CONFIG_H

#include <stddef.h>

struct config_item {
	char *key;      /* "section.name" or "section.subsection.name" */
	char *value;    /* NULL for a bare key */
	int line;
};

typedef struct config {
	struct config_item *items;  /* in file order; owned */
	size_t n;
} config_t;

int config_parse(const char *text, size_t len, config_t *out, char *why, size_t whylen);
/* ENOENT when the file does not exist (not an error for callers that
 * have defaults); files larger than 1 MiB are refused with EFBIG. */
int config_read_file(const char *path, config_t *out, char *why, size_t whylen);
void config_free(config_t *c);

/* The last value of `key` (as git does, the last one wins); NULL if none.
 * *found tells a bare key (value NULL, found 1) from an absent one. */
const char *config_get(const config_t *c, const char *key, int *found);

/* git's bool: true/yes/on/1 and false/no/off/0/"" (a bare key is true). */
int config_bool(const char *v, int *out);
/* An integer, with git's k/m/g suffixes; EINVAL or ERANGE. */
int config_long(const char *v, long *out);

#endif
