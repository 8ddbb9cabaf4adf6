/* collect/daemon_kernel.h - the kernel's identity and symbols kept with the daemon's database:
 * [kernel.kallsyms] is identified by the running kernel's build-id plus the runtime address of
 * _text (which KASLR moves at every boot), and the text symbols of /proc/kallsyms are saved
 * once per identity as DB/kallsyms-HEX (core/kernel_id.h), so `spent report -i DB` names each
 * epoch's kernel samples from the kernel that epoch sampled, also on another host or after a
 * reboot, and epochs of different kernels or boots never add into one kernel symbol. */
#ifndef SPENT_COLLECT_DAEMON_KERNEL_H
#define SPENT_COLLECT_DAEMON_KERNEL_H

#include <sys/types.h>

#include "spent/profile.h"

/* Read the text symbols of KALLSYMS (/proc/kallsyms) and the address of _text; add it to the
 * kernel build-id *ID (image_describe_kernel's) and save the symbols zstd-compressed as
 * DB/kallsyms-HEX with MODE, atomically; a copy of that identity there already (shared by
 * every epoch and daemon run that has it) gets the lines it lacks (a recorded profile merged
 * in brings only the symbols its samples need). *ID gets _text whenever it
 * was read (also when the write then fails), else keeps its build-id alone. 0, -ENODATA
 * when no symbol is readable (kptr_restrict: nothing written), -ENOKEY when the kernel has
 * no build-id or no _text (the symbols are not saved: nothing would tell them apart), or
 * -errno. */
int dkernel_save_identity(const char *db, const char *kallsyms, mode_t mode,
			  struct spent_profile_image *id);

#endif
