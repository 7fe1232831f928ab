/* libFuzzer: the git-config parser (config files) and, over it, a view's
 * .config (fs/settings.c): every refusal says why, and what .config reads
 * back parses to the same settings. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/config.h"
#include "fs/settings.h"

static void check_settings(const char *text, size_t size)
{
	static char *srcs[] = { "https://lore.kernel.org/all/" };
	const struct settings def = { .refresh = 600, .sources = srcs, .nsources = 1 };
	struct settings s, t;
	char why[256], *back;
	int i;

	why[0] = '\0';
	if (settings_parse(&def, text, size, &s, why, sizeof(why))) {
		if (!why[0])
			abort();
		return;
	}
	if (!(back = settings_format(&s)))
		abort();
	if (settings_parse(&def, back, strlen(back), &t, why, sizeof(why)) ||
	    t.threads != s.threads || t.dedupe != s.dedupe || t.limit != s.limit ||
	    t.refresh != s.refresh || t.nsources != s.nsources)
		abort();
	for (i = 0; i < s.nsources; i++)
		if (strcmp(s.sources[i], t.sources[i]))
			abort();
	free(back);
	settings_free(&t);
	settings_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	config_t c;
	char why[256];
	size_t i;

	check_settings((const char *)data, size);
	if (config_parse((const char *)data, size, &c, why, sizeof(why))) {
		if (!why[0])
			abort();        /* every refusal says why */
		return 0;
	}
	for (i = 0; i < c.n; i++)
		if (!strchr(c.items[i].key, '.'))
			abort();
	config_free(&c);
	return 0;
}
