/* citcat/preload/syscallbuf.c - libspent-citcat-syscallbuf.so, preloaded by `spent citcat
 * record` into the recorded program: the common syscalls run without a ptrace stop.
 *
 * At load it maps one page at CC_SB_PAGE holding `syscall; ret` (the one instruction the
 * recorder's seccomp filter lets through untraced), registers its buffer with the recorder
 * (CC_SB_NR_REGISTER; without the recorder the kernel says -ENOSYS and nothing else happens),
 * and patches libc's wrappers of the calls the buffer takes: the `syscall` instruction and
 * the `cmp $-4096,%rax` after it become a jump to a stub that calls cc_sb_hook and then does
 * the cmp. Patching the wrapper's own code (not interposing symbols) catches libc's internal
 * calls too (readdir's getdents64, stdio's write, stat's fstatat).
 *
 * cc_sb_hook runs the call through the untraced instruction and appends the call, its result
 * and the bytes the kernel wrote (or, for write, the bytes sent) to the buffer
 * (syscallbuf_abi.h), which the recorder drains at its next stop of the program. Anything
 * else goes through a traced syscall instruction here: another call, a transfer larger than
 * CC_SB_MAX_DATA, a program with more than one thread (the recorder runs one thread at a
 * time, and a buffered call that blocks would stall the others), or a hook entered from a
 * signal handler while the buffer is busy.
 *
 * The replay simulates this code like any other: the same patches, the same buffer writes;
 * only the untraced syscall takes its result from the recording's buffered records.
 *
 * Built without libc calls on the hook's path, -mgeneral-regs-only (the hook must leave the
 * vector registers as a syscall does) and -mno-red-zone (it calls the syscall page). */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "citcat/syscallbuf_abi.h"

extern char __libc_single_threaded;

struct sb_header {
	uint64_t magic, used, busy, spare;
};

static uint8_t sb_buf[CC_SB_SIZE] __attribute__((aligned(4096)));
#define SB ((volatile struct sb_header *)sb_buf)
static int sb_on;

/* The stubs the patched sites jump to: written at load, 32 bytes each. */
#define STUB_SIZE 32
#define STUB_BYTES 4096
extern uint8_t cc_sb_stubs[];
/* Called by a stub with the syscall's registers (rax = number, rdi, rsi, rdx, r10, r8, r9):
 * saves what a syscall preserves, aligns the stack, calls cc_sb_hook(&{nr, args}); rax is its
 * result, rcx and r11 are clobbered as by a syscall. */
extern void cc_sb_entry(void);

__asm__(
	".pushsection .text.cc_sb_stubs,\"ax\",@progbits\n"
	".balign 4096\n"
	".globl cc_sb_stubs\n.hidden cc_sb_stubs\n"
	"cc_sb_stubs:\n"
	".fill 4096, 1, 0xcc\n"
	".popsection\n"
	".text\n"
	".globl cc_sb_entry\n.hidden cc_sb_entry\n.type cc_sb_entry,@function\n"
	"cc_sb_entry:\n"
	"push %rbp\n"
	"mov %rsp, %rbp\n"
	"and $-16, %rsp\n"
	"push %r9\npush %r8\npush %r10\npush %rdx\npush %rsi\npush %rdi\npush %rax\n"
	"sub $8, %rsp\n"
	"lea 8(%rsp), %rdi\n"
	"call cc_sb_hook\n"
	"add $16, %rsp\n"
	"pop %rdi\npop %rsi\npop %rdx\npop %r10\npop %r8\npop %r9\n"
	"leave\n"
	"ret\n"
	".size cc_sb_entry, .-cc_sb_entry\n");

/* A syscall through this library's own instruction: the recorder stops it (traced). */
static int64_t traced(uint64_t nr, const uint64_t *a)
{
	register uint64_t r10 __asm__("r10") = a[3];
	register uint64_t r8 __asm__("r8") = a[4];
	register uint64_t r9 __asm__("r9") = a[5];
	int64_t ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a[0]), "S"(a[1]), "d"(a[2]),
			 "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return ret;
}

/* The same call through the page at CC_SB_PAGE: the seccomp filter lets it through. */
static int64_t untraced(uint64_t nr, const uint64_t *a)
{
	register uint64_t r10 __asm__("r10") = a[3];
	register uint64_t r8 __asm__("r8") = a[4];
	register uint64_t r9 __asm__("r9") = a[5];
	int64_t ret;
	__asm__ volatile("movabs %[page], %%r11\n\tcall *%%r11" : "=a"(ret) : "a"(nr), "D"(a[0]),
			 "S"(a[1]), "d"(a[2]), "r"(r10), "r"(r8), "r"(r9), [page] "i"(CC_SB_PAGE)
			 : "rcx", "r11", "memory");
	return ret;
}

