/*
 * One daemon per cache directory: DIR/lock, flock()ed for the daemon's
 * life, holds the holder's pid as text so that a second daemon can say who
 * it is.  flock() rather than a pid file alone: the kernel drops the lock
 * when the holder dies, however it dies (SIGKILL included), so a stale file
 * never blocks; and the lock belongs to the open file description, so it
 * passes through fork() to the daemonized child with nothing to redo.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cache/cache-private.h"

static void write_pid(int fd)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());

	if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)n, 0) == n)
		return;
	/* the pid is only for the message of a second daemon: go on */
}

int cache_lock(const char *dir, int *fd_out, char *why, size_t whylen)
{
	char path[4096], pid[32];
	ssize_t n;
	int fd, err;

	*fd_out = -1;
	if ((err = cache_mkdir_p(dir))) {
		snprintf(why, whylen, "cannot create %s: %s", dir, strerror(err));
		return err;
	}
	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err = errno;
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(err));
		return err;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno;
		if (err != EWOULDBLOCK) {
			snprintf(why, whylen, "cannot lock %s: %s", path, strerror(err));
		} else {
			n = pread(fd, pid, sizeof(pid) - 1, 0);
			pid[n > 0 ? n : 0] = '\0';
			pid[strcspn(pid, "\n")] = '\0';
			if (pid[0])
				snprintf(why, whylen, "cache %s is in use by pid %s (another leifs); unmount it first",
					 dir, pid);
			else
				snprintf(why, whylen, "cache %s is in use by another leifs; unmount it first", dir);
			err = EBUSY;
		}
		close(fd);
		return err;
	}
	write_pid(fd);
	*fd_out = fd;
	return 0;
}

void cache_lock_moved(int fd)
{
	if (fd >= 0)
		write_pid(fd);
}
