/* citcat/syscallbuf_abi.h - the contract between the preloaded syscall buffer library
 * (src/citcat/preload/syscallbuf.c, running inside the recorded program) and the recorder
 * (src/citcat/syscallbuf.c): the fixed address of the untraced syscall instruction, the two
 * calls the library makes to the recorder, the buffer's header and entry layout, and which
 * bytes each buffered call leaves in an entry. Both sides include it; it needs no libc.
 *
 * The buffer (memory of the recorded program, CC_SB_SIZE bytes, 8-byte aligned):
 *   le64 magic   CC_SB_MAGIC
 *   le64 used    bytes of entries committed after the header (the library advances it after an
 *                entry is complete; the recorder sets it to 0 at a CC_SB_NR_FLUSH call)
 *   le64 busy    1 while the library is between its untraced syscall and the commit
 *   le64 spare
 *   entries from offset CC_SB_HDR, each 8-byte aligned:
 *     le64 nr, le64 args[6], le64 ret (as the kernel returned it), le64 data_len,
 *     u8[data_len] data, zero padding to a multiple of 8.
 *   data: for read-family calls the bytes the kernel wrote at the output buffer
 *   cc_sb_output() names; for write the bytes the program sent. */
#ifndef SPENT_CITCAT_SYSCALLBUF_ABI_H
#define SPENT_CITCAT_SYSCALLBUF_ABI_H

#include <stdint.h>

/* A page the library maps at this fixed address holding `syscall; ret`: the recorder's seccomp
 * filter lets a syscall whose instruction pointer (the address after the instruction) is
 * CC_SB_UNTRACED_IP through without a stop; every other syscall stops. */
#define CC_SB_PAGE 0x20000000000ULL
#define CC_SB_UNTRACED_IP (CC_SB_PAGE + 2)

/* Calls to the recorder (numbers no kernel uses; the recorder answers them, the kernel says
 * -ENOSYS when the program runs without the recorder). REGISTER(buffer, size, CC_SB_VERSION):
 * 0 when the recorder drains that buffer. FLUSH(): the recorder drains the buffer and sets
 * its used to 0 before the call returns (a memory record of the recording, so the replay sees
 * the same store). */
#define CC_SB_NR_REGISTER 0x5bc0
#define CC_SB_NR_FLUSH 0x5bc1
#define CC_SB_VERSION 1

#define CC_SB_MAGIC 0x3142535443544943ULL	/* "CITCTSB1" little-endian */
#define CC_SB_SIZE (1u << 20)
#define CC_SB_HDR 32
#define CC_SB_USED_OFF 8	/* the header's used word */
#define CC_SB_ENTRY_HDR 72			/* nr, 6 args, ret, data_len: 9 words */
#define CC_SB_MAX_DATA (256u << 10)	/* larger transfers take the traced path */

/* x86-64 numbers of the calls the buffer takes (the recorder refuses any other in an entry) */
#define CC_SB_READ 0
#define CC_SB_WRITE 1
#define CC_SB_CLOSE 3
#define CC_SB_LSEEK 8
#define CC_SB_FCNTL 72
#define CC_SB_PREAD64 17
#define CC_SB_READLINK 89
#define CC_SB_GETXATTR 191
#define CC_SB_LGETXATTR 192
#define CC_SB_FGETXATTR 193
#define CC_SB_LISTXATTR 194
#define CC_SB_LLISTXATTR 195
#define CC_SB_GETDENTS64 217
#define CC_SB_OPENAT 257
#define CC_SB_NEWFSTATAT 262
#define CC_SB_READLINKAT 267
#define CC_SB_STATX 332

enum cc_sb_data {
	CC_SB_DATA_NONE = 0,	/* the call writes no user memory */
	CC_SB_DATA_OUT = 1,	/* the kernel wrote the data at *ADDR */
	CC_SB_DATA_SENT = 2,	/* the program sent the data from *ADDR (write) */
};

/* For buffered call NR with arguments A: the most bytes an entry's data can hold (*MAX, before
 * the call) and, given the result RET, where its data comes from (*ADDR) and how many bytes
 * (*LEN; the recorder refuses an entry whose LEN exceeds MAX). Returns enum cc_sb_data, or -1
 * when the buffer does not take NR. */
static inline int cc_sb_output(uint64_t nr, const uint64_t *a, int64_t ret, uint64_t *max,
			       uint64_t *addr, uint64_t *len)
{
	uint64_t r = ret > 0 ? (uint64_t)ret : 0;
	int kind = CC_SB_DATA_OUT;
	*addr = 0;
	*len = 0;
	*max = 0;
	switch (nr) {
	case CC_SB_CLOSE:
	case CC_SB_LSEEK:
		return CC_SB_DATA_NONE;
	case CC_SB_FCNTL:	/* the commands without memory outputs: F_DUPFD, F_GETFD, F_SETFD,
				 * F_GETFL, F_SETFL, F_DUPFD_CLOEXEC (locks and owners stay traced) */
		return a[1] <= 4 || a[1] == 1030 ? CC_SB_DATA_NONE : -1;
	case CC_SB_OPENAT:	/* directories only (O_DIRECTORY, neither O_CREAT nor O_TMPFILE): the
				 * recorder names a regular file opened read-only (FILE + OPEN) from
				 * its descriptor at the call, which may be gone by the drain */
		return (a[2] & 020200100) == 0200000 ? CC_SB_DATA_NONE : -1;
	case CC_SB_WRITE:
		kind = CC_SB_DATA_SENT;
		/* fall through */
	case CC_SB_READ:
	case CC_SB_PREAD64:
	case CC_SB_GETDENTS64:
		*max = a[2], *addr = a[1], *len = r;
		break;
	case CC_SB_READLINK:
		*max = a[2], *addr = a[1], *len = r;
		break;
	case CC_SB_READLINKAT:
		*max = a[3], *addr = a[2], *len = r;
		break;
	case CC_SB_GETXATTR:
	case CC_SB_LGETXATTR:
	case CC_SB_FGETXATTR:	/* size 0 asks for the length: nothing written */
		*max = a[3], *addr = a[2], *len = a[3] ? r : 0;
		break;
	case CC_SB_LISTXATTR:
	case CC_SB_LLISTXATTR:
		*max = a[2], *addr = a[1], *len = a[2] ? r : 0;
		break;
	case CC_SB_NEWFSTATAT:
		*max = 144, *addr = a[2], *len = ret == 0 ? 144 : 0;
		break;
	case CC_SB_STATX:
		*max = 256, *addr = a[4], *len = ret == 0 ? 256 : 0;
		break;
	default:
		return -1;
	}
	return kind;
}

#endif
