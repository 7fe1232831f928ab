/*
 * The Xapian index of a source (index.h): documents as SearchIdx.pm makes
 * them (terms.h), queries as Search.pm parses them (query/qparser.hh).
 */
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "cache/index-private.hh"
#include "query/qparser.hh"

extern "C" {
#include "cache/terms.h"
}

/* the document's own key: not a prefix any query can name */
#define OID_TERM "XOID"
/* uncommitted documents before the index commits by itself (memory bound) */
#define AUTOCOMMIT 500

std::string index_hex(const unsigned char *oid)
{
	static const char x[] = "0123456789abcdef";
	std::string s;

	for (int i = 0; i < 20; i++) {
		s += x[oid[i] >> 4];
		s += x[oid[i] & 15];
	}
	return s;
}

int index_say(char *why, size_t whylen, const Xapian::Error &e)
{
	if (why && whylen)
		snprintf(why, whylen, "index: %s: %s", e.get_type(), e.get_msg().c_str());
	std::string t = e.get_type();

	if (t == "DatabaseLockError")
		return EAGAIN;
	if (t == "QueryParserError" || t == "WildcardError")
		return EINVAL;
	return EIO;
}

extern "C" int cache_index_open(const char *dir, cache_index_t **out, char *why, size_t whylen)
{
	*out = nullptr;
	try {
		cache_index_t *x = new cache_index;

		try {
			x->db = Xapian::WritableDatabase(dir, Xapian::DB_CREATE_OR_OPEN);
		} catch (...) {
			delete x;
			throw;
		}
		x->tg.set_stemmer(Xapian::Stem("english"));
		if (!x->db.get_doccount())
			thread_init(x);
		*out = x;
		return 0;
	} catch (const Xapian::Error &e) {
		return index_say(why, whylen, e);
	} catch (...) {
		return ENOMEM;  /* std::bad_alloc, the one other it throws */
	}
}

extern "C" void cache_index_close(cache_index_t *x)
{
	if (!x)
		return;
	try {
		x->db.commit();
		x->db.close();
	} catch (...) {
		/* nothing to tell: what was not committed is indexed again */
	}
	delete x;
}

extern "C" int cache_index_has(cache_index_t *x, const unsigned char *oid, int *has)
{
	try {
		std::lock_guard<std::mutex> g(x->lock);

		*has = x->db.term_exists(OID_TERM + index_hex(oid));
		return 0;
	} catch (const Xapian::Error &e) {
		return index_say(nullptr, 0, e);
	} catch (...) {
		return ENOMEM;  /* std::bad_alloc, the one other it throws */
	}
}

extern "C" int cache_index_add(cache_index_t *x, const unsigned char *oid, const char *raw,
			       size_t len, int *added, char *why, size_t whylen)
{
	struct term_doc td;
	std::string key = OID_TERM + index_hex(oid);
	int err;

	if (added)
		*added = 0;
	try {
		{
			std::lock_guard<std::mutex> g(x->lock);

			if (x->db.term_exists(key))
				return 0;
		}
		/* parsing needs no lock */
		if ((err = cache_terms(raw, len, &td))) {
			if (why && whylen)
				snprintf(why, whylen, "index: cannot parse message");
			return err;
		}
		Xapian::Document doc;

		doc.add_value(QV_TS, Xapian::sortable_serialise(td.ts));
		doc.add_value(QV_YYYYMMDD, Xapian::sortable_serialise(td.yyyymmdd));
		doc.add_value(QV_DT, Xapian::sortable_serialise(td.dt));
		doc.add_value(QV_BYTES, Xapian::sortable_serialise(td.bytes));
		doc.set_data(index_hex(oid));
		doc.add_boolean_term(key);
		std::lock_guard<std::mutex> g(x->lock);

		x->tg.set_document(doc);
		for (size_t i = 0; i < td.n; i++) {
			const struct term_field &f = td.f[i];

			switch (f.kind) {
			case TERM_TEXT:
				x->tg.index_text(f.text, f.wdf, f.prefix);
				x->tg.increase_termpos();
				break;
			case TERM_BOOL:
				doc.add_boolean_term(std::string(f.prefix) + f.text);
				break;
			case TERM_RAW:
				doc.add_term(std::string(f.prefix) + f.text);
				break;
			}
		}
		/* public-inbox-index (V2Writable) skips a message none of whose
		 * Message-IDs is new ("is a duplicate"): the first copy wins */
		bool dup = false;

		for (size_t i = 0; i < td.n; i++) {
			const struct term_field &f = td.f[i];

			if (f.kind != TERM_BOOL || strcmp(f.prefix, "Q"))
				continue;
			if (!x->db.term_exists(std::string("Q") + f.text)) {
				dup = false;
				break;
			}
			dup = true;
		}
		if (dup) {
			cache_terms_free(&td);
			if (added)
				*added = 2;
			return 0;
		}
		if (x->db.term_exists(key)) {   /* another thread won */
			cache_terms_free(&td);
			return 0;
		}
		/* OverIdx.pm add_over: its Message-IDs and references
		 * make its thread (only a document indexed is threaded, as
		 * public-inbox threads only what it keeps) */
		std::vector<std::string> ids;

		for (size_t i = 0; i < td.n; i++)
			if (td.f[i].kind == TERM_BOOL && !strcmp(td.f[i].prefix, "Q"))
				ids.push_back(td.f[i].text);
		for (size_t i = 0; i < td.nrefs; i++)
			ids.push_back(td.refs[i]);
		cache_terms_free(&td);
		thread_mark(doc, thread_link(x, ids));
		x->db.add_document(doc);
		if (added)
			*added = 1;
		if (++x->pending >= AUTOCOMMIT) {
			x->db.commit();
			x->pending = 0;
		}
		return 0;
	} catch (const Xapian::Error &e) {
		cache_terms_free(&td);
		return index_say(why, whylen, e);
	} catch (...) {
		cache_terms_free(&td);
		return ENOMEM;  /* std::bad_alloc, the one other it throws */
	}
}

