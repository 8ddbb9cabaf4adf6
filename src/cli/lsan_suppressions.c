/* cli/lsan_suppressions.c - what LeakSanitizer (the SAN=1 build) does not report for spent:
 * memory a third-party library allocates and no API of it frees. LeakSanitizer calls this
 * when the binary is sanitized; in the plain build nothing calls it.
 *
 * Unicorn 2.0.1 (QEMU 5.0) gives a page of guest code a bitmap of its translated blocks once
 * the guest has written to that page ten times (tb_invalidate_phys_page_fast), and uc_close
 * never frees it. A replayed program that patches its own code (citcat's syscall buffer
 * library patches libc's wrappers at load) makes those writes. */
const char *__lsan_default_suppressions(void);

const char *__lsan_default_suppressions(void)
{
	return "leak:tb_invalidate_phys_page_fast\n";
}
