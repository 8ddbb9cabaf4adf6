/* profile/pprof.c - pprof export: the perftools.profiles.Profile protobuf written by hand
 * (wire format: varints and length-delimited fields), gzip-compressed with zlib. Addresses are
 * synthetic (each image gets its own 2^40-byte window) since functions and lines are filled in
 * (has_functions), so pprof never needs the binaries. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "core/outfile.h"
#include "core/strmap.h"
#include "profile/export.h"

/* S's index in the profile's string table (interned when new), or -ENOMEM */
static long str_id(struct strmap *t, const char *s)
{
	size_t i;
	return strmap_intern(t, s, &i) < 0 ? -ENOMEM : (long)i;
}

/* protobuf wire helpers */
static int pb_key(struct binbuf *b, unsigned field, unsigned wt)
{
	return binbuf_put_uvarint(b, (uint64_t)field << 3 | wt);
}

static int pb_uint(struct binbuf *b, unsigned field, uint64_t v)
{
	int err = pb_key(b, field, 0);
	return err ? err : binbuf_put_uvarint(b, v);
}

static int pb_bytes(struct binbuf *b, unsigned field, const void *p, size_t n)
{
	int err = pb_key(b, field, 2);
	err = err ? err : binbuf_put_uvarint(b, n);
	return err ? err : binbuf_put(b, p, n);
}

struct pp {
	const struct spent_profile *p;
	struct symbols *sym;
	struct strmap st;	/* the string table: index = string id */
	struct binbuf out, msg;
	/* locations: (img, off) -> id, linear-probed */
	struct loc { uint32_t img; uint64_t off; uint64_t id; } *locs;
	size_t capl, nloc;
	/* functions: name string id + file string id -> id */
	struct fn { long name, file; uint64_t id; } *fns;
	size_t nfn, capfn;
	uint64_t per_sample[64];	/* each event's amount per sample (ns, events or 1) */
	long main_image;		/* the first mapping; -1: none */
};

/* What one sample of EV stands for, as pprof wants it typed: CPU time in nanoseconds for the
 * clock events (period ns, or 1e9 / frequency), else events with a fixed period; with -F on
 * another event the count per sample is unknown, so it stays samples. */
static void event_amount(const struct spent_profile_event *ev, const char **type, const char **unit,
			 uint64_t *per_sample)
{
	bool clock = !strncmp(ev->name, "cpu-clock", 9) || !strncmp(ev->name, "task-clock", 10);
	bool freq = ev->flags & SPENT_PROFILE_EV_FREQ;
	*type = clock ? "cpu" : ev->name;
	*unit = clock ? "nanoseconds" : freq ? "samples" : "count";
	*per_sample = !freq ? ev->period : clock && ev->period ? 1000000000ULL / ev->period : 1;
}

static int emit_msg(struct pp *x, unsigned field)
{
	int err = pb_bytes(&x->out, field, x->msg.data, x->msg.len);
	x->msg.len = 0;
	return err;
}

static uint64_t fn_id(struct pp *x, long name, long file)
{
	for (size_t i = 0; i < x->nfn; i++)	/* functions are few (hundreds) */
		if (x->fns[i].name == name && x->fns[i].file == file)
			return x->fns[i].id;
	if (ALLOC_GROW(x->fns, x->nfn + 1, x->capfn))
		return 0;
	x->fns[x->nfn] = (struct fn){ name, file, x->nfn + 1 };
	x->nfn++;
	x->msg.len = 0;
	if (pb_uint(&x->msg, 1, x->nfn) || pb_uint(&x->msg, 2, (uint64_t)name) ||
	    pb_uint(&x->msg, 3, (uint64_t)name) || pb_uint(&x->msg, 4, (uint64_t)file) ||
	    emit_msg(x, 5))
		return 0;
	return x->nfn;
}

