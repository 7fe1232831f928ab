/*
 * Streaming gunzip into an mboxrd splitter, with zlib.  public-inbox may
 * answer with several gzip members back to back, so a member's end resets
 * the inflater instead of ending the stream.  A stream that stops inside a
 * member is truncated: EPROTO.
 */
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#include "net/net.h"

struct net_gunzip {
	z_stream z;
	net_mboxrd_t *sink;
	int in_member;          /* inside a gzip member that has not ended */
	int seen;               /* any input at all */
	unsigned char out[65536];
};

net_gunzip_t *net_gunzip_new(net_mboxrd_t *sink)
{
	net_gunzip_t *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) {
		free(g);
		return NULL;
	}
	g->sink = sink;
	return g;
}

void net_gunzip_free(net_gunzip_t *g)
{
	if (!g)
		return;
	inflateEnd(&g->z);
	free(g);
}

int net_gunzip_feed(net_gunzip_t *g, const void *buf, size_t len)
{
	int err;

	if (!len)
		return 0;
	g->seen = 1;
	g->z.next_in = (unsigned char *)buf;
	g->z.avail_in = (uInt)len;
	for (;;) {
		int rc;

		if (!g->in_member) {
			if (!g->z.avail_in)
				return 0;
			if (inflateReset(&g->z) != Z_OK)
				return EPROTO;
			g->in_member = 1;
		}
		g->z.next_out = g->out;
		g->z.avail_out = sizeof(g->out);
		rc = inflate(&g->z, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
			return EPROTO;
		if (g->z.avail_out < sizeof(g->out) &&
		    (err = net_mboxrd_feed(g->sink, (const char *)g->out,
					   sizeof(g->out) - g->z.avail_out)))
			return err;
		if (rc == Z_STREAM_END)
			g->in_member = 0;       /* another member may follow */
		else if (g->z.avail_out > 0 && g->z.avail_in == 0)
			return 0;               /* all input used, nothing held back */
		else if (rc == Z_BUF_ERROR)
			return 0;
	}
}

int net_gunzip_finish(net_gunzip_t *g)
{
	if (!g->seen || g->in_member)
		return EPROTO;
	return net_mboxrd_finish(g->sink);
}
