/*
 * What the kernel is told when a view changes (fs_view_changed), and
 * fs-notify.h's thread: started at the first name, one queue under one
 * mutex, each name sent with fuse_lowlevel_notify_inval_entry.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs-notify.h"
#include "fs/fs.h"
#include "fs/msgname.h"
#include "fs/node.h"

struct gone {
	struct gone *next;
	uint64_t parent;
	size_t len;
	char name[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct gone *head, **tail = &head;       /* all protected by lock */
static size_t waiting;
static int started, stopping;
static struct fuse_session *session;
static pthread_t thread;

static void *run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		struct gone *g;

		while (!head && !stopping)
			pthread_cond_wait(&cond, &lock);
		if (stopping)
			break;
		g = head;
		if (!(head = g->next))
			tail = &head;
		waiting--;
		pthread_mutex_unlock(&lock);
		/* ENOENT: the kernel had no such entry, nothing to do */
		fuse_lowlevel_notify_inval_entry(session, g->parent, g->name, g->len);
		free(g);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

void fs_notify_session(struct fuse_session *se)
{
	session = se;
}

int fs_notify_gone(uint64_t parent, const char *name, int force)
{
	size_t len = strlen(name);
	struct gone *g;

	if (!session || !(g = malloc(sizeof(*g) + len + 1)))
		return -1;
	g->next = NULL;
	g->parent = parent;
	g->len = len;
	memcpy(g->name, name, len + 1);
	pthread_mutex_lock(&lock);
	if (stopping || (waiting >= NOTIFY_MAX && !force) ||
	    (!started && pthread_create(&thread, NULL, run, NULL))) {
		pthread_mutex_unlock(&lock);
		free(g);
		return -1;
	}
	started = 1;
	*tail = g;
	tail = &g->next;
	waiting++;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	return 0;
}

void fs_notify_stop(void)
{
	int join;

	pthread_mutex_lock(&lock);
	stopping = 1;
	join = started;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	if (join)
		pthread_join(thread, NULL);
	while (head) {
		struct gone *g = head;

		head = g->next;
		free(g);
	}
	tail = &head;
	waiting = 0;
	started = stopping = 0;
}

/*
 * A search changed a view: the kernel keeps listings of cur/ and new/ (and
 * their attributes, for LIST_TIMEOUT) and would show the change only when
 * those expire.  Invalidating the two inodes makes the next listing ask.
 * The names of messages that left are kept for MSG_ENTRY_TIMEOUT (fs.c):
 * each is told gone (fs-notify.h), whether or not the kernel looked it up
 * (a lookup that read the entry before the sweep may still be answering:
 * the kernel's directory lock puts the notice after it).  When not all of
 * them can be told, cur/ or new/ itself is, which drops all its names
 * but those in use (a file open, a shell in it): the kernel keeps those
 * under the old directory entry, which the next lookup of cur/ finds again.
 */
void fs_view_changed(void *arg, uint64_t vid, const struct cache_gone *gone)
{
	struct fuse_session *se = arg;
	uint64_t dir[2] = { 0 }, *inos;
	long i, n;
	size_t k;
	int lost[2] = { 0 };

	if (!se)
		return;
	/* first, before the refresh is seen to end: a getattr now asks the
	 * cache whether a message it kept is still in the view */
	if (gone && (gone->n || gone->missed))
		node_msg_swept(vid);
	if ((dir[CACHE_CUR] = node_find_ino(N_CUR, vid)))
		fuse_lowlevel_notify_inval_inode(se, dir[CACHE_CUR], 0, 0);
	if ((dir[CACHE_NEW] = node_find_ino(N_NEW, vid)))
		fuse_lowlevel_notify_inval_inode(se, dir[CACHE_NEW], 0, 0);
	/* some were not kept: the directories go whole, names would be waste */
	if (gone && gone->missed)
		lost[CACHE_CUR] = lost[CACHE_NEW] = 1;
	for (k = 0; gone && k < gone->n; k++) {
		const struct cache_entry *e = &gone->e[k];
		char name[128];

		if (e->where > CACHE_CUR || !dir[e->where] || lost[e->where])
			continue;
		msgname_format(e, name, sizeof(name));
		lost[e->where] = fs_notify_gone(dir[e->where], name, 0) != 0;
	}
	if ((lost[CACHE_CUR] && dir[CACHE_CUR]) || (lost[CACHE_NEW] && dir[CACHE_NEW])) {
		uint64_t view = node_find_ino(N_VIEW, vid);

		if (view && lost[CACHE_CUR] && dir[CACHE_CUR])
			fs_notify_gone(view, "cur", 1);
		if (view && lost[CACHE_NEW] && dir[CACHE_NEW])
			fs_notify_gone(view, "new", 1);
	}
	/* and series/ (the search brought it up to date first): its listing,
	 * each revision's and file's attributes and a file's pages */
	if ((n = node_view_inos(vid, N_SERIES, N_SFILE, &inos)) > 0)
		for (i = 0; i < n; i++)
			fuse_lowlevel_notify_inval_inode(se, inos[i], 0, 0);
	free(inos);
}
