/*
 * Searches of a source's Xapian index (index.h): the query's matches in
 * docid order, whole threads as public-inbox-httpd's t=1, and the same
 * over only what was indexed after a mark (a refresh pays for what came,
 * not for the whole view).
 */
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "cache/index-private.hh"
#include "query/qparser.hh"

/* More new documents than this and a search "since" is a whole one: one
 * query of the threads they are in would be as big as the view's. */
#define SINCE_MAX 16384

/* Documents after docid `after`, as a posting source: the matcher skips
 * to them, so a query ANDed with it costs what was indexed since.  Docids
 * only grow (add_document; documents are never deleted), so "after the
 * mark" is "indexed since the mark". */
class DocsAfter : public Xapian::PostingSource {
	Xapian::docid after, cur = 0, last = 0;

public:
	explicit DocsAfter(Xapian::docid a) : after(a) {}
	void init(const Xapian::Database &db) override
	{
		last = db.get_lastdocid();
		cur = 0;
	}
	Xapian::doccount get_termfreq_min() const override { return 0; }
	Xapian::doccount get_termfreq_est() const override { return last > after ? last - after : 0; }
	Xapian::doccount get_termfreq_max() const override { return last > after ? last - after : 0; }
	void next(double) override { cur = cur ? cur + 1 : after + 1; }
	void skip_to(Xapian::docid d, double) override
	{
		if (!cur)
			cur = after + 1;
		if (d > cur)
			cur = d;
	}
	bool at_end() const override { return cur > last; }
	Xapian::docid get_docid() const override { return cur; }
	DocsAfter *clone() const override { return new DocsAfter(after); }
};

static Xapian::Query parse(cache_index_t *x, const char *query)
{
	Xapian::QueryParser qp;

	query_parser(qp, x->db);
	/* Mbox.pm mbox_all: an empty query is every message */
	return strspn(query, " \t\r\n") == strlen(query) ?
		Xapian::Query::MatchAll : qp.parse_query(query, QUERY_FLAGS);
}

/* q's matches, newest first (docid order, as Mbox.pm's relevance -2),
 * lock held */
static std::vector<Xapian::docid> matches(cache_index_t *x, const Xapian::Query &q)
{
	Xapian::Enquire enq(x->db);
	Xapian::doccount total = x->db.get_doccount();
	std::vector<Xapian::docid> ids;

	enq.set_query(q);
	enq.set_weighting_scheme(Xapian::BoolWeight());
	enq.set_docid_order(Xapian::Enquire::DESCENDING);
	Xapian::MSet ms = enq.get_mset(0, total ? total : 1);

	ids.reserve(ms.size());
	for (Xapian::MSetIterator i = ms.begin(); i != ms.end(); ++i)
		ids.push_back(*i);
	return ids;
}

/* one answer's message: its blob id, and whether the query found it */
struct found {
	unsigned char oid[20];
	int hit;
};

static void add_found(cache_index_t *x, Xapian::docid d, int hit, std::vector<found> &out)
{
	found f;

	f.hit = hit;
	if (index_unhex(x->db.get_document(d).get_data(), f.oid))
		out.push_back(f);
}

/* every message of thread `tid` (its QV_THREADID value), in the order
 * they were indexed (num ASC); `sorted`: the hits, sorted */
static void add_thread(cache_index_t *x, const std::string &tid,
		       const std::vector<Xapian::docid> &sorted, std::vector<found> &out)
{
	std::string term = thread_term(tid);

	for (Xapian::PostingIterator p = x->db.postlist_begin(term);
	     p != x->db.postlist_end(term); ++p)
		add_found(x, *p, std::binary_search(sorted.begin(), sorted.end(), *p), out);
}

/* whole threads (Mbox.pm results_thread_cb, Over.pm expand_thread): for
 * each match, newest first, every message of its thread not sent yet;
 * `seen` gets the threads sent; lock held */
static void expand(cache_index_t *x, const std::vector<Xapian::docid> &hits,
		   const std::vector<Xapian::docid> &sorted, std::unordered_set<std::string> &seen,
		   std::vector<found> &out)
{
	for (Xapian::docid d : hits) {
		std::string tid = x->db.get_document(d).get_value(QV_THREADID);

		if (tid.empty()) {      /* not threaded (cannot be after the upgrade) */
			add_found(x, d, 1, out);
			continue;
		}
		if (seen.insert(tid).second)
			add_thread(x, tid, sorted, out);
	}
}