static void copy_bytes(void *dst, const void *src, uint64_t n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

/* The recorder drains the buffer and sets used to 0 while the program is stopped at this
 * call: a signal whose handler buffers a call right after the flush returns (the timer that
 * fired during the drain is delivered exactly there) then appends at 0, where the recorder
 * expects it. Storing 0 here afterwards would drop that entry and leave the recorder's drained
 * offset beyond the new used. */
static void flush(void)
{
	static const uint64_t none[6];
	traced(CC_SB_NR_FLUSH, none);
}

__attribute__((used, visibility("hidden"))) int64_t cc_sb_hook(const uint64_t *r);

int64_t cc_sb_hook(const uint64_t *r)
{
	uint64_t nr = r[0], max, addr, len;
	const uint64_t *a = r + 1;
	if (!sb_on || !__libc_single_threaded || SB->busy ||
	    cc_sb_output(nr, a, 0, &max, &addr, &len) < 0 || max > CC_SB_MAX_DATA)
		return traced(nr, a);
	uint64_t need = CC_SB_ENTRY_HDR + ((max + 7) & ~7ULL);
	for (;;) {
		if (CC_SB_HDR + SB->used + need > CC_SB_SIZE)
			flush();
		SB->busy = 1;
		__asm__ volatile("" ::: "memory");
		/* a handler may have buffered calls between the check and busy; once busy is
		 * set none can, so the room seen now stays */
		if (CC_SB_HDR + SB->used + need <= CC_SB_SIZE)
			break;
		SB->busy = 0;
		__asm__ volatile("" ::: "memory");
	}
	int64_t ret = untraced(nr, a);
	cc_sb_output(nr, a, ret, &max, &addr, &len);
	uint64_t *e = (uint64_t *)(sb_buf + CC_SB_HDR + SB->used);
	e[0] = nr;
	for (int i = 0; i < 6; i++)
		e[1 + i] = a[i];
	e[7] = (uint64_t)ret;
	e[8] = len;
	copy_bytes(e + 9, (const void *)addr, len);
	__asm__ volatile("" ::: "memory");
	SB->used += CC_SB_ENTRY_HDR + ((len + 7) & ~7ULL);
	__asm__ volatile("" ::: "memory");
	SB->busy = 0;
	return ret;
}

/* ---- load: the page, registration, patching ---- */

/* The sites found (their `syscall`, and the length of the cmp after it), patched together. */
#define MAX_SITES (STUB_BYTES / STUB_SIZE)
static struct { uint8_t *site; size_t cl; } sites[MAX_SITES];
static size_t nsites;

/* Find every `syscall; cmp $-4096|-4095,%rax` (or `cmp $-4096,%eax`) inside the function at FN
 * of SIZE bytes, and write its stub. */
static void find_sites(uint8_t *fn, size_t size)
{
	static const uint8_t cmp_q0[] = { 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff };
	static const uint8_t cmp_q1[] = { 0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff };
	static const uint8_t cmp_d0[] = { 0x3d, 0x00, 0xf0, 0xff, 0xff };
	for (size_t off = 0; off + 7 <= size && nsites < MAX_SITES; off++) {
		uint8_t *site = fn + off;
		size_t cl = 0;
		if (site[0] != 0x0f || site[1] != 0x05)
			continue;
		if (off + 8 <= size && (!memcmp(site + 2, cmp_q0, 6) || !memcmp(site + 2, cmp_q1, 6)))
			cl = 6;
		else if (!memcmp(site + 2, cmp_d0, 5))
			cl = 5;
		if (!cl)
			continue;
		int known = 0;
		for (size_t i = 0; i < nsites; i++)
			known |= sites[i].site == site;
		if (known)	/* reached from two functions: patched once */
			continue;
		uint8_t *stub = cc_sb_stubs + nsites * STUB_SIZE, *back = site + 2 + cl;
		int64_t to_stub = stub - (site + 5), to_entry = (uint8_t *)cc_sb_entry - (stub + 10);
		int64_t to_back = back - (stub + 18 + cl + 5);
		if (to_stub != (int32_t)to_stub || to_entry != (int32_t)to_entry ||
		    to_back != (int32_t)to_back)
			continue;
		uint8_t *p = stub;
		int32_t v;
		memcpy(p, "\x48\x8d\x64\x24\x80", 5), p += 5;		/* lea -128(%rsp),%rsp */
		*p++ = 0xe8, v = (int32_t)to_entry, memcpy(p, &v, 4), p += 4;	/* call cc_sb_entry */
		memcpy(p, "\x48\x8d\xa4\x24\x80\x00\x00\x00", 8), p += 8;	/* lea 128(%rsp),%rsp */
		memcpy(p, site + 2, cl), p += cl;			/* the cmp */
		*p++ = 0xe9, v = (int32_t)to_back, memcpy(p, &v, 4);	/* jmp back */
		sites[nsites].site = site;
		sites[nsites++].cl = cl;
		off += 1 + cl;
	}
}

/* Each site becomes `jmp stub` and a nop, in one writable window over all of them. */
static void patch_sites(void)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (size_t i = 0; i < nsites; i++) {
		uintptr_t a = (uintptr_t)sites[i].site, b = a + 2 + sites[i].cl;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
	}
	if (!nsites)
		return;
	lo &= ~4095UL;
	hi = (hi + 4095) & ~4095UL;
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC))
		return;
	for (size_t i = 0; i < nsites; i++) {
		uint8_t jmp[8] = { 0xe9, 0, 0, 0, 0, 0x0f, 0x1f, 0x00 };	/* + a 3-byte nop */
		int32_t v = (int32_t)(cc_sb_stubs + i * STUB_SIZE - (sites[i].site + 5));
		memcpy(jmp + 1, &v, 4);
		if (sites[i].cl == 5)
			jmp[5] = 0x66, jmp[6] = 0x90;	/* a 2-byte nop */
		memcpy(sites[i].site, jmp, 2 + sites[i].cl);
	}
	mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
}

