/* What the C tests of cache tables share: the raw LMDB environment of a
 * cache, for writing what an older leifs or a damaged page would leave. */
#ifndef LEIFS_TESTS_RAW_LMDB_H
#define LEIFS_TESTS_RAW_LMDB_H

#include <stdio.h>

#include <lmdb.h>

/* the raw environment of the cache in dir, past cache_open, and one of
 * its tables, in a write transaction */
static inline int raw_open(const char *dir, const char *table, MDB_env **env, MDB_txn **txn,
		    MDB_dbi *dbi)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/lmdb", dir);
	if (mdb_env_create(env))
		return -1;
	mdb_env_set_maxdbs(*env, 16);
	if (mdb_env_open(*env, path, 0, 0600) || mdb_txn_begin(*env, NULL, 0, txn)) {
		mdb_env_close(*env);
		return -1;
	}
	if (mdb_dbi_open(*txn, table, 0, dbi)) {
		mdb_txn_abort(*txn);
		mdb_env_close(*env);
		return -1;
	}
	return 0;
}

#endif
