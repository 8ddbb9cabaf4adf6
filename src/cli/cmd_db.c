/* cli/cmd_db.c - `spent db DIR epoch|flush|stop|status|list|dump|merge OTHER...|gc --keep N`:
 * control and inspect a daemon's profile database. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/parse_options.h"
#include "cli/time_window.h"
#include "core/binio.h"
#include "core/json.h"
#include "core/kernel_id.h"
#include "core/text.h"
#include "profile/db.h"
#include "profile/export.h"

struct db_opts {
	const char *dir;
	const char *action;
	int json;
	long keep;
	char **others;
	int nothers;
};

static const char *const db_usage_lines[] = {
	"spent db DIR epoch|flush|stop",
	"spent db DIR status|list|dump [--json]",
	"spent db DIR merge OTHER...",
	"spent db DIR gc --keep N",
	NULL,
};

static const struct parse_usage db_parse_usage = {
	"db", db_usage_lines, "control and inspect a profile database (epoch, flush, status, list, merge, gc)",
	"Actions on the database DIR of spent daemon: epoch starts a new epoch (on disk when no "
	"daemon runs); flush drains the kernel maps and merges everything now; stop stops the "
	"daemon and waits until it has exited (its last merge written); status prints the daemon's rates, reduction, drops and own cost with the "
	"database's usage; list shows each epoch's time span, samples, processes and bytes; dump "
	"prints every count of every epoch (image, event, offset, count) and every detail row "
	"(event, time, process, call chain, count); "
	"merge adds the counts of other databases (each once); gc removes all but the newest N "
	"epochs, then the kernel symbol copies (kallsyms-HEX) no epoch left uses but the running "
	"kernel's. See docs/daemon.md.",
};

/* DIR ACTION [OTHER...] and the options, in any order. 1: help printed; 0; -EINVAL: an error
 * line was printed. */
static int parse_opts(int argc, char **argv, struct db_opts *o)
{
	const struct option opts[] = {
		OPT_BOOL(0, "json", &o->json, "status, list, dump: JSON (one object, or one per line)"),
		{ .type = OPTION_INT, .long_name = "keep", .value = &o->keep, .argh = "N",
		  .help = "gc: the newest epochs to keep", .min = 1, .max = 1000000 },
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &db_parse_usage, 0);

	if (n == PARSE_OPT_HELP)
		return 1;
	if (n < 0)
		return -EINVAL;
	if (n < 2) {
		parse_options_error(&db_parse_usage, "give a database DIR and an action: see 'spent db -h'");
		return -EINVAL;
	}
	o->dir = argv[0];
	o->action = argv[1];
	if (n > 2 && strcmp(o->action, "merge") != 0) {
		cli_error("unexpected argument '%s' for 'spent db %s'", argv[2], o->action);
		return -EINVAL;
	}
	o->others = argv + 2;
	o->nothers = n - 2;
	/* an option of another action would be ignored without a word */
	bool json_ok = !strcmp(o->action, "status") || !strcmp(o->action, "list") ||
		       !strcmp(o->action, "dump");
	if ((o->json && !json_ok) || (o->keep && strcmp(o->action, "gc"))) {
		cli_error("--%s is not an option of 'spent db DIR %s' (%s)", o->json && !json_ok ? "json" : "keep",
			  o->action, o->json && !json_ok ? "status, list and dump take it" : "gc takes it");
		return -EINVAL;
	}
	return 0;
}

static const char *open_error(int r)
{
	return r == -ELOOP ? "it is a symlink: give the real directory" :
	       r == -EPERM ? "it is not owned by root" :
	       r == -ENOTDIR ? "it is not a directory" :
	       r == -ENOENT ? "no such directory" :
	       r == -EBADMSG ? "it is not a spent profile database (no valid 'meta' file)" :
	       r == -EACCES ? "permission denied: a database is readable by root only" : strerror(-r);
}

/* 1 when a daemon holds DIR's lock (the directory's flock, or its lock file's: a daemon of
 * before), 0 when not. */
static int daemon_holds(const char *dir)
{
	int fd, held = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		held = flock(fd, LOCK_SH | LOCK_NB) < 0;
		close(fd);
	}
	return held || db_lock_file_held(dir);
}

