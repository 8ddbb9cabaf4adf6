/* plot/html_report.c - writes `spent report --html`'s page: the template src/plot/html/report.html
 * with the CSS, the JavaScript and the profile as JSON put in its three slots. The profile is
 * flattened here into what the page draws: table rows (report_build), one string table of
 * frame names, one table of call chains (root first, as indices into the names), the stacks of
 * the first event as (chain, count) and, when the profile has detail rows, those rows as (time,
 * task, chain, count) for the heat map and the flame graph of a time range. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "core/alloc.h"
#include "core/binio.h"
#include "core/json.h"
#include "core/outfile.h"
#include "core/strmap.h"
#include "plot/html_report.h"
#include "profile/export.h"

#include "html_assets.h"	/* generated from src/plot/html/ (mk/html.mk) */

/* ---- the page model ------------------------------------------------------------------ */

struct page {
	const struct spent_profile *p;
	struct symbols *sym;
	struct strmap names;	/* frame names */
	struct strmap chains;	/* uint32 name ids, root first, as byte keys */
	struct strmap frames;	/* (image, offset) already named, as byte keys -> frame_name[] */
	uint32_t *frame_name;
	size_t capframe_name;
	uint32_t *ids;		/* scratch for one chain */
	size_t capids;
};

/* Index of KEY (LEN bytes) in M, added when new (*ADDED says which); -ENOMEM. */
static long intern(struct strmap *m, const void *key, size_t len, bool *added)
{
	size_t i;
	int isnew = strmap_intern_bytes(m, key, len, &i);
	if (isnew < 0)
		return isnew;
	*added = isnew;
	return (long)i;
}

static long name_id(struct page *pg, const char *name, size_t len)
{
	bool added;
	return intern(&pg->names, name, len, &added);
}

static int ids_reserve(struct page *pg, size_t n)
{
	return ALLOC_GROW(pg->ids, n, pg->capids);
}

/* Name id of frame F, named as the folded stacks name it (profile_frame_name, ';' -> '_'). */
static long frame_id(struct page *pg, const struct spent_profile_frame *f)
{
	uint64_t key[2] = { f->image, f->offset };
	bool added;
	long i = intern(&pg->frames, key, sizeof(key), &added);
	if (i < 0 || !added)
		return i < 0 ? i : pg->frame_name[i];
	if (ALLOC_GROW(pg->frame_name, (size_t)i + 1, pg->capframe_name))
		return -ENOMEM;
	char name[512];
	profile_frame_name(pg->p, pg->sym, f, name, sizeof(name));
	for (char *c = name; *c; c++)
		if (*c == ';' || *c == '\n')
			*c = '_';
	long id = name_id(pg, name, strlen(name));
	if (id < 0)
		return id;
	pg->frame_name[i] = (uint32_t)id;
	return id;
}

/* Chain id of N frames given leaf first. */
static long chain_of_frames(struct page *pg, const struct spent_profile_frame *fr, size_t n)
{
	if (ids_reserve(pg, n))
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		long id = frame_id(pg, &fr[k]);
		if (id < 0)
			return id;
		pg->ids[n - 1 - k] = (uint32_t)id;
	}
	bool added;
	return intern(&pg->chains, pg->ids, n * sizeof(uint32_t), &added);
}

/* Chain id of a folded line "root;...;leaf". */
static long chain_of_folded(struct page *pg, const char *line)
{
	size_t n = 0;
	for (const char *s = line;; s++) {
		size_t l = strcspn(s, ";");
		if (ids_reserve(pg, n + 1))
			return -ENOMEM;
		long id = name_id(pg, s, l);
		if (id < 0)
			return id;
		pg->ids[n++] = (uint32_t)id;
		s += l;
		if (!*s)
			break;
	}
	bool added;
	return intern(&pg->chains, pg->ids, n * sizeof(uint32_t), &added);
}

/* ---- JSON sections ------------------------------------------------------------------- */

