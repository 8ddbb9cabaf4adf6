/* docs/examples/trace_command.c - write a trace log of a command through libspent
 * (spent/trace_record.h), as `spent trace -o LOG -- CMD` does; `spent trace stats LOG` reads
 * it. VALGRIND_LIB_DIR is where spent's valgrind tool is (build/valgrind/lib in a build tree,
 * $(PREFIX)/lib/spent/valgrind installed). tests/e2e/api_trace.sh builds and runs it.
 *
 *   cc -o trace_command trace_command.c $(pkg-config --cflags --libs spent)
 *   ./trace_command /usr/local/lib/spent/valgrind run.log ./my_program arg...
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include <spent/trace_record.h>

static struct spent_trace *tracing;

/* Ctrl-C stops the traced command; the log keeps what arrived */
static void on_int(int sig)
{
	spent_trace_stop(tracing, sig);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: trace_command VALGRIND_LIB_DIR LOG CMD [ARGS...]\n");
		return 2;
	}
	struct spent_trace_opts opts = { .valgrind_lib = argv[1] };
	struct spent_trace_totals tot;
	int status = 0, rc = 1;

	if (spent_trace_new(&opts, argv[2], &tracing) || spent_trace_start(tracing, &argv[3])) {
		fprintf(stderr, "trace_command: %s\n", spent_trace_error(tracing));
		goto out;
	}
	signal(SIGINT, on_int);
	int err = spent_trace_wait(tracing, &status);
	spent_trace_get_totals(tracing, &tot);
	if (err == -EBADMSG || tot.records == 0) {
		fprintf(stderr, "trace_command: nothing usable recorded: %s\n", spent_trace_error(tracing));
		goto out;
	}
	if (err || spent_trace_stopped(tracing) || !WIFEXITED(status))
		spent_trace_mark_incomplete(tracing);
	if (spent_trace_commit(tracing)) {
		fprintf(stderr, "trace_command: %s\n", spent_trace_error(tracing));
		goto out;
	}
	printf("%llu records, %llu processes, %llu bytes, exit %d\n", (unsigned long long)tot.records,
	       (unsigned long long)tot.streams, (unsigned long long)spent_trace_bytes(tracing),
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
out:
	spent_trace_free(tracing);	/* an uncommitted log is removed */
	return rc;
}
