/*
 * A dead mount at the mount point (deadmount.h).  Which mount is there and
 * whose it is comes from /proc/self/mountinfo (its user_id= option, as
 * fusermount3 checks it); the path is the mount point's parent resolved
 * and its last name, since resolving the mount point itself would touch
 * the dead mount.  Parsed by hand: libmount would be a library for one
 * line's four fields.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "fs/deadmount.h"

extern char **environ;

/* mountinfo's octal escapes (\040 for a space, \011, \012, \134) undone
 * in place */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* The topmost mount at `path` (the last line that names it): its type in
 * type, its user_id= in *uid (-1 when it has none).  0 when found. */
static int find_mount(const char *path, char *type, size_t tlen, long *uid)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *save, *tok, *opts;
	size_t cap = 0;
	int found = 0, field;

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		char *point = NULL, *fstype = NULL, *super = NULL;

		line[strcspn(line, "\n")] = '\0';
		for (field = 0, tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++) {
			if (field == 4)
				point = tok;
			if (!strcmp(tok, "-") && field > 4) {
				fstype = strtok_r(NULL, " ", &save);
				if (fstype && strtok_r(NULL, " ", &save))
					super = strtok_r(NULL, " ", &save);
				break;
			}
		}
		if (!point || !fstype)
			continue;
		unescape(point);
		if (strcmp(point, path))
			continue;
		found = 1;
		snprintf(type, tlen, "%s", fstype);
		*uid = -1;
		for (opts = super ? strtok_r(super, ",", &save) : NULL; opts; opts = strtok_r(NULL, ",", &save))
			if (!strncmp(opts, "user_id=", 8))
				*uid = strtol(opts + 8, NULL, 10);
	}
	free(line);
	fclose(f);
	return found ? 0 : -1;
}

/* the mount point's absolute path without resolving its last name */
static char *mount_path(const char *mnt)
{
	char *copy = strdup(mnt), *slash, *dir, *out = NULL;
	size_t n;

	if (!copy)
		return NULL;
	for (n = strlen(copy); n > 1 && copy[n - 1] == '/'; n--)
		copy[n - 1] = '\0';
	slash = strrchr(copy, '/');
	if (!slash)
		dir = realpath(".", NULL);
	else if (slash == copy)
		dir = strdup("/");
	else {
		*slash = '\0';
		dir = realpath(copy, NULL);
	}
	if (dir && asprintf(&out, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "",
			    slash ? slash + 1 : copy) < 0)
		out = NULL;
	free(dir);
	free(copy);
	return out;
}

/* lazily, as fusermount3 -u -z: root by umount2, a user by fusermount3
 * (the setuid helper libfuse itself runs for such a user's mounts) */
static int unmount_dead(const char *path)
{
	char *argv[] = { "fusermount3", "-u", "-z", "-q", "--", (char *)path, NULL };
	pid_t pid;
	int st;

	if (geteuid() == 0)
		return umount2(path, MNT_DETACH);
	if (posix_spawnp(&pid, "fusermount3", NULL, NULL, argv, environ))
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int deadmount_clear(const char *mnt, int *cleared, char *why, size_t whylen)
{
	struct statfs sf;
	struct stat st;
	char type[64], *path;
	long uid;
	int err;

	*cleared = 0;
	/* statfs, not stat: the kernel answers a stat of the root from the
	 * attributes it holds (a dead mount passes for a second), a statfs
	 * always asks the daemon; of another user's mount it asks nothing
	 * and succeeds, where a stat is refused */
	if (!statfs(mnt, &sf) && !stat(mnt, &st))
		return 0;
	err = errno;
	if ((err != ENOTCONN && err != EACCES) || !(path = mount_path(mnt)))
		return 0;       /* libfuse says what is wrong with it */
	if (find_mount(path, type, sizeof(type), &uid) ||
	    (strcmp(type, "fuse") && strncmp(type, "fuse.", 5))) {
		free(path);
		return 0;
	}
	if (err == EACCES) {
		/* the kernel lets no other user reach a FUSE mount, dead or
		 * served: its owner or root must unmount it */
		snprintf(why, whylen, "%s is a FUSE mount (%s) of uid %ld, which uid %ld cannot reach: "
			 "run fusermount3 -u %s as that user or root, or mount elsewhere",
			 mnt, type, uid, (long)getuid(), mnt);
	} else if (uid != (long)getuid() || unmount_dead(path) || (statfs(mnt, &sf) && errno == ENOTCONN)) {
		snprintf(why, whylen, "%s is a dead %s mount: run fusermount3 -u %s", mnt,
			 strcmp(type, "fuse.leifs") ? "FUSE" : "leifs", mnt);
	} else {
		*cleared = 1;
		free(path);
		return 0;
	}
	free(path);
	return -1;
}
