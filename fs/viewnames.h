/*
 * The names in a view directory: leifs's own children (cur, new, tmp and
 * the text files) and the client files a user's tools may keep there.
 * Pure functions of the name; any thread.
 */
#ifndef LEIFS_FS_VIEWNAMES_H
#define LEIFS_FS_VIEWNAMES_H

#include <stddef.h>

/* the node kind of a view's own child `name`, or -1 */
int viewnames_child(const char *name);

/* the i-th of a view's own children (from 0), its kind in *kind; NULL
 * after the last */
const char *viewnames_nth(size_t i, int *kind);

/* whether `name` may be a client file of a view: a dot name that is none
 * of leifs's own (never .config, the view's settings), as mbsync's
 * .uidvalidity, vim's swap file and backup or git's .config.lock; or a
 * temporary file that sed -i, perl -i or python's tempfile makes */
int viewnames_client_file(const char *name);

#endif