/* fcntl's common commands are made by local functions (glibc 2.36, not in the symbol table):
 * fcntl64 calls __fcntl64_nocancel_adjusted (its first direct call), fdopendir calls
 * __fcntl64_nocancel (its second: F_GETFL, and fts's F_SETFD, per directory find opens). The
 * NTH direct call in FN's SIZE bytes to a nearby target is searched too, up to its first ret
 * and a little past it (its F_GETLK branch); a site must still be `syscall; cmp`. */
static void find_callee_sites(uint8_t *fn, size_t size, int nth)
{
	for (size_t off = 0; off + 5 <= size; off++) {
		int32_t rel;
		if (fn[off] != 0xe8)
			continue;
		memcpy(&rel, fn + off + 1, 4);
		if (rel < -(1 << 24) || rel > (1 << 24))
			continue;	/* not a call into the same library */
		if (--nth > 0) {
			off += 4;
			continue;
		}
		uint8_t *target = fn + off + 5 + rel;
		size_t len = 0;
		while (len < 128 && target[len] != 0xc3)
			len++;
		find_sites(target, len + 64 < 160 ? len + 64 : 160);
		return;
	}
}

/* The sizes of the N functions at FN (0: unknown) from one pass over LM's dynamic symbols:
 * dladdr1 per function costs a pass each, and the replay simulates every instruction. */
static void function_sizes(const struct link_map *lm, void *const *fn, size_t *size, size_t n)
{
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	for (const ElfW(Dyn) *d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
		uintptr_t v = d->d_un.d_ptr;
		if (v < lm->l_addr)	/* not relocated in place */
			v += lm->l_addr;
		if (d->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)v;
		else if (d->d_tag == DT_STRTAB)
			strtab = (const char *)v;
	}
	for (size_t k = 0; k < n; k++)
		size[k] = 0;
	if (!symtab || !strtab || (const char *)symtab >= strtab)
		return;
	/* .dynstr follows .dynsym: the symbols are the bytes between */
	size_t nsyms = (size_t)(strtab - (const char *)symtab) / sizeof(ElfW(Sym));
	uint64_t maybe[16] = { 0 };	/* a 1024-bit filter of the addresses looked for */
	for (size_t k = 0; k < n; k++) {
		uintptr_t b = ((uintptr_t)fn[k] >> 4) & 1023;
		maybe[b >> 6] |= 1ULL << (b & 63);
	}
	for (size_t i = 0; i < nsyms && i < 100000; i++) {
		uintptr_t a = lm->l_addr + symtab[i].st_value, b = (a >> 4) & 1023;
		if (!(maybe[b >> 6] & (1ULL << (b & 63))) || !symtab[i].st_size ||
		    ELF64_ST_TYPE(symtab[i].st_info) != STT_FUNC)
			continue;
		for (size_t k = 0; k < n; k++)
			if (fn[k] && (uintptr_t)fn[k] == a)
				size[k] = symtab[i].st_size;
	}
}

