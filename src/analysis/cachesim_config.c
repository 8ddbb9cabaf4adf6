/* analysis/cachesim_config.c - cache configurations: the PatchWrx paper's Alpha 21064 and 21164, a
 * cachegrind-equivalent default, the host's caches read from sysfs, and a small text format. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cachesim.h"
#include "core/number.h"

#define MAX_CACHE_SIZE (1ull << 36)	/* 64 GB, what cachesim_config_check allows */

static void level(struct cachesim_config *c, const char *name, uint32_t lvl, enum cache_kind kind,
		  uint64_t size, uint32_t line, uint32_t assoc)
{
	struct cache_level_config *l = &c->levels[c->n_levels++];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->level = lvl;
	l->kind = kind;
	l->size = size;
	l->line = line;
	l->assoc = assoc;
	l->repl = CACHE_LRU;
	l->write_allocate = true;
}

int cachesim_config_preset(const char *name, struct cachesim_config *out, char *err,
			   size_t errlen)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->chunk = 500000;
	if (!strcmp(name, "alpha21064")) {
		/* 8 KB direct-mapped write-through split caches, 32 B lines, four write buffers */
		out->clock_mhz = 200;
		level(out, "I1", 1, CACHE_INSN, 8192, 32, 1);
		level(out, "D1", 1, CACHE_DATA, 8192, 32, 1);
		out->levels[1].write_through = true;
		out->levels[1].write_allocate = false;
		out->levels[1].write_buffers = 4;
		return 0;
	}
	if (!strcmp(name, "alpha21164")) {
		/* as the PatchWrx paper models it: one 96 KB 3-way write-back unified cache, 64 B lines,
		 * dirty bits per 16-byte subblock */
		out->clock_mhz = 400;
		level(out, "L1", 1, CACHE_UNIFIED, 96 * 1024, 64, 3);
		out->levels[0].subblock = 16;
		return 0;
	}
	if (!strcmp(name, "cachegrind")) {
		out->clock_mhz = 1000;
		level(out, "I1", 1, CACHE_INSN, 32768, 64, 8);
		level(out, "D1", 1, CACHE_DATA, 32768, 64, 8);
		level(out, "LL", 2, CACHE_UNIFIED, 8 << 20, 64, 16);
		return 0;
	}
	if (!strcmp(name, "host"))
		return cachesim_config_host(NULL, out, err, errlen);
	if (err)
		snprintf(err, errlen, "unknown cache configuration '%s'", name);
	return -ENOENT;
}

static int read_small(const char *dir, const char *file, char *buf, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = 0;
	return 0;
}