static uint64_t loc_id(struct pp *x, const struct spent_profile_frame *f)
{
	uint32_t img = f->image == SPENT_PROFILE_NO_IMAGE ? (uint32_t)spent_profile_nimages(x->p) : f->image;
	if ((x->nloc + 1) * 2 > x->capl) {
		size_t cap = x->capl ? x->capl * 2 : 4096;
		struct loc *n = calloc(cap, sizeof(*n));
		if (!n)
			return 0;
		for (size_t i = 0; i < x->capl; i++)
			if (x->locs[i].id) {
				size_t j = (x->locs[i].off * 0x9e3779b97f4a7c15ULL ^ x->locs[i].img) & (cap - 1);
				while (n[j].id)
					j = (j + 1) & (cap - 1);
				n[j] = x->locs[i];
			}
		free(x->locs);
		x->locs = n;
		x->capl = cap;
	}
	size_t j = (f->offset * 0x9e3779b97f4a7c15ULL ^ img) & (x->capl - 1);
	for (; x->locs[j].id; j = (j + 1) & (x->capl - 1))
		if (x->locs[j].img == img && x->locs[j].off == f->offset)
			return x->locs[j].id;
	char name[512];
	struct sym_info si = { 0 };
	profile_frame_name(x->p, x->sym, f, name, sizeof(name));
	if (f->image != SPENT_PROFILE_NO_IMAGE)
		symbols_lookup(x->sym, spent_profile_image_get(x->p, f->image), f->offset, &si);
	long ns = str_id(&x->st, name), fs = str_id(&x->st, si.file ? si.file : "");
	if (ns < 0 || fs < 0)
		return 0;
	uint64_t fid = fn_id(x, ns, fs);
	if (!fid)
		return 0;
	uint64_t id = ++x->nloc;
	x->locs[j] = (struct loc){ img, f->offset, id };
	struct binbuf line;
	binbuf_init(&line);
	int err = pb_uint(&line, 1, fid);
	if (!err && si.line > 0)
		err = pb_uint(&line, 2, (uint64_t)si.line);
	x->msg.len = 0;
	uint64_t addr = ((uint64_t)img + 1) << 40 | (f->offset & ((1ULL << 40) - 1));
	err = err ? err : pb_uint(&x->msg, 1, id);
	if (f->image != SPENT_PROFILE_NO_IMAGE)	/* no mapping for unplaced frames */
		err = err ? err : pb_uint(&x->msg, 2, (uint64_t)img + 1);
	err = err ? err : pb_uint(&x->msg, 3, addr);
	err = err ? err : pb_bytes(&x->msg, 4, line.data, line.len);
	err = err ? err : emit_msg(x, 4);
	binbuf_release(&line);
	return err ? 0 : id;
}

/* One sample: locations leaf first, value COUNT in column E of NEV. */
static int sample(struct pp *x, const struct spent_profile_frame *f, size_t n, size_t e, size_t nev,
		  uint64_t count)
{
	struct binbuf ids, vals;
	int err = 0;
	binbuf_init(&ids);
	binbuf_init(&vals);
	for (size_t k = 0; k < n && !err; k++) {
		uint64_t id = loc_id(x, &f[k]);
		err = id ? binbuf_put_uvarint(&ids, id) : -ENOMEM;
	}
	for (size_t k = 0; k < nev && !err; k++) {
		err = binbuf_put_uvarint(&vals, k == e ? count : 0);
		err = err ? err : binbuf_put_uvarint(&vals, k == e ? count * x->per_sample[k] : 0);
	}
	x->msg.len = 0;
	err = err ? err : pb_bytes(&x->msg, 1, ids.data, ids.len);
	err = err ? err : pb_bytes(&x->msg, 2, vals.data, vals.len);
	err = err ? err : emit_msg(x, 2);
	binbuf_release(&ids);
	binbuf_release(&vals);
	return err;
}

static int samples_of_event(struct pp *x, uint32_t ev, size_t e, size_t nev)
{
	int err = 0;
	bool stacks = false;
	for (size_t i = 0; i < spent_profile_nstacks(x->p) && !err; i++) {
		uint32_t sev;
		const struct spent_profile_frame *f;
		size_t nf;
		uint64_t cnt;
		spent_profile_stack_get(x->p, i, &sev, &f, &nf, &cnt);
		if (sev == ev) {
			stacks = true;
			err = sample(x, f, nf, e, nev, cnt);
		}
	}
	for (uint32_t img = 0; !stacks && !err && img < spent_profile_nimages(x->p); img++) {
		struct spent_profile_count *c = NULL;
		size_t n = 0;
		err = spent_profile_counts(x->p, img, ev, &c, &n);
		for (size_t i = 0; i < n && !err; i++) {
			struct spent_profile_frame fr = { img, c[i].offset };
			err = sample(x, &fr, 1, e, nev, c[i].count);
		}
		free(c);
	}
	return err;
}

/* The main program's mapping first: pprof names the profile after the first mapping ("File:")
 * and it was often [kernel.kallsyms]. IDs stay image + 1. */
