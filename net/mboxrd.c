/*
 * Streaming mboxrd splitter.  Written by hand because gmime's GMimeParser
 * reads mbox with mboxo rules and would need the whole stream behind a
 * GMimeStream; lei's rules are simpler and must be matched exactly, since
 * the bytes we keep are hashed into file names:
 *   - a message starts at a line matching lei's strict From_ pattern,
 *   - ">From ", ">>From " ... lose one '>',
 *   - one trailing empty line (the separator) is dropped,
 *   - blank messages are skipped.
 * Data before the first From_ line is an error: that is not an mbox
 * (EBADMSG, and net_mboxrd_why says what was found instead).
 * Memory: a buffer grows past NET_BIG_MESSAGE only in the process's one
 * turn for a big message (net_big_enter), and is freed when that message
 * has been handed on; a long line of message text that cannot be a From_
 * line goes straight into the message instead of being carried whole.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

struct net_mboxrd {
	size_t max;
	net_msg_fn fn;
	void *arg;
	char *msg;              /* the current message, unescaped */
	size_t mlen, mcap;
	char *carry;            /* an incomplete line from the last chunk */
	size_t clen, ccap;
	char *fline;            /* a line that may be a From_ line, NUL-ended */
	size_t fcap;
	int spill;              /* the carried line is going into msg as it comes */
	int big;                /* this splitter has the turn (net_big_enter) */
	atomic_int *stop, *cancel;
	int in_msg;
	int mboxo;
	size_t count;
	const char *why;        /* static: why the last EBADMSG */
	regex_t from_re;
};

/* PublicInbox::MboxReader's $from_strict, as a POSIX ERE on one line */
static const char from_pattern[] =
	"^From [^[:space:]]+ +[^[:space:]]+ [^[:space:]]+ +[^[:space:]]+ "
	"[^\n:]+:[^\n:]+:[^\n:]+ [^\n:]+$";

net_mboxrd_t *net_mboxrd_new(size_t max_message, net_msg_fn fn, void *arg)
{
	net_mboxrd_t *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (regcomp(&m->from_re, from_pattern, REG_EXTENDED | REG_NOSUB)) {
		free(m);
		return NULL;
	}
	m->max = max_message;
	m->fn = fn;
	m->arg = arg;
	return m;
}

void net_mboxrd_free(net_mboxrd_t *m)
{
	if (!m)
		return;
	if (m->big)
		net_big_leave();
	regfree(&m->from_re);
	free(m->msg);
	free(m->carry);
	free(m->fline);
	free(m);
}

void net_mboxrd_set_mboxo(net_mboxrd_t *m, int mboxo)
{
	m->mboxo = mboxo;
}

void net_mboxrd_set_stop(net_mboxrd_t *m, atomic_int *stop, atomic_int *cancel)
{
	m->stop = stop;
	m->cancel = cancel;
}

size_t net_mboxrd_count(const net_mboxrd_t *m)
{
	return m->count;
}

const char *net_mboxrd_why(const net_mboxrd_t *m)
{
	return m->why ? m->why : "not an mbox";
}

/* Text where the first From_ line should be: EBADMSG, saying what it is.
 * A CR not followed by LF is a line end of a CR-only stream, which then
 * reads as one long line that cannot be a From_ line. */
static int not_mbox(net_mboxrd_t *m, const char *s, size_t len)
{
	const char *cr = memchr(s, '\r', len);

	while (cr && cr + 1 < s + len && cr[1] == '\n')
		cr = memchr(cr + 1, '\r', (size_t)(s + len - cr - 1));
	if (cr && cr + 1 < s + len)
		m->why = "not an mbox (its lines end in CR only, with no LF)";
	else if (len >= 5 && !memcmp(s, "From ", 5))
		m->why = "not an mbox (its first From_ line is malformed)";
	else
		m->why = "not an mbox (it does not start with a From_ line)";
	return EBADMSG;
}

static int grow(net_mboxrd_t *m, char **buf, size_t *cap, size_t need, size_t max)
{
	size_t n = *cap ? *cap : 4096;
	char *b;
	int err;

	if (need <= *cap)
		return 0;
	if (need > max)
		return EFBIG;
	while (n < need)
		n *= 2;
	if (n > max)
		n = max;
	if (n > NET_BIG_MESSAGE && !m->big) {
		if ((err = net_big_enter(m->stop, m->cancel)))
			return err;
		m->big = 1;
	}
	b = realloc(*buf, n);
	if (!b)
		return ENOMEM;
	*buf = b;
	*cap = n;
	return 0;
}

static int blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return 0;
	return 1;
}

static int flush(net_mboxrd_t *m)
{
	size_t n = m->mlen;
	const char *s = m->msg;

	/* lei: $raw =~ s/^\r?\n\z//ms */
	if (n >= 2 && s[n - 1] == '\n' && s[n - 2] == '\r' &&
	    (n == 2 || s[n - 3] == '\n'))
		n -= 2;
	else if (n >= 1 && s[n - 1] == '\n' && (n == 1 || s[n - 2] == '\n'))
		n -= 1;
	m->mlen = 0;
	if (blank(s, n))
		return 0;
	m->count++;
	return m->fn(m->arg, s, n);
}

