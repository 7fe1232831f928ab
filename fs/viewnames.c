/* The names a view directory holds (viewnames.h). */
#include <string.h>

#include "fs/node.h"
#include "fs/viewnames.h"

static const struct {
	const char *name;
	int kind;
} view_children[] = {
	{ "cur", N_CUR }, { "new", N_NEW }, { "tmp", N_TMP },
	{ ".query", N_QUERY }, { ".status", N_STATUS }, { ".refresh", N_REFRESH },
	{ ".config", N_CONFIG }, { ".unhide", N_UNHIDE }, { "series", N_SERIES },
};

/* the kind of a view's own child `name`, or -1 */
int viewnames_child(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(view_children) / sizeof(view_children[0]); i++)
		if (!strcmp(name, view_children[i].name))
			return view_children[i].kind;
	return -1;
}

/* The temporary files that tools write beside a file, then rename over
 * it: a fixed prefix and random letters (mkstemp's XXXXXX).  Names as
 * each tool makes them (seen with strace): */
static const struct {
	const char *prefix;
	size_t random;          /* letters after the prefix */
	int underscore;         /* '_' among them */
} editor_temps[] = {
	{ "sed", 6, 0 },        /* GNU sed -i */
	{ "XX", 6, 0 },         /* perl -i (template "XXXXXXXX") */
	{ "tmp", 8, 1 },        /* python's tempfile (mkstemp, NamedTemporaryFile) */
};

static int editor_temp_name(const char *name)
{
	size_t i, k, n;

	for (i = 0; i < sizeof(editor_temps) / sizeof(editor_temps[0]); i++) {
		n = strlen(editor_temps[i].prefix);
		if (strncmp(name, editor_temps[i].prefix, n) || strlen(name) != n + editor_temps[i].random)
			continue;
		for (k = n; name[k]; k++)
			if (!((name[k] >= 'a' && name[k] <= 'z') || (name[k] >= 'A' && name[k] <= 'Z') ||
			      (name[k] >= '0' && name[k] <= '9') ||
			      (name[k] == '_' && editor_temps[i].underscore)))
				break;
		if (!name[k])
			return 1;
	}
	return 0;
}

const char *viewnames_nth(size_t i, int *kind)
{
	if (i >= sizeof(view_children) / sizeof(view_children[0]))
		return NULL;
	*kind = view_children[i].kind;
	return view_children[i].name;
}

/* A client file of a view: a dot name that is none of leifs's own (so
 * never .config, the view's settings, N_CONFIG), as mbsync's .uidvalidity, vim's swap file
 * and backup (.config.swp, .config~) or git's .config.lock; or the
 * temporary file of sed -i, perl -i or python's tempfile. */
int viewnames_client_file(const char *name)
{
	size_t i;

	if (editor_temp_name(name))
		return 1;
	if (name[0] != '.' || !strcmp(name, ".") || !strcmp(name, "..") || strlen(name) > 255)
		return 0;
	for (i = 0; i < sizeof(view_children) / sizeof(view_children[0]); i++)
		if (!strcmp(name, view_children[i].name))
			return 0;
	return 1;
}