static int mappings(struct pp *x)
{
	int err = 0;
	uint32_t nimg = spent_profile_nimages(x->p);
	for (uint32_t slot = 0; slot < nimg && !err; slot++) {
		uint32_t i = x->main_image < 0 ? slot
			     : slot == 0 ? (uint32_t)x->main_image
			     : slot <= (uint32_t)x->main_image ? slot - 1 : slot;
		const struct spent_profile_image *im = spent_profile_image_get(x->p, i);
		char bid[2 * SPENT_PROFILE_ID_MAX + 1] = "";
		for (unsigned k = 0; k < im->id_len; k++)
			snprintf(bid + 2 * k, 3, "%02x", im->id[k]);
		long fs = str_id(&x->st, im->path), bs = str_id(&x->st, bid);
		if (fs < 0 || bs < 0)
			return -ENOMEM;
		uint64_t start = ((uint64_t)i + 1) << 40;
		x->msg.len = 0;
		err = pb_uint(&x->msg, 1, (uint64_t)i + 1);
		err = err ? err : pb_uint(&x->msg, 2, start);
		err = err ? err : pb_uint(&x->msg, 3, start + (1ULL << 40));
		err = err ? err : pb_uint(&x->msg, 5, (uint64_t)fs);
		err = err ? err : pb_uint(&x->msg, 6, (uint64_t)bs);
		err = err ? err : pb_uint(&x->msg, 7, 1);	/* has_functions */
		err = err ? err : pb_uint(&x->msg, 8, 1);	/* has_filenames */
		err = err ? err : pb_uint(&x->msg, 9, 1);	/* has_line_numbers */
		err = err ? err : emit_msg(x, 3);
	}
	return err;
}

static int gzip_to_file(const struct binbuf *in, const char *path)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	size_t cap = deflateBound(&zs, in->len) + 64;
	uint8_t *out = malloc(cap);
	int err = 0;
	if (!out) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = in->data;
	zs.avail_in = (uInt)in->len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		err = -EIO;
	if (!err)
		err = export_write(path, out, zs.total_out);
	deflateEnd(&zs);
	free(out);
	return err;
}

int pprof_write(const struct spent_profile *p, struct symbols *sym, const uint32_t *evs, size_t nev,
		const char *path)
{
	struct pp x = { .p = p, .sym = sym };
	int err = 0;
	binbuf_init(&x.out);
	binbuf_init(&x.msg);
	if (str_id(&x.st, "") != 0) {
		err = -ENOMEM;
		goto out;
	}
	if (nev > 64) {
		err = -E2BIG;
		goto out;
	}
	x.main_image = profile_main_image(p, evs, nev);
	long samples = str_id(&x.st, "samples"), count = str_id(&x.st, "count");
	long period_type = -1, period_unit = -1;
	for (size_t e = 0; e < nev && !err; e++) {
		const char *type, *unit;
		event_amount(spent_profile_event_get(p, evs[e]), &type, &unit, &x.per_sample[e]);
		long t = str_id(&x.st, type), u = str_id(&x.st, unit);
		if (e == 0) {
			period_type = t;
			period_unit = u;
		}
		x.msg.len = 0;
		err = t < 0 || u < 0 || samples < 0 || count < 0 ? -ENOMEM
								  : pb_uint(&x.msg, 1, (uint64_t)samples);
		err = err ? err : pb_uint(&x.msg, 2, (uint64_t)count);
		err = err ? err : emit_msg(&x, 1);
		err = err ? err : pb_uint(&x.msg, 1, (uint64_t)t);
		err = err ? err : pb_uint(&x.msg, 2, (uint64_t)u);
		err = err ? err : emit_msg(&x, 1);
	}
	err = err ? err : mappings(&x);
	for (size_t e = 0; e < nev && !err; e++)
		err = samples_of_event(&x, evs[e], e, nev);
	for (size_t i = 0; i < strmap_count(&x.st) && !err; i++)
		err = pb_bytes(&x.out, 6, strmap_key(&x.st, i), strlen(strmap_key(&x.st, i)));
	/* period_type, period: what one sample of the first event is; shown by default */
	x.msg.len = 0;
	err = err ? err : pb_uint(&x.msg, 1, (uint64_t)period_type);
	err = err ? err : pb_uint(&x.msg, 2, (uint64_t)period_unit);
	err = err ? err : emit_msg(&x, 11);
	err = err ? err : pb_uint(&x.out, 12, x.per_sample[0]);
	err = err ? err : pb_uint(&x.out, 14, (uint64_t)period_type);
	err = err ? err : gzip_to_file(&x.out, path);
out:
	strmap_release(&x.st);
	free(x.locs);
	free(x.fns);
	binbuf_release(&x.out);
	binbuf_release(&x.msg);
	return err;
}