static bool action_is_stop(const struct db_opts *o)
{
	return !strcmp(o->action, "stop");
}

/* After a stop: until the daemon is gone (its last merge written, its lock released), so a
 * restart right after it does not meet the old one ("another daemon already uses ..."). */
static int wait_stopped(const char *dir)
{
	fflush(stdout);
	for (int i = 0; i < 1200 && daemon_holds(dir); i++)
		usleep(100000);
	if (!daemon_holds(dir))
		return 0;
	cli_error("the daemon of '%s' still runs 120 s after it was asked to stop", dir);
	return 1;
}

static int do_control(const struct db_opts *o)
{
	char reply[4096];
	int r = db_control(o->dir, o->action, reply, sizeof(reply), 120000);

	if (r == -ENOENT || r == -ECONNREFUSED) {
		if (!strcmp(o->action, "epoch")) {	/* no daemon: start the epoch on disk */
			struct spent_profile_dir *d;
			uint32_t ep;
			if ((r = db_open(o->dir, false, &d))) {
				cli_error("cannot open database '%s': %s", o->dir, open_error(r));
				return 1;
			}
			int lock;
			if ((r = db_lock_for_change(o->dir, &lock))) {
				spent_profile_dir_close(d);
				cli_error("cannot start a new epoch in '%s': %s", o->dir, r == -EBUSY ?
					  "a merge is writing it" : db_merge_recover_strerror(r));
				return 1;
			}
			r = spent_profile_dir_new_epoch(d, &ep);
			if (lock >= 0)
				close(lock);
			spent_profile_dir_close(d);
			if (r) {
				cli_error("cannot start a new epoch in '%s': %s", o->dir, strerror(-r));
				return 1;
			}
			printf("ok epoch %u (no daemon running)\n", ep);
			return 0;
		}
		cli_error("no daemon serves '%s': start one with 'spent daemon --db %s'", o->dir, o->dir);
		return 1;
	}
	if (action_is_stop(o) && (r == -ECONNRESET || r == -EPIPE)) {	/* stopping already */
		printf("ok stopping\n");
		return wait_stopped(o->dir);
	}
	if (r) {
		cli_error("talking to the daemon of '%s' failed: %s%s", o->dir, strerror(-r),
			  r == -EACCES || r == -EPERM ? ": the daemon's control socket is root-only" : "");
		return 1;
	}
	reply[strcspn(reply, "\n")] = '\0';
	if (strncmp(reply, "ok", 2) != 0) {
		cli_error("the daemon of '%s' says: %s", o->dir,
			  !strncmp(reply, "error ", 6) ? reply + 6 : reply[0] ? reply : "nothing (it closed the connection)");
		return 1;
	}
	printf("%s\n", reply);
	return action_is_stop(o) ? wait_stopped(o->dir) : 0;
}

#define STATUS_MAX (256u << 10)

/* The daemon's status (a flat JSON object) with "running" corrected when nobody answered,
 * as "key  value" lines or, with --json, one object with the database's usage added. */
static void print_status(const char *st, bool live, bool json, const struct db_usage *u)
{
	const char *p = strchr(st, '{');
	char key[64], *val = malloc(STATUS_MAX);
	struct json_writer w;
	bool quoted;

	json_init(&w, stdout);
	if (json)
		json_object_begin(&w);
	while (val && p && db_status_next_member(&p, key, sizeof(key), val, STATUS_MAX, &quoted) > 0) {
		if (!strcmp(key, "running") && !live)	/* whatever the file says: nobody answers */
			snprintf(val, STATUS_MAX, "false");
		if (!json) {
			printf("  %-16s %s\n", key, val);
			continue;
		}
		json_key(&w, key);
		if (quoted)
			json_str(&w, val);
		else
			json_literal(&w, val);
	}
	free(val);
	if (!json)
		return;
	json_kbool(&w, "daemon", live);
	json_ku64(&w, "db_epochs", u->epochs);
	json_ku64(&w, "current_epoch", u->current_epoch);
	json_ku64(&w, "db_files", u->files);
	json_ku64(&w, "db_bytes", u->bytes);
	json_object_end(&w);
	json_newline(&w);
}

