/*
 * The part of `git mailinfo --encoding=UTF-8 --scissors` (git 2.39's
 * mailinfo.c) that b4 0.12 runs on each patch: in-body headers, scissors,
 * the patch break, the subject's cleanup, and Python's rewriting of the
 * Date and From b4 gives it.  Written here rather than run: a fork per
 * patch would cost seconds on a list's worth of series.
 */
#include <ctype.h>
#include <gmime/gmime.h>
#include <stdlib.h>
#include <string.h>

#include "cache/series-private.h"

/* git mailinfo's cleanup_subject and cleanup_space */
static char *cleanup_subject(const char *subject)
{
	GString *s = g_string_new(subject);
	size_t at = 0;

	while (at < s->len) {
		char c = s->str[at];

		if ((c == 'r' || c == 'R') && s->len > at + 3 &&
		    (s->str[at + 1] == 'e' || s->str[at + 1] == 'E') && s->str[at + 2] == ':') {
			g_string_erase(s, (gssize)at, 3);
			continue;
		}
		if (c == ' ' || c == '\t' || c == ':') {
			g_string_erase(s, (gssize)at, 1);
			continue;
		}
		if (c == '[') {
			const char *pos = strchr(s->str + at, ']');

			if (pos) {
				g_string_erase(s, (gssize)at, (gssize)(pos - (s->str + at) + 1));
				continue;
			}
		}
		break;
	}
	/* then cleanup_space: a run of white space is one space */
	for (at = 0; at < s->len; at++)
		if (isspace((unsigned char)s->str[at])) {
			size_t run = 0;

			s->str[at] = ' ';
			while (at + 1 + run < s->len && isspace((unsigned char)s->str[at + 1 + run]))
				run++;
			g_string_erase(s, (gssize)at + 1, (gssize)run);
		}
	return g_strstrip(g_string_free(s, FALSE));
}

/* git mailinfo's is_scissors_line */
static int is_scissors(const char *line)
{
	const char *c, *first = NULL, *last = NULL;
	int scissors = 0, gap = 0, perforation = 0, in_perforation = 0;
	long visible;

	for (c = line; *c; c++) {
		if (isspace((unsigned char)*c)) {
			if (in_perforation) {
				perforation++;
				gap++;
			}
			continue;
		}
		last = c;
		if (!first)
			first = c;
		if (*c == '-') {
			in_perforation = 1;
			perforation++;
			continue;
		}
		if (!strncmp(c, ">8", 2) || !strncmp(c, "8<", 2) || !strncmp(c, ">%", 2) ||
		    !strncmp(c, "%<", 2)) {
			in_perforation = 1;
			perforation += 2;
			scissors += 2;
			c++;
			continue;
		}
		in_perforation = 0;
	}
	if (!first)
		return 0;
	visible = last - first + 1;
	return scissors && 8 <= visible && visible < perforation * 3 && gap * 2 < perforation;
}

/* in-body "From:", "Subject:", "Date:" at the top of a body (mailinfo's
 * check_inbody_header, for the headers b4's patches carry) */
static int inbody_header(const char *line, const char **name)
{
	static const char *const hs[] = { "From", "Subject", "Date" };
	size_t i, n;

	for (i = 0; i < 3; i++) {
		n = strlen(hs[i]);
		if (!g_ascii_strncasecmp(line, hs[i], n) && line[n] == ':') {
			*name = hs[i];
			return 1;
		}
	}
	return 0;
}

/* mailinfo's patchbreak */
static int patchbreak(const char *line)
{
	size_t i, len = strlen(line);

	if (!strncmp(line, "diff -", 6) || !strncmp(line, "Index: ", 7))
		return 1;
	if (len < 3 || strncmp(line, "---", 3))
		return 0;
	if (len == 3)
		return 1;       /* "---\n" */
	if (line[3] == ' ' && len > 4 && !isspace((unsigned char)line[4]))
		return 1;
	for (i = 3; i < len; i++)
		if (!isspace((unsigned char)line[i]))
			return 0;
	return 1;
}

/* Python's email.utils writes a zone it does not know (none, "-0000",
 * a name outside RFC 2822's list) as "-0000": b4's am message has it so */
static int zone_unknown(const char *v)
{
	static const char *const known[] = { "UT", "UTC", "GMT", "Z", "AST", "ADT", "EST",
					     "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT" };
	const char *end = v + strlen(v), *tok;
	size_t i, len;

	while (end > v && g_ascii_isspace(end[-1]))
		end--;
	if (end > v && end[-1] == ')') {         /* a trailing comment: "(IST)" */
		while (end > v && end[-1] != '(')
			end--;
		if (end > v)
			end--;
		while (end > v && g_ascii_isspace(end[-1]))
			end--;
	}
	for (tok = end; tok > v && !g_ascii_isspace(tok[-1]); tok--)
		;
	len = (size_t)(end - tok);
	if (len == 5 && (*tok == '+' || *tok == '-') && g_ascii_isdigit(tok[1]))
		return !strncmp(tok, "-0000", 5);
	for (i = 0; i < G_N_ELEMENTS(known); i++)
		if (strlen(known[i]) == len && !g_ascii_strncasecmp(tok, known[i], len))
			return 0;
	return 1;
}