extern "C" int cache_index_commit(cache_index_t *x, char *why, size_t whylen)
{
	try {
		std::lock_guard<std::mutex> g(x->lock);

		x->db.commit();
		x->pending = 0;
		return 0;
	} catch (const Xapian::Error &e) {
		return index_say(why, whylen, e);
	} catch (...) {
		return ENOMEM;  /* std::bad_alloc, the one other it throws */
	}
}

extern "C" uint64_t cache_index_count(cache_index_t *x)
{
	try {
		std::lock_guard<std::mutex> g(x->lock);

		return x->db.get_doccount();
	} catch (...) {
		return 0;
	}
}

int index_unhex(const std::string &s, unsigned char *oid)
{
	if (s.size() != 40)
		return 0;
	for (int i = 0; i < 20; i++) {
		int v = 0;

		for (int j = 0; j < 2; j++) {
			char c = s[2 * i + j];

			v = v * 16 + (c >= 'a' ? c - 'a' + 10 : c - '0');
		}
		oid[i] = (unsigned char)v;
	}
	return 1;
}

/* The query's matches, newest first (docid order, as Mbox.pm's
 * relevance -2), lock held. */
static std::vector<Xapian::docid> matches(cache_index_t *x, const char *query)
{
	Xapian::QueryParser qp;
	Xapian::Enquire enq(x->db);
	Xapian::doccount total = x->db.get_doccount();
	std::vector<Xapian::docid> ids;

	query_parser(qp, x->db);
	/* Mbox.pm mbox_all: an empty query is every message */
	Xapian::Query q = strspn(query, " \t\r\n") == strlen(query) ?
		Xapian::Query::MatchAll : qp.parse_query(query, QUERY_FLAGS);
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

/* whole threads (Mbox.pm results_thread_cb, Over.pm expand_thread): for
 * each match, newest first, every message of its thread not sent yet, in
 * the order they were indexed (num ASC); lock held */
static void expand(cache_index_t *x, const std::vector<Xapian::docid> &hits, std::vector<found> &out)
{
	std::vector<Xapian::docid> sorted(hits);
	std::unordered_set<std::string> seen;

	std::sort(sorted.begin(), sorted.end());
	for (Xapian::docid d : hits) {
		std::string tid = x->db.get_document(d).get_value(QV_THREADID);

		if (tid.empty()) {      /* not threaded (cannot be after the upgrade) */
			add_found(x, d, 1, out);
			continue;
		}
		if (!seen.insert(tid).second)
			continue;       /* its thread is out already */
		std::string term = thread_term(tid);

		for (Xapian::PostingIterator p = x->db.postlist_begin(term);
		     p != x->db.postlist_end(term); ++p)
			add_found(x, *p, std::binary_search(sorted.begin(), sorted.end(), *p), out);
	}
}

extern "C" int cache_index_search_threads(cache_index_t *x, const char *query, int threads,
					  int (*fn)(void *arg, const unsigned char *oid, int hit),
					  void *arg, char *why, size_t whylen)
{
	std::vector<found> out;

	if (why && whylen)
		why[0] = '\0';
	try {
		std::lock_guard<std::mutex> g(x->lock);
		std::vector<Xapian::docid> hits = matches(x, query);

		if (threads) {
			expand(x, hits, out);
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
