/* log: one line per event, to stderr in the foreground, syslog when daemonized. */
#ifndef LEIFS_LOG_H
#define LEIFS_LOG_H

void log_to_syslog(void);   /* after daemonizing */
void log_set_debug(int on);
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
