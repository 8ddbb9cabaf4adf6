/* docs/examples/stat_command.c - count the events of a command through libspent
 * (spent/stat.h), as `spent stat -e EVENTS -- CMD` does, with its children folded in, and
 * print each count next to the CPU time the kernel charged the command's waited-for children
 * (getrusage): task-clock and that time agree. tests/e2e/api_stat.sh builds and runs it.
 *
 *   cc -o stat_command stat_command.c $(pkg-config --cflags --libs spent)
 *   ./stat_command task-clock,page-faults make -j2
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <spent/stat.h>

int main(int argc, char **argv)
{
	struct spent_event *evs = NULL;
	struct spent_stat_value *v = NULL;
	struct spent_stat *s = NULL;
	size_t n = 0;
	char err[256];
	int status, rc = 2;

	if (argc < 3) {
		fprintf(stderr, "usage: stat_command EVENT,... CMD [ARGS...]\n");
		return 2;
	}
	if (spent_event_parse_list(argv[1], &evs, &n, err, sizeof(err))) {
		fprintf(stderr, "stat_command: %s\n", err);
		return 2;
	}
	struct spent_stat_opts opts = { .events = evs, .n_events = n };
	if (!(v = calloc(n, sizeof(*v))) || spent_stat_new(&opts, &s) ||
	    spent_stat_start(s, &argv[2]) || spent_stat_wait(s, &status) ||
	    spent_stat_read(s, v, n)) {
		fprintf(stderr, "stat_command: %s\n", spent_stat_error(s));
		/* 127/126 when the command could not be run */
		rc = s && spent_stat_exit_code(s) ? spent_stat_exit_code(s) : 2;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		printf("%s %.0f (%.0f%% of the time on a counter)\n", evs[i].spec,
		       spent_stat_scaled(&v[i]),
		       v[i].enabled_ns ? 100.0 * (double)v[i].running_ns / (double)v[i].enabled_ns : 100.0);
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("elapsed %llu ns, children's CPU time %.0f ns, exit %d\n",
	       (unsigned long long)spent_stat_elapsed_ns(s),
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3,
	       spent_stat_exit_code(s));
	rc = spent_stat_exit_code(s);
out:
	spent_stat_free(s);
	free(v);
	free(evs);
	return rc;
}