static int do_status(const struct db_opts *o)
{
	char path[4096], *st = calloc(1, STATUS_MAX);
	struct spent_profile_dir *d;
	struct db_usage u;
	bool live = false, damaged = false;
	int r = st ? db_open(o->dir, false, &d) : -ENOMEM;

	if (r) {
		cli_error("cannot open database '%s': %s", o->dir, open_error(r));
		free(st);
		return 1;
	}
	r = db_usage(d, &u);
	spent_profile_dir_close(d);
	if (r) {
		cli_error("cannot read database '%s': %s", o->dir, strerror(-r));
		free(st);
		return 1;
	}
	if (db_control(o->dir, "status", st, STATUS_MAX, 10000) == 0 && st[0] == '{') {
		live = true;
	} else {
		uint8_t *data = NULL;
		size_t len = 0;
		st[0] = '\0';
		if (db_file_path(o->dir, DB_STATUS_NAME, path, sizeof(path)) == 0 &&
		    binio_read_file(path, STATUS_MAX - 1, &data, &len) == 0) {
			/* the daemon writes it whole (atomic rename): one object, '{' to '}' */
			size_t end = len;
			while (end && (data[end - 1] == '\n' || data[end - 1] == ' '))
				end--;
			if (len && data[0] == '{' && end && data[end - 1] == '}') {
				memcpy(st, data, len);
				st[len] = '\0';
			} else {
				cli_warn("'%s' is not a status the daemon wrote: ignored", path);
				damaged = true;
			}
		}
		free(data);
	}
	if (!o->json) {
		printf("database '%s': %zu epoch(s), current %u, %zu files, %llu bytes\n", o->dir,
		       u.epochs, u.current_epoch, u.files, (unsigned long long)u.bytes);
		if (!st[0])
			printf("daemon: not running, no status recorded\n");
		else
			printf("daemon: %s\n", live ? "running" : "not running (last status it wrote)");
	}
	print_status(st, live, o->json, &u);
	free(st);
	return damaged ? 1 : 0;
}

/* CTX, when given, counts the corrupt files met. */
static void warn_file(void *ctx, const char *path, const char *why)
{
	cli_warn("skipping corrupt profile file '%s': %s", path, why);
	if (ctx)
		(*(size_t *)ctx)++;
}

static int do_merge(const struct db_opts *o)
{
	struct spent_profile_dir *d;
	size_t skipped = 0, corrupt = 0;
	int r;

	if (o->nothers == 0) {
		cli_error("'spent db %s merge' needs at least one database to merge in", o->dir);
		return 2;
	}
	if (daemon_holds(o->dir)) {
		cli_error("a daemon or another merge is writing '%s': merge into another directory, or wait until it is done",
			  o->dir);
		return 1;
	}
	if ((r = db_open(o->dir, true, &d))) {
		cli_error("cannot open database '%s': %s", o->dir, open_error(r));
		return 1;
	}
	if ((r = db_merge_recover(o->dir, false))) {
		spent_profile_dir_close(d);
		cli_error("cannot finish the merge a crash interrupted in '%s/%s': %s", o->dir,
			  DB_MERGE_PENDING_NAME, db_merge_recover_strerror(r));
		return 1;
	}
	/* one source at a time, so the error names the one that failed */
	int failed = -1;
	for (int i = 0; i < o->nothers && !r; i++) {
		size_t sk = 0;
		r = db_merge(d, (const char *const *)&o->others[i], 1, warn_file, &corrupt, &sk);
		skipped += sk;
		if (r == -EINPROGRESS) {	/* merged; one more try at putting it in place */
			int p = db_merge_recover(o->dir, false);
			if (p) {
				spent_profile_dir_close(d);
				cli_error("merged '%s' into '%s', but putting it in place failed: %s: the "
					  "next merge or daemon start finishes it", o->others[i], o->dir,
					  db_merge_recover_strerror(p));
				return 1;
			}
			r = 0;
		}
		if (r)
			failed = i;
	}
	spent_profile_dir_close(d);
	if (r) {
		cli_error("merging '%s' into '%s' failed: %s%s", o->others[failed], o->dir,
			  r == -EBADMSG ? "it is not a spent profile database" :
			  r == -EINVAL ? "it is this database itself or a copy of it (counts would double)" :
			  r == -EBUSY ? "a daemon or another merge is writing it" :
			  r == -EUCLEAN ? "it has corrupt files (named above): none of it was merged, "
					  "move them away and merge it again" :
			  r == -ENOTRECOVERABLE ? "an epoch of this database holds an entry spent does "
						  "not write (named above): move it away and merge again" :
			  r == -EXDEV ? "its kernel symbols were saved under another boot of the kernel "
					"(at other addresses): its kernel samples would be misnamed" :
			  strerror(-r),
			  failed > 0 ? ": the sources before it stay merged" : "");
		return 1;
	}
	printf("merged %d database(s) into '%s'", o->nothers - (int)skipped, o->dir);
	if (skipped)
		printf(", skipped %zu merged before", skipped);
	if (corrupt)
		printf(", without %zu corrupt file(s)", corrupt);
	printf("\n");
	return corrupt ? 1 : 0;	/* corrupt input is exit 1, as in report and dump */
}