static void write_event_list(struct json_writer *w, const struct spent_profile *p,
			     const struct html_report_config *cfg)
{
	const struct spent_profile_event *ev = spent_profile_event_get(p, cfg->events[0]);
	json_key(w, "event");
	json_object_begin(w);
	json_kstr(w, "name", ev->name);
	json_ku64(w, "period", ev->period);
	json_kbool(w, "freq", ev->flags & SPENT_PROFILE_EV_FREQ);
	json_ku64(w, "total", spent_profile_event_total(p, cfg->events[0]));
	uint64_t unknown = 0;
	for (int r = 0; r < SPENT_PROFILE_UNK_NR; r++)
		unknown += spent_profile_unknown_count(p, cfg->events[0], r);
	json_ku64(w, "unknown", unknown);
	json_object_end(w);
	json_key(w, "events");
	json_array_begin(w);
	for (size_t e = 0; e < cfg->nevents; e++) {
		json_object_begin(w);
		json_kstr(w, "name", spent_profile_event_get(p, cfg->events[e])->name);
		json_ku64(w, "total", spent_profile_event_total(p, cfg->events[e]));
		json_object_end(w);
	}
	json_array_end(w);
}

/* Rows by function (with inclusive counts when there are stacks) and by image. */
static int write_tables(struct json_writer *w, const struct page *pg,
			const struct html_report_config *cfg)
{
	struct report_config rc = { .by = REPORT_BY_FUNCTION, .events = cfg->events,
				    .nevents = cfg->nevents, .children = true };
	struct report *r = NULL;
	int err = report_build(pg->p, pg->sym, &rc, &r);
	if (err)
		return err;
	size_t limit = cfg->limit ? cfg->limit : 200;
	json_kbool(w, "have_stacks", r->have_stacks);
	json_key(w, "functions");
	json_array_begin(w);
	for (size_t i = 0; i < r->nrows && i < limit; i++) {
		const struct report_row *row = &r->rows[i];
		json_array_begin(w);
		json_str(w, row->symbol);
		json_str(w, row->image);
		json_u64(w, r->have_stacks ? row->incl[0] : row->self[0]);
		for (size_t e = 0; e < cfg->nevents; e++)
			json_u64(w, row->self[e]);
		json_array_end(w);
	}
	json_array_end(w);
	report_free(r);
	r = NULL;
	rc.by = REPORT_BY_IMAGE;
	rc.children = false;
	if ((err = report_build(pg->p, pg->sym, &rc, &r)))
		return err;
	json_key(w, "images");
	json_array_begin(w);
	for (size_t i = 0; i < r->nrows; i++) {
		json_array_begin(w);
		json_str(w, r->rows[i].image);
		for (size_t e = 0; e < cfg->nevents; e++)
			json_u64(w, r->rows[i].self[e]);
		json_array_end(w);
	}
	json_array_end(w);
	report_free(r);
	return 0;
}

/* The stacks of the first event, as the folded export has them (leaf-only stacks when the
 * profile has no call stacks). */
static int write_stacks(struct json_writer *w, struct page *pg, uint32_t ev)
{
	struct folded *f = NULL;
	int err = folded_build(pg->p, pg->sym, ev, 0, &f);
	if (err)
		return err;
	json_key(w, "stacks");
	json_array_begin(w);
	for (size_t i = 0; i < f->n; i++) {
		long c = chain_of_folded(pg, f->stacks[i]);
		if (c < 0) {
			err = (int)c;
			break;
		}
		json_array_begin(w);
		json_u64(w, (uint64_t)c);
		json_u64(w, f->counts[i]);
		json_array_end(w);
	}
	json_array_end(w);
	folded_free(f);
	return err;
}

/* Detail rows of event EV: [microseconds since the span's start (-1: unknown), task, chain,
 * count], and the tasks they name. */