/* 1 if the line (with its '\n', if any) is a From_ line, 0 if not, or
 * -ENOMEM: a From_ line may be as long as a message and no longer (max, as
 * line() makes sure), so a separator is never taken for text because of
 * its length.
 * The line is copied and NUL-terminated (sanitizers' regexec reads up to a
 * NUL), then matched with REG_STARTEND (glibc, the BSDs) so that a NUL in
 * it is matched as Perl matches it rather than ending it. */
static int is_from_line(net_mboxrd_t *m, const char *line, size_t len)
{
	regmatch_t r[1];
	int err;

	if (len < 5 || memcmp(line, "From ", 5))
		return 0;
	if (line[len - 1] == '\n')
		len--;
	if (len > INT_MAX)
		return 0;       /* regoff_t is an int: no date is that far */
	if ((err = grow(m, &m->fline, &m->fcap, len + 1,
			m->max < SIZE_MAX ? m->max + 1 : m->max)))
		return -err;
	memcpy(m->fline, line, len);
	m->fline[len] = '\0';
	r[0].rm_so = 0;
	r[0].rm_eo = (regoff_t)len;
	err = regexec(&m->from_re, m->fline, 1, r, REG_STARTEND) == 0;
	if (m->fcap > NET_BIG_MESSAGE) {
		free(m->fline);
		m->fline = NULL;
		m->fcap = 0;
	}
	return err;
}

/* one whole line, including its '\n' (absent only at end of stream); no
 * line is longer than max, as the carry of a line cut by a chunk is not,
 * so the result does not depend on the chunking */
static int append(net_mboxrd_t *m, const char *s, size_t len);

static int line(net_mboxrd_t *m, const char *s, size_t len)
{
	int err;

	if (len > m->max)
		return m->in_msg ? EFBIG : not_mbox(m, s, len);
	if ((err = is_from_line(m, s, len)) < 0)
		return -err;
	if (err) {
		if (m->in_msg && (err = flush(m)))
			return err;
		m->in_msg = 1;
		return 0;
	}
	if (!m->in_msg) {
		if (blank(s, len))
			return 0;
		return not_mbox(m, s, len);
	}
	if (s[0] == '>') {
		size_t i = 1;

		while (i < len && s[i] == '>')
			i++;
		if (len - i >= 5 && !memcmp(s + i, "From ", 5) && (!m->mboxo || i == 1)) {
			s++;
			len--;
		}
	}
	return append(m, s, len);
}

static int append(net_mboxrd_t *m, const char *s, size_t len)
{
	int err;

	if ((err = grow(m, &m->msg, &m->mcap, m->mlen + len, m->max)))
		return err;
	memcpy(m->msg + m->mlen, s, len);
	m->mlen += len;
	return 0;
}

/* After a whole line: what a big message left behind goes, and with it
 * the turn, once no buffer is big any more. */
static void settle(net_mboxrd_t *m)
{
	if (!m->big)
		return;
	if (!m->mlen && m->mcap > NET_BIG_MESSAGE) {
		free(m->msg);
		m->msg = NULL;
		m->mcap = 0;
	}
	if (!m->clen && m->ccap > NET_BIG_MESSAGE) {
		free(m->carry);
		m->carry = NULL;
		m->ccap = 0;
	}
	if (m->mcap <= NET_BIG_MESSAGE && m->ccap <= NET_BIG_MESSAGE &&
	    m->fcap <= NET_BIG_MESSAGE) {
		net_big_leave();
		m->big = 0;
	}
}

/* A carried line of message text longer than this, that is no From_ line
 * nor (starting with '>') maybe an escaped one, goes into the message as
 * it comes: it is not held twice. */
#define SPILL_AT (64u << 10)

static int spillable(const net_mboxrd_t *m)
{
	return m->in_msg && m->clen >= SPILL_AT && m->carry[0] != '>' &&
	       memcmp(m->carry, "From ", 5);
}

int net_mboxrd_feed(net_mboxrd_t *m, const char *buf, size_t len)
{
	const char *end = buf + len;
	int err;

	while (buf < end) {
		const char *nl = memchr(buf, '\n', (size_t)(end - buf));
		size_t n = nl ? (size_t)(nl + 1 - buf) : (size_t)(end - buf);

		if (m->spill) {
			if ((err = append(m, buf, n)))
				return err;
			m->spill = !nl;
		} else if (m->clen || !nl) {
			if ((err = grow(m, &m->carry, &m->ccap, m->clen + n, m->max)))
				return err != EFBIG || m->in_msg ? err :
				       m->clen ? not_mbox(m, m->carry, m->clen) :
				       not_mbox(m, buf, n);
			memcpy(m->carry + m->clen, buf, n);
			m->clen += n;
			if (nl) {
				err = line(m, m->carry, m->clen);
				m->clen = 0;
				if (err)
					return err;
			} else if (spillable(m)) {
				err = append(m, m->carry, m->clen);
				m->clen = 0;
				m->spill = 1;
				if (err)
					return err;
			}
		} else if ((err = line(m, buf, n))) {
			return err;
		}
		if (nl)
			settle(m);
		buf += n;
	}
	return 0;
}

int net_mboxrd_finish(net_mboxrd_t *m)
{
	int err;

	m->spill = 0;
	if (m->clen) {
		err = line(m, m->carry, m->clen);
		m->clen = 0;
		if (err)
			return err;
	}
	if (m->in_msg) {
		m->in_msg = 0;
		err = flush(m);
	} else {
		err = 0;
	}
	settle(m);
	return err;
}
