/* core/kernel_id.h - the identity of the kernel the daemon sampled, and where its symbols are
 * kept: the build-id says which kernel was built, the runtime address of _text says where
 * KASLR put it in that boot; together they determine every core kernel symbol's address, so
 * the daemon stores both as [kernel.kallsyms]'s identity and one kallsyms copy per identity
 * (DB/kallsyms-HEX), which reports pick by image. docs/daemon.md "Kernel symbols". */
#ifndef SPENT_CORE_KERNEL_ID_H
#define SPENT_CORE_KERNEL_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spent/profile.h"

#define KERNEL_KALLSYMS_PREFIX "kallsyms-"
/* bytes the _text address adds to a kernel build-id */
#define KERNEL_ID_TEXT_LEN 8

/* Append the runtime address TEXT of _text (big-endian, so the identity's hex ends with the
 * address as /proc/kallsyms prints it) to the kernel build-id ID. 0, or -EINVAL when ID has
 * no build-id or no room is left. */
int kernel_id_add_text(struct spent_profile_image *id, uint64_t text);

/* "kallsyms-HEX" (HEX: the identity's bytes) naming the symbols of kernel ID in a database.
 * 0, -EINVAL when ID has no identity bytes, -ENAMETOOLONG. */
int kernel_id_kallsyms_name(const struct spent_profile_image *id, char *out, size_t len);

/* Whether NAME is a name kernel_id_kallsyms_name makes. */
bool kernel_id_is_kallsyms_name(const char *name);

/* The identity's bytes in hex ("" when none) into OUT (2 * SPENT_PROFILE_ID_MAX + 1 fit all). */
void kernel_id_hex(const struct spent_profile_image *id, char *out, size_t len);

/* "FIRST4..LAST4": the hex of the identity's first and last 4 bytes ("-" when it has none). */
void kernel_id_short(const struct spent_profile_image *id, char *out, size_t len);

/* "[kernel.kallsyms:FIRST4..LAST4]" (the hex of the identity's first and last 4 bytes: the
 * build-id's start and the low half of _text), what tells two kernels of one report apart;
 * "[kernel.kallsyms]" for a kernel without identity bytes. */
void kernel_id_label(const struct spent_profile_image *id, char *out, size_t len);

/* The address of "_text" (where the kernel image starts) in a /proc/kallsyms-format LINE; 0
 * when it is not that symbol or the address is hidden (kptr_restrict prints zeros). */
uint64_t kernel_id_text_address(const char *line);

/* Whether ID is a build-id with _text added (kernel_id_add_text: its last 8 bytes are an
 * address in the kernel's half of the address space), not a build-id alone. */
bool kernel_id_has_text(const struct spent_profile_image *id);
/* That address of _text in ID; 0 when ID has none. */
uint64_t kernel_id_text(const struct spent_profile_image *id);

/* The address of _text of the running kernel (/proc/kallsyms), 0 when it is hidden or not
 * readable. Read until the _text line only: a few lines. */
uint64_t kernel_id_running_text(void);

#endif
