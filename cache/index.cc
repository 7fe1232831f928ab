/*
 * The Xapian index of a source (index.h): documents as SearchIdx.pm makes
 * them (terms.h), queries as Search.pm parses them (query/qparser.hh).
 */
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <xapian.h>

#include "query/qparser.hh"

extern "C" {
#include "cache/index.h"
#include "cache/terms.h"
}

/* the document's own key: not a prefix any query can name */
#define OID_TERM "XOID"
/* uncommitted documents before the index commits by itself (memory bound) */
#define AUTOCOMMIT 500

struct cache_index {
	std::mutex lock;
	Xapian::WritableDatabase db;    /* protected by lock */
	Xapian::TermGenerator tg;       /* protected by lock */
	unsigned pending = 0;           /* protected by lock */
};

static std::string hex(const unsigned char *oid)
{
	static const char x[] = "0123456789abcdef";
	std::string s;

	for (int i = 0; i < 20; i++) {
		s += x[oid[i] >> 4];
		s += x[oid[i] & 15];
	}
	return s;
}

static int say(char *why, size_t whylen, const Xapian::Error &e)
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
		*out = x;
		return 0;
	} catch (const Xapian::Error &e) {
		return say(why, whylen, e);
	} catch (const std::bad_alloc &) {
		return ENOMEM;
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

		*has = x->db.term_exists(OID_TERM + hex(oid));
		return 0;
	} catch (const Xapian::Error &e) {
		return say(nullptr, 0, e);
	}
}

extern "C" int cache_index_add(cache_index_t *x, const unsigned char *oid, const char *raw,
			       size_t len, int *added, char *why, size_t whylen)
{
	struct term_doc td;
	std::string key = OID_TERM + hex(oid);
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
		doc.set_data(hex(oid));
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
		cache_terms_free(&td);
		if (dup) {
			if (added)
				*added = 2;
			return 0;
		}
		if (x->db.term_exists(key))     /* another thread won */
			return 0;
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
		return say(why, whylen, e);
	} catch (const std::bad_alloc &) {
		cache_terms_free(&td);
		return ENOMEM;
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
		return say(why, whylen, e);
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

static int unhex(const std::string &s, unsigned char *oid)
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

extern "C" int cache_index_search(cache_index_t *x, const char *query,
				  int (*fn)(void *arg, const unsigned char *oid), void *arg,
				  char *why, size_t whylen)
{
	std::vector<unsigned char> oids;

	if (why && whylen)
		why[0] = '\0';
	try {
		std::lock_guard<std::mutex> g(x->lock);
		Xapian::QueryParser qp;
		Xapian::Enquire enq(x->db);
		Xapian::doccount total = x->db.get_doccount();

		query_parser(qp, x->db);
		/* Mbox.pm mbox_all: an empty query is every message */
		Xapian::Query q = strspn(query, " \t\r\n") == strlen(query) ?
			Xapian::Query::MatchAll : qp.parse_query(query, QUERY_FLAGS);
		enq.set_query(q);
		enq.set_weighting_scheme(Xapian::BoolWeight());
		enq.set_docid_order(Xapian::Enquire::DESCENDING);
		Xapian::MSet ms = enq.get_mset(0, total ? total : 1);

		oids.reserve(ms.size() * 20);
		for (Xapian::MSetIterator i = ms.begin(); i != ms.end(); ++i) {
			unsigned char oid[20];

			if (unhex(i.get_document().get_data(), oid))
				oids.insert(oids.end(), oid, oid + 20);
		}
	} catch (const Xapian::Error &e) {
		return say(why, whylen, e);
	} catch (const std::bad_alloc &) {
		return ENOMEM;
	}
	for (size_t i = 0; i < oids.size(); i += 20) {
		int err = fn(arg, &oids[i]);

		if (err)
			return err;
	}
	return 0;
}
