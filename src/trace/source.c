/* trace/source.c - the trace-source object: a vtable wrapper and the format-sniffing opener
 * that lets every sink accept a PatchWrx log or a CITCAT recording alike. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "spent/trace.h"
#include "trace/source_formats.h"

struct spent_trace_source {
	const struct spent_trace_source_ops *ops;
	void *state;
};

struct spent_trace_source *spent_trace_source_new(const struct spent_trace_source_ops *ops, void *state)
{
	struct spent_trace_source *src = calloc(1, sizeof(*src));
	if (!src) {
		ops->free(state);
		return NULL;
	}
	src->ops = ops;
	src->state = state;
	return src;
}

int spent_trace_source_next(struct spent_trace_source *src, struct spent_trace_batch *out)
{
	return src->ops->next(src->state, out);
}

const char *spent_trace_source_error(struct spent_trace_source *src)
{
	const char *e = src->ops->error ? src->ops->error(src->state) : NULL;
	return e ? e : "";
}

const char *spent_trace_source_name(const struct spent_trace_source *src)
{
	return src->ops->name;
}

int spent_trace_source_progress(struct spent_trace_source *src, uint64_t *done, uint64_t *total)
{
	*done = *total = 0;
	return src->ops->progress ? src->ops->progress(src->state, done, total) : -ENOTSUP;
}

int spent_trace_source_want_execs(struct spent_trace_source *src)
{
	return src->ops->want_execs ? src->ops->want_execs(src->state) : -ENOTSUP;
}

int spent_trace_source_data_addresses(struct spent_trace_source *src)
{
	return src->ops->data_addresses ? src->ops->data_addresses(src->state) : -ENOTSUP;
}

void spent_trace_source_free(struct spent_trace_source *src)
{
	if (!src)
		return;
	src->ops->free(src->state);
	free(src);
}

/* Whether a format's message WHY already names PATH ('PATH', as every reader quotes it): a
 * bare substring test took a file named "a" as named by any message with an "a" in it. */
static bool names_path(const char *why, const char *path)
{
	size_t n = strlen(path);
	for (const char *q = strchr(why, '\''); q; q = strchr(q + 1, '\''))
		if (!strncmp(q + 1, path, n) && q[1 + n] == '\'')
			return true;
	return false;
}

/* Every failure names PATH once, so that each reader (trace dump, trace stats, the studies)
 * prints the same line for the same bad input without adding the path itself. */
int spent_trace_source_open(const char *path, struct spent_trace_source **out, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) != 0) {	/* a missing file is not a format question */
		int e = errno;
		if (err)
			snprintf(err, errlen, "cannot read trace '%s': %s", path, strerror(e));
		return -e;
	}
	int read_error = 0;
	for (size_t i = 0; i < trace_source_n_formats; i++) {
		const struct trace_source_format *f = &trace_source_formats[i];
		int p = f->probe(path);
		if (p > 0) {
			char why[1024] = "";
			int e = f->open(path, out, why, sizeof(why));
			if (e < 0 && err && !why[0])
				snprintf(err, errlen, "cannot read trace '%s': %s", path, strerror(-e));
			else if (e < 0 && err && names_path(why, path))
				snprintf(err, errlen, "%s", why);
			else if (e < 0 && err)	/* a citcat replay error says what, not where */
				snprintf(err, errlen, "'%s': %s", path, why);
			return e;
		}
		/* not a regular file, a directory, no recording file: only not this format; an
		 * unreadable file (EACCES, EIO) is no format question either */
		if (p < 0 && p != -EINVAL && p != -EISDIR && p != -ENOENT && !read_error)
			read_error = p;
	}
	if (read_error) {
		if (err)
			snprintf(err, errlen, "cannot read trace '%s': %s", path, strerror(-read_error));
		return read_error;
	}
	if (err)
		snprintf(err, errlen, S_ISDIR(st.st_mode) ?
			 "'%s' is a directory, not a citcat recording (a spent trace log is a file)" :
			 "'%s' is neither a spent trace log nor a citcat recording", path);
	return -EINVAL;
}
