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
