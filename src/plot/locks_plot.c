/* plot/locks_plot.c - the lock timeline (the PatchWrx paper's lock figures) as SVG: time left
 * to right in bands, one row per thread, holds as thick bars coloured by lock (the most used
 * ones; a read-write lock's readers, who share it, at half height), spins and waits as thin
 * lines, a legend; analysis/locks.c has the intervals. */
#include <errno.h>
#include <stdio.h>

#include "plot/locks_plot.h"
#include "plot/plot.h"

static const char *palette[] = { "#303030", "#8a8a8a", "#3b6fd1", "#d13b3b", "#3bb06a",
				 "#e8a23a", "#7a3bd1", "#2aa0a0" };

static size_t index_of(const struct lock_summary *top, size_t n, const struct lock_interval *iv)
{
	for (size_t i = 0; i < n; i++)
		if (top[i].addr == iv->lock && top[i].pid == iv->pid && top[i].stream == iv->stream)
			return i;
	return n;
}

/* Time runs left to right, then top to bottom in GROUPS bands; one row per thread. */
int plot_locks_svg(struct locks *lk, uint64_t groups, const char *path)
{
	size_t n_th, n_iv, n_locks;
	const struct lock_thread *tids = locks_threads(lk, &n_th);
	bool many = locks_many_processes(lk);	/* thread numbers restart in each process */
	const struct lock_interval *iv = locks_intervals(lk, &n_iv);
	const struct lock_summary *tab = locks_table(lk, &n_locks);
	/* positions: with a selection of processes, the whole tree's instructions */
	uint64_t total = locks_end_position(lk) ? locks_end_position(lk) : 1;
	uint64_t span = (total + groups - 1) / groups;
	const double x0 = 90, w = 900, row = 16, gap = 16;
	double gh = row * (double)(n_th ? n_th : 1) + gap;
	const struct lock_summary *top = tab;	/* colours for the 7 most used locks */
	size_t n_top = n_locks < 7 ? n_locks : 7;
	struct svg *s = svg_new(x0 + w + 200, 66 + gh * (double)groups + 20);
	if (!s)
		return -ENOMEM;
	svg_text(s, x0 + w / 2, 24, 15, "middle", "Lock holds (thick; read holds half) and spins (thin) per thread");
	char lab[160], nm[128];
	for (uint64_t g = 0; g < groups; g++) {
		double gy = 46 + gh * (double)g;
		svg_rect(s, x0, gy, w, gh - gap, g % 2 ? "#eeeeee" : "#fafafa", NULL);
		/* in the gap above the band, where no thread label is: long counts fit */
		snprintf(lab, sizeof(lab), "instructions %llu to %llu", (unsigned long long)(g * span),
			 (unsigned long long)((g + 1) * span < total ? (g + 1) * span : total));
		svg_text(s, x0, gy - 3, 9, "start", lab);
		for (size_t t = 0; t < n_th; t++) {
			if (many)
				snprintf(lab, sizeof(lab), "pid %u tid %u", tids[t].pid, tids[t].tid);
			else
				snprintf(lab, sizeof(lab), "tid %u", tids[t].tid);
			svg_text(s, x0 - 6, gy + row * (double)t + row / 2 + 3, 9, "end", lab);
		}
	}
	for (size_t i = 0; i < n_iv; i++) {
		size_t t;
		for (t = 0; t < n_th && (tids[t].tid != iv[i].tid || tids[t].pid != iv[i].pid); t++)
			;
		size_t li = index_of(top, n_top, &iv[i]);
		for (uint64_t a = iv[i].start; a < iv[i].end || a == iv[i].start;) {
			uint64_t g = a / span, gend = (g + 1) * span, b = iv[i].end < gend ? iv[i].end : gend;
			if (g >= groups)
				break;
			double gy = 46 + gh * (double)g + row * (double)t;
			double xa = x0 + w * (double)(a - g * span) / (double)span;
			double xb = x0 + w * (double)(b - g * span) / (double)span;
			char who[32] = "";
			if (many)
				snprintf(who, sizeof(who), "pid %u ", iv[i].pid);
			snprintf(lab, sizeof(lab), "%stid %u %s %s [%llu, %llu)", who, iv[i].tid,
				 iv[i].kind == LOCK_HOLD ? "holds" :
				 iv[i].kind == LOCK_SHARED_HOLD ? "reads" : "spins on",
				 symtab_name_addr(locks_symtab(lk, iv[i].pid, iv[i].stream), iv[i].lock, nm, sizeof(nm)),
				 (unsigned long long)iv[i].start, (unsigned long long)iv[i].end);
			if (iv[i].kind == LOCK_HOLD)
				svg_rect(s, xa, gy + 3, xb - xa < 1 ? 1 : xb - xa, row - 6,
					 palette[li < n_top ? li : 7], lab);
			else if (iv[i].kind == LOCK_SHARED_HOLD)	/* half height: not alone */
				svg_rect(s, xa, gy + row / 2 - 2, xb - xa < 1 ? 1 : xb - xa, row / 2 - 1,
					 palette[li < n_top ? li : 7], lab);
			else
				svg_rect(s, xa, gy + row / 2 - 1, xb - xa < 1 ? 1 : xb - xa, 2, "#000000",
					 lab);
			if (b >= iv[i].end)
				break;
			a = b;
		}
	}
	for (size_t i = 0; i <= n_top; i++) {
		double ly = 50 + 18 * (double)i;
		if (i < n_top)
			snprintf(lab, sizeof(lab), "%s",
				 symtab_name_addr(locks_symtab(lk, top[i].pid, top[i].stream), top[i].addr, nm, sizeof(nm)));
		else
			snprintf(lab, sizeof(lab), "spinning / waiting");
		svg_rect(s, x0 + w + 12, ly - 9, 12, i < n_top ? 12 : 2,
			 i < n_top ? palette[i] : "#000000", NULL);
		svg_text(s, x0 + w + 30, ly + 2, 11, "start", lab);
	}
	int err = svg_write(s, path);
	svg_free(s);
	return err;
}
