/* cli/profile_input.h - shared by report and annotate: open and read a profile directory
 * (or one epoch of it, DIR/epoch-NNNN) with one clear error line for each way the input can
 * be wrong; --epoch, --since and --until choose the epochs read. */
#ifndef SPENT_CLI_PROFILE_INPUT_H
#define SPENT_CLI_PROFILE_INPUT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/parse_options.h"
#include "cli/time_window.h"
#include "core/symbols.h"
#include "spent/profile.h"

/* Which part of a profile directory to read. */
struct profile_selection {
	const char *epochs;		/* --epoch as given */
	const char *since, *until;	/* --since / --until as given */
	/* set by profile_selection_check */
	struct epoch_set set;		/* n == 0: every epoch */
	uint64_t since_ns, until_ns;	/* the time window (Unix ns); 0: open on that side */
};

/* The option lines of a profile_selection, for a command's option table. */
#define PROFILE_SELECTION_OPTIONS(sel)                                                          \
	OPT_STRING(0, "epoch", &(sel)->epochs, "N[-M][,...]",                                   \
		   "read only these epochs of a database (-i DB/epoch-NNNN: that one)"),       \
	OPT_STRING(0, "since", &(sel)->since, "DUR|TIME",                                       \
		   "only epochs that ran after this: 10m (ago), 2026-11-23 16:05, 16:05, Unix s"), \
	OPT_STRING(0, "until", &(sel)->until, "DUR|TIME",                                       \
		   "only epochs that ran before this (same forms as --since)")

/* Parse the selection's values (after parse_options): 0, or PARSE_OPT_ERROR with the error
 * line printed. */
int profile_selection_check(struct profile_selection *sel, const struct parse_usage *pu);
void profile_selection_release(struct profile_selection *sel);

/* Read every epoch of DIR into a new profile (*OUT). Prints the error and returns non-zero
 * when DIR is unusable; *NSKIPPED counts corrupt files skipped (each warned about). */
int profile_input_load(const char *dir, struct spent_profile **out, size_t *nskipped);
/* The same for the epochs SEL chooses (NULL: all). DIR may name one epoch (DB/epoch-NNNN). */
int profile_input_load_selected(const char *dir, const struct profile_selection *sel,
				struct spent_profile **out, size_t *nskipped);
/* Every event's samples in P, summed: 0 for a profile (or a selection) with none. */
uint64_t profile_input_samples(const struct spent_profile *p);
/* The profile directory DIR belongs to (DB for DB/epoch-NNNN, else DIR) into BUF. */
void profile_input_base(const char *dir, char *buf, size_t len);
/* Symbolize the kernel with the kallsyms saved in DIR's profile directory, when it has one:
 * 0 or what symbols_set_kallsyms returned. */
int profile_input_kallsyms(struct symbols *sym, const char *dir);

#endif
