/* log: one line per event, to stderr in the foreground; when daemonized,
 * to syslog, or to CACHE/leifs.log where no syslog daemon listens. */
#ifndef LEIFS_LOG_H
#define LEIFS_LOG_H

/* the file where syslog is not there, in the cache directory; moved to
 * LOG_FILE.old when it passes LOG_FILE_MAX bytes */
#define LOG_FILE "leifs.log"
#define LOG_FILE_MAX (1L << 20)

/* after daemonizing: 1 when the lines go to the file, 0 to syslog */
int log_detach(const char *cache_dir);
void log_set_debug(int on);
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
