/* core/kallsyms_file.h - the kernel-symbol files spent keeps (a profile's kallsyms.zst, its
 * older plain kallsyms, a database's kallsyms-HEX): /proc/kallsyms text, stored plain or as one
 * zstd frame. Readers tell the two apart by the zstd magic, not by the file's name. */
#ifndef SPENT_CORE_KALLSYMS_FILE_H
#define SPENT_CORE_KALLSYMS_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The file name `spent record` saves a profile's kernel symbols under (compressed), and the
 * plain one of profiles from before. */
#define KALLSYMS_FILE_ZST "kallsyms.zst"
#define KALLSYMS_FILE_PLAIN "kallsyms"

/* A compressed file is refused (-EFBIG) when it would decompress to more than this: a saved
 * subset is kilobytes, all of /proc/kallsyms of a large kernel about 20 MiB. */
#define KALLSYMS_FILE_MAX (64u << 20)

struct kallsyms_file {
	FILE *f;
	char *text;	/* the decompressed text F reads from (NULL for a plain file) */
};

/* Open PATH (a regular file only: binio_open_regular) for reading as text, decompressed when
 * it is a zstd frame (with or without its size in the header). 0 or -errno (-EINVAL: not valid
 * zstd, truncated, or bytes after the frame;
 * -EFBIG: above KALLSYMS_FILE_MAX; -ENODATA: an empty frame or an empty file). */
int kallsyms_file_open(const char *path, struct kallsyms_file *k);
void kallsyms_file_close(struct kallsyms_file *k);
/* The size of PATH's text (a compressed file's from its frame header, nothing decompressed):
 * 0, -ENODATA when the frame does not say, or -errno. */
int kallsyms_file_text_size(const char *path, uint64_t *size);

/* Write LEN bytes of kallsyms text to PATH as one zstd frame, atomically (outfile_write). */
int kallsyms_file_write_zst(const char *path, const void *text, size_t len, mode_t mode);

/* DST (a saved subset, plain or compressed) with the lines of SRC it lacks, written back to DST
 * compressed and atomically: two profiles of one boot keep the symbols each needs. 0; -EXDEV
 * when a name is at two addresses (another boot: KASLR moved the kernel), DST unchanged;
 * -errno of reading or writing. */
int kallsyms_file_union(const char *dst, const char *src, mode_t mode);
/* The same with SRC's text given (LEN bytes, /proc/kallsyms lines). */
int kallsyms_file_union_text(const char *dst, const char *text, size_t len, mode_t mode);

#endif
