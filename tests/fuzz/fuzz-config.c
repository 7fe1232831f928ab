/* libFuzzer: the git-config parser (config files and, later, .config). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	config_t c;
	char why[256];
	size_t i;

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
