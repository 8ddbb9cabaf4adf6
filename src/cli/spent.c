/* cli/spent.c - the spent binary: one table of subcommands, dispatch, `spent help [CMD]` and
 * the spent(1) man page (`spent --man`). A command's own usage, `-h` and `--man` come from
 * its option table (cli/parse_options.h); commands.def holds a usage line only for a command
 * not moved onto the table yet. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/parse_options.h"
#include "core/alloc.h"

/* Every command is a strong reference: a misspelled or missing cmd_* is a link error. */
#define COMMAND(name) extern int cmd_##name(int argc, char **argv);
#include "cli/commands.def"
#undef COMMAND

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage;	/* NULL: the command's option table gives it (`CMD -h`) */
};

static const struct command commands[] = {
#define COMMAND_INFO(name, summary, usage) { #name, cmd_##name, summary, usage },
#include "cli/commands.def"
#undef COMMAND_INFO
};

#define NCOMMANDS ARRAY_SIZE(commands)

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void print_overview(FILE *out)
{
	fprintf(out, "usage: spent COMMAND [ARGS]\n\n"
		     "spent answers where the time is spent, and how. Commands:\n\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'spent help COMMAND' or 'spent COMMAND -h' shows a command's options;\n"
		     "'spent --man' and 'spent COMMAND --man' print the man pages.\n");
}

/* spent(1): what spent is, its commands, its environment. The build adds the installed
 * directories (scripts/manpage.sh). */
static void print_man(FILE *out)
{
	fprintf(out, ".TH SPENT 1 \"\" \"spent %s\" \"spent manual\"\n"
		     ".SH NAME\nspent \\- where is the time spent, and how\n"
		     ".SH SYNOPSIS\n.B spent\n.I COMMAND\n.RI [ ARGS ]\n.br\n"
		     ".B spent help\n.RI [ COMMAND ]\n.br\n.B spent\n.I COMMAND\n.B \\-h | \\-\\-man\n"
		     ".SH DESCRIPTION\n"
		     "spent is a performance\\-measurement toolkit: counters, profiles, continuous "
		     "profiling,\nobserver\\-thread sampling, instruction traces and the studies made "
		     "on them.\nEach command has its own page, spent\\-COMMAND(1).\n.SH COMMANDS\n",
		SPENT_VERSION);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		fprintf(out, ".TP\n.BR spent\\-%s (1)\n", commands[i].name);
		parse_options_roff_text(out, commands[i].summary);
		fputc('\n', out);
	}
	fputs(".SH ENVIRONMENT\n"
	      ".TP\n.B SPENT_LIB_DIR\nthe directory holding spent's helper files (the Valgrind tool, "
	      "libspent\\-shim.so),\ninstead of the one beside the spent binary (a build tree) or the "
	      "installed one\n"
	      ".TP\n.B SPENT_VALGRIND_LIB\nthe Valgrind library directory holding the spent tool, for "
	      "spent trace\n"
	      ".TP\n.B SPENT_SHIM_LIB\nthe observer library preloaded by spent shim\n"
	      ".SH SEE ALSO\n", out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, ".BR spent\\-%s (1)%s\n", commands[i].name, i + 1 < NCOMMANDS ? "," : "");
}

/* `spent CMD -h` for every command: the table's help, or commands.def's line for a command
 * not on the table yet. */
static int command_help(const struct command *c)
{
	if (!c->usage) {
		char *hargv[] = { (char *)c->name, "-h", NULL };
		return c->fn(2, hargv);
	}
	printf("usage: %s\n\n%s\n", c->usage, c->summary);
	return 0;
}

/* The command NAME, or NULL after one error line (help, --man and the dispatch say it alike). */
static const struct command *known_command(const char *name)
{
	const struct command *c = command_find(name);
	if (!c)
		cli_error("unknown command '%s': see 'spent help'", name);
	return c;
}

/* `spent --man [COMMAND]`: the overview's page, or COMMAND's (as `spent COMMAND --man`). */
static int man_dispatch(int argc, char **argv)
{
	if (argc > 2) {
		cli_error("--man takes at most one command (got '%s' after '%s')", argv[2], argv[1]);
		return 2;
	}
	if (argc < 2) {
		print_man(stdout);
		return 0;
	}
	const struct command *c = known_command(argv[1]);
	if (!c)
		return 2;
	char *margv[] = { (char *)c->name, "--man", NULL };
	return c->fn(2, margv);
}

static int cmd_help_dispatch(int argc, char **argv)
{
	if (argc < 2) {
		print_overview(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--man") == 0)
		return man_dispatch(argc - 1, argv + 1);
	if (argc > 2) {
		cli_error("help takes at most one command (got '%s' after '%s')", argv[2], argv[1]);
		return 2;
	}
	if (strcmp(argv[1], "help") == 0) {	/* help on help: the overview says it all */
		print_overview(stdout);
		return 0;
	}
	const struct command *c = known_command(argv[1]);
	if (!c)
		return 2;
	return command_help(c);
}

/* What a command printed on stdout must have reached it: a table written to a full disk or a
 * closed descriptor exits non-zero with one line, as git's commands do. A reader that went
 * away (EPIPE: `spent report | head`) is not an error of ours. */
static int stdout_written(int rc)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	if (errno == EPIPE)
		return rc;
	cli_error("cannot write to stdout%s%s", errno ? ": " : "", errno ? strerror(errno) : "");
	return rc ? rc : 1;
}

static int run_command(int argc, char **argv)
{
	if (argc < 2) {
		print_overview(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
		return cmd_help_dispatch(argc - 1, argv + 1);
	if (strcmp(name, "--man") == 0)
		return man_dispatch(argc - 1, argv + 1);
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		if (argc > 2) {
			cli_error("%s takes no arguments (got '%s')", name, argv[2]);
			return 2;
		}
		printf("spent %s\n", SPENT_VERSION);
		return 0;
	}
	const struct command *c = known_command(name);
	if (!c)
		return 2;
	/* A command on the option table handles -h itself (and knows which argument is an
	 * option's value); one not on it yet gets commands.def's usage line. --man always goes to
	 * the command: one on the table prints its page, one not on it refuses the option. */
	for (int i = 2; c->usage && i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return command_help(c);
	/* a command sees itself as argv[0], as git's builtins do */
	return c->fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	return stdout_written(run_command(argc, argv));
}
