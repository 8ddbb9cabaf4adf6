/* tests/fuzz/seedtool.c - turns real outputs into the fuzz targets' input forms
 * (tests/fuzz/seeds.sh runs it on what spent writes for the test programs):
 *   seedtool log2raw LOG OUT     a `spent trace` log -> its raw form (fuzz_util.h)
 *   seedtool bundle DIR OUT      a profile directory (meta, kallsyms, merged-from,
 *                                epoch-NNNN/NAME.prof) -> a file bundle
 *   seedtool detail DIR          writes a small profile directory with detail rows (samples@
 *                                files) and an epoch span, the parts a `spent record` of
 *                                this build may not write yet, made through the library
 *   seedtool inline REC OUT [OLD=NEW]  a citcat recording -> one that needs no file: each
 *                                file mapping becomes an anonymous one plus MEM records of
 *                                the file's bytes (read from the recorded path, or NEW for
 *                                OLD), FILE and OPEN records are dropped. Replay seeds must be
 *                                committed (recording needs CPUID faulting, which CI machines
 *                                may lack), and then must not depend on files of one machine.
 * Plain build (build/libspent.a): it runs once per seed generation, not under the fuzzer. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "citcat/recording.h"
#include "core/kernel_id.h"
#include "fuzz_util.h"
#include "spent/profile.h"

static int add_file(struct binbuf *b, const char *dir, const char *name)
{
	char path[4096];
	uint8_t *data = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int err = binio_read_file(path, 1 << 24, &data, &len);
	if (err == -ENOENT)
		return 0;
	if (!err)
		err = fuzz_bundle_add(b, name, data, len);
	free(data);
	return err;
}

static int bundle_dir(const char *dir, struct binbuf *b)
{
	static const char *const top[] = { "meta", "kallsyms", "kallsyms.zst", "merged-from" };
	int err = 0;
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]) && !err; i++)
		err = add_file(b, dir, top[i]);
	DIR *dh = opendir(dir);
	struct dirent *de;
	if (!dh)
		return -errno;
	while (!err && (de = readdir(dh))) {
		char sub[4096];
		if (kernel_id_is_kallsyms_name(de->d_name))	/* a daemon's, per kernel identity */
			err = add_file(b, dir, de->d_name);
		if (strncmp(de->d_name, "epoch-", 6))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		DIR *eh = opendir(sub);
		struct dirent *fe;
		while (eh && !err && (fe = readdir(eh))) {
			char name[600];
			if (fe->d_name[0] == '.')
				continue;
			snprintf(name, sizeof(name), "%s/%s", de->d_name, fe->d_name);
			err = add_file(b, dir, name);
		}
		if (eh)
			closedir(eh);
	}
	closedir(dh);
	return err;
}

static int put_frame(struct binbuf *b, uint8_t kind, const struct binbuf *payload)
{
	uint32_t crc = binio_crc32(binio_crc32(0, &kind, 1), payload->data, payload->len);
	return binbuf_put_u8(b, kind) ?: binbuf_put_uvarint(b, payload->len) ?:
	       binbuf_put(b, payload->data, payload->len) ?: binbuf_put_le32(b, crc);
}

/* MAP record M of a file, as an anonymous MAP then MEM records of the file's bytes. */
static int inline_map(struct binbuf *out, const struct cc_rec *m, const struct cc_rec *f,
		      const char *old, const char *new)
{
	struct binbuf pl;
	uint8_t *data = NULL;
	size_t len = 0;
	const char *path = old && !strcmp(f->u.file.path, old) ? new : f->u.file.path;
	int err = binio_read_file(path, 1u << 30, &data, &len);
	if (err)
		return err;
	binbuf_init(&pl);
	uint64_t v[6] = { m->u.map.start, m->u.map.len, m->u.map.prot, CC_MAP_ANON, 0, 0 };
	for (int i = 0; i < 6 && !err; i++)
		err = binbuf_put_uvarint(&pl, v[i]);
	err = err ?: put_frame(out, CC_REC_MAP, &pl);
	uint64_t n = m->u.map.offset < len ? len - m->u.map.offset : 0;
	n = n < m->u.map.len ? n : m->u.map.len;
	pl.len = 0;
	err = err ?: binbuf_put_uvarint(&pl, m->u.map.start) ?: binbuf_put_uvarint(&pl, n) ?:
	      binbuf_put(&pl, data + m->u.map.offset, n) ?: put_frame(out, CC_REC_MEM, &pl);
	binbuf_release(&pl);
	free(data);
	return err;
}

