/*
 * A thread into series (series.h), as b4 0.12's `b4 am -m MBOX -v N MSGID`
 * reads it: LoreMailbox.add_message and get_series (trailers of
 * follow-ups, the cover letter found), LoreSeries.add_patch, get_slug and
 * get_am_ready, and make_am's cover, base-commit and warnings.  Messages
 * are taken in date order (b4 takes them in the order of its mailbox; an
 * mbox written in date order gives the same).  A partial reroll is
 * reconstituted from the revision before, as b4 does unless
 * --no-partial-reroll, with a warning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"
#include "cache/series-private.h"

/* ---- LoreMailbox, LoreSeries ---- */

struct lseries {
	int revision, expected;
	GPtrArray *patches;     /* of struct lmsg * (not owned), [0]: the cover */
	int complete, has_cover;
	GString *rerolled;      /* the numbers taken from the revision before */
	int rerolled_from, rerolled_cover;
	char *base_commit, *change_id, *subject;
	GPtrArray *mismatches;  /* of struct trailer * (not owned) */
	GString *warnings;
};

struct mailbox {
	GHashTable *msgid_map;  /* msgid -> struct lmsg * */
	GHashTable *series;     /* revision -> struct lseries * */
	GHashTable *covers;     /* revision -> struct lmsg * */
	GPtrArray *followups;
	GPtrArray *clones;      /* of struct lmsg *: a partial reroll's copies */
	GHashTable *trailer_map;        /* pwhash -> GPtrArray of struct trailer * */
	const struct series_limits *lim;
	GString *warnings;      /* of the whole thread */
};

static void lseries_free(struct lseries *s)
{
	g_ptr_array_free(s->patches, TRUE);
	g_free(s->base_commit);
	g_free(s->change_id);
	g_free(s->subject);
	g_ptr_array_free(s->mismatches, TRUE);
	g_string_free(s->warnings, TRUE);
	g_string_free(s->rerolled, TRUE);
	g_free(s);
}

static struct lseries *lseries_new(int revision, int expected)
{
	struct lseries *s = g_new0(struct lseries, 1);

	s->revision = revision;
	s->expected = expected;
	s->patches = g_ptr_array_new();
	g_ptr_array_set_size(s->patches, expected + 1);
	s->subject = g_strdup("(untitled)");
	s->mismatches = g_ptr_array_new();
	s->warnings = g_string_new(NULL);
	s->rerolled = g_string_new(NULL);
	return s;
}

static struct lmsg *patch_at(struct lseries *s, int i)
{
	return i >= 0 && (guint)i < s->patches->len ? s->patches->pdata[i] : NULL;
}

static void add_patch(struct lseries *s, struct lmsg *m)
{
	struct lmsg *o;
	guint i;

	if (m->expected + 1 > (int)s->patches->len)
		g_ptr_array_set_size(s->patches, m->expected + 1);
	s->expected = m->expected;
	if ((o = patch_at(s, m->counter))) {
		if (o->reply || (o->counters_inferred && !m->counters_inferred))
			s->patches->pdata[m->counter] = m;
		else if (o != m)
			g_string_append_printf(s->warnings,
					       "warning: two different messages are patch %d/%d; "
					       "the first (<%s>) is used\n", m->counter, m->expected,
					       o->msgid ? o->msgid : "");
	} else {
		s->patches->pdata[m->counter] = m;
	}
	s->complete = 1;
	for (i = 1; i < s->patches->len; i++)
		if (!s->patches->pdata[i])
			s->complete = 0;
	if (m->counter == 0 && m->body) {
		if (strstr(m->body, "\nbase-commit:")) {
			g_free(s->base_commit);
			s->base_commit = re_group("^base-commit: .*?([\\da-f]+)", m->body,
						  G_REGEX_CASELESS | G_REGEX_MULTILINE, 1);
		}
		if (strstr(m->body, "\nchange-id:")) {
			g_free(s->change_id);
			s->change_id = re_group("^change-id:\\s+(\\S+)", m->body,
						G_REGEX_CASELESS | G_REGEX_MULTILINE, 1);
		}
	}
	if (patch_at(s, 0)) {
		g_free(s->subject);
		s->subject = g_strdup(patch_at(s, 0)->ls.subject);
	} else if (patch_at(s, 1)) {
		g_free(s->subject);
		s->subject = g_strdup(patch_at(s, 1)->ls.subject);
	}
}

