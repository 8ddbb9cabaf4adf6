/* tests/progs/citcat_msync.c - maps FILE shared, changes its first byte and msyncs it (as a
 * program saving a mapped file does): msync writes no user memory, so a recording of it must
 * draw no "syscalls whose memory outputs citcat does not know" warning. Prints the first
 * bytes it sees. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd = argc > 1 ? open(argv[1], O_RDWR) : -1;
	char *p = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (p == MAP_FAILED)
		return 1;
	p[0] = 'X';
	if (msync(p, 4096, MS_SYNC))
		return 1;
	printf("%.6s\n", p);
	return 0;
}
