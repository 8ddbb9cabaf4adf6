/* cli/top_display.h - what `spent top` shows: the header and table of a view as text lines cut
 * to a width (the terminal's, or unlimited for batch output), JSON lines, and the terminal
 * itself (alternate screen, keys without echo, restored on every way out). */
#ifndef SPENT_CLI_TOP_DISPLAY_H
#define SPENT_CLI_TOP_DISPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/top.h"

/* What the header says about the run. */
struct top_header {
	const char *source;	/* "cpu-clock 1000 Hz on 2 cpus" or "daemon DIR" */
	double interval_s;	/* seconds per refresh */
	unsigned slots;		/* intervals in the window */
	bool paused;
	const char *note;	/* filters, lost samples: NULL for none */
	bool keys;		/* a line naming the keys (the terminal) */
};

/* A growing text buffer of lines. */
struct top_text {
	char *buf;
	size_t len, cap;
	bool oom;
};

/* Append view V of T as lines: a header, the column names, then at most MAX_ROWS rows (0: all);
 * every line cut to WIDTH columns (0: no limit), each ended by "\n". */
void top_format(struct top_text *out, const struct top *t, enum top_view v,
		const struct top_header *h, unsigned width, size_t max_rows);
/* One JSON object (a line) for the view. */
void top_format_json(FILE *f, const struct top *t, enum top_view v, const struct top_header *h,
		     size_t max_rows);
void top_text_release(struct top_text *x);

/* The terminal: raw keys, alternate screen, hidden cursor. 0 or -errno. Restored by
 * top_tty_leave (safe to call twice, and from a signal handler). */
int top_tty_enter(void);
void top_tty_leave(void);
/* The terminal's size (80x24 when unknown). */
void top_tty_size(unsigned *cols, unsigned *rows);
/* Draw TEXT (lines) as the whole screen: each line cleared to its end, at most ROWS lines. */
void top_tty_draw(const struct top_text *text, unsigned rows);

#endif
