/* cli/spent.c - the spent binary: one table of subcommands, dispatch, and `spent help CMD`. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/*
 * Every command the toolkit plans. A command whose cmd_*.c is not built yet is a weak
 * undefined symbol (NULL), so the table stays one list while areas land one at a time and
 * `spent help` can say truthfully which commands are planned.
 */
#define COMMAND(name) extern int cmd_##name(int argc, char **argv) __attribute__((weak));
#include "cli/commands.def"
#undef COMMAND

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage;
};

static const struct command commands[] = {
#define COMMAND_INFO(name, summary, usage) { #name, cmd_##name, summary, usage },
#include "cli/commands.def"
#undef COMMAND_INFO
};

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void print_overview(FILE *out)
{
	fprintf(out, "usage: spent COMMAND [ARGS]\n\n"
		     "spent answers where the time is spent, and how. Commands:\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s%s\n", commands[i].name, commands[i].summary,
			commands[i].fn ? "" : " (planned)");
	fprintf(out, "\n'spent help COMMAND' shows a command's options.\n");
}

static int cmd_help_dispatch(int argc, char **argv)
{
	if (argc < 2) {
		print_overview(stdout);
		return 0;
	}
	const struct command *c = command_find(argv[1]);
	if (!c) {
		cli_error("unknown command '%s': see 'spent help'", argv[1]);
		return 2;
	}
	printf("usage: %s\n\n%s%s\n", c->usage, c->summary, c->fn ? "" : " (planned: not built yet)");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_overview(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
		return cmd_help_dispatch(argc - 1, argv + 1);
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		printf("spent %s\n", SPENT_VERSION);
		return 0;
	}
	const struct command *c = command_find(name);
	if (!c) {
		cli_error("unknown command '%s': see 'spent help'", name);
		return 2;
	}
	if (!c->fn) {
		cli_error("command '%s' is planned but not built in this version", name);
		return 2;
	}
	/* a command sees itself as argv[0], as git's builtins do */
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			if (strcmp(argv[i - 1], "--") == 0)
				break;
			char *hargv[] = { "help", (char *)name, NULL };
			return cmd_help_dispatch(2, hargv);
		}
	return c->fn(argc - 1, argv + 1);
}