static int do_gc(const struct db_opts *o)
{
	struct spent_profile_dir *d;
	size_t removed = 0;
	int r;

	if (o->keep < 1) {
		cli_error("'spent db %s gc' needs --keep N (N >= 1 epochs to keep)", o->dir);
		return 2;
	}
	if ((r = db_open(o->dir, false, &d))) {
		cli_error("cannot open database '%s': %s", o->dir, open_error(r));
		return 1;
	}
	int lock;
	if ((r = db_lock_for_change(o->dir, &lock))) {
		spent_profile_dir_close(d);
		cli_error("garbage-collecting '%s': %s", o->dir, r == -EBUSY ?
			  "a merge is writing it: run gc when it is done" : db_merge_recover_strerror(r));
		return 1;
	}
	size_t copies = 0;
	uint32_t kept, not_dir;
	r = db_gc(d, (unsigned)o->keep, &removed, &kept, &not_dir);
	if (!r || r == -ENOTEMPTY || r == -ENOTDIR) {
		int rk = db_gc_kallsyms(d, &copies);
		r = r ? r : rk;
	}
	if (lock >= 0)
		close(lock);
	spent_profile_dir_close(d);
	if (r == -ENOTEMPTY) {
		cli_error("garbage-collecting '%s': epoch %u holds files spent did not write: it was "
			  "kept (%zu other old epoch(s) removed)", o->dir, kept, removed);
		return 1;
	}
	if (r == -ENOTDIR) {
		cli_error("garbage-collecting '%s': epoch-%04u is not a directory: it was left alone "
			  "and not counted as an epoch (%zu old epoch(s) removed, the newest %ld kept)",
			  o->dir, not_dir, removed, o->keep);
		return 1;
	}
	if (r) {
		cli_error("garbage-collecting '%s' failed: %s", o->dir, strerror(-r));
		return 1;
	}
	printf("removed %zu epoch(s), kept the newest %ld", removed, o->keep);
	if (copies)
		printf("; removed %zu kallsyms-HEX copies no epoch left uses", copies);
	printf("\n");
	return 0;
}

/* One detail row: a line "[detail] EVENT TIME_NS COMM PID TID CGROUP CHAIN COUNT" (tabs; CHAIN
 * is IMAGE+0xOFFSET;... leaf first, "-" for none), or with W one JSON object "kind":"detail". */
static void dump_detail(const struct spent_profile *p, const struct spent_profile_detail_row *row,
			struct json_writer *w)
{
	const struct spent_profile_task *t = row->task == SPENT_PROFILE_NO_TASK ? NULL : spent_profile_task_get(p, row->task);
	const char *ev = spent_profile_event_get(p, row->event)->name;

