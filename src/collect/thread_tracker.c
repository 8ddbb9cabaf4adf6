/* collect/thread_tracker.c - per-thread counters opened at creation stops and read at exit
 * stops of a ptrace-seized command tree. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/thread_tracker.h"
#include "core/alloc.h"

struct tracked {
	struct thread_counts tc;
	struct counting *counters;	/* NULL once read at exit */
};

struct thread_tracker {
	struct spent_event *events;
	int *group;
	size_t n_events;
	pid_t root;
	struct tracked *threads;
	size_t n, cap;
	struct thread_counts *results;
};

int thread_tracker_new(const struct spent_event *events, const int *group, size_t n_events,
		       struct thread_tracker **out)
{
	struct thread_tracker *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->events = malloc(n_events * sizeof(*events));
	t->group = group ? malloc(n_events * sizeof(int)) : NULL;
	if (!t->events || (group && !t->group)) {
		thread_tracker_free(t);
		return -ENOMEM;
	}
	memcpy(t->events, events, n_events * sizeof(*events));
	if (group)
		memcpy(t->group, group, n_events * sizeof(int));
	t->n_events = n_events;
	*out = t;
	return 0;
}

void thread_tracker_free(struct thread_tracker *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		counting_free(t->threads[i].counters);
		free(t->threads[i].tc.values);
	}
	free(t->threads);
	free(t->results);
	free(t->events);
	free(t->group);
	free(t);
}

static struct tracked *find(struct thread_tracker *t, pid_t tid)
{
	for (size_t i = t->n; i-- > 0;)
		if (t->threads[i].tc.tid == tid && !t->threads[i].tc.exited)
			return &t->threads[i];
	return NULL;
}

void thread_comm(pid_t pid, pid_t tid, char comm[16])
{
	char path[64], buf[24];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	comm[0] = 0;
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	/* only the final newline is the file's: a name may hold newlines of its own */
	if (buf[n - 1] == '\n')
		n--;
	if (n > 15)
		n = 15;
	memcpy(comm, buf, (size_t)n);
	comm[n] = 0;
}

int thread_list(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	pid_t *a = NULL;
	size_t count = 0, cap = 0;
	int err = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if ((err = ALLOC_GROW(a, count + 1, cap)))
			break;
		a[count++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	if (err || count == 0) {	/* no thread left: the process has just exited */
		free(a);
		return err ? err : -ESRCH;
	}
	*tids = a;
	*n = count;
	return 0;
}

int thread_children(pid_t pid, pid_t tid, pid_t **kids, size_t *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
	*kids = NULL;
	*n = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t cap = 0;
	int child, err = 0;
	while (!err && fscanf(f, "%d", &child) == 1)
		if (!(err = ALLOC_GROW(*kids, *n + 1, cap)))
			(*kids)[(*n)++] = child;
	fclose(f);
	if (err) {
		free(*kids);
		*kids = NULL;
		*n = 0;
	}
	return err;
}

static void read_comm(pid_t tid, char comm[16])
{
	thread_comm(tid, tid, comm);
}

static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	pid_t tgid = tid;
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static int track(struct thread_tracker *t, pid_t tid, bool at_exec, size_t *bad_event)
{
	if (ALLOC_GROW(t->threads, t->n + 1, t->cap))
		return -ENOMEM;
	struct tracked *th = &t->threads[t->n];
	memset(th, 0, sizeof(*th));
	th->tc.values = calloc(t->n_events, sizeof(*th->tc.values));
	if (!th->tc.values)
		return -ENOMEM;
	struct counting_config cfg = {
		.events = t->events, .n_events = t->n_events, .group = t->group,
		.mode = COUNTING_TASK, .pid = tid,
		.enable_on_exec = at_exec, .inherit = false, .enabled = !at_exec,
	};
	int err = counting_new(&cfg, &th->counters, bad_event);
	if (err) {
		free(th->tc.values);
		return err;
	}
	th->tc.tid = tid;
	th->tc.pid = tgid_of(tid);
	read_comm(tid, th->tc.comm);
	t->n++;
	return 0;
}

int thread_tracker_attach(struct thread_tracker *t, pid_t root, size_t *bad_event)
{
	long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC;
	if (ptrace(PTRACE_SEIZE, root, 0, opts) < 0)
		return -errno;
	t->root = root;
	return track(t, root, true, bad_event);
}

/* Read a thread's counters at its exit stop: its counts are final there. */
static void finish(struct tracked *th)
{
	if (!th->counters)
		return;
	counting_read_slot(th->counters, 0, th->tc.values);
	/* the name at exit: exec may have changed it since creation */
	char comm[16] = "";
	read_comm(th->tc.tid, comm);
	if (comm[0])
		snprintf(th->tc.comm, sizeof(th->tc.comm), "%s", comm);
	counting_free(th->counters);
	th->counters = NULL;
	th->tc.exited = true;
}

int thread_tracker_handle(struct thread_tracker *t, pid_t tid, int status, int *root_status)
{
	int err = 0;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		struct tracked *th = find(t, tid);
		if (th)
			finish(th); /* killed without an exit stop (SIGKILL): best effort */
		if (tid == t->root) {
			*root_status = status;	/* a wait status, as waitpid gives it */
			return 1;
		}
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0;
	int sig = WSTOPSIG(status), event = status >> 16, inject = 0;
	switch (event) {
	case PTRACE_EVENT_EXIT: {
		struct tracked *th = find(t, tid);
		if (th)
			finish(th);
		break;
	}
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			ptrace(PTRACE_LISTEN, tid, 0, 0); /* group-stop: stay stopped like untraced */
			return 0;
		}
		/* a new thread or process, stopped before its first instruction */
		if (!find(t, tid)) {
			size_t bad;
			err = track(t, tid, false, &bad);
		}
		break;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_EXEC:
		break;
	default:
		inject = sig == SIGTRAP ? 0 : sig; /* signal-delivery-stop: pass the signal on */
		break;
	}
	ptrace(PTRACE_CONT, tid, 0, (void *)(long)inject);
	return err;
}

int thread_tracker_results(struct thread_tracker *t, const struct thread_counts **out, size_t *n)
{
	free(t->results);
	t->results = calloc(t->n ? t->n : 1, sizeof(*t->results));
	if (!t->results)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		struct tracked *th = &t->threads[i];
		if (th->counters) {
			counting_read_slot(th->counters, 0, th->tc.values);
			/* its name now: the root was named before its exec, and -I reads alive
			 * threads every interval */
			char comm[16] = "";
			read_comm(th->tc.tid, comm);
			if (comm[0])
				memcpy(th->tc.comm, comm, sizeof(comm));
		}
		t->results[i] = th->tc;
	}
	*out = t->results;
	*n = t->n;
	return 0;
}
