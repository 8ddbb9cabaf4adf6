/* tests/fuzz/fuzz_cachesim_config.c - the cache configuration text parser on arbitrary bytes;
 * whatever it accepts must also build a simulator that survives a few references. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cachesim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct cachesim_config cfg;
	char err[256];
	if (cachesim_config_parse(text, &cfg, err, sizeof(err)) == 0) {
		uint64_t total = 0;
		for (uint32_t i = 0; i < cfg.n_levels; i++)
			total += cfg.levels[i].size;
		struct cachesim *cs;
		if (total <= (64u << 20) && cachesim_new(&cfg, &cs, err, sizeof(err)) == 0) {
			for (uint64_t a = 0; a < 4096; a += 24)
				cachesim_access(cs, 0, a % 3 ? 'd' : 'i', a * 977, 8, 1 + a % 3);
			cachesim_finish(cs);
			cachesim_free(cs);
		}
	}
	free(text);
	return 0;
}
