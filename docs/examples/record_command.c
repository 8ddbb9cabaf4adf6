/* docs/examples/record_command.c - record a profile of a command through libspent
 * (spent/record.h), as `spent record -g -e EVENT -o DIR -- CMD` does, and write it for
 * `spent report -i DIR`. tests/e2e/api_record.sh builds and runs it.
 *
 *   cc -o record_command record_command.c $(pkg-config --cflags --libs spent)
 *   ./record_command task-clock out.profile ./my_program arg...
 *   spent report -i out.profile
 */
#include <stdio.h>

#include <spent/record.h>

static void warn(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "record_command: warning: %s\n", msg);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: record_command EVENT DIR CMD [ARGS...]\n");
		return 2;
	}
	const char *events[] = { argv[1] };
	struct spent_record_opts opts = {
		.events = events, .n_events = 1,
		.callgraph = SPENT_RECORD_CG_FP,
		.warn = warn,
	};
	struct spent_record *r = NULL;
	struct spent_record_stats st;
	int status, rc = 2;

	if (spent_record_new(&opts, &r) || spent_record_check_output(r, argv[2]) ||
	    spent_record_start(r, &argv[3], 0) || spent_record_wait(r, &status) ||
	    spent_record_write(r, argv[2])) {
		fprintf(stderr, "record_command: %s\n", spent_record_error(r));
		/* 127/126 when the command could not be run */
		rc = r && spent_record_exit_code(r) ? spent_record_exit_code(r) : 2;
		spent_record_free(r);
		return rc;
	}
	spent_record_get_stats(r, &st);
	const struct spent_profile *p = spent_record_profile(r);
	printf("%llu samples, %llu placed, %zu images, %zu call stacks, '%s' total %llu, exit %d\n",
	       (unsigned long long)st.samples, (unsigned long long)st.placed, spent_profile_nimages(p),
	       spent_profile_nstacks(p), argv[1], (unsigned long long)spent_profile_event_total(p, 0),
	       spent_record_exit_code(r));
	rc = spent_record_exit_code(r);
	spent_record_free(r);
	return rc;
}
