/* cli/top_display.c - `spent top`'s output: the view as a table of text lines (columns sized
 * to their contents, cut to the terminal's width), JSON lines for --json, and the terminal
 * (raw keys, alternate screen) with its restoration. */
#include "core/alloc.h"
#include "cli/top_display.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "core/demangle.h"
#include "core/json.h"
#include "core/path.h"
#include "core/text.h"

#define NCOLS 5		/* %, samples, then up to three names */
#define MIN_NAME 6
#define MIN_FIRST 16	/* the first column is not cut below this while others are shown */

static void text_add(struct top_text *x, const char *s, size_t n)
{
	if (x->oom)
		return;
	if (ALLOC_GROW(x->buf, x->len + n + 1, x->cap)) {
		x->oom = true;
		return;
	}
	memcpy(x->buf + x->len, s, n);
	x->len += n;
	x->buf[x->len] = '\0';
}

/* One line of at most WIDTH columns (0: any): printable ASCII only when cut to a terminal,
 * control characters escaped otherwise. */
static void text_line(struct top_text *x, unsigned width, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	int r = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = r < 0 ? 0 : (size_t)r < sizeof(line) ? (size_t)r : sizeof(line) - 1;
	while (n > 0 && line[n - 1] == ' ')
		n--;
	char shown[sizeof(line) * 2];
	const char *text = line;
	if (width) {	/* the screen: one byte per column, cut at its width */
		if (n > width)
			n = width;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] >= 0x7f)
				line[i] = '?';
	} else {	/* batch lines: names escaped as in every other table (core/text.h) */
		line[n] = 0;
		text = text_for_terminal(line, shown, sizeof(shown));
		n = strlen(text);
	}
	text_add(x, text, n);
	text_add(x, "\n", 1);
}

void top_text_release(struct top_text *x)
{
	free(x->buf);
	*x = (struct top_text){ 0 };
}

/* The name cells of ROW in view V: up to three, NULL-terminated, in CELLS. */
static size_t row_cells(enum top_view v, const struct top_row *row, const char **cells,
			char *buf, size_t len)
{
	const char *comm = row->comm ? row->comm : "*";

	switch (v) {
	case TOP_BY_FUNCTION:
		cells[0] = demangle_name(row->function, buf, len);
		cells[1] = path_base_name(row->image);
		cells[2] = comm;
		return 3;
	case TOP_BY_IMAGE:
		cells[0] = row->image;
		cells[1] = comm;
		return 2;
	case TOP_BY_COMM:
		cells[0] = row->comm ? row->comm : "[all]";
		return 1;
	default:
		snprintf(buf, len, "%d", (int)row->pid);
		cells[0] = buf;
		cells[1] = row->comm ? row->comm : "[all]";
		return 2;
	}
}

static const char *const heads[TOP_NVIEWS][3] = {
	{ "FUNCTION", "IMAGE", "COMM" },
	{ "IMAGE", "COMM", NULL },
	{ "COMM", NULL, NULL },
	{ "PID", "COMM", NULL },
};

/* Cut S to W columns into BUF, marking a cut with "..". */
static const char *fit(const char *s, size_t w, char *buf, size_t len)
{
	size_t n = strlen(s);

	if (n <= w || w >= len)
		return s;
	if (w <= 2) {
		memcpy(buf, s, w);
		buf[w] = '\0';
		return buf;
	}
	memcpy(buf, s, w - 2);
	memcpy(buf + w - 2, "..", 3);
	return buf;
}

void top_format(struct top_text *out, const struct top *t, enum top_view v,
		const struct top_header *h, unsigned width, size_t max_rows)
{
	struct top_stats st;
	struct top_row *rows = NULL;
	size_t nrows = 0, ncells = 0, w[3] = { 0 };
	char namebuf[1024];
	const char *cells[3];

	top_get_stats(t, &st);
	text_line(out, width, "spent top: %s, %.0f samples/s, window %.3g s (%u of %u intervals)%s%s%s",
		  top_view_name(v), h->interval_s > 0 ? (double)st.last / h->interval_s : 0.0,
		  h->interval_s * h->slots, st.filled, h->slots, h->paused ? " [paused]" : "",
		  h->note ? ", " : "", h->note ? h->note : "");
	text_line(out, width, "%s", h->source);
	if (h->keys)
		text_line(out, width, "keys: f functions  i images  c comms  P processes  "
			  "space/p pause  q quit");
	if (top_rows(t, v, &rows, &nrows)) {
		text_line(out, width, "(out of memory)");
		return;
	}
	if (max_rows && nrows > max_rows)
		nrows = max_rows;
	/* columns as wide as their widest cell, then the widest cut first to fit WIDTH */
	for (size_t c = 0; c < 3 && heads[v][c]; c++) {
		w[c] = strlen(heads[v][c]);
		ncells = c + 1;
	}
	for (size_t r = 0; r < nrows; r++) {
		row_cells(v, &rows[r], cells, namebuf, sizeof(namebuf));
		for (size_t c = 0; c < ncells; c++)
			if (strlen(cells[c]) > w[c])
				w[c] = strlen(cells[c]);
	}
	if (width) {
		size_t fixed = 7 + 1 + 9 + 1, sum = fixed;
		for (size_t c = 0; c < ncells; c++)
			sum += w[c] + (c + 1 < ncells);
		/* in a narrow terminal the last columns go before the first one is cut under
		 * MIN_FIRST: "[unkn.. cc1 cc1" at 40 columns named nothing */
		while (ncells > 1 && sum > width) {
			size_t others = 0;
			for (size_t c = 1; c < ncells; c++)
				others += (w[c] < MIN_NAME ? w[c] : MIN_NAME) + 1;
			if (fixed + others + (w[0] < MIN_FIRST ? w[0] : MIN_FIRST) <= width)
				break;
			sum -= w[ncells - 1] + 1;
			ncells--;
		}
		/* the columns after the first (image, comm) give way first: the first one names
		 * what the row is */
		for (size_t first = 1; sum > width; first = 0) {
			while (sum > width) {
				size_t big = first;
				for (size_t c = first; c < ncells; c++)
					if (w[c] > w[big])
						big = c;
				if (big >= ncells || w[big] <= MIN_NAME)
					break;
				w[big]--;
				sum--;
			}
			if (first == 0)
				break;	/* the line itself is cut */
		}
	}
	char cut[3][512];
	text_line(out, width, "%7s %9s %-*s %-*s %s", "%", "SAMPLES", (int)w[0], heads[v][0],
		  (int)(ncells > 1 ? w[1] : 0), ncells > 1 ? heads[v][1] : "",
		  ncells > 2 ? heads[v][2] : "");
	for (size_t r = 0; r < nrows; r++) {
		size_t n = row_cells(v, &rows[r], cells, namebuf, sizeof(namebuf));
		if (n > ncells)
			n = ncells;	/* columns dropped for a narrow terminal */
		for (size_t c = 0; c < n; c++)
			cells[c] = fit(cells[c], w[c], cut[c], sizeof(cut[c]));
		text_line(out, width, "%6.2f%% %9llu %-*s %-*s %s",
			  st.window ? 100.0 * (double)rows[r].count / (double)st.window : 0.0,
			  (unsigned long long)rows[r].count, (int)w[0], cells[0],
			  (int)(n > 1 ? w[1] : 0), n > 1 ? cells[1] : "", n > 2 ? cells[2] : "");
	}
	free(rows);
}

