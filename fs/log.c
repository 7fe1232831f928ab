/* One line per event (log.h): to stderr in the foreground, to syslog once
 * the daemon detaches; debug lines only with -d. */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "fs/log.h"

static int use_syslog, debug;

void log_to_syslog(void)
{
	openlog("leifs", LOG_PID, LOG_DAEMON);
	use_syslog = 1;
}

void log_set_debug(int on)
{
	debug = on;
}

static void vlog(int prio, const char *fmt, va_list ap)
{
	if (use_syslog) {
		vsyslog(prio, fmt, ap);
		return;
	}
	fputs("leifs: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!debug)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}