	if (w) {
		json_object_begin(w);
		json_kstr(w, "kind", "detail");
		json_kstr(w, "event", ev);
		json_ku64(w, "time_ns", row->time_ns);
		if (t) {
			json_kstr(w, "comm", t->comm);
			json_ku64(w, "pid", t->pid);
			json_ku64(w, "tid", t->tid);
			if (t->cgroup)
				json_kstr(w, "cgroup", t->cgroup);
			else
				json_knull(w, "cgroup");
		}
		json_key(w, "chain");
		json_array_begin(w);
		for (size_t f = 0; f < row->nframes; f++) {
			uint32_t img = row->frames[f].image;
			json_object_begin(w);
			if (img == SPENT_PROFILE_NO_IMAGE)
				json_knull(w, "image");
			else
				json_kstr(w, "image", spent_profile_image_get(p, img)->path);
			json_ku64(w, "offset", row->frames[f].offset);
			json_object_end(w);
		}
		json_array_end(w);
		json_ku64(w, "samples", row->count);
		json_object_end(w);
		json_newline(w);
		return;
	}
	char shown[TEXT_SHOWN_MAX];
	printf("[detail]\t%s\t%llu\t", ev, (unsigned long long)row->time_ns);
	if (t) {
		/* names are the programs' and the cgroup tree's: no tab or newline may split a line */
		fputs(text_for_terminal(t->comm, shown, sizeof(shown)), stdout);
		printf("\t%u\t%u\t", t->pid, t->tid);
		fputs(text_for_terminal(t->cgroup ? t->cgroup : "-", shown, sizeof(shown)), stdout);
	} else {
		printf("-\t-\t-\t-");
	}
	putchar('\t');
	for (size_t f = 0; f < row->nframes; f++) {
		uint32_t img = row->frames[f].image;
		printf("%s%s+0x%llx", f ? ";" : "", img == SPENT_PROFILE_NO_IMAGE ? "[unknown]" :
		       text_for_terminal(spent_profile_image_get(p, img)->path, shown, sizeof(shown)),
		       (unsigned long long)row->frames[f].offset);
	}
	printf("%s\t%llu\n", row->nframes ? "" : "-", (unsigned long long)row->count);
}

/* Every count of every epoch, one line each: the raw data, for scripts and checks. */
static int do_dump(const struct db_opts *o)
{
	struct spent_profile_dir *d;
	struct spent_profile *p = spent_profile_new();
	size_t skipped = 0;
	int r = p ? db_open(o->dir, false, &d) : -ENOMEM;

	if (r) {
		cli_error("cannot open database '%s': %s", o->dir, open_error(r));
		spent_profile_free(p);
		return 1;
	}
	r = spent_profile_dir_read_all(d, p, warn_file, NULL, &skipped);
	spent_profile_dir_close(d);
	if (r) {
		cli_error("cannot read database '%s': %s", o->dir, strerror(-r));
		spent_profile_free(p);
		return 1;
	}
	struct json_writer w;
	json_init(&w, stdout);
	if (!o->json)
		printf("image\tevent\toffset\tcount\n");
	for (uint32_t ev = 0; ev < spent_profile_nevents(p); ev++) {
		const struct spent_profile_event *e = spent_profile_event_get(p, ev);
		for (uint32_t img = 0; img < spent_profile_nimages(p); img++) {
			struct spent_profile_count *c = NULL;
			size_t n = 0;
			spent_profile_counts(p, img, ev, &c, &n);
			for (size_t i = 0; i < n; i++) {
				const char *path = spent_profile_image_get(p, img)->path;
				if (o->json) {
					json_object_begin(&w);
					json_kstr(&w, "image", path);
					json_kstr(&w, "event", e->name);
					json_ku64(&w, "offset", c[i].offset);
					json_ku64(&w, "count", c[i].count);
					json_object_end(&w);
					json_newline(&w);
				} else {
					char shown[TEXT_SHOWN_MAX];
					printf("%s\t%s\t0x%llx\t%llu\n", text_for_terminal(path, shown, sizeof(shown)),
					       e->name, (unsigned long long)c[i].offset,
					       (unsigned long long)c[i].count);
				}
			}
			free(c);
		}
		for (int why = 0; why < SPENT_PROFILE_UNK_NR; why++) {
			uint64_t n = spent_profile_unknown_count(p, ev, why);
			if (!n)
				continue;
			if (o->json) {
				json_object_begin(&w);
				json_kstr(&w, "unknown", spent_profile_unknown_reason_name(why));
				json_kstr(&w, "event", e->name);
				json_ku64(&w, "count", n);
				json_object_end(&w);
				json_newline(&w);
			} else
				printf("[unknown:%s]\t%s\t-\t%llu\n", spent_profile_unknown_reason_name(why),
				       e->name, (unsigned long long)n);
		}
	}
	for (size_t i = 0; i < spent_profile_ndetail(p); i++) {
		struct spent_profile_detail_row row;
		if (spent_profile_detail_get(p, i, &row) == 0)
			dump_detail(p, &row, o->json ? &w : NULL);
	}
	spent_profile_free(p);
	return skipped ? 1 : 0;
}

