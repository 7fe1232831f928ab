/*
 * Thread ids of an index's documents, as public-inbox's OverIdx.pm gives
 * them (add_over, link_refs, resolve_mid_to_tid, merge_threads): a
 * message's Message-IDs and the ids it references are one thread; an id
 * referenced before its message is indexed is a "ghost" holding its thread
 * until the message comes (a reply indexed before its parent); a message
 * that links two threads merges them.  Whatever the order the mail is
 * indexed in, the threads are the same sets of messages: the connected
 * parts of the graph of ids, which is what the server's t=1 expands to.
 *
 * Where it is kept, all in the index itself so that it commits atomically
 * with the documents (and survives remounts with them):
 *   - each document: value slot QV_THREADID (Search.pm's THREADID, the
 *     tid as sortable_serialise) and a boolean term XTID<tid>, so that a
 *     thread's documents are one posting list (what over.sqlite3's
 *     "tid" column and index give the server);
 *   - metadata "leifs:mid:=<id>" (or ":#<sha256>" for an id too long for
 *     a metadata key): the thread of every id seen, ghosts included;
 *   - metadata "leifs:fwd:<tid>": the thread a merged-away thread went
 *     into (ids are not rewritten at a merge, documents are);
 *   - metadata "leifs:tid-next" and "leifs:threads" (every document is
 *     threaded).
 * Metadata rather than an LMDB table: one transaction, one file set, and
 * no reader can see a document whose thread is not stored yet.
 *
 * An index made before thread ids (no "leifs:threads") is threaded once,
 * at its first open, from the messages the store holds
 * (cache_index_thread_upgrade); a document whose message is gone keeps
 * the threads of its own Message-IDs.
 */
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <openssl/evp.h>

#include "cache/index-private.hh"
#include "query/qparser.hh"

extern "C" {
#include "cache/terms.h"
}

#define TID_TERM "XTID"
#define META_MID "leifs:mid:"
#define META_FWD "leifs:fwd:"
#define META_NEXT "leifs:tid-next"
#define META_DONE "leifs:threads"
/* Xapian's metadata keys are at most a few hundred bytes; a longer id is
 * named by its hash */
#define MID_KEY_MAX 180

static std::string dec(uint64_t v)
{
	return std::to_string((unsigned long long)v);
}

static uint64_t undec(const std::string &s)
{
	return strtoull(s.c_str(), nullptr, 10);
}

