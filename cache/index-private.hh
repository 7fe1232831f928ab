/*
 * What index.cc and threads.cc share: the index handle and the thread ids
 * of its documents.  C++ only; nothing outside cache/ includes it.
 */
#ifndef LEIFS_CACHE_INDEX_PRIVATE_HH
#define LEIFS_CACHE_INDEX_PRIVATE_HH

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <xapian.h>

extern "C" {
#include "cache/index.h"
}

struct cache_index {
	std::mutex lock;
	Xapian::WritableDatabase db;    /* protected by lock */
	Xapian::TermGenerator tg;       /* protected by lock */
	unsigned pending = 0;           /* protected by lock */
};

std::string index_hex(const unsigned char *oid);
int index_unhex(const std::string &s, unsigned char *oid);
/* a Xapian error as an errno, its message in why */
int index_say(char *why, size_t whylen, const Xapian::Error &e);

/* threads.cc; each with x->lock held, inside the writer's uncommitted
 * changes (a thread id and the document it goes on commit together). */
/* The thread of a new document threaded by `ids` (its Message-IDs and
 * references): the one these ids are in already, the threads they join
 * merged into one; a new id if none.  Ids with no document yet are kept
 * as ghosts, so that a parent indexed later joins its replies' thread. */
uint64_t thread_link(cache_index_t *x, const std::vector<std::string> &ids);
/* Put thread `tid` on doc (value slot QV_THREADID and a boolean term). */
void thread_mark(Xapian::Document &doc, uint64_t tid);
/* The term of the thread whose QV_THREADID value is `value`. */
std::string thread_term(const std::string &value);
/* A new, empty index: every document it will hold gets a thread id. */
void thread_init(cache_index_t *x);

#endif