/* mailinfo's Date: the date as RFC 2822 writes it, in its own zone
 * ("Wed, 05 Jun 2019 15:26:13 +0300"); as it is when it does not parse */
static char *rfc2822_date(const char *v)
{
	static const char *const wd[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };
	static const char *const mo[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul",
					  "Aug", "Sep", "Oct", "Nov", "Dec" };
	GDateTime *dt = v && *v ? g_mime_utils_header_decode_date(v) : NULL;
	GTimeSpan off;
	char *s;
	long mins;

	if (!dt)
		return g_strdup(v ? v : "");
	off = g_date_time_get_utc_offset(dt);
	mins = (long)(off / G_TIME_SPAN_MINUTE);
	s = g_strdup_printf("%s, %02d %s %d %02d:%02d:%02d %c%02ld%02ld",
			    wd[g_date_time_get_day_of_week(dt) - 1], g_date_time_get_day_of_month(dt),
			    mo[g_date_time_get_month(dt) - 1], g_date_time_get_year(dt),
			    g_date_time_get_hour(dt), g_date_time_get_minute(dt),
			    g_date_time_get_second(dt), mins < 0 || zone_unknown(v) ? '-' : '+',
			    labs(mins) / 60,
			    labs(mins) % 60);
	g_date_time_unref(dt);
	return s;
}

/* the part of `git mailinfo --encoding=UTF-8 --scissors` b4's am reads:
 * Author, Email, Subject, Date, and the message and patch of the body */
void mailinfo(const struct lmsg *m, const char *body, struct mailinfo *mi)
{
	char **lines = g_strsplit(body, "\n", -1), *from, *subj;
	int i, header_stage = 1, in_patch = 0;
	char *ib_from = NULL, *ib_subject = NULL, *ib_date = NULL;

	mi->msg = g_string_new(NULL);
	mi->patch = g_string_new(NULL);
	/* handle_commit_msg, line by line */
	for (i = 0; lines[i]; i++) {
		char *line = lines[i];
		const char *hn;
		size_t l = strlen(line);

		if (!lines[i + 1] && !l)
			break;  /* the split's empty tail */
		if (in_patch) {
			g_string_append_printf(mi->patch, "%s\n", line);
			continue;
		}
		if (header_stage && !l) {
			if (ib_from || ib_subject || ib_date)
				header_stage = 0;
			continue;
		}
		if (header_stage && inbody_header(line, &hn)) {
			char *v = g_strstrip(g_strdup(line + strlen(hn) + 1));
			char **slot = !strcmp(hn, "From") ? &ib_from :
				      !strcmp(hn, "Subject") ? &ib_subject : &ib_date;

			if (!*slot) {
				*slot = v;
				continue;
			}
			g_free(v);
		}
		header_stage = 0;
		if (is_scissors(line)) {
			/* what came before the scissors is not the message */
			g_string_truncate(mi->msg, 0);
			g_free(ib_from);
			g_free(ib_subject);
			g_free(ib_date);
			ib_from = ib_subject = ib_date = NULL;
			header_stage = 1;
			continue;
		}
		if (patchbreak(line)) {
			in_patch = 1;
			g_string_append_printf(mi->patch, "%s\n", line);
			continue;
		}
		g_string_append_printf(mi->msg, "%s\n", line);
	}
	g_strfreev(lines);
	/* handle_info: in-body headers count only with a patch ("---" on):
	 * a cover letter keeps its mail's From, Subject and Date */
	if (!mi->patch->len) {
		g_free(ib_from);
		g_free(ib_subject);
		g_free(ib_date);
		ib_from = ib_subject = ib_date = NULL;
	}
	from = ib_from ? ib_from : g_mime_utils_header_decode_text(NULL, m->from_hdr);
	{
		char *n = NULL, *e = NULL;

		parseaddr(from, &n, &e);
		/* get_sane_name: no name, or one that is no name, is the address */
		if (!*n || strlen(n) > 60 || strpbrk(n, "@<>")) {
			g_free(n);
			n = g_strdup(e);
		}
		mi->author = n;
		mi->email = e;
	}
	if (from != ib_from)
		g_free(from);
	subj = ib_subject ? ib_subject : g_mime_utils_header_decode_text(NULL, m->subject_hdr);
	mi->subject = cleanup_subject(subj);
	g_free(subj);
	mi->date = rfc2822_date(ib_date ? ib_date : m->date_hdr);
	g_free(ib_date);
	g_free(ib_from);
}

void mailinfo_clear(struct mailinfo *mi)
{
	g_free(mi->author);
	g_free(mi->email);
	g_free(mi->subject);
	g_free(mi->date);
	g_string_free(mi->msg, TRUE);
	g_string_free(mi->patch, TRUE);
}