static std::string mid_key(const std::string &mid)
{
	if (mid.size() <= MID_KEY_MAX)
		return META_MID "=" + mid;
	unsigned char h[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	char x[3];
	std::string k = META_MID "#";

	EVP_Digest(mid.data(), mid.size(), h, &n, EVP_sha256(), nullptr);
	for (unsigned i = 0; i < n; i++) {
		snprintf(x, sizeof(x), "%02x", h[i]);
		k += x;
	}
	return k;
}

std::string thread_term(const std::string &value)
{
	return TID_TERM + dec((uint64_t)Xapian::sortable_unserialise(value));
}

void thread_mark(Xapian::Document &doc, uint64_t tid)
{
	doc.add_value(QV_THREADID, Xapian::sortable_serialise((double)tid));
	doc.add_boolean_term(TID_TERM + dec(tid));
}

void thread_init(cache_index_t *x)
{
	x->db.set_metadata(META_DONE, "1");
}

/* the thread tid is now: merged threads forward to the one they went into */
static uint64_t thread_find(cache_index_t *x, uint64_t tid)
{
	for (int hops = 0; hops < 1000; hops++) {
		std::string f = x->db.get_metadata(META_FWD + dec(tid));

		if (f.empty())
			break;
		tid = undec(f);
	}
	return tid;
}

static uint64_t thread_new(cache_index_t *x)
{
	std::string n = x->db.get_metadata(META_NEXT);
	uint64_t tid = n.empty() ? 1 : undec(n);

	x->db.set_metadata(META_NEXT, dec(tid + 1));
	return tid;
}

/* OverIdx.pm merge_threads: every document of `loser` goes to `winner` */
static void thread_merge(cache_index_t *x, uint64_t loser, uint64_t winner)
{
	std::string lt = TID_TERM + dec(loser);
	std::vector<Xapian::docid> docs;

	for (Xapian::PostingIterator p = x->db.postlist_begin(lt); p != x->db.postlist_end(lt); ++p)
		docs.push_back(*p);
	for (Xapian::docid d : docs) {
		Xapian::Document doc = x->db.get_document(d);

		doc.remove_term(lt);
		thread_mark(doc, winner);
		x->db.replace_document(d, doc);
	}
	x->db.set_metadata(META_FWD + dec(loser), dec(winner));
}

uint64_t thread_link(cache_index_t *x, const std::vector<std::string> &ids)
{
	std::vector<uint64_t> tids;
	uint64_t win = 0;
	Xapian::doccount most = 0;

	for (const std::string &id : ids) {
		std::string t = x->db.get_metadata(mid_key(id));

		if (t.empty())
			continue;
		uint64_t tid = thread_find(x, undec(t));

		if (std::find(tids.begin(), tids.end(), tid) == tids.end())
			tids.push_back(tid);
	}
	/* the biggest thread stays: a merge rewrites the documents of the
	 * others (which tid survives does not matter, only who is in it) */
	for (uint64_t tid : tids) {
		Xapian::doccount n = x->db.get_termfreq(TID_TERM + dec(tid));

		if (!win || n > most) {
			win = tid;
			most = n;
		}
	}
	if (!win)
		win = thread_new(x);
	for (uint64_t tid : tids)
		if (tid != win)
			thread_merge(x, tid, win);
	/* every id, ghost or not, now names win (shortening the forwards) */
	for (const std::string &id : ids) {
		std::string k = mid_key(id), v = dec(win);

		if (x->db.get_metadata(k) != v)
			x->db.set_metadata(k, v);
	}
	return win;
}

extern "C" int cache_index_thread_upgrade(cache_index_t *x,
					  int (*get)(void *arg, const unsigned char *oid,
						     char **raw, size_t *len),
					  void *arg, uint64_t *threaded, char *why, size_t whylen)
{
	*threaded = 0;
	try {
		std::lock_guard<std::mutex> g(x->lock);

		if (x->db.get_metadata(META_DONE) == "1")
			return 0;
		std::vector<Xapian::docid> docs;

		/* in docid order: the order they were indexed in */
		for (Xapian::PostingIterator p = x->db.postlist_begin(""); p != x->db.postlist_end("");
		     ++p)
			docs.push_back(*p);
		for (Xapian::docid d : docs) {
			Xapian::Document doc = x->db.get_document(d);
			std::vector<std::string> ids;
			Xapian::TermIterator t = doc.termlist_begin();
			unsigned char oid[20];
			char *raw = nullptr;
			size_t len = 0;

			t.skip_to(TID_TERM);
			if (t != doc.termlist_end() && !strncmp((*t).c_str(), TID_TERM, 4))
				continue;       /* threaded by a run cut short */
			/* its own Message-IDs (Q terms) even if its bytes are gone
			 * (a new iterator: skip_to only goes forward) */
			Xapian::TermIterator q = doc.termlist_begin();

			for (q.skip_to("Q"); q != doc.termlist_end() && (*q)[0] == 'Q'; ++q)
				ids.push_back((*q).substr(1));
			if (index_unhex(doc.get_data(), oid) && !get(arg, oid, &raw, &len)) {
				struct term_doc td;

				if (!cache_thread_ids(raw, len, &td)) {
					for (size_t i = 0; i < td.nrefs; i++)
						ids.push_back(td.refs[i]);
					cache_terms_free(&td);
				}
				free(raw);
			}
			thread_mark(doc, thread_link(x, ids));
			x->db.replace_document(d, doc);
			if (++*threaded % 1000 == 0)
				x->db.commit();
		}
		x->db.set_metadata(META_DONE, "1");
		x->db.commit();
		x->pending = 0;
		return 0;
	} catch (const Xapian::Error &e) {
		return index_say(why, whylen, e);
	} catch (...) {
		return ENOMEM;  /* std::bad_alloc, the one other it throws */
	}
}
