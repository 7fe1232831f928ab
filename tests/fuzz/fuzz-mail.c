/* libFuzzer: what leifs reads out of a message (gmime parse, date, lei's
 * content hash).  The date must fit a file name. */
#include <stdint.h>
#include <stdlib.h>

#include "cache/cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	unsigned char h[CACHE_CHASH_LEN];
	int64_t date = -1;

	if (!ready) {
		cache_mail_init();
		ready = 1;
	}
	if (!cache_mail_info((const char *)data, size, &date, h) &&
	    (date < 0 || date > INT64_C(253402300799)))
		abort();
	return 0;
}
