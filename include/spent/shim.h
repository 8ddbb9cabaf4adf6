/* spent/shim.h - software signals for Shim: cache-line-aligned 64-bit signal slots under
 * predictable symbol names, the -finstrument-functions tag, and the static-link entry point.
 *
 * A software signal is one memory location the application writes and the Shim observer
 * thread reads with a plain load (the Shim paper's "software signal channels"). Declare a slot at
 * file scope and write it as the program runs:
 *
 *     #include <spent/shim.h>
 *     SPENT_SHIM_SIGNAL(phase);              // symbol spent_shim_sig_phase, 64-byte aligned
 *     SPENT_SHIM_SIGNAL(bytes);
 *     ...
 *     SPENT_SHIM_SET(phase, 2);              // a tag: any value (id, address, state)
 *     SPENT_SHIM_ADD(bytes, n);              // a counter: single writer, monotonic
 *
 * and observe it with `spent shim --tag phase=phase --rate bytes=bytes -- ./prog`: the
 * coordinator looks SYMBOL up as written, then as spent_shim_sig_SYMBOL, in the ELF symbol
 * tables of the program and its libraries. Each slot owns its cache line, so the observer's
 * loads never share a line with unrelated application data.
 *
 * Function tags: compile with -finstrument-functions and link libspent-shim-hooks.a (build/,
 * or LIBDIR/spent/ when installed); the hooks publish the address of the running function in
 * spent_shim_sig_func, which `spent shim --histogram func --tag func=func` maps back to
 * function names.
 *
 * Static programs cannot be preloaded: link libspent-shim.a (beside the hooks) with
 * -Wl,-u,spent_shim_start (or call spent_shim_start() at the top of main); the observer then
 * starts inside the program when it runs under `spent shim`, and does nothing otherwise.
 */
#ifndef SPENT_SHIM_H
#define SPENT_SHIM_H

#include <stdint.h>

#include "spent/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPENT_SHIM_SYMBOL_PREFIX "spent_shim_sig_"

/* Define a signal slot NAME (symbol spent_shim_sig_NAME): 64-bit, alone in its cache line. */
#define SPENT_SHIM_SIGNAL(name)                                                              \
	volatile uint64_t spent_shim_sig_##name __attribute__((aligned(64), used))
/* Declare a slot defined in another file. */
#define SPENT_SHIM_SIGNAL_EXTERN(name) extern volatile uint64_t spent_shim_sig_##name
/* Publish a tag value: one plain store. */
#define SPENT_SHIM_SET(name, v) (spent_shim_sig_##name = (uint64_t)(v))
/* Advance a counter (one writer thread per slot): a load and a store, no atomics. */
#define SPENT_SHIM_ADD(name, n) (spent_shim_sig_##name = spent_shim_sig_##name + (uint64_t)(n))
/* Read a slot back. */
#define SPENT_SHIM_GET(name) (spent_shim_sig_##name)

/*
 * Start the observer in this process when it runs under `spent shim` (the SPENT_SHIM_FD
 * environment variable names the coordinator's shared memory); a no-op otherwise and when
 * already started. Returns 0, or -errno when the coordinator's configuration is unusable
 * (the coordinator reports why). Provided by libspent-shim.so and libspent-shim.a.
 */
SPENT_API int spent_shim_start(void);

#ifdef __cplusplus
}
#endif
#endif