static int write_detail(struct json_writer *w, struct page *pg, uint32_t ev)
{
	const struct spent_profile *p = pg->p;
	size_t nd = spent_profile_ndetail(p);
	uint64_t start, end, first = 0, last = 0;
	struct spent_profile_detail_row row;
	spent_profile_span(p, &start, &end);
	for (size_t i = 0; i < nd; i++)
		if (!spent_profile_detail_get(p, i, &row) && row.event == ev && row.time_ns) {
			if (!first || row.time_ns < first)
				first = row.time_ns;
			if (row.time_ns > last)
				last = row.time_ns;
		}
	/* a span that does not cover the rows (none written, or merged oddly) gives way to them */
	if (!start || (first && first < start))
		start = first;
	if (last + spent_profile_time_bucket(p) > end)
		end = last + spent_profile_time_bucket(p);
	json_key(w, "tasks");
	json_array_begin(w);
	for (uint32_t t = 0; t < spent_profile_ntasks(p); t++) {
		const struct spent_profile_task *task = spent_profile_task_get(p, t);
		json_array_begin(w);
		json_str(w, task->comm);
		json_u64(w, task->pid);
		json_u64(w, task->tid);
		json_str(w, task->cgroup);
		json_array_end(w);
	}
	json_array_end(w);
	json_key(w, "detail");
	if (!nd) {
		json_null(w);
		return 0;
	}
	json_object_begin(w);
	json_ku64(w, "bucket_us", spent_profile_time_bucket(p) / 1000);
	json_kdouble(w, "start_ms", (double)start / 1e6, 3);
	json_ku64(w, "span_us", start ? (end - start) / 1000 : 0);
	json_key(w, "rows");
	json_array_begin(w);
	for (size_t i = 0; i < nd; i++) {
		if (spent_profile_detail_get(p, i, &row) || row.event != ev || !row.count)
			continue;
		long c = chain_of_frames(pg, row.frames, row.nframes);
		if (c < 0)
			return (int)c;
		json_array_begin(w);
		json_i64(w, row.time_ns && start ? (int64_t)((row.time_ns - start) / 1000) : -1);
		json_i64(w, row.task == SPENT_PROFILE_NO_TASK ? -1 : (int64_t)row.task);
		json_u64(w, (uint64_t)c);
		json_u64(w, row.count);
		json_array_end(w);
	}
	json_array_end(w);
	json_object_end(w);
	return 0;
}

static void write_interned(struct json_writer *w, const struct page *pg)
{
	json_key(w, "names");
	json_array_begin(w);
	for (size_t i = 0; i < strmap_count(&pg->names); i++)
		json_strn(w, strmap_key(&pg->names, i), strmap_key_len(&pg->names, i));
	json_array_end(w);
	json_key(w, "chains");
	json_array_begin(w);
	for (size_t i = 0; i < strmap_count(&pg->chains); i++) {
		const uint32_t *ids = (const uint32_t *)strmap_key(&pg->chains, i);	/* malloc-aligned */
		json_array_begin(w);
		for (size_t k = 0; k < strmap_key_len(&pg->chains, i) / sizeof(uint32_t); k++)
			json_u64(w, ids[k]);
		json_array_end(w);
	}
	json_array_end(w);
}

/* "data:MIME;base64,..." of N bytes at D, a new string (NULL when out of memory). */
static char *data_uri(const char *mime, const uint8_t *d, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t head = strlen(mime) + 13;	/* "data:" MIME ";base64," */
	char *uri = malloc(head + (n + 2) / 3 * 4 + 1), *o;
	if (!uri)
		return NULL;
	o = uri + snprintf(uri, head + 1, "data:%s;base64,", mime);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) |
			     (i + 2 < n ? d[i + 2] : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = 0;
	return uri;
}

static int write_plots(struct json_writer *w, const struct html_report_config *cfg)
{
	json_key(w, "plots");
	json_array_begin(w);
	for (size_t i = 0; i < cfg->nplots; i++) {
		char *uri = data_uri(cfg->plots[i].mime, cfg->plots[i].data, cfg->plots[i].len);
		if (!uri)
			return -ENOMEM;
		json_object_begin(w);
		json_kstr(w, "title", cfg->plots[i].title);
		json_kstr(w, "uri", uri);
		json_object_end(w);
		free(uri);
	}
	json_array_end(w);
	return 0;
}

