/* citcat/citcat.h - the CITCAT library API: record a program's external inputs natively
 * (ptrace + seccomp), replay them in an instruction-level simulator (Unicorn), and expose the
 * replay as a trace-stream source. */
#ifndef SPENT_CITCAT_CITCAT_H
#define SPENT_CITCAT_CITCAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "spent/trace.h"

/* How cpuid instructions are made to trap to the recorder (answered from the simulator's CPU
 * model). AUTO uses the CPU's faulting where it exists and patching elsewhere. */
enum citcat_cpuid_mode {
	CITCAT_CPUID_AUTO = 0,
	CITCAT_CPUID_FAULT = 1,		/* arch_prctl(ARCH_SET_CPUID): needs CPU/hypervisor support */
	CITCAT_CPUID_PATCH = 2,		/* cpuid sites in mapped code overwritten with ud2 */
};

#define CITCAT_TIME_SLICE_MS 20

struct citcat_record_opts {
	const char *out_dir;		/* the recording directory to create (replaces an old one) */
	char *const *argv;		/* the command, argv[0] looked up in PATH */
	enum citcat_cpuid_mode cpuid;
	int no_copy;			/* name mapped files by identity instead of copying them */
	/* the syscall buffer's preload library (libspent-citcat-syscallbuf.so): the common calls
	 * then run without a ptrace stop; NULL: every syscall stops (docs/citcat.md) */
	const char *syscallbuf_lib;
	/* how long a thread runs while another is ready before the recorder switches (ns);
	 * 0: CITCAT_TIME_SLICE_MS */
	int64_t time_slice_ns;
	/* when set, the program's pid once it is started: a caller's signal handler may pass a
	 * SIGTERM on to it, whose end is then recorded as any other */
	volatile pid_t *started_pid;
};

struct citcat_record_result {
	int wait_status;		/* as waitpid() reports it */
	uint64_t syscalls;
	uint64_t buffered_syscalls;	/* of them, through the syscall buffer (no ptrace stop) */
	uint64_t buffered_signal_waits;	/* signals that arrived inside a buffered call, delivered
					 * once its entry was complete */
	uint64_t rdtsc, cpuid;
	uint64_t signal_points;		/* signals delivered between syscalls, at an exact point */
	uint64_t threads;		/* threads the program had (1: single-threaded) */
	uint64_t switches;		/* thread switches recorded (one thread ran at a time) */
	uint64_t preemptions;		/* of them, a thread stopped between syscalls when its time
					 * slice ran out (SIGSTOP: a POINT or a syscall boundary) */
	uint64_t bytes;			/* size of DIR/recording */
	uint64_t copies, copy_bytes;	/* copies of mapped files in DIR/files, their bytes */
	uint64_t unknown_syscalls;	/* calls whose memory outputs the recorder does not know */
	long first_unknown_nr;
	enum citcat_cpuid_mode cpuid_mode;	/* the mode used (FAULT or PATCH) */
	uint64_t cpuid_patched;		/* PATCH: cpuid sites replaced in mapped code */
	uint64_t cpuid_unconfirmed;	/* PATCH: 0f a2 matches in mapped code left unpatched */
	char cpuid_unconfirmed_file[256];	/* the first file holding such a match */
	bool not_run;			/* failed: the command could not be executed (-ENOENT: not
					 * found, else found but not runnable) */
};

/* Run OPTS->argv under the recorder into OPTS->out_dir. 0 when the recording is complete
 * (whatever the program's exit status), -errno otherwise with a message in ERR. */
int citcat_record(const struct citcat_record_opts *opts, struct citcat_record_result *res,
		  char *err, size_t errlen);

struct citcat_replay;

struct citcat_summary {
	uint64_t instructions;
	uint64_t syscalls;
	uint64_t buffered_syscalls;	/* of them, recorded through the syscall buffer */
	uint64_t events;		/* recorded events consumed (syscalls, rdtsc, cpuid) */
	int exit_status;		/* replayed wait status, -1 when the replay did not finish */
	int recorded_status;
	uint64_t out_bytes;		/* bytes the replayed program wrote */
	int verified;			/* output bytes and exit status equal the real run's */
	uint64_t recording_bytes;	/* DIR/recording */
	uint64_t copy_bytes;		/* the copies of mapped files the replay read (DIR/files) */
	int cpuid_mode;			/* enum citcat_cpuid_mode the recorder used (0: unknown) */
	uint64_t signal_points;		/* signals delivered at a recorded exact point */
	uint64_t threads;		/* threads simulated (1: single-threaded) */
	uint64_t switches;		/* thread switches replayed */
	uint64_t preemption_points;	/* of them, at a recorded exact point (a preemption) */
	uint64_t point_near_misses;	/* executions of a point's pc whose registers equalled the
					 * point's but whose stack (or vector state) did not: how
					 * close the replay came to an ambiguous choice */
};

/* Open the recording at DIR (reads the copies of mapped files and checks the files it names
 * without a copy, first) and build the simulator.
 * 0 or -errno with a message in ERR; the caller frees *OUT with citcat_replay_free. */
int citcat_replay_new(const char *dir, struct citcat_replay **out, char *err, size_t errlen);
void citcat_replay_free(struct citcat_replay *rp);
/* Replay to the end at full speed (no per-instruction hooks). 0 when the replay reached the
 * recorded exit, -errno on divergence, truncation or a simulator fault (message in ERR).
 * SUM is filled either way. */
int citcat_replay_run(struct citcat_replay *rp, struct citcat_summary *sum, char *err, size_t errlen);
/* Copy the bytes the replayed program writes to its stdout (fd 1) into F (not owned). */
void citcat_replay_set_stdout(struct citcat_replay *rp, FILE *f);
/* Stop a running replay (from a signal handler: it only sets a flag and asks the simulator to
 * stop): the run then fails with -EINTR, "interrupted after N instructions at pc X". */
void citcat_replay_interrupt(struct citcat_replay *rp);
/* The summary so far (after run or after a source reached its end). */
void citcat_replay_summary(const struct citcat_replay *rp, struct citcat_summary *sum);

/* Thread I (0: the first, in creation order) of the replay so far: its tid and the
 * instructions it executed. 0, or -ENOENT past the last thread. */
int citcat_replay_thread(const struct citcat_replay *rp, size_t i, uint32_t *tid, uint64_t *insns);

/* trace-stream source over a recording: 1 when PATH is a recording (magic), 0 if not. */
int citcat_probe(const char *path);
int citcat_open_source(const char *path, struct spent_trace_source **out, char *err, size_t errlen);
/* Same, keeping a pointer to the replay for its summary (owned by the source). */
int citcat_source_new(const char *dir, int want_refs, struct spent_trace_source **out,
		      struct citcat_replay **rp, char *err, size_t errlen);

#endif
