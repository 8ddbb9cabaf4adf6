/* analysis/symtab.h - runtime-address symbol tables for trace sinks: the functions and data
 * objects of every image a trace loaded (from its ELF .symtab/.dynsym), looked up by address
 * (to name a false-shared line by its variable) or by name (to find pthread entry points). */
#ifndef SPENT_ANALYSIS_SYMTAB_H
#define SPENT_ANALYSIS_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spent/trace.h"

struct symtab_sym {
	uint64_t addr, size;	/* runtime address */
	char *name;
	bool is_func;
	bool hidden;	/* a non-default version of its name (SYMTABLE_HIDDEN) */
};

struct symtab;

/* An empty table; free with symtab_free(). NULL on ENOMEM. */
struct symtab *symtab_new(void);
void symtab_free(struct symtab *st);

/* Add one symbol (NAME copied); 0 or -ENOMEM. */
int symtab_add(struct symtab *st, const char *name, uint64_t addr, uint64_t size, bool is_func);
/* Add the function and object symbols of the ELF file PATH loaded with bias BASE;
 * 0 or -errno (unreadable or not ELF: nothing added). */
int symtab_add_image(struct symtab *st, const char *path, uint64_t base);
/* Add every image named by SPENT_TRACE_EV_IMAGE_LOAD events of BATCH (unreadable images skipped). */
void symtab_add_batch_images(struct symtab *st, const struct spent_trace_batch *batch);

/* The symbol containing ADDR (size 0 symbols match their address only), or NULL.
 * The pointer stays valid until the next symtab_add*() or symtab_free(). */
const struct symtab_sym *symtab_lookup(struct symtab *st, uint64_t addr);
/* "symbol", "symbol+OFF" or "0xADDR" for ADDR into BUF (ST may be NULL); returns BUF. */
const char *symtab_name_addr(struct symtab *st, uint64_t addr, char *buf, size_t len);
/* Address of the function symbol named NAME, its default version when several are (glibc's
 * pthread_cond_timedwait@@GLIBC_2.3.2, not the compat @GLIBC_2.2.5 that 2.36 lists first);
 * 0 or -ENOENT. */
int symtab_find_func(struct symtab *st, const char *name, uint64_t *addr);
/* Every distinct address of a function named NAME (each image's definition, each version), at
 * most MAX of them into ADDRS; how many were found. */
size_t symtab_find_funcs(struct symtab *st, const char *name, uint64_t *addrs, size_t max);
size_t symtab_count(const struct symtab *st);

#endif