static int host_level(const char *dir, struct cachesim_config *out)
{
	char type[32], lvl[16], size[32], line[16], ways[16];
	if (read_small(dir, "type", type, sizeof(type)) || read_small(dir, "level", lvl, sizeof(lvl)) ||
	    read_small(dir, "size", size, sizeof(size)) ||
	    read_small(dir, "coherency_line_size", line, sizeof(line)))
		return -ENOENT;
	if (read_small(dir, "ways_of_associativity", ways, sizeof(ways)))
		strcpy(ways, "0");
	char *end;
	uint64_t sz = strtoull(size, &end, 10);
	if (*end == 'K')
		sz <<= 10;
	else if (*end == 'M')
		sz <<= 20;
	uint32_t l = (uint32_t)atoi(lvl);
	enum cache_kind kind = !strcmp(type, "Instruction") ? CACHE_INSN :
			       !strcmp(type, "Data") ? CACHE_DATA : CACHE_UNIFIED;
	char name[8];
	snprintf(name, sizeof(name), "%s%u", kind == CACHE_INSN ? "I" : kind == CACHE_DATA ? "D" : "L",
		 l);
	if (out->n_levels >= CACHESIM_MAX_LEVELS)
		return -E2BIG;
	struct cache_level_config *c = &out->levels[out->n_levels++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->level = l;
	c->kind = kind;
	c->size = sz;
	c->line = (uint32_t)atoi(line);
	c->assoc = (uint32_t)atoi(ways);
	c->repl = CACHE_LRU;
	c->write_allocate = true;
	return 0;
}

static int level_cmp(const void *a, const void *b)
{
	const struct cache_level_config *x = a, *y = b;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

int cachesim_config_host(const char *root, struct cachesim_config *out, char *err, size_t errlen)
{
	const char *base = root ? root : "/sys/devices/system/cpu/cpu0/cache";
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "host");
	out->chunk = 500000;
	out->clock_mhz = 1000;
	for (int i = 0; i < CACHESIM_MAX_LEVELS; i++) {
		char dir[600];
		snprintf(dir, sizeof(dir), "%s/index%d", base, i);
		if (host_level(dir, out))
			break;
	}
	if (!out->n_levels) {
		if (err)
			snprintf(err, errlen, "no caches described under '%s'", base);
		return -ENOENT;
	}
	qsort(out->levels, out->n_levels, sizeof(out->levels[0]), level_cmp);
	/* the outermost unified level is the last-level cache, named like cachegrind's LL */
	return cachesim_config_check(out, err, errlen);
}

/* KEY=V of cache L; WHY (when set) says more than the usual line error. Numbers are the ones
 * users type everywhere else in spent (core/number.h: decimal or 0x hex, "032" is 32, K/M/G
 * x1024 as hitcurve's and memmap's sizes); one too large for its field is refused here, since
 * a cast would wrap it into a small plausible value (assoc=4294967304 became 8). */
static int parse_kv(struct cache_level_config *l, const char *k, const char *v, char *why,
		    size_t whylen)
{
	uint32_t *field = !strcmp(k, "line") ? &l->line : !strcmp(k, "assoc") ? &l->assoc :
			  !strcmp(k, "buffers") ? &l->write_buffers :
			  !strcmp(k, "subblock") ? &l->subblock : !strcmp(k, "level") ? &l->level : NULL;
	if (field || !strcmp(k, "size")) {
		uint64_t n;
		int rc = num_parse_u64(v, NUM_BINARY, &n);
		if (rc == -EINVAL) {
			snprintf(why, whylen, "cache '%s': %s= takes digits (or 0x and hex digits) "
				 "with an optional K, M or G (x1024), not '%s'", l->name, k, v);
			return rc;
		}
		if (field == &l->level && (rc || n < 1 || n > CACHESIM_MAX_LEVELS)) {
			snprintf(why, whylen, "cache '%s': level= takes 1 to %d, not %s", l->name,
				 CACHESIM_MAX_LEVELS, v);
			return -ERANGE;
		}
		if (rc || (field && n > UINT32_MAX)) {
			snprintf(why, whylen, "cache '%s': %s=%s is too large (at most %s)", l->name, k,
				 v, field ? "4294967295" : "64 GB");
			return -ERANGE;
		}
		if (field)
			*field = (uint32_t)n;
		else
			l->size = n;
		return 0;
	}
	if (!strcmp(k, "kind"))
		l->kind = !strcmp(v, "insn") ? CACHE_INSN : !strcmp(v, "data") ? CACHE_DATA :
			  !strcmp(v, "unified") ? CACHE_UNIFIED : (enum cache_kind)-1;
	else if (!strcmp(k, "repl"))
		l->repl = !strcmp(v, "lru") ? CACHE_LRU : !strcmp(v, "fifo") ? CACHE_FIFO :
			  !strcmp(v, "random") ? CACHE_RANDOM : (enum cache_repl)-1;
	else if (!strcmp(k, "write"))
		l->write_through = !strcmp(v, "through") ? true : !strcmp(v, "back") ? false : 2;
	else if (!strcmp(k, "alloc"))
		l->write_allocate = !strcmp(v, "yes") ? true : !strcmp(v, "no") ? false : 2;
	else
		return -EINVAL;
	if ((int)l->kind < 0 || (int)l->repl < 0 || (int)l->write_through > 1 ||
	    (int)l->write_allocate > 1)
		return -EINVAL;
	return 0;
}

/* one line: "clock-mhz N", "chunk N", or "NAME key=value..."; WHY (when set) says more than
 * the usual line error */
static int parse_line(char *s, struct cachesim_config *out, char *why, size_t whylen)
{
	char *save = NULL, *tok = strtok_r(s, " \t", &save);
	if (!tok)
		return 0;
	if (!strcmp(tok, "clock-mhz") || !strcmp(tok, "chunk")) {
		char *v = strtok_r(NULL, " \t", &save);
		if (!v || strtok_r(NULL, " \t", &save))
			return -EINVAL;
		/* strtod took hex floats and "1e30", whose cast to the chunk's u64 is undefined:
		 * a chunk is a count of instructions (K/M/G x1000, as record -c counts), a clock
		 * a positive decimal */
		double d = 0;
		uint64_t n = 0;
		bool clock = tok[1] == 'l';
		if (clock ? num_parse_double(v, &d) || !(d > 0) : num_parse_u64(v, NUM_SI, &n) || !n) {
			snprintf(why, whylen, "%s takes a positive %s, not '%s'", tok,
				 clock ? "number" : "whole number (K, M, G x1000)", v);
			return -EINVAL;
		}
		if (clock)
			out->clock_mhz = d;
		else
			out->chunk = n;
		return 0;
	}
	if (out->n_levels >= CACHESIM_MAX_LEVELS || strlen(tok) >= sizeof(out->levels[0].name))
		return -EINVAL;
	struct cache_level_config *l = &out->levels[out->n_levels++];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", tok);
	l->level = out->n_levels;
	l->write_allocate = true;
	const char *seen[16];	/* a key given twice would silently take its last value */
	size_t n_seen = 0;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return -EINVAL;
		*eq = 0;
		for (size_t i = 0; i < n_seen; i++)
			if (!strcmp(seen[i], tok)) {
				snprintf(why, whylen, "cache '%s' has %s= twice", l->name, tok);
				return -EINVAL;
			}
		if (n_seen < sizeof(seen) / sizeof(seen[0]))
			seen[n_seen++] = tok;
		if (parse_kv(l, tok, eq + 1, why, whylen))
			return -EINVAL;
	}
	return 0;
}

