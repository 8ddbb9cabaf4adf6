/* tests/progs/citcat_sbuf.c - many calls the citcat syscall buffer takes, for a time: files
 * created in DIR are opened, written, stat'ed, read, seeked, pread, listed (readdir), linked
 * and read back (readlink), asked for xattrs, fcntl'ed and closed, round after round for
 * about MS milliseconds (default 200); with "signals", a 1 ms interval timer interrupts the
 * rounds (often inside a buffered call) and its handler makes buffered calls too. Prints the
 * rounds, signals and a checksum of everything read. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t signals;
static int null_fd = -1;
static uint64_t sum = 1469598103934665603ULL;

static void mix(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		sum = (sum ^ b[i]) * 1099511628211ULL;
}

static void on_alarm(int sig)
{
	struct stat st;
	signals++;
	if (fstat(null_fd, &st) == 0)	/* a buffered call inside the handler */
		mix(&st.st_rdev, sizeof(st.st_rdev));
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void one_round(const char *dir, int round)
{
	char path[512], link[512], got[512], buf[4096];
	struct stat st;
	for (int i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		int fd = open(path, O_RDWR | O_CREAT, 0600);
		if (fd < 0)
			exit(2);
		int n = snprintf(buf, sizeof(buf), "round %d file %d\n", round, i);
		if (pwrite(fd, buf, (size_t)n, 0) != n || write(fd, buf, (size_t)n) != n)
			exit(3);
		lseek(fd, 0, SEEK_SET);
		ssize_t r = read(fd, buf, sizeof(buf));
		mix(buf, r > 0 ? (size_t)r : 0);
		r = pread(fd, buf, 16, 3);
		mix(buf, r > 0 ? (size_t)r : 0);
		if (fstat(fd, &st) == 0)
			mix(&st.st_size, sizeof(st.st_size));
		mix(&(int){ fcntl(fd, F_GETFD) }, sizeof(int));
		close(fd);
		if (stat(path, &st) == 0)
			mix(&st.st_size, sizeof(st.st_size));
	}
	snprintf(path, sizeof(path), "%s/f0", dir);
	snprintf(link, sizeof(link), "%s/l0", dir);
	symlink("f0", link);
	ssize_t n = readlink(link, got, sizeof(got));
	mix(got, n > 0 ? (size_t)n : 0);
	if (lstat(link, &st) == 0)
		mix(&st.st_mode, sizeof(st.st_mode));
	mix(&(ssize_t){ lgetxattr(path, "user.citcat", got, sizeof(got)) }, sizeof(ssize_t));
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		mix(e->d_name, strlen(e->d_name));
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: citcat_sbuf DIR [MS] [signals]\n");
		return 2;
	}
	double ms = argc > 2 ? atof(argv[2]) : 200, end = now() + ms / 1000;
	null_fd = open("/dev/null", O_RDONLY);
	if (argc > 3 && !strcmp(argv[3], "signals")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
		setitimer(ITIMER_REAL, &it, NULL);
	}
	int rounds = 0;
	do
		one_round(argv[1], rounds++);
	while (now() < end);
	struct itimerval off;
	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_REAL, &off, NULL);
	printf("rounds %d signals %d sum %016llx\n", rounds, (int)signals, (unsigned long long)sum);
	return 0;
}
