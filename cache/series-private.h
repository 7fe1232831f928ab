/*
 * What series.c (b4's LoreMailbox and LoreSeries: a thread into series,
 * am.mbx) and series-mail.c (b4's LoreMessage, LoreSubject, LoreTrailer
 * and the part of `git mailinfo` b4 runs) share.  The names follow b4's
 * (b4/__init__.py of 0.12), so that each rule can be checked against the
 * line it copies.  Python's regular expressions are GLib's (PCRE, with
 * (*UCP) where Python's \w is Unicode's).
 */
#ifndef LEIFS_SERIES_PRIVATE_H
#define LEIFS_SERIES_PRIVATE_H

#include <glib.h>
#include <stdint.h>

#include "cache/series.h"

/* LoreTrailer */
struct trailer {
	char *name, *lname, *value, *extinfo;   /* extinfo NULL: none */
	int person;             /* type "person": value holds an address */
	char *addr_name, *addr_email;   /* parseaddr of a person's value */
	struct lmsg *from;      /* the follow-up it came in, NULL: none */
};

/* LoreSubject */
struct lsubject {
	char *full_subject, *subject;
	int reply, resend, patch, rfc;
	int revision, counter, expected;
	int revision_inferred, counters_inferred;
	GPtrArray *prefixes;    /* of char * */
};

/* LoreMessage */
struct lmsg {
	const char *raw;
	size_t len;
	char *msgid;            /* NULL: none */
	char *in_reply_to;      /* NULL: none */
	char *references;       /* the References header as it is, "" when none */
	struct lsubject ls;
	int reply, revision, counter, expected, revision_inferred, counters_inferred;
	int reroll_from_revision;
	char *fromname, *fromemail;     /* "" when none */
	char *from_hdr, *date_hdr, *subject_hdr;        /* raw, unfolded */
	int64_t date;           /* unix time */
	char datestamp[9];      /* YYYYMMDD in the sender's zone (b4's slug) */
	char *body;             /* the first text/plain (or diff) part, UTF-8; NULL: none */
	int has_diff, has_diffstat;
	char *pwhash;           /* patchwork's hash of the diff, NULL: none */
	GPtrArray *trailers;    /* of struct trailer *: a follow-up's */
	GPtrArray *followup_trailers;   /* of struct trailer * (not owned) */
};

struct lmsg *lmsg_new(const char *raw, size_t len);
void lmsg_free(struct lmsg *m);
void lsubject_parse(struct lsubject *s, const char *subject);
void lsubject_clear(struct lsubject *s);

struct trailer *trailer_new(const char *name, const char *value, const char *extinfo);
void trailer_free(struct trailer *t);
int trailer_eq(const struct trailer *a, const struct trailer *b);
/* as_string(omit_extinfo) into s */
void trailer_append(GString *s, const struct trailer *t, int omit_extinfo);
/* find_trailers: trailers (owned by the caller) and other lines */
void find_trailers(const char *body, int followup, GPtrArray *trailers, GPtrArray *others);
/* get_trailers: those a follow-up's sender may give; mismatches into
 * `mism` (not owned), when not NULL */
void lmsg_get_trailers(struct lmsg *m, GPtrArray *out, GPtrArray *mism);

/* mailinfo.c: what `git mailinfo --encoding=UTF-8 --scissors` gives for
 * m with body `body`: Author, Email, Subject, Date (as b4's Python writes
 * them), and the body's message and patch */
struct mailinfo {
	char *author, *email, *subject, *date;
	GString *msg, *patch;
};
void mailinfo(const struct lmsg *m, const char *body, struct mailinfo *mi);
void mailinfo_clear(struct mailinfo *mi);

/* LoreMessage.get_am_message: the patch as b4 writes it into am.mbx
 * (with the trailers when add_trailers), appended to out; how many
 * trailers it added */
unsigned lmsg_am_message(struct lmsg *m, int add_trailers, GString *out);
/* get_am_subject(indicate_reroll=False) of m with subject `use` */
char *lmsg_am_subject(const struct lmsg *m, const char *use);

/* re.search(pattern, s, flags) of Python, with GLib's PCRE; re_group: a
 * copy of group g of the first match (NULL: none); re_sub: re.sub */
int re_search(const char *pattern, const char *s, GRegexCompileFlags flags);
char *re_group(const char *pattern, const char *s, GRegexCompileFlags flags, int g);
char *re_sub(const char *pattern, const char *repl, const char *s, GRegexCompileFlags flags);
/* email.utils.parseaddr: the first mailbox's name and address (g_malloc'd,
 * "" when none) */
void parseaddr(const char *v, char **name, char **email);

#endif
