/* libFuzzer: gzip (any number of members) into the mboxrd splitter. */
#include <stdint.h>
#include <stdlib.h>

#include "net/net.h"

static int count(void *arg, const char *raw, size_t len)
{
	(void)raw;
	if (len > 65536)
		abort();
	(*(size_t *)arg)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;
	net_mboxrd_t *m = net_mboxrd_new(65536, count, &n);
	net_gunzip_t *g = m ? net_gunzip_new(m) : NULL;

	if (!g)
		abort();
	if (!net_gunzip_feed(g, data, size))
		net_gunzip_finish(g);
	net_gunzip_free(g);
	net_mboxrd_free(m);
	return 0;
}