int cachesim_config_parse(const char *text, struct cachesim_config *out, char *err,
			  size_t errlen)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "file");
	out->chunk = 500000;
	out->clock_mhz = 1000;
	int lineno = 0;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char buf[512];
		lineno++;
		if (n >= sizeof(buf)) {
			if (err)
				snprintf(err, errlen, "line %d is too long", lineno);
			return -EINVAL;
		}
		memcpy(buf, p, n);
		buf[n] = 0;
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		char why[192] = "";
		if (parse_line(buf, out, why, sizeof(why))) {
			if (err && why[0])
				snprintf(err, errlen, "line %d: %s", lineno, why);
			else if (err)
				snprintf(err, errlen, "line %d: expected 'NAME size=.. line=.. assoc=.. "
					 "[kind=insn|data|unified] [repl=lru|fifo|random] "
					 "[write=back|through] [alloc=yes|no] [buffers=N] [subblock=N] "
					 "[level=N]', 'clock-mhz N' or 'chunk N'", lineno);
			return -EINVAL;
		}
		p += n + (nl ? 1 : 0);
	}
	return cachesim_config_check(out, err, errlen);
}

int cachesim_config_set_keys(struct cachesim_config *cfg, const char *cache,
			     const char *const *keys, const char *const *values, size_t n,
			     char *err, size_t errlen)
{
	for (uint32_t i = 0; i < cfg->n_levels; i++) {
		if (strcmp(cfg->levels[i].name, cache))
			continue;
		for (size_t k = 0; k < n; k++) {
			char why[192] = "";
			if (parse_kv(&cfg->levels[i], keys[k], values[k], why, sizeof(why))) {
				if (err && why[0])
					snprintf(err, errlen, "%s", why);
				else if (err)
					snprintf(err, errlen, "cache '%s': bad %s=%s", cache, keys[k],
						 values[k]);
				return -EINVAL;
			}
		}
		return cachesim_config_check(cfg, err, errlen);
	}
	if (err)
		snprintf(err, errlen, "configuration '%s' has no cache '%s'", cfg->name, cache);
	return -ENOENT;
}

