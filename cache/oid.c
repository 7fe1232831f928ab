/* git blob ids: SHA-1 of "blob <len>\0" followed by the raw message. */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"

void cache_oid(const char *raw, size_t len, unsigned char oid[CACHE_OID_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	char hdr[32];
	int n = snprintf(hdr, sizeof(hdr), "blob %zu", len);

	EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
	EVP_DigestUpdate(ctx, hdr, (size_t)n + 1);  /* with the NUL */
	EVP_DigestUpdate(ctx, raw, len);
	EVP_DigestFinal_ex(ctx, oid, NULL);
	EVP_MD_CTX_free(ctx);
}

void cache_oid_hex(const unsigned char *oid, char hex[2 * CACHE_OID_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < CACHE_OID_LEN; i++) {
		hex[2 * i] = digits[oid[i] >> 4];
		hex[2 * i + 1] = digits[oid[i] & 15];
	}
	hex[2 * CACHE_OID_LEN] = '\0';
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;      /* uppercase is not a name we ever make */
}

int cache_oid_parse(const char *hex, unsigned char oid[CACHE_OID_LEN])
{
	int i;

	for (i = 0; i < CACHE_OID_LEN; i++) {
		int hi = nibble(hex[2 * i]), lo = hi < 0 ? -1 : nibble(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return EINVAL;
		oid[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}