/* ---- list: one line per epoch ------------------------------------------------------------- */

struct epoch_info {
	uint32_t epoch;
	uint64_t start_ns, end_ns;
	uint64_t samples;	/* counts and unknown, every event */
	size_t processes;	/* distinct pids in the detail rows */
	uint64_t bytes;		/* the epoch directory's files */
	size_t skipped;		/* corrupt files */
	/* the kernels with samples (core/kernel_id.h): a daemon's epoch has one, a merge of
	 * several hosts' or boots' may have more; the first EPOCH_KERNELS are kept */
#define EPOCH_KERNELS 8
	struct spent_profile_image kernels[EPOCH_KERNELS];
	size_t nkernels;
};

static uint64_t dir_bytes(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	struct stat st;
	uint64_t sum = 0;

	while (dir && (de = readdir(dir)) != NULL)
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	if (dir)
		closedir(dir);
	return sum;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Samples and distinct processes of P. */
static void epoch_totals(const struct spent_profile *p, struct epoch_info *e)
{
	size_t ntask = spent_profile_ntasks(p), k = 0;
	uint32_t *pids = calloc(ntask + 1, sizeof(*pids));

	for (uint32_t img = 0; img < spent_profile_nimages(p); img++) {
		const struct spent_profile_image *im = spent_profile_image_get(p, img);
		uint64_t in_image = 0;
		for (uint32_t ev = 0; ev < spent_profile_nevents(p); ev++)
			in_image += spent_profile_image_total(p, img, ev);
		e->samples += in_image;
		if (in_image && profile_image_is_kernel(im) && e->nkernels < EPOCH_KERNELS)
			e->kernels[e->nkernels++] = *im;	/* path unused: P is freed after */
	}
	for (uint32_t ev = 0; ev < spent_profile_nevents(p); ev++) {
		for (int why = 0; why < SPENT_PROFILE_UNK_NR; why++)
			e->samples += spent_profile_unknown_count(p, ev, why);
	}
	/* a task is (comm, pid, tid, cgroup): one process may be several tasks */
	for (size_t t = 0; pids && t < ntask; t++)
		pids[k++] = spent_profile_task_get(p, (uint32_t)t)->pid;
	if (pids)
		qsort(pids, k, sizeof(*pids), cmp_u32);
	for (size_t i = 0; pids && i < k; i++)
		e->processes += i == 0 || pids[i] != pids[i - 1];
	free(pids);
}

static int epoch_info_read(struct spent_profile_dir *d, uint32_t ep, struct epoch_info *e)
{
	char path[4096];
	struct spent_profile *p = spent_profile_new();
	int r = p ? 0 : -ENOMEM;

	memset(e, 0, sizeof(*e));
	e->epoch = ep;
	r = r ? r : spent_profile_dir_epoch_span(d, ep, &e->start_ns, &e->end_ns);
	if (r == -EBADMSG) {	/* a damaged span: its times are not known, its counts are */
		snprintf(path, sizeof(path), "%s/epoch-%04u/span", spent_profile_dir_path(d), ep);
		warn_file(&e->skipped, path, "not a span file: its times are not shown");
		r = 0;
	}
	r = r ? r : spent_profile_dir_read_epoch(d, ep, p, warn_file, NULL, &e->skipped);
	if (!r)
		epoch_totals(p, e);
	spent_profile_free(p);
	snprintf(path, sizeof(path), "%s/epoch-%04u", spent_profile_dir_path(d), ep);
	e->bytes = dir_bytes(path);
	return r;
}

/* "1h02m", "3m20s", "12.5s" */
static void format_duration(uint64_t ns, char *buf, size_t len)
{
	uint64_t s = ns / 1000000000ull;

	if (s >= 3600)
		snprintf(buf, len, "%lluh%02llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s / 60 % 60));
	else if (s >= 60)
		snprintf(buf, len, "%llum%02llus", (unsigned long long)(s / 60), (unsigned long long)(s % 60));
	else
		snprintf(buf, len, "%.1fs", (double)ns / 1e9);
}

static void print_epoch(const struct epoch_info *e, struct json_writer *w)
{
	char start[32], end[32], dur[32];
	bool span = e->end_ns != 0;

	time_point_format(e->start_ns, start, sizeof(start));
	time_point_format(e->end_ns, end, sizeof(end));
	if (span)
		format_duration(e->end_ns - e->start_ns, dur, sizeof(dur));
	else
		snprintf(dur, sizeof(dur), "-");
	if (!w) {
		char kernel[32] = "-";
		if (e->nkernels)
			kernel_id_short(&e->kernels[0], kernel, sizeof(kernel));
		printf("%5u  %-19s  %-19s  %9s  %10llu  %9zu  %10llu  %s%s\n", e->epoch, start, end, dur,
		       (unsigned long long)e->samples, e->processes, (unsigned long long)e->bytes, kernel,
		       e->nkernels > 1 ? " (and more)" : "");
		return;
	}
	json_object_begin(w);
	json_ku64(w, "epoch", e->epoch);
	if (span) {
		json_ku64(w, "start_ns", e->start_ns);
		json_ku64(w, "end_ns", e->end_ns);
		json_kstr(w, "start", start);
		json_kstr(w, "end", end);
		json_kdouble(w, "duration_s", (double)(e->end_ns - e->start_ns) / 1e9, 3);
	} else {
		json_knull(w, "start_ns");
		json_knull(w, "end_ns");
	}
	json_ku64(w, "samples", e->samples);
	json_ku64(w, "processes", e->processes);
	json_ku64(w, "bytes", e->bytes);
	json_key(w, "kernels");
	json_array_begin(w);
	for (size_t k = 0; k < e->nkernels; k++) {
		char id[2 * SPENT_PROFILE_ID_MAX + 1];
		kernel_id_hex(&e->kernels[k], id, sizeof(id));
		json_str(w, id);
	}
	json_array_end(w);
	json_object_end(w);
	json_newline(w);
}

static int do_list(const struct db_opts *o)
{
	struct spent_profile_dir *d;
	struct json_writer w;
	uint32_t *eps = NULL;
	size_t n = 0, skipped = 0;
	int r = db_open(o->dir, false, &d);

	if (r) {
		cli_error("cannot open database '%s': %s", o->dir, open_error(r));
		return 1;
	}
	if ((r = spent_profile_dir_epochs(d, &eps, &n))) {
		cli_error("cannot read database '%s': %s", o->dir, strerror(-r));
		spent_profile_dir_close(d);
		return 1;
	}
	json_init(&w, stdout);
	if (!o->json)
		printf("%5s  %-19s  %-19s  %9s  %10s  %9s  %10s  %s\n", "epoch", "start", "end", "duration",
		       "samples", "processes", "bytes", "kernel");
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		struct epoch_info e;
		if ((r = epoch_info_read(d, eps[i], &e))) {	/* the others are still listed */
			cli_error("cannot read epoch %u of '%s': %s", eps[i], o->dir, strerror(-r));
			failed = 1;
			continue;
		}
		skipped += e.skipped;
		print_epoch(&e, o->json ? &w : NULL);
	}
	free(eps);
	spent_profile_dir_close(d);
	return failed || skipped ? 1 : 0;
}

int cmd_db(int argc, char **argv)
{
	struct db_opts o = { 0 };
	int r = parse_opts(argc, argv, &o);

	if (r)
		return r > 0 ? 0 : 2;
	if (!strcmp(o.action, "epoch") || !strcmp(o.action, "flush") || !strcmp(o.action, "stop"))
		r = do_control(&o);
	else if (!strcmp(o.action, "status"))
		r = do_status(&o);
	else if (!strcmp(o.action, "merge"))
		r = do_merge(&o);
	else if (!strcmp(o.action, "dump"))
		r = do_dump(&o);
	else if (!strcmp(o.action, "list"))
		r = do_list(&o);
	else if (!strcmp(o.action, "gc"))
		r = do_gc(&o);
	else {
		cli_error("unknown action '%s': use epoch, flush, stop, status, list, dump, merge or gc", o.action);
		r = 2;
	}
	return r;
}
