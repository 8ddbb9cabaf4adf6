/* collect/daemon_kernel.h - the kernel's symbols kept with the daemon's database: DB/kallsyms
 * (the text symbols of /proc/kallsyms, as `spent record` keeps them next to a profile), written
 * when the daemon starts, so `spent report -i DB` names kernel samples from the kernel the
 * daemon sampled, also on another host or after a reboot into another kernel. */
#ifndef SPENT_COLLECT_DAEMON_KERNEL_H
#define SPENT_COLLECT_DAEMON_KERNEL_H

#include <sys/types.h>

/* Copy the text symbols of KALLSYMS (/proc/kallsyms) to DB/kallsyms atomically with MODE.
 * 0, -ENODATA when none is readable (kptr_restrict: nothing written), or -errno. */
int dkernel_save_kallsyms(const char *db, const char *kallsyms, mode_t mode);

#endif
