/*
 * public-inbox's query parser (Search.pm qparse_new) with Xapian's own
 * QueryParser: see qparser.hh.
 */
#include <cstring>
#include <string>

#include "query/qparser.hh"

extern "C" {
#include "query/query.h"
}

namespace {

struct pfx { const char *name, *prefixes; };

/* %bool_pfx_external */
const pfx boolean[] = {
	{ "mid", "Q" }, { "lid", "G" }, { "dfpre", "XDFPRE" }, { "dfpost", "XDFPOST" },
	{ "dfblob", "XDFPRE XDFPOST" }, { "patchid", "XDFID" },
};

#define NQ "XNQ XDFN XDFA XDFB XDFHH XDFCTX XDFPRE XDFPOST XDFID"

/* %prob_prefix */
const pfx prob[] = {
	{ "s", "S" }, { "m", "XM" }, { "l", "XL" }, { "f", "A" }, { "t", "XTO" },
	{ "tc", "XTO XCC" }, { "c", "XCC" }, { "tcf", "XTO XCC A" }, { "a", "XTO XCC A" },
	{ "b", NQ " XQUOT" }, { "bs", NQ " XQUOT S" }, { "n", "XFN" }, { "q", "XQUOT" },
	{ "nq", NQ }, { "dfn", "XDFN" }, { "dfa", "XDFA" }, { "dfb", "XDFB" },
	{ "dfhh", "XDFHH" }, { "dfctx", "XDFCTX" }, { "", "XM S A XQUOT XFN " NQ },
};

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
	explicit any_range(const char *pfx) : Xapian::RangeProcessor(QV_TS, pfx) {}
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
	if (any_dates) {
		qp.add_rangeprocessor((new any_range("d:"))->release());
		qp.add_rangeprocessor((new any_range("dt:"))->release());
	} else {
		qp.add_rangeprocessor((new Xapian::NumberRangeProcessor(QV_YYYYMMDD, "d:"))->release());
		qp.add_rangeprocessor((new Xapian::NumberRangeProcessor(QV_DT, "dt:"))->release());
	}
	qp.add_rangeprocessor((new Xapian::NumberRangeProcessor(QV_BYTES, "z:"))->release());
	if (any_dates)
		qp.add_rangeprocessor((new any_range("rt:"))->release());
	else
		qp.add_rangeprocessor((new Xapian::NumberRangeProcessor(QV_TS, "rt:"))->release());
	qp.add_rangeprocessor((new Xapian::NumberRangeProcessor(QV_UID, "uid:"))->release());
	for (const pfx &b : boolean)
		each_word(b.prefixes, [&](const std::string &w) { qp.add_boolean_prefix(b.name, w); });
	for (const pfx &p : prob)
		each_word(p.prefixes, [&](const std::string &w) { qp.add_prefix(p.name, w); });
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

extern "C" int query_parse_check(const char *query, char *why, size_t whylen)
{
	return parse_check(query, false, why, whylen);
}

extern "C" int query_syntax_check(const char *query, char *why, size_t whylen)
{
	return parse_check(query, true, why, whylen);
}