int cachesim_config_set(struct cachesim_config *cfg, const char *cache, const char *key,
			const char *value, char *err, size_t errlen)
{
	return cachesim_config_set_keys(cfg, cache, &key, &value, 1, err, errlen);
}

static int pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int cachesim_config_check(const struct cachesim_config *cfg, char *err, size_t errlen)
{
	if (!cfg->n_levels || cfg->n_levels > CACHESIM_MAX_LEVELS) {
		if (err)
			snprintf(err, errlen, "a cache configuration needs 1 to %d levels",
				 CACHESIM_MAX_LEVELS);
		return -EINVAL;
	}
	if (cfg->cores > CACHESIM_MAX_CORES) {
		if (err)
			snprintf(err, errlen, "at most %d cores", CACHESIM_MAX_CORES);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < cfg->n_levels; i++) {
		const struct cache_level_config *l = &cfg->levels[i];
		const char *why = NULL;
		if (!pow2(l->line) || l->line < 4 || l->line > 4096)
			why = "line size must be a power of two from 4 to 4096";
		else if (!l->size || l->size % l->line || l->size > MAX_CACHE_SIZE)
			why = "size must be a non-zero multiple of the line size, at most 64 GB";
		else if (l->assoc && (l->size / l->line) % l->assoc)
			why = "the number of lines must be a multiple of the associativity";
		else if (!l->assoc && l->size / l->line > 65536)
			why = "a fully associative cache may hold at most 65536 lines";
		else if (l->write_buffers > 64)
			why = "at most 64 write buffers";
		else if (l->subblock && (!pow2(l->subblock) || l->subblock > l->line))
			why = "subblock must be a power of two no larger than the line";
		for (uint32_t k = 0; !why && k < i; k++)
			if (!strcmp(cfg->levels[k].name, l->name))
				why = "two caches have this name (--sweep and the report name caches)";
		if (why) {
			if (err)
				snprintf(err, errlen, "cache '%s': %s", l->name, why);
			return -EINVAL;
		}
	}
	/* two caches at one level serving a common stream: which one a reference goes to, and
	 * where the other's misses go, would be guesses (the misses would skip the other cache
	 * and go to the pins). Typically a cache without level= (its line's position) beside one
	 * with it. */
	for (uint32_t i = 0; i < cfg->n_levels; i++)
		for (uint32_t j = i + 1; j < cfg->n_levels; j++) {
			const struct cache_level_config *a = &cfg->levels[i], *b = &cfg->levels[j];
			if (a->level != b->level ||
			    (a->kind != CACHE_UNIFIED && b->kind != CACHE_UNIFIED && a->kind != b->kind))
				continue;
			if (err)
				snprintf(err, errlen, "caches '%s' and '%s' are both level %u and both "
					 "hold %s: give them distinct level=N (a cache without level= is "
					 "at the position of its line)", a->name, b->name, a->level,
					 a->kind == CACHE_INSN || b->kind == CACHE_INSN ? "instructions"
					 : a->kind == CACHE_DATA || b->kind == CACHE_DATA ? "data"
					 : "instructions and data");
			return -EINVAL;
		}
	int has_i = 0, has_d = 0;
	for (uint32_t i = 0; i < cfg->n_levels; i++) {
		has_i |= cfg->levels[i].kind != CACHE_DATA;
		has_d |= cfg->levels[i].kind != CACHE_INSN;
	}
	if (!has_i || !has_d) {
		if (err)
			snprintf(err, errlen, "the configuration needs a cache for instructions and one "
				 "for data (a unified cache serves both)");
		return -EINVAL;
	}
	return 0;
}
