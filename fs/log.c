/* One line per event (log.h): to stderr in the foreground; once the daemon
 * detaches, to syslog, or to a file in the cache directory where no syslog
 * daemon listens (containers, minimal systems: glibc's syslog() drops
 * every line silently there); debug lines only with -d. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "fs/log.h"

static int use_syslog, debug, log_fd = -1;
static char *log_path;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* whether a syslog daemon takes lines at /dev/log (datagram or stream, as
 * glibc tries them) */
static int syslog_listens(void)
{
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t i;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", _PATH_LOG);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0), ok;

		if (fd < 0)
			continue;
		ok = !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		close(fd);
		if (ok)
			return 1;
	}
	return 0;
}

static int open_file(void)
{
	return open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

int log_detach(const char *cache_dir)
{
	if (!syslog_listens() && cache_dir &&
	    asprintf(&log_path, "%s/" LOG_FILE, cache_dir) >= 0) {
		if ((log_fd = open_file()) >= 0)
			return 1;
		free(log_path);
		log_path = NULL;
	}
	openlog("leifs", LOG_PID, LOG_DAEMON);
	use_syslog = 1;
	return 0;
}

void log_set_debug(int on)
{
	debug = on;
}

/* a line to the file, which is moved to LOG_FILE.old once it passes
 * LOG_FILE_MAX: two files at most, whatever the daemon says */
static void file_line(int prio, const char *fmt, va_list ap)
{
	char line[2048], when[32];
	struct stat st;
	struct tm tm;
	time_t now = time(NULL);
	int n, m;

	if (!gmtime_r(&now, &tm))
		memset(&tm, 0, sizeof(tm));
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(line, sizeof(line), "%s leifs[%ld]: %s", when, (long)getpid(),
		     prio == LOG_ERR ? "" : prio == LOG_INFO ? "info: " : "debug: ");
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	n = (size_t)(n + m) < sizeof(line) - 1 ? n + m : (int)sizeof(line) - 2;
	line[n++] = '\n';
	pthread_mutex_lock(&log_lock);
	if (!fstat(log_fd, &st) && st.st_size >= LOG_FILE_MAX) {
		char *old = NULL;
		int fd;

		if (asprintf(&old, "%s.old", log_path) >= 0 && !rename(log_path, old) &&
		    (fd = open_file()) >= 0) {
			close(log_fd);
			log_fd = fd;
		}
		free(old);
	}
	if (write(log_fd, line, (size_t)n) < 0)
		(void)errno;    /* nowhere left to say it */
	pthread_mutex_unlock(&log_lock);
}

static void vlog(int prio, const char *fmt, va_list ap)
{
	if (log_fd >= 0) {
		file_line(prio, fmt, ap);
		return;
	}
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
