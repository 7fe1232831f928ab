/*
 * index-tool: the local index without a mount, for tests and benchmarks.
 *   index-tool add DBDIR FILE...      index raw messages (one per file)
 *   index-tool q DBDIR GITDIR QUERY   print the blob ids QUERY matches
 *   index-tool tq DBDIR GITDIR QUERY  the same with whole threads (t=1):
 *                                     "* oid" for a match, "  oid" else
 *   index-tool tqs DBDIR GITDIR MARK QUERY   tq over what was indexed
 *                                     after MARK, then "mark N" (the next)
 *   index-tool terms FILE             print the document's fields
 *   index-tool patchid FILE           print the body's patch id
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/cache-private.h"
#include "cache/index.h"
#include "cache/terms.h"
#include "net/net.h"
#include "query/query.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 65536 > cap) {
			char *t = realloc(buf, cap = (n + 65536) * 2);

			if (!t) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = t;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r);
	fclose(f);
	*len = n;
	return buf;
}

static int print_oid(void *arg, const unsigned char *oid)
{
	char hex[41];

	(void)arg;
	cache_oid_hex(oid, hex);
	puts(hex);
	return 0;
}

static int print_thread_oid(void *arg, const unsigned char *oid, int hit)
{
	char hex[41];

	(void)arg;
	cache_oid_hex(oid, hex);
	printf("%s %s\n", hit ? "*" : " ", hex);
	return 0;
}

/* query_approxidate's dates, read by git in the repository arg */
static int git_dates(void *arg, char *const *dates, size_t n, long long *out, char *why,
		     size_t whylen)
{
	return net_git_dates(arg, dates, n, out, 30000, NULL, why, whylen);
}

int main(int argc, char **argv)
{
	cache_index_t *x = NULL;
	char why[512] = "";
	int err = 0, i;

	cache_mail_init();
	if (argc >= 3 && !strcmp(argv[1], "terms")) {
		struct term_doc d;
		size_t len, k;
		char *raw = slurp(argv[2], &len);

		if (!raw || cache_terms(raw, len, &d))
			return 1;
		printf("ts=%.0f ymd=%.0f dt=%.0f bytes=%.0f\n", d.ts, d.yyyymmdd, d.dt, d.bytes);
		for (k = 0; k < d.n; k++)
			printf("%d %s [%s]\n", d.f[k].kind, d.f[k].prefix, d.f[k].text);
		cache_terms_free(&d);
		free(raw);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "patchid")) {
		size_t len;
		char *raw = slurp(argv[2], &len), hex[41];

		if (!raw)
			return 1;
		err = cache_patch_id(raw, len, hex);
		if (!err)
			puts(hex);
		free(raw);
		return err ? 1 : 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: index-tool add DBDIR FILE... | q DBDIR GITDIR QUERY\n");
		return 2;
	}
	if ((err = cache_index_open(argv[2], &x, why, sizeof(why)))) {
		fprintf(stderr, "index-tool: %s\n", why);
		return 1;
	}
	if (!strcmp(argv[1], "add")) {
		for (i = 3; i < argc && !err; i++) {
			size_t len;
			char *raw = slurp(argv[i], &len);
			unsigned char oid[CACHE_OID_LEN];

			if (!raw) {
				fprintf(stderr, "index-tool: cannot read %s\n", argv[i]);
				err = errno ? errno : EIO;
				break;
			}
			cache_oid(raw, len, oid);
			err = cache_index_add(x, oid, raw, len, NULL, why, sizeof(why));
			free(raw);
		}
		if (!err)
			err = cache_index_commit(x, why, sizeof(why));
	} else if ((!strcmp(argv[1], "q") || !strcmp(argv[1], "tq")) && argc == 5) {
		char *q = NULL;

		if (!(err = net_git_dir_init(argv[3])) &&
		    !(err = query_approxidate(argv[4], git_dates, argv[3], &q, why, sizeof(why))))
			err = argv[1][0] == 't' ?
				cache_index_search_threads(x, q, 1, print_thread_oid, NULL, why,
							   sizeof(why)) :
				cache_index_search(x, q, print_oid, NULL, why, sizeof(why));
		free(q);
	} else if (!strcmp(argv[1], "tqs") && argc == 6) {
		char *q = NULL;
		uint64_t mark = 0;

		if (!(err = net_git_dir_init(argv[3])) &&
		    !(err = query_approxidate(argv[5], git_dates, argv[3], &q, why, sizeof(why))) &&
		    !(err = cache_index_search_since(x, q, 1, strtoull(argv[4], NULL, 10), &mark,
						     print_thread_oid, NULL, why, sizeof(why))))
			printf("mark %llu\n", (unsigned long long)mark);
		free(q);
	} else {
		err = EINVAL;
		snprintf(why, sizeof(why), "bad command");
	}
	if (err)
		fprintf(stderr, "index-tool: %s (%s)\n", why, strerror(err));
	cache_index_close(x);
	return err ? 1 : 0;
}