static void patch_libc(void)
{
	static const char *const names[] = {
		"read", "write", "close", "pread64", "lseek64", "fcntl64", "statx", "fstatat64",
		"getdents64", "readlink", "readlinkat", "getxattr", "lgetxattr", "fgetxattr",
		"listxattr", "llistxattr", "fdopendir", "openat64",
		"__read_nocancel", "__close_nocancel", "__pread64_nocancel",	/* GLIBC_PRIVATE */
		"__open64_nocancel",	/* opendir's */
	};
	enum { N = sizeof(names) / sizeof(names[0]), FIRST_PRIVATE = N - 4 };
	void *fn[N];
	size_t size[N];
	struct link_map *lm = NULL;
	void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
	if (!libc)
		return;
	for (size_t i = 0; i < N; i++)
		fn[i] = i < FIRST_PRIVATE ? dlsym(libc, names[i]) :
			dlvsym(libc, names[i], "GLIBC_PRIVATE");
	if (dlinfo(libc, RTLD_DI_LINKMAP, &lm) == 0 && lm)
		function_sizes(lm, fn, size, N);
	uintptr_t lo = (uintptr_t)cc_sb_stubs;
	if (lm && mprotect((void *)lo, STUB_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC) == 0) {
		for (size_t i = 0; i < N; i++) {
			if (!fn[i] || !size[i] || size[i] >= 4096)
				continue;
			find_sites(fn[i], size[i]);
			if (!strcmp(names[i], "fcntl64"))
				find_callee_sites(fn[i], size[i], 1);
			else if (!strcmp(names[i], "fdopendir"))
				find_callee_sites(fn[i], size[i], 2);
		}
		mprotect((void *)lo, STUB_BYTES, PROT_READ | PROT_EXEC);
		patch_sites();
	}
	dlclose(libc);
}

/* LD_PRELOAD as the program sees it: without this library, which the recorder put first. */
static void hide_from_environment(void)
{
	Dl_info self;
	const char *v = getenv("LD_PRELOAD");
	if (!v || !dladdr((void *)hide_from_environment, &self) || !self.dli_fname)
		return;
	size_t n = strlen(self.dli_fname);
	if (strncmp(v, self.dli_fname, n) || (v[n] && v[n] != ' ' && v[n] != ':'))
		return;
	v += n;
	while (*v == ' ' || *v == ':')
		v++;
	if (*v)
		setenv("LD_PRELOAD", v, 1);
	else
		unsetenv("LD_PRELOAD");
}

/* Zeros the stack below the constructor's frame, where its work left dead values (dlopen's,
 * function_sizes' filter). main's frame later lies there, and a lazily bound call before main
 * runs ld.so's resolver, whose xsave writes the x87 slots at that depth: the CPU zeroes each
 * slot's 6 reserved bytes, the replay's simulator leaves what was there. A signal point hashes
 * main's dead slots, so a nonzero byte left there made the replay never match the point
 * (citcat_busyalarm, one stack alignment in four); a fresh stack is zero, as without us. */
static __attribute__((noinline)) void scrub_stack(void)
{
	uint8_t area[32768];
	void *p = area;
	uint64_t n = sizeof(area);
	__asm__ volatile("rep stosb" : "+D"(p), "+c"(n) : "a"(0) : "memory");
}

static __attribute__((noinline)) void syscallbuf_start(void)
{
	hide_from_environment();
	void *page = mmap((void *)CC_SB_PAGE, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (page != (void *)CC_SB_PAGE) {
		if (page != MAP_FAILED)
			munmap(page, 4096);
		return;
	}
	memcpy(page, "\x0f\x05\xc3", 3);	/* syscall; ret */
	mprotect(page, 4096, PROT_READ | PROT_EXEC);
	SB->magic = CC_SB_MAGIC;
	uint64_t args[6] = { (uintptr_t)sb_buf, CC_SB_SIZE, CC_SB_VERSION, 0, 0, 0 };
	if (traced(CC_SB_NR_REGISTER, args) != 0) {
		munmap(page, 4096);	/* not recorded, or the recorder wants no buffer */
		return;
	}
	sb_on = 1;
	patch_libc();
}

__attribute__((constructor)) static void syscallbuf_init(void)
{
	syscallbuf_start();
	scrub_stack();
}