static struct lmsg *by_msgid(struct mailbox *b, const char *id)
{
	return id ? g_hash_table_lookup(b->msgid_map, id) : NULL;
}

static void add_message(struct mailbox *b, struct lmsg *m)
{
	struct lseries *s;

	if (m->msgid && g_hash_table_contains(b->msgid_map, m->msgid))
		return;
	if (m->msgid)
		g_hash_table_insert(b->msgid_map, m->msgid, m);
	if (m->reply) {
		/* "[PATCH 3/5]" with no diff, in reply and with a trailer: b4
		 * takes it for a follow-up; say so */
		if (!m->ls.reply && m->ls.patch && m->counter > 0 && !m->counters_inferred &&
		    !m->has_diff)
			g_string_append_printf(b->warnings, "warning: patch %d/%d (<%s>) has no diff: "
					       "taken as a reply\n", m->counter, m->expected,
					       m->msgid ? m->msgid : "");
		g_ptr_array_add(b->followups, m);
		return;
	}
	if (m->counter > (int)b->lim->max_patches || m->expected > (int)b->lim->max_patches) {
		g_string_append_printf(b->warnings, "warning: patch %d/%d is past the %zu patches "
				       "a series may have here: left out\n", m->counter, m->expected,
				       b->lim->max_patches);
		return;
	}
	if (m->counter == 0 && (!m->counters_inferred || m->has_diffstat)) {
		g_hash_table_insert(b->covers, GINT_TO_POINTER(m->revision), m);
		return;
	}
	if (!m->has_diff) {
		if (m->ls.patch && !m->counters_inferred)
			g_string_append_printf(b->warnings, "warning: patch %d/%d (<%s>) has no diff\n",
					       m->counter, m->expected, m->msgid ? m->msgid : "");
		return;         /* an unknown */
	}
	if (!g_hash_table_contains(b->series, GINT_TO_POINTER(m->revision)) &&
	    m->revision_inferred && m->in_reply_to) {
		struct lmsg *irt = by_msgid(b, m->in_reply_to);

		if (irt && irt->has_diffstat && !irt->has_diff)
			m->revision = irt->revision;
		else if (m->counter > 0 && irt && irt->has_diff && irt->counter == 1)
			m->revision = irt->revision;
	}
	if (!(s = g_hash_table_lookup(b->series, GINT_TO_POINTER(m->revision)))) {
		s = lseries_new(m->revision, m->expected);
		g_hash_table_insert(b->series, GINT_TO_POINTER(m->revision), s);
	}
	/* a new revision from an author who did not number it */
	if (m->counter == 1 && m->counters_inferred && !m->reply && m->ls.patch && !m->ls.resend) {
		struct lmsg *o = patch_at(s, m->counter);

		if (o && o->counters_inferred && !strcmp(m->fromemail, o->fromemail) &&
		    o->date < m->date) {
			m->revision = (int)g_hash_table_size(b->series) + 1;
			s = lseries_new(m->revision, m->expected);
			g_hash_table_insert(b->series, GINT_TO_POINTER(m->revision), s);
		}
	}
	add_patch(s, m);
}

static void mailbox_free(struct mailbox *b)
{
	guint i;

	g_hash_table_destroy(b->msgid_map);
	g_hash_table_destroy(b->series);
	g_hash_table_destroy(b->covers);
	g_ptr_array_free(b->followups, TRUE);
	for (i = 0; i < b->clones->len; i++) {
		struct lmsg *c = b->clones->pdata[i];

		g_ptr_array_free(c->followup_trailers, TRUE);
		g_free(c);
	}
	g_ptr_array_free(b->clones, TRUE);
	g_hash_table_destroy(b->trailer_map);
	g_string_free(b->warnings, TRUE);
}

