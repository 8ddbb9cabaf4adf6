/* cli/cmd_db.c - `spent db DIR epoch|flush|stop|status|dump|merge OTHER...|gc --keep N`: control
 * and inspect a daemon's profile database. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/parse_options.h"
#include "core/binio.h"
#include "core/json.h"
#include "profile/db.h"

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
	"spent db DIR status|dump [--json]",
	"spent db DIR merge OTHER...",
	"spent db DIR gc --keep N",
	NULL,
};

static const struct parse_usage db_parse_usage = {
	"db", db_usage_lines, "control and inspect a profile database (epoch, flush, status, merge, gc)",
	"Actions on the database DIR of spent daemon: epoch starts a new epoch (on disk when no "
	"daemon runs); flush drains the kernel maps and merges everything now; stop stops the "
	"daemon; status prints the daemon's rates, reduction, drops and own cost with the "
	"database's usage; dump prints every count of every epoch (image, event, offset, count); "
	"merge adds the counts of other databases (each once); gc removes all but the newest N "
	"epochs. See docs/daemon.md.",
};

/* DIR ACTION [OTHER...] and the options, in any order. 1: help printed; 0; -EINVAL: an error
 * line was printed. */
static int parse_opts(int argc, char **argv, struct db_opts *o)
{
	const struct option opts[] = {
		OPT_BOOL(0, "json", &o->json, "status, dump: JSON (one object, or one per line)"),
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
	return 0;
}

static const char *open_error(int r)
{
	return r == -ELOOP ? "it is a symlink: give the real directory" :
	       r == -EPERM ? "it is not owned by root" :
	       r == -ENOTDIR ? "it is not a directory" :
	       r == -ENOENT ? "no such directory" :
	       r == -EBADMSG ? "it is not a spent profile database (no meta file)" :
	       r == -EACCES ? "permission denied: a database is readable by root only" : strerror(-r);
}

/* 1 when a daemon holds DIR's lock, 0 when not. */
static int daemon_holds(const char *dir)
{
	char path[4096];
	int fd, held = 0;

	if (db_file_path(dir, DB_LOCK_NAME, path, sizeof(path)))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);	/* a FIFO: no wait */
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		held = 1;
	close(fd);
	return held;
}

static int do_control(const struct db_opts *o)
{
	char reply[4096];
	int r = db_control(o->dir, o->action, reply, sizeof(reply), 120000);

	if (r == -ENOENT || r == -ECONNREFUSED) {
		if (!strcmp(o->action, "epoch")) {	/* no daemon: start the epoch on disk */
			struct profile_dir *d;
			uint32_t ep;
			if ((r = db_open(o->dir, false, &d))) {
				cli_error("cannot open database '%s': %s", o->dir, open_error(r));
				return 1;
			}
			r = profile_dir_new_epoch(d, &ep);
			profile_dir_close(d);
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
	return 0;
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
	struct profile_dir *d;
	struct db_usage u;
	bool live = false;
	int r = st ? db_open(o->dir, false, &d) : -ENOMEM;

	if (r) {
		cli_error("cannot open database '%s': %s", o->dir, open_error(r));
		free(st);
		return 1;
	}
	r = db_usage(d, &u);
	profile_dir_close(d);
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
		    binio_read_file(path, STATUS_MAX - 1, &data, &len) == 0 && len && data[0] == '{') {
			memcpy(st, data, len);
			st[len] = '\0';
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
	return 0;
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
	struct profile_dir *d;
	size_t skipped = 0, corrupt = 0;
	int r;

	if (o->nothers == 0) {
		cli_error("'spent db %s merge' needs at least one database to merge in", o->dir);
		return 2;
	}
	if (daemon_holds(o->dir)) {
		cli_error("a daemon is writing '%s': merge into another directory, or stop it first",
			  o->dir);
		return 1;
	}
	if ((r = db_open(o->dir, true, &d))) {
		cli_error("cannot open database '%s': %s", o->dir, open_error(r));
		return 1;
	}
	r = db_merge(d, (const char *const *)o->others, (size_t)o->nothers, warn_file, &corrupt,
		     &skipped);
	profile_dir_close(d);
	if (r) {
		cli_error("merging into '%s' failed: %s: sources before it stay merged", o->dir,
			  r == -EBADMSG ? "a source is not a spent profile database" :
			  r == -EINVAL ? "a source is this database itself or a copy of it (counts would double)" :
			  r == -EUCLEAN ? "a source has corrupt files (named above): none of it was merged, "
					  "move them away and merge it again" : strerror(-r));
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
	struct profile_dir *d;
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
	r = db_gc(d, (unsigned)o->keep, &removed);
	profile_dir_close(d);
	if (r) {
		cli_error("garbage-collecting '%s' failed: %s", o->dir,
			  r == -ENOTEMPTY ? "an old epoch holds files spent did not write: it was kept"
					  : strerror(-r));
		return 1;
	}
	printf("removed %zu epoch(s), kept the newest %ld\n", removed, o->keep);
	return 0;
}

/* Every count of every epoch, one line each: the raw data, for scripts and checks. */
static int do_dump(const struct db_opts *o)
{
	struct profile_dir *d;
	struct profile *p = profile_new();
	size_t skipped = 0;
	int r = p ? db_open(o->dir, false, &d) : -ENOMEM;

	if (r) {
		cli_error("cannot open database '%s': %s", o->dir, open_error(r));
		profile_free(p);
		return 1;
	}
	r = profile_dir_read_all(d, p, warn_file, NULL, &skipped);
	profile_dir_close(d);
	if (r) {
		cli_error("cannot read database '%s': %s", o->dir, strerror(-r));
		profile_free(p);
		return 1;
	}
	struct json_writer w;
	json_init(&w, stdout);
	if (!o->json)
		printf("image\tevent\toffset\tcount\n");
	for (uint32_t ev = 0; ev < profile_nevents(p); ev++) {
		const struct profile_event *e = profile_event_get(p, ev);
		for (uint32_t img = 0; img < profile_nimages(p); img++) {
			struct profile_count *c = NULL;
			size_t n = 0;
			profile_counts(p, img, ev, &c, &n);
			for (size_t i = 0; i < n; i++) {
				const char *path = profile_image_get(p, img)->path;
				if (o->json) {
					json_object_begin(&w);
					json_kstr(&w, "image", path);
					json_kstr(&w, "event", e->name);
					json_ku64(&w, "offset", c[i].offset);
					json_ku64(&w, "count", c[i].count);
					json_object_end(&w);
					json_newline(&w);
				} else {
					printf("%s\t%s\t0x%llx\t%llu\n", path, e->name,
					       (unsigned long long)c[i].offset, (unsigned long long)c[i].count);
				}
			}
			free(c);
		}
		for (int why = 0; why < PROFILE_UNK_NR; why++) {
			uint64_t n = profile_unknown_count(p, ev, why);
			if (!n)
				continue;
			if (o->json) {
				json_object_begin(&w);
				json_kstr(&w, "unknown", profile_unknown_reason_name(why));
				json_kstr(&w, "event", e->name);
				json_ku64(&w, "count", n);
				json_object_end(&w);
				json_newline(&w);
			} else
				printf("[unknown:%s]\t%s\t-\t%llu\n", profile_unknown_reason_name(why),
				       e->name, (unsigned long long)n);
		}
	}
	profile_free(p);
	return skipped ? 1 : 0;
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
	else if (!strcmp(o.action, "gc"))
		r = do_gc(&o);
	else {
		cli_error("unknown action '%s': use epoch, flush, stop, status, dump, merge or gc", o.action);
		r = 2;
	}
	return r;
}
