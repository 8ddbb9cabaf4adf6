/* plot/svg.c - an SVG canvas kept in memory and written atomically, and the two chart kinds
 * the studies draw: stacked bars over time and lines over cache sizes. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/binio.h"
#include "core/outfile.h"
#include "core/text.h"
#include "plot/plot.h"

struct svg {
	struct binbuf buf;
	double w, h;
	int oom;
};

static void put(struct svg *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct svg *s, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	if (binbuf_put(&s->buf, tmp, (size_t)n))
		s->oom = 1;
}

static void put_escaped(struct svg *s, const char *t)
{
	if (text_xml_append(&s->buf, t))
		s->oom = 1;
}

struct svg *svg_new(double w, double h)
{
	struct svg *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	binbuf_init(&s->buf);
	s->w = w;
	s->h = h;
	put(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
	       "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
	       "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
	    w, h, w, h, w, h);
	return s;
}

void svg_free(struct svg *s)
{
	if (!s)
		return;
	binbuf_release(&s->buf);
	free(s);
}

void svg_rect(struct svg *s, double x, double y, double w, double h, const char *fill,
	      const char *title)
{
	put(s, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x, y,
	    w > 0 ? w : 0, h > 0 ? h : 0, fill);
	if (title) {
		put(s, "><title>");
		put_escaped(s, title);
		put(s, "</title></rect>\n");
	} else {
		put(s, "/>\n");
	}
}

void svg_line(struct svg *s, double x1, double y1, double x2, double y2, const char *stroke,
	      double width)
{
	put(s, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
	       "stroke-width=\"%.2f\"/>\n", x1, y1, x2, y2, stroke, width);
}

void svg_text(struct svg *s, double x, double y, double size, const char *anchor,
	      const char *text)
{
	put(s, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" text-anchor=\"%s\">", x, y, size,
	    anchor);
	put_escaped(s, text);
	put(s, "</text>\n");
}

void svg_polyline(struct svg *s, const double *xy, size_t n, const char *stroke, double width)
{
	put(s, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.2f\" points=\"", stroke,
	    width);
	for (size_t i = 0; i < n; i++)
		put(s, "%.2f,%.2f ", xy[2 * i], xy[2 * i + 1]);
	put(s, "\"/>\n");
}

int svg_write(struct svg *s, const char *path)
{
	put(s, "</svg>\n");
	if (s->oom)
		return -ENOMEM;
	return outfile_write(path, s->buf.data, s->buf.len, OUTFILE_MODE);
}

/* a "nice" axis maximum: 1, 2 or 5 times a power of ten at or above V */
static double nice_max(double v)
{
	if (v <= 0)
		return 1;
	double p = pow(10, floor(log10(v)));
	for (int i = 0; i < 3; i++) {
		double m = (i == 0 ? 1 : i == 1 ? 2 : 5) * p;
		if (m >= v)
			return m;
	}
	return 10 * p;
}

struct frame {
	double x0, y0, w, h, ymax;
	double ymin;	/* log scale: the bottom decade (0: linear from 0) */
};

/* the y pixel of V: linear from 0, or log between ymin and ymax (0 and below at the bottom) */
static double ypos(const struct frame *f, double v)
{
	double r;
	if (f->ymin > 0)
		r = v <= f->ymin ? 0 : log10(v / f->ymin) / log10(f->ymax / f->ymin);
	else
		r = v / f->ymax;
	return f->y0 + f->h - f->h * (r > 1 ? 1 : r);
}

static void draw_frame(struct svg *s, const struct plot_chart *c, struct frame *f)
{
	char lab[64];
	svg_text(s, f->x0 + f->w / 2, 24, 16, "middle", c->title ? c->title : "");
	svg_text(s, f->x0 + f->w / 2, f->y0 + f->h + 40, 12, "middle", c->xlabel ? c->xlabel : "");
	put(s, "<text x=\"16\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
	       "transform=\"rotate(-90 16 %.1f)\">", f->y0 + f->h / 2, f->y0 + f->h / 2);
	put_escaped(s, c->ylabel ? c->ylabel : "");
	put(s, "</text>\n");
	int ticks = f->ymin > 0 ? (int)lround(log10(f->ymax / f->ymin)) : 5;
	for (int i = 0; i <= ticks; i++) {	/* decades on a log scale */
		double v = f->ymin > 0 ? f->ymin * pow(10, i) : f->ymax * i / 5;
		double y = ypos(f, v);
		svg_line(s, f->x0, y, f->x0 + f->w, y, "#dddddd", 1);
		snprintf(lab, sizeof(lab), "%g", v);
		svg_text(s, f->x0 - 6, y + 4, 11, "end", lab);
	}
	if (c->note)
		svg_text(s, f->x0 + f->w / 2, 38, 11, "middle", c->note);
	svg_line(s, f->x0, f->y0 + f->h, f->x0 + f->w, f->y0 + f->h, "black", 1);
	svg_line(s, f->x0, f->y0, f->x0, f->y0 + f->h, "black", 1);
	if (c->hline > 0 && c->hline <= f->ymax) {
		double y = ypos(f, c->hline);
		put(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#cc0000\" "
		       "stroke-dasharray=\"6,4\"/>\n", f->x0, y, f->x0 + f->w, y);
		svg_text(s, f->x0 + f->w - 4, y - 4, 11, "end", c->hline_label ? c->hline_label : "");
	}
	/* legend */
	for (size_t k = 0; k < c->n_series; k++) {
		double lx = f->x0 + f->w + 12, ly = f->y0 + 10 + 18 * (double)k;
		svg_rect(s, lx, ly - 9, 12, 12, c->series[k].color, NULL);
		svg_text(s, lx + 16, ly + 2, 12, "start", c->series[k].name);
	}
}

