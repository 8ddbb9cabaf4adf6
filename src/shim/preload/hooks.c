/* shim/preload/hooks.c - the -finstrument-functions hooks (libspent-shim-hooks.a): publish the
 * running function's address in the software signal spent_shim_sig_func, so `spent shim
 * --tag func=func --histogram func` is a function profile without interrupts. On entry the
 * slot holds the callee; on exit the call site, an address inside the caller it returns to. */
#include "spent/shim.h"

SPENT_SHIM_SIGNAL(func);

void __cyg_profile_func_enter(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site) __attribute__((no_instrument_function));

void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	SPENT_SHIM_SET(func, (uintptr_t)fn);
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	SPENT_SHIM_SET(func, (uintptr_t)site);
}
