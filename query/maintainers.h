/*
 * maintainers: the kernel's MAINTAINERS file read as searches.  A
 * section's F: X: N: K: L: lines become the query a lore user writes by
 * hand for it (the rules are maint_derive's, below).
 *
 * Parsing: a section is a title line (not blank, not indented, not of the
 * "L:" form) followed at once by one or more field lines "L:value" (a
 * capital letter and a colon, as get_maintainer.pl reads them); a blank
 * line or the next title ends it.  So the preamble (indented text,
 * underlines) makes no section, as in the kernel's own scripts.  CR before
 * LF is taken off.  The file is text: a NUL byte, or a line of more than
 * MAINT_LINE_MAX bytes, refuses it whole (EINVAL, why).  What cannot be
 * followed is said in `problems`: a title seen twice (the first section is
 * used), one no directory can be named for, a line between sections that
 * has no field under it (a typo, a blank line after a title).  Lookups by
 * title and the count of sections naming each list are hash tables: a
 * file costs time linear in its size.
 *
 * Pure (no I/O, no globals), safe from any thread; errors are 0 or a
 * positive errno.
 */
#ifndef LEIFS_MAINTAINERS_H
#define LEIFS_MAINTAINERS_H

#include <stddef.h>

#define MAINT_LINE_MAX 4096
/* a list more sections than this name (linux-kernel@vger.kernel.org,
 * netdev, linux-arm-kernel) is an umbrella: what it carries is not all
 * one section's, so its mail is not the section's */
#define MAINT_UMBRELLA 30
/* the most searches one section's query is sent as */
#define MAINT_PARTS_MAX 64

struct maint_section {
	char *title;
	size_t line;            /* its line in the file, from 1 */
	char **fields;          /* "F:drivers/rtc/": letter, ':', value trimmed */
	size_t nfields;
};

struct maint_file {
	struct maint_section *s;        /* in file order */
	size_t n;
	char *problems;         /* a line each ("line N: ..."), "" when none */
	void *titles;           /* title -> index + 1 (a GHashTable) */
	void *lists;            /* a list's address, lowercase -> sections */
};

int maint_parse(const char *text, size_t len, struct maint_file *out, char *why, size_t whylen);
void maint_free(struct maint_file *f);
/* The section titled `title` (exactly), or NULL. */
const struct maint_section *maint_find(const struct maint_file *f, const char *title);

/*
 * Derivation, as an experienced lore user writes the search:
 *   F: drivers/rtc/        dfn:drivers/rtc/ and a star (a directory: all
 *                          under it); F: include/linux/rtc.h, the file
 *   F: a glob              public-inbox indexes a file name as a phrase of
 *                          words and takes a wildcard only on a word of its
 *                          own: the whole words between the wildcards as
 *                          phrases, a word a wildcard ends as WORD*, ANDed
 *                          (drivers/rtc/rtc-ds* is (dfn:drivers/rtc/rtc
 *                          AND dfn:ds*)), noted: wider than the glob
 *   X: (the same)          AND NOT of those, applied to the F: N: K: terms;
 *                          an X: glob is left out (a wider exclusion would
 *                          drop the section's mail)
 *   N: a plain word        dfn:WORD* (a file name holding a word so begun);
 *                          \b ^ $ and a leading [^a-z] are taken off first
 *   K: a plain word        (dfa:WORD OR dfb:WORD): a patch's removed or
 *                          added lines
 *   L: list@host           l:list.host OR tc:list@host (what the list sent
 *                          out, by its List-Id, and what was sent to it);
 *                          an umbrella list (MAINT_UMBRELLA) is left out
 * joined: ((F OR N OR K) AND NOT (X)) OR L.  What cannot be searched (a
 * regular expression, a path holding a quote) is noted and left out.
 * Paths holding other than letters, digits and "_ . / -" are quoted; N:
 * and K: words are lowercased (the index's terms are; AND is an operator).
 */
struct maint_query {
	char *query;            /* the whole search */
	char **parts;           /* the same, as searches of at most part_max
				 * bytes each whose answers joined are its
				 * answer (one, the query, when it fits) */
	char **safe;            /* each part without a word wildcard (WORD*
				 * as WORD, a wildcard ANDed to a phrase
				 * dropped): for a server that refuses a
				 * wildcard over its expansion limit */
	size_t nparts;
	char *notes;            /* a line each: what was widened or left out */
};

/* EINVAL (why) when nothing of the section can be searched, when its X:
 * terms alone do not fit in part_max, or when it would take more than
 * MAINT_PARTS_MAX searches.  f (may be NULL) tells umbrella lists. */
int maint_derive(const struct maint_file *f, const struct maint_section *s, size_t part_max,
		 struct maint_query *out, char *why, size_t whylen);
void maint_query_free(struct maint_query *q);

#endif
