/*
 * Directory listings made for the kernel (dirbuf.h).  A buffer is a
 * mapping of its own, grown by mremap and unmapped at release: a listing
 * of 200,000 names is ~18 MB, and given back to malloc it stayed in the
 * daemon's arenas (RssAnon +14 MiB after four ls -f of such a view, +21
 * after four grep -r), and each doubling copied it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "fs/dirbuf.h"

/* directories open now: the kernel sends no releasedir for them once the
 * session ends (unmount, SIGTERM), so fs_destroy frees what is left */
static struct dirbuf open_dirs = { .prev = &open_dirs, .next = &open_dirs };
static pthread_mutex_t open_dirs_lock = PTHREAD_MUTEX_INITIALIZER;

void dir_link(struct dirbuf *d)
{
	pthread_mutex_lock(&open_dirs_lock);
	d->next = &open_dirs;
	d->prev = open_dirs.prev;
	open_dirs.prev->next = d;
	open_dirs.prev = d;
	pthread_mutex_unlock(&open_dirs_lock);
}

void dir_free(struct dirbuf *d)
{
	if (d->next) {
		pthread_mutex_lock(&open_dirs_lock);
		d->prev->next = d->next;
		d->next->prev = d->prev;
		pthread_mutex_unlock(&open_dirs_lock);
	}
	if (d->buf)
		munmap(d->buf, d->cap);
	free(d);
}

void dir_free_all(void)
{
	while (open_dirs.next != &open_dirs)
		dir_free(open_dirs.next);
}

void dir_add(fuse_req_t req, struct dirbuf *d, const char *name,
		    fuse_ino_t ino, mode_t type)
{
	struct stat st = { .st_ino = ino, .st_mode = type };
	size_t need = fuse_add_direntry(req, NULL, 0, name, NULL, 0);

	if (d->err)
		return;
	if (d->size + need > d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 4096;
		char *b;

		while (cap < d->size + need)
			cap *= 2;
		b = d->buf ? mremap(d->buf, d->cap, cap, MREMAP_MAYMOVE) :
			     mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED) {
			d->err = ENOMEM;
			return;
		}
		d->buf = b;
		d->cap = cap;
	}
	fuse_add_direntry(req, d->buf + d->size, need, name, &st,
			  (off_t)(d->size + need));
	d->size += need;
}
