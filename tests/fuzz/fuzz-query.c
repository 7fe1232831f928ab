/*
 * libFuzzer: view names and queries.  A name that decodes gives a query
 * that encodes back to a name decoding to the same query; validation and
 * the incremental suffix never fail on what decoding accepted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1), *q = NULL, *n2 = NULL, *q2 = NULL, *inc = NULL;
	const char *why;

	if (!name)
		abort();
	memcpy(name, data, size);
	name[size] = '\0';
	query_validate(name, &why);
	/* the kernel hands us names without '/' and of 255 bytes at most */
	if (!strchr(name, '/') && size <= 255 && !query_name_decode(name, &q, &why)) {
		if (query_name_encode(q, &n2) || query_name_decode(n2, &q2, &why) || strcmp(q, q2))
			abort();
		if (!query_validate(q, &why)) {
			if (query_incremental(q, 1700000000, &inc))
				abort();
		}
	}
	free(inc);
	free(q2);
	free(n2);
	free(q);
	free(name);
	return 0;
}
