/* plot/plot.h - small chart writers for the trace studies: an SVG canvas with stacked-bar and
 * line charts, and an RGB raster written as PNG (libpng). Files are written atomically. */
#ifndef SPENT_PLOT_H
#define SPENT_PLOT_H

#include <stddef.h>
#include <stdint.h>

struct svg;

/* A canvas of W x H pixels; NULL on ENOMEM. Free with svg_free(). */
struct svg *svg_new(double w, double h);
void svg_free(struct svg *s);
void svg_rect(struct svg *s, double x, double y, double w, double h, const char *fill,
	      const char *title);
void svg_line(struct svg *s, double x1, double y1, double x2, double y2, const char *stroke,
	      double width);
/* ANCHOR "start", "middle" or "end"; TEXT escaped here. */
void svg_text(struct svg *s, double x, double y, double size, const char *anchor,
	      const char *text);
void svg_polyline(struct svg *s, const double *xy, size_t n_points, const char *stroke,
		  double width);
/* 0, -ENOMEM (an earlier drawing call ran out of memory) or -errno from the write. */
int svg_write(struct svg *s, const char *path);

struct plot_series {
	const char *name;
	const double *y;	/* n values */
	const char *color;	/* "#rrggbb" */
};

struct plot_chart {
	const char *title, *xlabel, *ylabel;
	const char *const *xlabels;	/* n category labels, or NULL: index * x_step */
	double x_step;			/* value of one category when xlabels is NULL */
	size_t n;			/* categories */
	const struct plot_series *series;
	size_t n_series;
	double hline;			/* a dashed reference line at this y (0: none) */
	const char *hline_label;
	const char *note;		/* a line under the title (how the axes are scaled) */
	int ylog;			/* lines: log y axis in whole decades; bars: log when
					 * the totals span over two decades (the note says so) */
};

/* Stacked bars, one per category (the PatchWrx paper's pin-bandwidth charts). */
int plot_stacked_bars(const char *path, const struct plot_chart *c);
/* One line per series over the categories (hit curves). */
int plot_lines(const char *path, const struct plot_chart *c);

/* An RGB raster (3 bytes per pixel, rows top-down). */
struct raster {
	uint32_t w, h;
	uint8_t *rgb;
};
int raster_init(struct raster *r, uint32_t w, uint32_t h, uint32_t background);
void raster_release(struct raster *r);
static inline void raster_set(struct raster *r, uint32_t x, uint32_t y, uint32_t rgb)
{
	if (x < r->w && y < r->h) {
		uint8_t *p = &r->rgb[((size_t)y * r->w + x) * 3];
		p[0] = (uint8_t)(rgb >> 16), p[1] = (uint8_t)(rgb >> 8), p[2] = (uint8_t)rgb;
	}
}
/* Draw TEXT (ASCII) with a built-in 5x7 font at (X, Y) top-left, scale 1.. */
void raster_text(struct raster *r, uint32_t x, uint32_t y, uint32_t scale, uint32_t rgb,
		 const char *text);
/* Write R as an 8-bit RGB PNG; 0 or -errno (-EIO from libpng). */
int raster_write_png(const struct raster *r, const char *path);

#endif