static int inline_files(const char *rec_path, struct binbuf *out, const char *subst, char *msg,
			size_t msglen)
{
	struct cc_recording *r = NULL;
	char old[4096] = "";
	const char *new = NULL;
	if (subst && strchr(subst, '=')) {
		snprintf(old, sizeof(old), "%.*s", (int)(strchr(subst, '=') - subst), subst);
		new = strchr(subst, '=') + 1;
	}
	int err = cc_recording_load(rec_path, &r, msg, msglen);
	if (err)
		return err;
	err = binbuf_put(out, r->data, CC_HEADER_LEN);
	for (size_t i = 0; i < r->n && !err; i++) {
		const struct cc_rec *x = &r->recs[i];
		size_t end = i + 1 < r->n ? r->recs[i + 1].off : r->len;
		if (x->kind == CC_REC_FILE || x->kind == CC_REC_OPEN)
			continue;
		if (x->kind == CC_REC_MAP && x->u.map.kind == CC_MAP_FILE)
			err = inline_map(out, x, cc_recording_file(r, x->u.map.file_id),
					 new ? old : NULL, new);
		else
			err = binbuf_put(out, r->data + x->off, end - x->off);
	}
	cc_recording_free(r);
	return err;
}

/* Counts of two boots of one kernel as the daemon identifies them (build-id + _text), each
 * with its DIR/kallsyms-HEX, beside an older daemon's DIR/kallsyms (the fuzz target looks
 * kernels up only when there is one): the identity-to-file lookup and merge's copies get
 * seeds. */