/* Since the mark, with threads: the threads of the new matches, then the
 * threads a new document joined that hold a match of an earlier search
 * (a new reply to an old match; a new message that merged a thread with
 * one that has a match), newest first; lock held */
static void expand_since(cache_index_t *x, const Xapian::Query &q, Xapian::docid after,
			 const std::vector<Xapian::docid> &hits,
			 const std::vector<Xapian::docid> &sorted, std::vector<found> &out)
{
	std::unordered_set<std::string> seen, other;
	std::vector<std::string> tids;          /* the other new documents' threads */
	std::vector<Xapian::Query> terms;

	expand(x, hits, sorted, seen, out);
	Xapian::PostingIterator p = x->db.postlist_begin("");

	for (p.skip_to(after + 1); p != x->db.postlist_end(""); ++p) {
		std::string tid = x->db.get_document(*p).get_value(QV_THREADID);

		if (!tid.empty() && !seen.count(tid) && other.insert(tid).second) {
			tids.push_back(tid);
			terms.push_back(Xapian::Query(thread_term(tid)));
		}
	}
	if (tids.empty())
		return;
	/* one query: which of those threads holds a match */
	Xapian::Query in(Xapian::Query::OP_AND, q,
			 Xapian::Query(Xapian::Query::OP_OR, terms.begin(), terms.end()));
	std::unordered_set<std::string> matched;

	for (Xapian::docid d : matches(x, in))
		matched.insert(x->db.get_document(d).get_value(QV_THREADID));
	for (auto i = tids.rbegin(); i != tids.rend(); ++i)  /* newest first */
		if (matched.count(*i) && seen.insert(*i).second)
			add_thread(x, *i, sorted, out);
}

extern "C" int cache_index_search_since(cache_index_t *x, const char *query, int threads,
					uint64_t after, uint64_t *mark,
					int (*fn)(void *arg, const unsigned char *oid, int hit),
					void *arg, char *why, size_t whylen)
{
	std::vector<found> out;

	if (why && whylen)
		why[0] = '\0';
	try {
		std::lock_guard<std::mutex> g(x->lock);
		Xapian::Query q = parse(x, query);
		Xapian::docid last = x->db.get_lastdocid();

		if (mark)
			*mark = last;
		if (after >= last)
			return 0;       /* nothing indexed since */
		if (last - after > SINCE_MAX)
			after = 0;
		DocsAfter since((Xapian::docid)after);
		std::vector<Xapian::docid> hits =
			matches(x, after ? Xapian::Query(Xapian::Query::OP_FILTER, q,
							 Xapian::Query(&since)) : q);

		if (threads) {
			std::vector<Xapian::docid> sorted(hits);

			std::sort(sorted.begin(), sorted.end());
			if (after) {
				expand_since(x, q, (Xapian::docid)after, hits, sorted, out);
			} else {
				std::unordered_set<std::string> seen;

				expand(x, hits, sorted, seen, out);
			}
		} else {
			out.reserve(hits.size());
			for (Xapian::docid d : hits)
				add_found(x, d, 1, out);
		}
	} catch (const Xapian::Error &e) {
		return index_say(why, whylen, e);
	} catch (...) {
		return ENOMEM;  /* std::bad_alloc, the one other it throws */
	}
	/* the callbacks write the cache: no lock of the index held */
	for (const found &f : out) {
		int err = fn(arg, f.oid, f.hit);

		if (err)
			return err;
	}
	return 0;
}

extern "C" int cache_index_search_threads(cache_index_t *x, const char *query, int threads,
					  int (*fn)(void *arg, const unsigned char *oid, int hit),
					  void *arg, char *why, size_t whylen)
{
	return cache_index_search_since(x, query, threads, 0, NULL, fn, arg, why, whylen);
}

struct plain {
	int (*fn)(void *arg, const unsigned char *oid);
	void *arg;
};

static int plain_hit(void *arg, const unsigned char *oid, int)
{
	plain *p = static_cast<plain *>(arg);

	return p->fn(p->arg, oid);
}

extern "C" int cache_index_search(cache_index_t *x, const char *query,
				  int (*fn)(void *arg, const unsigned char *oid), void *arg,
				  char *why, size_t whylen)
{
	plain p = { fn, arg };

	return cache_index_search_threads(x, query, 0, plain_hit, &p, why, whylen);
}