/* The whole data document into a memory buffer. */
static int build_json(struct page *pg, const struct html_report_config *cfg, char **buf,
		      size_t *len)
{
	FILE *f = open_memstream(buf, len);
	if (!f)
		return -ENOMEM;
	struct json_writer w;
	json_init(&w, f);
	json_object_begin(&w);
	json_ku64(&w, "version", 1);
	json_kstr(&w, "generator", "spent " SPENT_VERSION);
	json_kstr(&w, "title", cfg->title ? cfg->title : "profile");
	write_event_list(&w, pg->p, cfg);
	int err = write_tables(&w, pg, cfg);
	if (!err)
		err = write_stacks(&w, pg, cfg->events[0]);
	if (!err)
		err = write_detail(&w, pg, cfg->events[0]);
	if (!err) {
		write_interned(&w, pg);
		err = write_plots(&w, cfg);
	}
	json_object_end(&w);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

/* JSON inside <script>: a "</script>" in a function name must not end the element, so every
 * '<' (only ever inside strings) becomes the JSON escape \u003c. */
static void write_json_for_script(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(s[i], f);
}

/* The template with its slots filled: each slot is a comment naming what goes there. */
static void write_page(FILE *f, const char *json, size_t jlen)
{
	static const struct { const char *mark; const char *text; } slots[] = {
		{ "/*SPENT_CSS*/", html_report_css },
		{ "/*SPENT_DATA*/", NULL },
		{ "/*SPENT_JS*/", html_report_js },
	};
	const char *t = html_report_html;
	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		const char *m = strstr(t, slots[i].mark);
		if (!m)
			continue;
		fwrite(t, 1, (size_t)(m - t), f);
		if (slots[i].text)
			fputs(slots[i].text, f);
		else
			write_json_for_script(f, json, jlen);
		t = m + strlen(slots[i].mark);
	}
	fputs(t, f);
}

int html_report_write(const struct spent_profile *p, struct symbols *sym,
		      const struct html_report_config *cfg, const char *path)
{
	if (!cfg->nevents)
		return -EINVAL;
	struct page pg = { .p = p, .sym = sym };
	char *json = NULL;
	size_t jlen = 0;
	struct outfile *out = NULL;
	int err = build_json(&pg, cfg, &json, &jlen);
	if (!err)
		err = outfile_open(path, OUTFILE_MODE, &out);
	if (!err) {
		FILE *f = outfile_stream(out);
		if (!f) {
			outfile_abort(out);
			err = -ENOMEM;
		} else {
			write_page(f, json, jlen);
			err = outfile_commit(out);
		}
	}
	free(json);
	free(pg.ids);
	free(pg.frame_name);
	strmap_release(&pg.names);
	strmap_release(&pg.chains);
	strmap_release(&pg.frames);
	return err;
}

/* ---- plots --------------------------------------------------------------------------- */

static bool is_svg(const uint8_t *d, size_t n)
{
	size_t i = 0;
	while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n'))
		i++;
	if (n - i >= 5 && !memcmp(d + i, "<?xml", 5))
		return memmem(d, n < 4096 ? n : 4096, "<svg", 4) != NULL;
	return n - i >= 4 && !memcmp(d + i, "<svg", 4);
}

int html_plot_read(const char *path, struct html_plot *out)
{
	static const uint8_t png_magic[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	memset(out, 0, sizeof(*out));
	int err = binio_read_file(path, HTML_PLOT_MAX, &out->data, &out->len);
	if (err)
		return err;
	if (out->len >= 8 && !memcmp(out->data, png_magic, 8))
		out->mime = "image/png";
	else if (is_svg(out->data, out->len))
		out->mime = "image/svg+xml";
	const char *slash = strrchr(path, '/');
	if (!out->mime || !(out->title = strdup(slash && slash[1] ? slash + 1 : path))) {
		err = out->mime ? -ENOMEM : -EINVAL;
		html_plot_release(out);
	}
	return err;
}

void html_plot_release(struct html_plot *pl)
{
	free(pl->data);
	free(pl->title);
	memset(pl, 0, sizeof(*pl));
}