static void mailbox_init(struct mailbox *b, const struct series_limits *lim)
{
	b->msgid_map = g_hash_table_new(g_str_hash, g_str_equal);
	b->series = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
					  (GDestroyNotify)lseries_free);
	b->covers = g_hash_table_new(g_direct_hash, g_direct_equal);
	b->followups = g_ptr_array_new();
	b->clones = g_ptr_array_new();
	b->trailer_map = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
					       (GDestroyNotify)g_ptr_array_unref);
	b->lim = lim;
	b->warnings = g_string_new(NULL);
}

/* followup trailers a message collects, at most (b4: no bound); what a
 * chain of replies each quoting the last would pile up past this is
 * dropped (a review thread gives tens) */
#define TRAILERS_MAX 1000
/* replies walked up from a follow-up to its patch, at most */
#define WALK_MAX 100

static void add_trailers(GPtrArray *to, GPtrArray *from)
{
	guint i;

	for (i = 0; i < from->len && to->len < TRAILERS_MAX; i++)
		g_ptr_array_add(to, from->pdata[i]);
}

/* revisions a partial reroll reaches down, at most (b4: all, one call
 * deeper each, every one reading the follow-ups again: a hostile thread of
 * a thousand chained revisions would cost that many times its replies) */
#define REROLL_DEPTH 8

static struct lseries *get_series(struct mailbox *b, int revision, int depth);

/* deepcopy of a patch for another revision: its own revision and list of
 * trailers, the rest shared with the original (which outlives it: both
 * go with the mailbox) */
static struct lmsg *clone_patch(struct mailbox *b, const struct lmsg *p, int revision, int from)
{
	struct lmsg *c = g_memdup2(p, sizeof(*p));

	c->followup_trailers = g_ptr_array_new();
	add_trailers(c->followup_trailers, p->followup_trailers);
	c->revision = revision;
	c->reroll_from_revision = from;
	g_ptr_array_add(b->clones, c);
	return c;
}

/* partial_reroll: a v(N) whose every patch replies (at some depth) to
 * v(N-1)'s patch of the same number gets v(N-1)'s patches where it has
 * none, as b4 am does unless --no-partial-reroll */
static void partial_reroll(struct mailbox *b, int revision, int depth)
{
	struct lseries *s = g_hash_table_lookup(b->series, GINT_TO_POINTER(revision)), *ps;
	guint at;

	if (revision <= 1 || !g_hash_table_contains(b->series, GINT_TO_POINTER(revision - 1)))
		return;
	for (at = 0; at < s->patches->len; at++) {
		struct lmsg *p = s->patches->pdata[at], *pp;
		int walk, found = 0;

		if (!p)
			continue;
		if (!(pp = by_msgid(b, p->in_reply_to)))
			return;
		/* up the replies (b4: with no bound; a loop stops here) */
		for (walk = 0; walk < WALK_MAX; walk++) {
			if (p->counter == pp->counter && p->expected == pp->expected) {
				found = 1;
				break;
			}
			if (!(pp = by_msgid(b, pp->in_reply_to)))
				break;
		}
		if (!found)
			return;
	}
	/* b4 makes v(N-1) first; its trailers, read again for v(N), are
	 * the same once deduplicated, so a thread that is no partial reroll
	 * is spared it */
	if (!(ps = get_series(b, revision - 1, depth + 1)))
		return;
	for (at = 0; at < s->patches->len; at++) {
		struct lmsg *p = s->patches->pdata[at], *pp;

		/* b4 fails on a revision with more patches than the one
		 * before (an IndexError); the sane check makes it rare */
		if (at >= ps->patches->len)
			break;
		if (!(pp = ps->patches->pdata[at]))
			continue;
		if (p) {
			p->reroll_from_revision = s->revision;
			continue;
		}
		s->patches->pdata[at] = clone_patch(b, pp, s->revision, ps->revision);
		s->rerolled_from = ps->revision;
		if (at)
			g_string_append_printf(s->rerolled, s->rerolled->len ? " %u" : "%u", at);
		else
			s->rerolled_cover = 1;
	}
	for (at = 1; at < s->patches->len && s->patches->pdata[at]; at++)
		;
	if (at == s->patches->len) {
		s->complete = 1;
		if (s->patches->pdata[0])
			s->has_cover = 1;
		g_free(s->subject);
		s->subject = g_strdup(ps->subject);
	}
}

