/*
 * C-level tests of the message inode records (fs/msgnodes.c): numbers
 * are distinct and stable while held, a freed number is never given
 * again, and records held by a handler outlive the kernel's forget.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/msgnodes.h"

static int passed, failed;

#define CHECK(expr) do { \
	if (expr) { passed++; } else { failed++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr); } \
} while (0)

static void oid_of(unsigned i, unsigned char oid[CACHE_OID_LEN])
{
	unsigned k;

	for (k = 0; k < CACHE_OID_LEN; k++)
		oid[k] = (unsigned char)((i * 2654435761u) >> (k % 4 * 8)) ^ (unsigned char)k;
	memcpy(oid + 12, &i, sizeof(i));        /* distinct for every i */
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_many(void)
{
	enum { N = 20000 };     /* several slabs and bucket growths */
	uint64_t *ino = calloc(N, sizeof(*ino)), *sorted = calloc(N, sizeof(*ino)), vid, size;
	int64_t date;
	unsigned char oid[CACHE_OID_LEN], got[CACHE_OID_LEN];
	size_t n = 0, cap = 0, i, bad = 0;
	uint64_t *list = NULL;

	for (i = 0; i < N; i++) {
		oid_of((unsigned)i, oid);
		ino[i] = msgnodes_lookup(1 + i % 3, oid, 7, 100);
		bad += !msgnodes_is(ino[i]);
	}
	CHECK(bad == 0);
	CHECK(msgnodes_count() == N);
	memcpy(sorted, ino, N * sizeof(*ino));
	qsort(sorted, N, sizeof(*sorted), cmp_u64);
	for (i = 1, bad = 0; i < N; i++)
		bad += sorted[i] == sorted[i - 1];
	CHECK(bad == 0);        /* one number a message */
	/* and one on a 32-bit kernel, which xors the halves: above the
	 * other inodes' numbers */
	for (i = 0; i < N; i++)
		sorted[i] = (uint32_t)ino[i] ^ (uint32_t)(ino[i] >> 32);
	qsort(sorted, N, sizeof(*sorted), cmp_u64);
	for (i = 1, bad = sorted[0] < (1u << 30); i < N; i++)
		bad += sorted[i] == sorted[i - 1];
	CHECK(bad == 0);
	memcpy(sorted, ino, N * sizeof(*ino));
	qsort(sorted, N, sizeof(*sorted), cmp_u64);
	for (i = 0, bad = 0; i < N; i++) {
		oid_of((unsigned)i, oid);
		/* a second lookup: the same number, a second count, the
		 * entry's attributes as it says them now */
		bad += msgnodes_lookup(1 + i % 3, oid, (int64_t)i, i * 10) != ino[i];
		bad += msgnodes_get(ino[i], &vid, got, &date, &size) != 0 || vid != 1 + i % 3 ||
		       memcmp(got, oid, CACHE_OID_LEN) || date != (int64_t)i || size != i * 10;
		msgnodes_put(ino[i]);
	}
	CHECK(bad == 0);
	CHECK(msgnodes_count() == N);
	/* the same oid in another view is another file */
	oid_of(0, oid);
	CHECK(msgnodes_lookup(99, oid, 0, (uint64_t)5 << 30) != ino[0]);
	CHECK(msgnodes_get(msgnodes_lookup(99, oid, 0, 1), &vid, got, &date, &size) == 0 &&
	      size == 1);
	msgnodes_put(msgnodes_lookup(99, oid, 0, 1));
	CHECK(msgnodes_get(msgnodes_lookup(99, oid, 0, (uint64_t)5 << 30), &vid, got, &date,
			   &size) == 0 && size == UINT64_MAX);  /* too large: the cache says */
	msgnodes_put(msgnodes_lookup(99, oid, 0, 1));
	{
		uint64_t *vids = NULL;

		CHECK(msgnodes_views_of(oid, 1, &vids) == 1 && vids[0] == 99);
		free(vids);
		CHECK(msgnodes_views_of(oid, 99, &vids) == 1 && vids[0] == 1);
		free(vids);
		msgnodes_forget(msgnodes_lookup(99, oid, 0, 0), 7);
		CHECK(msgnodes_views_of(oid, 1, &vids) == 0 && !vids);
	}
	CHECK(msgnodes_count() == N);
	CHECK(msgnodes_view_inos(2, &list, &n, &cap) == 0);
	CHECK(n == (N + 1) / 3);        /* i % 3 == 1 */
	for (i = 0, bad = 0; i < n; i++)
		bad += !bsearch(&list[i], sorted, N, sizeof(*sorted), cmp_u64);
	CHECK(bad == 0);
	free(list);

	/* forget half of each message's two counts: all stay */
	for (i = 0; i < N; i++)
		msgnodes_forget(ino[i], 1);
	CHECK(msgnodes_count() == N);
	/* a handler's hold outlives the kernel's forget */
	CHECK(msgnodes_get(ino[7], &vid, got, &date, &size) == 0);
	for (i = 0; i < N; i++)
		msgnodes_forget(ino[i], 1);
	CHECK(msgnodes_count() == 1);
	CHECK(msgnodes_get(ino[8], &vid, got, &date, &size) == ENOENT);
	msgnodes_put(ino[7]);
	CHECK(msgnodes_count() == 0);
	CHECK(msgnodes_get(ino[7], &vid, got, &date, &size) == ENOENT);
	msgnodes_forget(ino[7], 1);     /* a stale forget changes nothing */
	msgnodes_put(ino[7]);
	CHECK(msgnodes_count() == 0);

	/* the slots come back with new numbers */
	for (i = 0, bad = 0; i < N; i++) {
		uint64_t again;

		oid_of((unsigned)i, oid);
		again = msgnodes_lookup(1 + i % 3, oid, 7, 100);
		bad += !again || bsearch(&again, sorted, N, sizeof(*sorted), cmp_u64) != NULL;
	}
	CHECK(bad == 0);
	CHECK(msgnodes_count() == N);
	/* a sweep of the view: the records made before ask the cache */
	{
		uint64_t x;

		oid_of(5, oid);
		x = msgnodes_lookup(3, oid, 9, 50);
		CHECK(msgnodes_get(x, &vid, got, &date, &size) == 0 && size == 50);
		msgnodes_put(x);
		msgnodes_swept(3);
		msgnodes_swept(77);     /* a view with no records: nothing */
		CHECK(msgnodes_get(x, &vid, got, &date, &size) == 0 && size == UINT64_MAX);
		msgnodes_put(x);
		CHECK(msgnodes_lookup(3, oid, 9, 50) == x);
		CHECK(msgnodes_get(x, &vid, got, &date, &size) == 0 &&
		      size == 50);      /* looked up again since: as it is now */
		msgnodes_put(x);
	}
	msgnodes_destroy();
	CHECK(msgnodes_count() == 0);
	oid_of(1, oid);
	CHECK(msgnodes_lookup(1, oid, 0, 0) != 0);      /* usable after destroy */
	msgnodes_destroy();
	free(ino);
	free(sorted);
}

int main(void)
{
	test_many();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