static int two_boots(struct spent_profile *p, const char *dir, uint32_t ev)
{
	static const char old[] = "ffffffff81000100 T old_fn\n";
	char legacy[4096];
	snprintf(legacy, sizeof(legacy), "%s/kallsyms", dir);
	int err = binio_write_file_atomic(legacy, old, sizeof(old) - 1, 0600);
	for (uint64_t boot = 0; boot < 2 && !err; boot++) {
		struct spent_profile_image k = { .path = (char *)SPENT_PROFILE_KERNEL_PATH,
						 .id_kind = SPENT_PROFILE_ID_BUILDID, .id_len = 20 };
		uint64_t text = 0xffffffff81000000ull + boot * 0x2000000;
		char name[128], path[4096], syms[128];
		uint32_t ik;
		memset(k.id, 0x5a, 20);
		err = kernel_id_add_text(&k, text) ?: spent_profile_image_intern(p, &k, &ik) ?:
		      spent_profile_add(p, ik, text + 0x110, ev, 3 + boot) ?:
		      kernel_id_kallsyms_name(&k, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		int n = snprintf(syms, sizeof(syms), "%016llx T _text\n%016llx t boot%llu_fn\n",
				 (unsigned long long)text, (unsigned long long)text + 0x100,
				 (unsigned long long)boot);
		err = err ?: binio_write_file_atomic(path, syms, (size_t)n, 0600);
	}
	return err;
}

/* Three tasks (one with a cgroup), rows without task or time, chains with no-image and
 * kernel frames, counts above 3, two events with different bucket widths merged; a span.
 * The second event also has its chains as stacks and its leaf frames as counts, as `spent
 * record -g` adds them: its samples file holds both (flag bits 0 and 1, version 4), the
 * first's holds neither (a kernel leaf frame has no count). Two boots' kernels. */
static int detail_dir(const char *dir)
{
	struct spent_profile *p = spent_profile_new();
	struct spent_profile_dir *d = NULL;
	struct spent_profile_image a = { .path = (char *)"/usr/bin/demo", .id_kind = SPENT_PROFILE_ID_HASH,
				   .id_len = 8 }, k = { .path = (char *)SPENT_PROFILE_KERNEL_PATH };
	struct spent_profile_task tasks[3] = { { .comm = (char *)"demo", .pid = 10, .tid = 10 },
					 { .comm = (char *)"demo", .pid = 10, .tid = 11 },
					 { .comm = (char *)"sshd", .pid = 7,
					   .cgroup = (char *)"/system.slice/ssh.service" } };
	uint32_t ia, ik, e0, e1, t[3];
	const uint64_t t0 = 1700000000000000000ull, ms = 1000000;
	int err = p ? 0 : -ENOMEM;
	err = err ?: spent_profile_image_intern(p, &a, &ia) ?: spent_profile_image_intern(p, &k, &ik);
	err = err ?: spent_profile_event_intern(p, "cpu-clock", 1000000, 0, &e0);
	err = err ?: spent_profile_event_intern(p, "page-faults", 1, 0, &e1);
	for (int i = 0; i < 3 && !err; i++)
		err = spent_profile_task_intern(p, &tasks[i], &t[i]);
	struct spent_profile_frame f[4] = { { ia, 0x1130 }, { ia, 0x1200 }, { ik, 0xffffffff81001234ull },
				      { SPENT_PROFILE_NO_IMAGE, 0x7f0012345678ull } };
	for (uint64_t b = 0; b < 12 && !err; b++) {
		err = spent_profile_add_detail(p, e0, t[b % 2], t0 + b * 10 * ms, f + b % 2, 1 + b % 3, 1 + b);
		err = err ?: spent_profile_add(p, ia, f[b % 2].offset, e0, 1 + b);
	}
	err = err ?: spent_profile_add_detail(p, e0, SPENT_PROFILE_NO_TASK, 0, f + 2, 2, 2);
	err = err ?: spent_profile_set_time_bucket(p, 1000 * ms);
	err = err ?: spent_profile_add_detail(p, e1, t[2], t0 + 1500 * ms, f + 3, 1, 1);
	err = err ?: spent_profile_add_detail(p, e1, t[2], t0, f, 4, 9);
	err = err ?: spent_profile_add_stack(p, e1, f + 3, 1, 1) ?: spent_profile_add_stack(p, e1, f, 4, 9);
	err = err ?: spent_profile_add(p, ia, f[0].offset, e1, 9);
	spent_profile_extend_span(p, t0 - ms, t0 + 2000 * ms);
	err = err ?: spent_profile_dir_create(dir, &d) ?: two_boots(p, dir, e0) ?:
	      spent_profile_dir_write_epoch(d, 0, p, NULL, NULL);
	spent_profile_dir_close(d);
	spent_profile_free(p);
	return err;
}

int main(int argc, char **argv)
{
	struct binbuf out;
	char msg[256] = "";
	int err;
	int inl = argc >= 4 && !strcmp(argv[1], "inline");
	int detail = argc == 3 && !strcmp(argv[1], "detail");
	if (!(argc == 4 || (inl && argc == 5) || detail) ||
	    (strcmp(argv[1], "log2raw") && strcmp(argv[1], "bundle") && !inl && !detail)) {
		fprintf(stderr, "usage: seedtool log2raw LOG OUT | seedtool bundle DIR OUT | "
				"seedtool detail DIR | seedtool inline REC OUT [OLD=NEW]\n");
		return 2;
	}
	if (argc == 3 && !strcmp(argv[1], "detail")) {
		err = detail_dir(argv[2]);
		if (err)
			fprintf(stderr, "seedtool detail '%s': %s\n", argv[2], strerror(-err));
		return err ? 1 : 0;
	}
	binbuf_init(&out);
	if (!strcmp(argv[1], "log2raw")) {
		uint8_t *log = NULL;
		size_t len = 0;
		err = binio_read_file(argv[2], 1u << 30, &log, &len);
		if (!err)
			err = fuzz_trace_log_decode(log, len, &out, msg, sizeof(msg));
		free(log);
	} else if (inl) {
		err = inline_files(argv[2], &out, argc == 5 ? argv[4] : NULL, msg, sizeof(msg));
	} else {
		err = bundle_dir(argv[2], &out);
	}
	if (!err)
		err = binio_write_file_atomic(argv[3], out.data, out.len, 0644);
	binbuf_release(&out);
	if (err) {
		fprintf(stderr, "seedtool %s '%s': %s\n", argv[1], argv[2], msg[0] ? msg : strerror(-err));
		return 1;
	}
	return 0;
}