/* get_series(revision): the cover found, follow-ups' trailers given; a
 * partial reroll reconstituted (depth: the revisions above it) */
static struct lseries *get_series(struct mailbox *b, int revision, int depth)
{
	struct lseries *s = g_hash_table_lookup(b->series, GINT_TO_POINTER(revision));
	struct lmsg *cover;
	guint i, j;

	if (!s)
		return NULL;
	for (i = 0; i < s->patches->len && !s->patches->pdata[i]; i++)
		;
	if (i == s->patches->len)
		return NULL;
	if (!s->complete && depth < REROLL_DEPTH)
		partial_reroll(b, revision, depth);
	if ((cover = g_hash_table_lookup(b->covers, GINT_TO_POINTER(revision)))) {
		add_patch(s, cover);
		s->has_cover = 1;
	} else {
		for (i = 0; i < s->patches->len; i++) {
			struct lmsg *p = s->patches->pdata[i], *pot;

			if (!p || !p->in_reply_to)
				continue;
			pot = by_msgid(b, p->in_reply_to);
			if (pot && pot->has_diffstat && !pot->has_diff) {
				s->patches->pdata[0] = pot;
				s->has_cover = 1;
				break;
			}
		}
	}
	for (i = 0; i < b->followups->len; i++) {
		struct lmsg *f = b->followups->pdata[i], *p = NULL;
		GPtrArray *tr, *mism;
		int depth;

		if (!f->trailers->len)
			continue;
		if (!f->in_reply_to) {
			char **refs = g_strsplit_set(f->references ? f->references : "", " \t\r\n",
						     -1);

			for (j = 0; refs[j] && !p; j++) {
				char *r = refs[j], *e;

				while (*r == '<' || *r == '>')
					r++;
				for (e = r + strlen(r); e > r && (e[-1] == '<' || e[-1] == '>'); e--)
					e[-1] = '\0';
				if (*r && (!f->msgid || strcmp(r, f->msgid)))
					p = by_msgid(b, r);
			}
			g_strfreev(refs);
			if (!p)
				continue;
		} else if (!(p = by_msgid(b, f->in_reply_to))) {
			continue;
		}
		tr = g_ptr_array_new();
		mism = g_ptr_array_new();
		lmsg_get_trailers(f, tr, mism);
		add_trailers(s->mismatches, mism);
		g_ptr_array_free(mism, TRUE);
		/* up through the replies to the patch: a loop of replies, or a
		 * chain deeper than any review, stops (b4 walks on forever) */
		for (depth = 0; depth < WALK_MAX; depth++) {
			if (p->has_diff && !p->reply) {
				if (p->revision != revision && p->pwhash) {
					GPtrArray *l = g_hash_table_lookup(b->trailer_map, p->pwhash);

					if (!l) {
						l = g_ptr_array_new();
						g_hash_table_insert(b->trailer_map, p->pwhash, l);
					}
					add_trailers(l, tr);
				}
				add_trailers(p->followup_trailers, tr);
				break;
			}
			if (!p->reply) {
				add_trailers(p->followup_trailers, tr);
				break;
			}
			if (p->in_reply_to && by_msgid(b, p->in_reply_to)) {
				for (j = 0; j < p->trailers->len && tr->len < TRAILERS_MAX; j++) {
					((struct trailer *)p->trailers->pdata[j])->from = p;
					g_ptr_array_add(tr, p->trailers->pdata[j]);
				}
				p = by_msgid(b, p->in_reply_to);
				continue;
			}
			break;
		}
		g_ptr_array_free(tr, TRUE);
	}
	/* trailers of an older revision's same patch carry over */
	for (i = 0; i < s->patches->len; i++) {
		struct lmsg *p = s->patches->pdata[i];
		GPtrArray *l;

		if (p && p->pwhash && (l = g_hash_table_lookup(b->trailer_map, p->pwhash)))
			add_trailers(p->followup_trailers, l);
	}
	return s;
}

