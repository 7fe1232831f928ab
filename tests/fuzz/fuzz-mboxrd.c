/*
 * libFuzzer: the mboxrd splitter.  Oracle: the messages do not depend on
 * how the stream is chunked (whole vs. chunks sized by the first byte), and
 * none is larger than the limit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

#define LIMIT 4096

struct digest {
	uint64_t n, h;
};

static int collect(void *arg, const char *raw, size_t len)
{
	struct digest *d = arg;
	size_t i;

	if (len > LIMIT)
		abort();
	d->n++;
	d->h = d->h * 1099511628211u + len;
	for (i = 0; i < len; i++)
		d->h = (d->h ^ (unsigned char)raw[i]) * 1099511628211u;
	return 0;
}

static int split(const uint8_t *data, size_t size, size_t chunk, struct digest *d)
{
	net_mboxrd_t *m = net_mboxrd_new(LIMIT, collect, d);
	size_t i;
	int err = 0;

	if (!m)
		abort();
	for (i = 0; i < size && !err; i += chunk)
		err = net_mboxrd_feed(m, (const char *)data + i, size - i < chunk ? size - i : chunk);
	if (!err)
		err = net_mboxrd_finish(m);
	net_mboxrd_free(m);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct digest a = { 0, 0 }, b = { 0, 0 };
	size_t chunk;
	int ea, eb;

	if (!size)
		return 0;
	chunk = data[0] % 64 + 1;
	data++, size--;
	ea = split(data, size, size ? size : 1, &a);
	eb = split(data, size, chunk, &b);
	if (ea != eb || (!ea && (a.n != b.n || a.h != b.h)))
		abort();
	return 0;
}