static void draw_xlabels(struct svg *s, const struct plot_chart *c, const struct frame *f)
{
	char lab[64];
	size_t step = c->n > 12 ? (c->n + 11) / 12 : 1;
	for (size_t i = 0; i < c->n; i += step) {
		double x = f->x0 + f->w * ((double)i + 0.5) / (double)c->n;
		if (c->xlabels)
			snprintf(lab, sizeof(lab), "%s", c->xlabels[i]);
		else if ((double)i * c->x_step >= 1e6)
			snprintf(lab, sizeof(lab), "%.1fM", (double)i * c->x_step / 1e6);
		else if ((double)i * c->x_step >= 1e3)
			snprintf(lab, sizeof(lab), "%.0fK", (double)i * c->x_step / 1e3);
		else
			snprintf(lab, sizeof(lab), "%g", (double)i * c->x_step);
		svg_text(s, x, f->y0 + f->h + 16, 11, "middle", lab);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The bars' scale: linear to the highest total; or with C->ylog, when the totals span more than
 * two decades (a start-up burst beside a quiet run), log from the decade of the 10th
 * percentile of the non-zero totals (at most 6 decades) to the decade above the highest. */
static void bars_scale(const struct plot_chart *c, struct frame *f)
{
	double *t = calloc(c->n + 1, sizeof(double));
	size_t nz = 0;
	f->ymax = f->ymin = 0;
	if (!t) {
		f->ymax = 1;
		return;
	}
	for (size_t i = 0; i < c->n; i++) {
		double v = 0;
		for (size_t k = 0; k < c->n_series; k++)
			v += c->series[k].y[i];
		if (v > f->ymax)
			f->ymax = v;
		if (v > 0)
			t[nz++] = v;
	}
	if (c->ylog && nz >= 2) {
		qsort(t, nz, sizeof(double), cmp_double);
		double lo = t[nz / 10];
		if (f->ymax > 100 * lo) {
			f->ymax = pow(10, ceil(log10(f->ymax)));
			f->ymin = pow(10, floor(log10(lo)));
			if (f->ymin < f->ymax * 1e-6)
				f->ymin = f->ymax * 1e-6;
		}
	}
	free(t);
	if (!f->ymin)
		f->ymax = nice_max(f->ymax);
}

int plot_stacked_bars(const char *path, const struct plot_chart *c)
{
	struct frame f = { 70, 50, 760, 380, 0, 0 };
	bars_scale(c, &f);
	if (c->hline > f.ymax)
		f.ymax = nice_max(c->hline);
	struct plot_chart cc = *c;
	if (f.ymin > 0)
		cc.note = "log scale (the run spans several decades): a bar's height is its total, "
			  "its colours split it in proportion";
	c = &cc;
	struct svg *s = svg_new(f.x0 + f.w + 170, f.y0 + f.h + 60);
	if (!s)
		return -ENOMEM;
	draw_frame(s, c, &f);
	double bw = f.w / (double)(c->n ? c->n : 1);
	for (size_t i = 0; i < c->n; i++) {
		double total = 0;
		for (size_t k = 0; k < c->n_series; k++)
			total += c->series[k].y[i];
		if (total <= 0)
			continue;
		/* the bar's height from its total (on a log axis too), shared by the series */
		double y = f.y0 + f.h, full = y - ypos(&f, total);
		for (size_t k = 0; k < c->n_series; k++) {
			double hh = full * c->series[k].y[i] / total;
			char title[96];
			snprintf(title, sizeof(title), "%s: %.4g", c->series[k].name, c->series[k].y[i]);
			if (hh > 0)
				svg_rect(s, f.x0 + bw * (double)i, y - hh, bw > 2 ? bw - 0.5 : bw, hh,
					 c->series[k].color, title);
			y -= hh;
		}
	}
	draw_xlabels(s, c, &f);
	int err = svg_write(s, path);
	svg_free(s);
	return err;
}

int plot_lines(const char *path, const struct plot_chart *c)
{
	struct frame f = { 70, 50, 760, 380, 0, 0 };
	double ymin_pos = 0;
	for (size_t k = 0; k < c->n_series; k++)
		for (size_t i = 0; i < c->n; i++) {
			double v = c->series[k].y[i];
			if (v > f.ymax)
				f.ymax = v;
			if (v > 0 && (ymin_pos == 0 || v < ymin_pos))
				ymin_pos = v;
		}
	if (c->ylog && f.ymax > 0) {
		/* whole decades, at most 6 of them below the top: smaller values sit at the bottom */
		f.ymax = pow(10, ceil(log10(f.ymax)));
		f.ymin = pow(10, floor(log10(ymin_pos)));
		if (f.ymin < f.ymax * 1e-6)
			f.ymin = f.ymax * 1e-6;
		if (f.ymin >= f.ymax)
			f.ymin = f.ymax / 10;
	} else {
		f.ymax = nice_max(f.ymax);
	}
	struct svg *s = svg_new(f.x0 + f.w + 170, f.y0 + f.h + 60);
	if (!s)
		return -ENOMEM;
	draw_frame(s, c, &f);
	double *xy = malloc(2 * (c->n + 1) * sizeof(double));
	if (!xy) {
		svg_free(s);
		return -ENOMEM;
	}
	for (size_t k = 0; k < c->n_series; k++) {
		for (size_t i = 0; i < c->n; i++) {
			xy[2 * i] = f.x0 + f.w * ((double)i + 0.5) / (double)c->n;
			xy[2 * i + 1] = ypos(&f, c->series[k].y[i]);
		}
		svg_polyline(s, xy, c->n, c->series[k].color, 2);
	}
	free(xy);
	draw_xlabels(s, c, &f);
	int err = svg_write(s, path);
	svg_free(s);
	return err;
}