/* get_slug(extended=True) */
static char *slug(struct lseries *s)
{
	struct lmsg *m = NULL;
	char *local, *unsafe, *sl, *lower, *out;
	const char *at, *end;
	guint i;

	for (i = 0; i < s->patches->len && !(m = s->patches->pdata[i]); i++)
		;
	if (!m)
		return g_strdup("undefined");
	{
		char *n = NULL, *e = NULL;

		parseaddr(m->from_hdr, &n, &e);
		at = strchr(e, '@');
		local = at ? g_strndup(e, (gsize)(at - e)) : g_strdup(e);
		g_free(n);
		g_free(e);
	}
	unsafe = g_strdup_printf("%s_%s_%s", m->datestamp, local, m->ls.subject);
	sl = re_sub("(*UCP)\\W+", "_", unsafe, 0);
	/* strip('_') */
	{
		char *p = sl, *q;

		while (*p == '_')
			p++;
		q = p + strlen(p);
		while (q > p && q[-1] == '_')
			*--q = '\0';
		lower = g_utf8_strdown(p, -1);
	}
	if (s->revision != 1)
		out = g_strdup_printf("v%d_%s", s->revision, lower);
	else
		out = g_strdup(lower);
	/* slug[:100]: code points */
	if (g_utf8_validate(out, -1, NULL) && g_utf8_strlen(out, -1) > 100) {
		end = g_utf8_offset_to_pointer(out, 100);
		out[end - out] = '\0';
	}
	/* and always a name a directory may have, whatever the regexes made
	 * of the input: no '/', no control byte, NAME_MAX bytes at most
	 * (100 code points of 4 bytes pass 255), whole characters */
	{
		char *q;

		for (q = out; *q; q++)
			if (*q == '/' || (unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '_';
		if (!g_utf8_validate(out, -1, NULL)) {
			char *v = g_utf8_make_valid(out, -1);

			g_free(out);
			out = v;
		}
		while (strlen(out) > 200) {
			end = g_utf8_find_prev_char(out, out + strlen(out));
			out[end ? end - out : 0] = '\0';
		}
		if (!*out || !strcmp(out, ".") || !strcmp(out, "..")) {
			g_free(out);
			out = g_strdup("untitled");
		}
	}
	g_free(local);
	g_free(unsafe);
	g_free(sl);
	g_free(lower);
	return out;
}

/* ---- series_thread ---- */

static void reset(struct lmsg *m)
{
	m->revision = m->ls.revision;
	m->reroll_from_revision = 0;
	g_ptr_array_set_size(m->followup_trailers, 0);
}

struct dated {
	struct lmsg *m;
	size_t i;
};

static int cmp_dated(const void *a, const void *b)
{
	const struct dated *x = a, *y = b;

	if (x->m->date != y->m->date)
		return x->m->date < y->m->date ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* whether t is not in said yet (trailer_eq's key); adds it */
static int say_once(GHashTable *said, const struct trailer *t)
{
	char *lv = g_utf8_strdown(t->value, -1);
	char *key = g_strconcat(t->lname, "\n", lv, NULL);

	g_free(lv);
	return g_hash_table_add(said, key);
}

static void trailer_line(GString *s, const char *what, const struct trailer *t)
{
	g_string_append_printf(s, "warning: %s", what);
	trailer_append(s, t, 1);
	g_string_append_c(s, '\n');
}

/* one revision, from a mailbox made anew (get_series adds to messages) */
static int render(struct lmsg **all, size_t n, const struct series_limits *lim, int revision,
		  int64_t newest, struct series_rev *r)
{
	struct mailbox b;
	struct lseries *s;
	GString *am = g_string_new(NULL), *info = g_string_new(NULL), *missing = g_string_new(NULL);
	struct lmsg *top = NULL;
	char *base = NULL;
	unsigned added = 0, have = 0, lacks = 0;
	GHashTableIter it;
	gpointer k, v;
	size_t i;
	guint j, q;

	for (i = 0; i < n; i++)
		reset(all[i]);
	mailbox_init(&b, lim);
	for (i = 0; i < n; i++)
		add_message(&b, all[i]);
	if (!(s = get_series(&b, revision, 0))) {
		mailbox_free(&b);
		g_string_free(am, TRUE);
		g_string_free(info, TRUE);
		g_string_free(missing, TRUE);
		return ENOENT;
	}
	for (j = 1; j < s->patches->len; j++) {
		struct lmsg *p = s->patches->pdata[j];

		if (!p) {
			g_string_append_printf(missing, missing->len ? " %u" : "%u", j);
			lacks++;
			continue;
		}
		have++;
		g_string_append(am, "From git@z Thu Jan  1 00:00:00 1970\n");
		added += lmsg_am_message(p, 1, am);
		if (p->ls.counter > p->ls.expected && !p->counters_inferred)
			g_string_append_printf(info, "warning: patch %d/%d is numbered past its "
					       "series' count\n", p->ls.counter, p->ls.expected);
	}
	for (j = 0; j < s->patches->len && !top; j++)
		top = s->patches->pdata[j];
	memset(r, 0, sizeof(*r));
	r->revision = revision;
	r->missing = lacks;
	r->name = slug(s);
	r->msgid = g_strdup(top && top->msgid ? top->msgid : "");
	/* the series' subject and change-id, for older:/newer:, from the cover
	 * b4 found even when it took it as a reply (a v2 cover sent in reply
	 * to v1's, with trailers) and so left them patch 1's */
	r->change_id = s->change_id ? g_strdup(s->change_id) : NULL;
	if (s->has_cover && s->patches->pdata[0]) {
		struct lmsg *c = s->patches->pdata[0];

		r->subject = g_strdup(c->ls.subject);
		if (!r->change_id && c->body)
			r->change_id = re_group("^change-id:\\s+(\\S+)", c->body,
						G_REGEX_CASELESS | G_REGEX_MULTILINE, 1);
	} else {
		r->subject = g_strdup(s->subject);
	}
	if (!r->change_id)
		r->change_id = g_strdup("");
	r->date = newest;
	r->amlen = am->len;
	r->am = g_string_free(am, FALSE);
	if (s->has_cover && s->patches->pdata[0]) {
		GString *c = g_string_new(NULL);

		lmsg_am_message(s->patches->pdata[0], 0, c);
		r->coverlen = c->len;
		r->cover = g_string_free(c, FALSE);
	}
	if (top && top->body) {
		base = re_group("base-commit: .*?([\\da-f]+)", top->body, G_REGEX_MULTILINE, 1);
		if (!base)
			base = re_group("based on .*?([\\da-f]{40})", top->body, G_REGEX_MULTILINE, 1);
	}
	{
		GString *own = g_string_new(NULL);

		g_string_append_printf(own, "message-id: <%s>\nrevision: %d\npatches: %u/%d\n",
				       r->msgid, revision, have, s->expected);
		if (missing->len)
			g_string_append_printf(own, "missing: %s\n", missing->str);
		g_string_append_printf(own, "trailers-added: %u\n", added);
		if (base)
			g_string_append_printf(own, "base-commit: %s\n", base);
		if (*r->change_id)
			g_string_append_printf(own, "change-id: %s\n", r->change_id);
		if (missing->len)
			g_string_append(own, "warning: thread incomplete: patches missing\n");
		if (s->rerolled->len || s->rerolled_cover)
			g_string_append_printf(own, "warning: v%d is a partial reroll: %s%s%s%s from v%d "
					       "(b4 am --no-partial-reroll leaves them out)\n",
					       revision, s->rerolled->len ? "patches " : "",
					       s->rerolled->str,
					       s->rerolled->len && s->rerolled_cover ? " and " : "",
					       s->rerolled_cover ? "the cover" : "", s->rerolled_from);
		g_string_append(own, b.warnings->str);
		g_string_append(own, s->warnings->str);
		g_string_append(own, info->str);
		if (s->has_cover && s->patches->pdata[0]) {
			struct lmsg *c = s->patches->pdata[0];
			GHashTable *said = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

			/* each once, as b4's note (a partial reroll's cover
			 * had its follow-ups read for two revisions) */
			for (j = 0; j < c->followup_trailers->len; j++)
				if (say_once(said, c->followup_trailers->pdata[j]))
					trailer_line(own, "trailer sent to the cover letter, not "
						     "applied (b4 am -t applies it): ",
						     c->followup_trailers->pdata[j]);
			g_hash_table_destroy(said);
		}
		for (j = 0; j < s->mismatches->len; j++) {
			struct trailer *t = s->mismatches->pdata[j];

			trailer_line(own, "trailer ignored, its sender is not its person: ", t);
		}
		/* trailers given to another revision's patch that this one
		 * does not carry (the patch changed) */
		g_hash_table_iter_init(&it, b.msgid_map);
		while (g_hash_table_iter_next(&it, &k, &v)) {
			struct lmsg *p = v;
			GHashTable *said;
			int carried = 0;

			if (!p->has_diff || p->reply || p->revision == revision ||
			    !p->followup_trailers->len)
				continue;
			for (q = 1; q < s->patches->len && !carried; q++) {
				struct lmsg *x = s->patches->pdata[q];

				carried = x && x->pwhash && p->pwhash && !strcmp(x->pwhash, p->pwhash);
			}
			if (carried)
				continue;
			/* each once (trailer_eq's key): a partial reroll
			 * reads the follow-ups for two revisions */
			said = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
			for (q = 0; q < p->followup_trailers->len; q++) {
				struct trailer *t = p->followup_trailers->pdata[q];
				GString *w;

				if (!say_once(said, t))
					continue;
				w = g_string_new(NULL);
				g_string_printf(w, "trailer given to v%d's patch %d/%d, not carried: ",
						p->revision, p->counter, p->expected);
				trailer_line(own, w->str, t);
				g_string_free(w, TRUE);
			}
			g_hash_table_destroy(said);
		}
		r->info = g_string_free(own, FALSE);
	}
	g_free(base);
	g_string_free(info, TRUE);
	g_string_free(missing, TRUE);
	mailbox_free(&b);
	return 0;
}

int series_thread(const struct series_msg *msgs, size_t nmsgs,
		  const struct series_limits *lim, struct series_rev **out, size_t *nout)
{
	struct dated *d = g_new0(struct dated, nmsgs ? nmsgs : 1);
	struct lmsg **all = g_new0(struct lmsg *, nmsgs ? nmsgs : 1);
	GArray *revs = g_array_new(FALSE, FALSE, sizeof(int));
	GArray *res = g_array_new(FALSE, TRUE, sizeof(struct series_rev));
	struct mailbox b;
	GHashTableIter it;
	gpointer k, v;
	int64_t newest = 0;
	size_t i, n = 0;

	*out = NULL;
	*nout = 0;
	for (i = 0; i < nmsgs; i++) {
		struct lmsg *m = lmsg_new(msgs[i].raw, msgs[i].len);

		if (!m)
			continue;
		d[n].m = m;
		d[n].i = i;
		n++;
		if (m->date > newest)
			newest = m->date;
	}
	qsort(d, n, sizeof(*d), cmp_dated);
	for (i = 0; i < n; i++)
		all[i] = d[i].m;
	/* the revisions the thread has */
	mailbox_init(&b, lim);
	for (i = 0; i < n; i++)
		add_message(&b, all[i]);
	g_hash_table_iter_init(&it, b.series);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		int rev = GPOINTER_TO_INT(k);

		g_array_append_val(revs, rev);
	}
	mailbox_free(&b);
	if (revs->len)          /* no array at all when empty */
		qsort(revs->data, revs->len, sizeof(int), cmp_int);
	for (i = 0; i < revs->len; i++) {
		struct series_rev r;

		if (!render(all, n, lim, g_array_index(revs, int, i), newest, &r))
			g_array_append_val(res, r);
	}
	for (i = 0; i < n; i++)
		lmsg_free(all[i]);
	g_free(all);
	g_free(d);
	g_array_free(revs, TRUE);
	*nout = res->len;
	*out = (struct series_rev *)(void *)g_array_free(res, res->len == 0);
	if (!*nout)
		*out = NULL;
	return 0;
}

void series_revs_free(struct series_rev *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		g_free(r[i].name);
		g_free(r[i].msgid);
		g_free(r[i].change_id);
		g_free(r[i].subject);
		g_free(r[i].am);
		g_free(r[i].cover);
		g_free(r[i].info);
	}
	g_free(r);
}
