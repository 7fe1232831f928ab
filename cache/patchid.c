/*
 * `git patch-id --stable` of a message body, for the patchid: prefix.
 *
 * Written by hand rather than run as git: public-inbox spawns git for every
 * message that looks like a patch, which would cost a fork per patch while
 * indexing (tens of thousands in a real list).  This follows git 2.39's
 * builtin/patch-id.c line by line for its input (one mail body, no commit
 * headers): per file, SHA-1 of the diff lines with all whitespace removed,
 * the file hashes summed bytewise with carry ("stable").  The unit tests
 * compare it with git on generated and real patches.
 */
#include <ctype.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

struct pid {
	EVP_MD_CTX *ctx;
	unsigned char sum[20];
};

static void flush_one(struct pid *p)
{
	unsigned char h[EVP_MAX_MD_SIZE];
	unsigned carry = 0;
	int i;

	EVP_DigestFinal_ex(p->ctx, h, NULL);
	EVP_DigestInit_ex(p->ctx, EVP_sha1(), NULL);
	for (i = 0; i < 20; i++) {
		carry += p->sum[i] + h[i];
		p->sum[i] = (unsigned char)carry;
		carry >>= 8;
	}
}

/* "@@ -a,b +c,d": b and d, 1 when missing */
static int scan_hunk_header(const char *p, int *before, int *after)
{
	static const char digits[] = "0123456789";
	const char *q = p + 4, *r;
	size_t n = strspn(q, digits);

	if (q[n] == ',') {
		q += n + 1;
		*before = atoi(q);
		n = strspn(q, digits);
	} else {
		*before = 1;
	}
	if (n == 0 || q[n] != ' ' || q[n + 1] != '+')
		return 0;
	r = q + n + 2;
	n = strspn(r, digits);
	if (r[n] == ',') {
		r += n + 1;
		*after = atoi(r);
		n = strspn(r, digits);
	} else {
		*after = 1;
	}
	return n != 0;
}

static size_t remove_space(char *line, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++)
		if (!isspace((unsigned char)line[i]))
			line[o++] = line[i];
	return o;
}

static int is_hex40(const char *p)
{
	int i;

	for (i = 0; i < 40; i++)
		if (!isxdigit((unsigned char)p[i]))
			return 0;
	return 1;
}

static int starts(const char *s, const char *pfx)
{
	return !strncmp(s, pfx, strlen(pfx));
}

int cache_patch_id(const char *text, size_t len, char hex[41])
{
	struct pid p = { 0 };
	char pre[64] = "", post[64] = "", *line = NULL;
	const char *s = text, *end = text + len;
	size_t patchlen = 0, cap = 0;
	int before = -1, after = -1, binary = 0, i;

	if (!(p.ctx = EVP_MD_CTX_new()))
		return ENOMEM;
	EVP_DigestInit_ex(p.ctx, EVP_sha1(), NULL);
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s), l;
		const char *q;

		if (n + 1 > cap) {
			char *t = realloc(line, n + 64);

			if (!t) {
				free(line);
				EVP_MD_CTX_free(p.ctx);
				return ENOMEM;
			}
			line = t;
			cap = n + 64;
		}
		memcpy(line, s, n);
		line[n] = '\0';
		s += n;

		q = line;
		if (starts(line, "diff-tree "))
			q = line + 10;
		else if (starts(line, "commit "))
			q = line + 7;
		else if (starts(line, "From "))
			q = line + 5;
		else if (starts(line, "\\ ") && strlen(line) > 12)
			continue;
		if (strlen(q) >= 40 && is_hex40(q))
			break;          /* the next commit: our patch ends */
		if (!patchlen && !starts(line, "diff "))
			continue;       /* commit message */
		if (before == -1) {
			if (starts(line, "GIT binary patch") || starts(line, "Binary files")) {
				binary = 1;
				before = 0;
				EVP_DigestUpdate(p.ctx, pre, strlen(pre));
				EVP_DigestUpdate(p.ctx, post, strlen(post));
				flush_one(&p);
				continue;
			} else if (starts(line, "index ")) {
				char *o1 = strstr(line, ".."), *o2 = NULL;

				if (o1)
					o2 = strchr(o1, ' ');
				if (!o2)
					o2 = line + strlen(line) - 1;
				if (o1 && o1 > line + 6) {
					*o1 = *o2 = '\0';
					snprintf(pre, sizeof(pre), "%s", line + 6);
					snprintf(post, sizeof(post), "%s", o1 + 2);
				}
				continue;
			} else if (starts(line, "--- ")) {
				before = after = 1;
			} else if (!isalpha((unsigned char)line[0])) {
				break;
			}
		}
		if (binary) {
			if (starts(line, "diff ")) {
				binary = 0;
				before = -1;
			}
			continue;
		}
		if (before == 0 && after == 0) {
			if (starts(line, "@@ -")) {
				scan_hunk_header(line, &before, &after);
				continue;
			}
			if (!starts(line, "diff "))
				break;          /* the end of the patch */
			flush_one(&p);          /* another file */
			before = after = -1;
		}
		if (line[0] == '-' || line[0] == ' ')
			before--;
		if (line[0] == '+' || line[0] == ' ')
			after--;
		l = remove_space(line, strlen(line));
		patchlen += l;
		EVP_DigestUpdate(p.ctx, line, l);
	}
	flush_one(&p);
	free(line);
	EVP_MD_CTX_free(p.ctx);
	if (!patchlen)
		return ENOENT;
	for (i = 0; i < 20; i++) {
		static const char x[] = "0123456789abcdef";

		hex[2 * i] = x[p.sum[i] >> 4];
		hex[2 * i + 1] = x[p.sum[i] & 15];
	}
	hex[40] = '\0';
	return 0;
}
