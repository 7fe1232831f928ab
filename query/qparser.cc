/*
 * public-inbox's query parser (Search.pm qparse_new) with Xapian's own
 * QueryParser: see qparser.hh.
 */
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "query/qparser.hh"

extern "C" {
#include "query/query.h"
}

namespace {

template <typename F> void each_word(const char *s, F f)
{
	std::string w;

	for (const char *p = s;; p++) {
		if (*p == ' ' || !*p) {
			if (!w.empty())
				f(w);
			w.clear();
			if (!*p)
				break;
		} else {
			w += *p;
		}
	}
}

/* d:, dt: and rt: at mkdir: public-inbox rewrites their dates (approxidate)
 * before Xapian sees them, so any text is taken here */
class any_range : public Xapian::RangeProcessor {
public:
	any_range(Xapian::valueno slot, const std::string &pfx)
		: Xapian::RangeProcessor(slot, pfx) {}
	Xapian::Query operator()(const std::string &, const std::string &) override
	{
		return Xapian::Query::MatchAll;
	}
};

} // namespace

void query_parser(Xapian::QueryParser &qp, const Xapian::Database &db)
{
	query_parser(qp, db, false);
}

void query_parser(Xapian::QueryParser &qp, const Xapian::Database &db, bool any_dates)
{
	qp.set_default_op(Xapian::Query::OP_AND);
	qp.set_database(db);
	qp.set_stemmer(Xapian::Stem("english"));
	qp.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
	qp.set_max_expansion(100, Xapian::Query::WILDCARD_LIMIT_ERROR);
	for (const query_prefix *p = query_prefixes; p->name; p++) {
		if (p->flags & QP_UNSUPPORTED)
			continue; /* refused by query_validate: prefix.h */
		switch (p->kind) {
		case QP_RANGE: {
			std::string name = std::string(p->name) + ":";

			if (any_dates && (p->flags & QP_DATE))
				qp.add_rangeprocessor((new any_range(p->slot, name))->release());
			else
				qp.add_rangeprocessor((new Xapian::NumberRangeProcessor(
					p->slot, name))->release());
			break;
		}
		case QP_BOOLEAN:
			each_word(p->terms, [&](const std::string &w) {
				qp.add_boolean_prefix(p->name, w);
			});
			break;
		case QP_PROB:
			each_word(p->terms, [&](const std::string &w) { qp.add_prefix(p->name, w); });
			break;
		}
	}
}

static int parse_check(const char *query, bool any_dates, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	try {
		Xapian::QueryParser qp;
		Xapian::WritableDatabase mem(std::string(), Xapian::DB_BACKEND_INMEMORY);

		query_parser(qp, mem, any_dates);
		qp.parse_query(query, QUERY_FLAGS);
		return 0;
	} catch (const Xapian::Error &e) {
		if (why && whylen)
			snprintf(why, whylen, "%s", e.get_msg().c_str());
		return EINVAL;
	} catch (...) {
		if (why && whylen)
			snprintf(why, whylen, "cannot parse the query");
		return EINVAL;
	}
}

extern "C" int query_syntax_check(const char *query, char *why, size_t whylen)
{
	return parse_check(query, true, why, whylen);
}

extern "C" int query_describe(const char *query, char **out)
{
	*out = NULL;
	try {
		Xapian::QueryParser qp;
		Xapian::WritableDatabase mem(std::string(), Xapian::DB_BACKEND_INMEMORY);

		query_parser(qp, mem, false);
		std::string d = qp.parse_query(query, QUERY_FLAGS).get_description();
		*out = strdup(d.c_str());
		return *out ? 0 : ENOMEM;
	} catch (const Xapian::Error &) {
		return EINVAL;
	} catch (const std::bad_alloc &) {
		return ENOMEM;
	} catch (...) {
		return EINVAL;
	}
}
