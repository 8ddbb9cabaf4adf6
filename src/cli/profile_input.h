/* cli/profile_input.h - shared by report and annotate: open and read a profile directory
 * with one clear error line for each way the input can be wrong. */
#ifndef SPENT_CLI_PROFILE_INPUT_H
#define SPENT_CLI_PROFILE_INPUT_H

#include <stddef.h>

#include "spent/profile.h"

/* Read every epoch of DIR into a new profile (*OUT). Prints the error and returns non-zero
 * when DIR is unusable; *NSKIPPED counts corrupt files skipped (each warned about). */
int profile_input_load(const char *dir, struct profile **out, size_t *nskipped);

#endif