void top_format_json(FILE *f, const struct top *t, enum top_view v, const struct top_header *h,
		     size_t max_rows)
{
	struct json_writer j;
	struct top_stats st;
	struct top_row *rows = NULL;
	size_t nrows = 0;

	top_get_stats(t, &st);
	if (top_rows(t, v, &rows, &nrows))
		nrows = 0;
	if (max_rows && nrows > max_rows)
		nrows = max_rows;
	json_init(&j, f);
	json_object_begin(&j);
	json_kstr(&j, "view", top_view_name(v));
	json_kstr(&j, "source", h->source);
	json_kdouble(&j, "interval_s", h->interval_s, 3);
	json_ku64(&j, "window_intervals", h->slots);
	json_ku64(&j, "filled_intervals", st.filled);
	json_ku64(&j, "samples", st.window);
	json_ku64(&j, "samples_last_interval", st.last);
	json_key(&j, "rows");
	json_array_begin(&j);
	for (size_t r = 0; r < nrows; r++) {
		const struct top_row *row = &rows[r];
		json_object_begin(&j);
		if (row->function) {
			char dm[1024];
			json_kstr(&j, "function", demangle_name(row->function, dm, sizeof(dm)));
		}
		if (row->image)
			json_kstr(&j, "image", row->image);
		if (row->comm)
			json_kstr(&j, "comm", row->comm);
		else
			json_knull(&j, "comm");
		if (v == TOP_BY_PROCESS)
			json_ki64(&j, "pid", row->pid);
		json_ku64(&j, "samples", row->count);
		json_kdouble(&j, "percent", st.window ? 100.0 * (double)row->count / (double)st.window : 0,
			     2);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_newline(&j);
	free(rows);
}

/* ---- the terminal ---------------------------------------------------------------------- */

static struct termios saved_tio;
static volatile int tty_entered;

static void write_all(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = write(STDOUT_FILENO, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

int top_tty_enter(void)
{
	struct termios tio;

	if (tcgetattr(STDIN_FILENO, &saved_tio) < 0)
		return -errno;
	tio = saved_tio;
	/* keys one at a time, not echoed; ISIG stays: Ctrl-C is SIGINT, handled like q */
	tio.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	tio.c_cc[VMIN] = 0;
	tio.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &tio) < 0)
		return -errno;
	tty_entered = 1;
	/* alternate screen, cursor hidden, cleared */
	static const char enter[] = "\033[?1049h\033[?25l\033[H\033[2J";
	write_all(enter, sizeof(enter) - 1);
	return 0;
}

void top_tty_leave(void)
{
	/* async-signal-safe: write and tcsetattr only */
	static const char leave[] = "\033[?25h\033[?1049l";

	if (!tty_entered)
		return;
	tty_entered = 0;
	write_all(leave, sizeof(leave) - 1);
	tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

void top_tty_size(unsigned *cols, unsigned *rows)
{
	struct winsize ws;

	*cols = 80;
	*rows = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
		*cols = ws.ws_col;
		*rows = ws.ws_row;
	}
}

void top_tty_draw(const struct top_text *text, unsigned rows)
{
	struct top_text scr = { 0 };
	const char *p = text->buf ? text->buf : "";
	unsigned line = 0;

	text_add(&scr, "\033[H", 3);
	while (*p && line < rows) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		text_add(&scr, p, n);
		text_add(&scr, "\033[K", 3);	/* what the last frame left on this line */
		/* no newline after the bottom line: it would scroll the screen */
		if (++line < rows)
			text_add(&scr, "\r\n", 2);
		p += n + (nl != NULL);
	}
	text_add(&scr, "\033[J", 3);	/* and below */
	if (!scr.oom)
		write_all(scr.buf, scr.len);
	top_text_release(&scr);
}
