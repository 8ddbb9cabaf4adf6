#!/bin/sh
# scripts/manpage.sh - write one man page on stdout from what the built binary says about itself
# (`spent help`, `spent help CMD`) and the first line of the docs/*.md manual that covers the
# command. A stopgap until man pages are generated from the option tables: deliberately plain.
#
#   scripts/manpage.sh SPENT ''  DOCDIR PKGLIBDIR    spent(1): the command list, environment
#   scripts/manpage.sh SPENT CMD DOCDIR PKGLIBDIR    spent-CMD(1): synopsis, summary, manual
set -eu
spent=$1 cmd=$2 docdir=$3 pkglibdir=$4
docs=$(cd "$(dirname "$0")/../docs" && pwd)
version=$("$spent" --version | sed 's/^spent //')

# roff-safe text: backslashes shown as such, '-' as a real minus (options stay greppable and
# copyable), no line starting with a control character
roff() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^[.']/\\\\\\&&/"; }

# the manual covering CMD: the docs/*.md whose title names `spent CMD`, else the word CMD
manual() {
	for f in "$docs"/*.md; do
		head -n 1 "$f" | grep -q "spent $1\\b" && { basename "$f"; return; }
	done
	for f in "$docs"/*.md; do
		head -n 1 "$f" | grep -qw "$1" && { basename "$f"; return; }
	done
	return 0
}

if [ -z "$cmd" ]; then
	cat <<EOF
.TH SPENT 1 "" "spent $version" "spent manual"
.SH NAME
spent \\- where is the time spent, and how
.SH SYNOPSIS
.B spent
.I COMMAND
.RI [ ARGS ]
.br
.B spent help
.RI [ COMMAND ]
.SH DESCRIPTION
spent is a performance\\-measurement toolkit: counters, profiles, continuous profiling,
observer\\-thread sampling, instruction traces and the studies made on them.
Each command has its own page, spent\\-COMMAND(1).
.SH COMMANDS
EOF
	# "  NAME   summary" lines of `spent help`
	"$spent" help | sed -n 's/^  \([a-z][a-z0-9-]*\)  *\(.*\)$/\1 \2/p' | while read -r name summary; do
		printf '.TP\n.BR spent\\-%s (1)\n%s\n' "$name" "$(printf '%s\n' "$summary" | roff)"
	done
	cat <<EOF
.SH ENVIRONMENT
.TP
.B SPENT_LIB_DIR
the directory holding spent's helper files (the Valgrind tool, libspent\\-shim.so),
instead of the one beside the spent binary (a build tree) or the installed one
.TP
.B SPENT_VALGRIND_LIB
the Valgrind library directory holding the spent tool, for spent trace
.TP
.B SPENT_SHIM_LIB
the observer library preloaded by spent shim
.SH FILES
.TP
.I $(printf '%s\n' "$pkglibdir" | roff)
the Valgrind tool (valgrind/) and the Shim libraries
.TP
.I $(printf '%s\n' "$docdir" | roff)
the manuals, one per area
.SH SEE ALSO
EOF
	"$spent" help | sed -n 's/^  \([a-z][a-z0-9-]*\)  .*/\1/p' |
		sed 's/.*/.BR spent\\-& (1),/' | sed '$ s/,$//'
	exit 0
fi

help=$("$spent" help "$cmd")
usage=$(printf '%s\n' "$help" | sed -n '1s/^usage: //p')
summary=$(printf '%s\n' "$help" | sed '1,2d')
[ -n "$usage" ] || { echo "manpage.sh: '$spent help $cmd' printed no usage line" >&2; exit 1; }
doc=$(manual "$cmd")
upper=$(printf '%s' "$cmd" | tr '[:lower:]' '[:upper:]')

cat <<EOF
.TH SPENT\\-$upper 1 "" "spent $version" "spent manual"
.SH NAME
spent\\-$cmd \\- $(printf '%s\n' "$summary" | head -n 1 | roff)
.SH SYNOPSIS
.nf
EOF
# one line per form: "A | spent CMD dump ..." are alternatives
printf '%s\n' "$usage" | sed 's/ | spent /\nspent /g' | roff
cat <<EOF
.fi
.SH DESCRIPTION
$(printf '%s\n' "$summary" | roff)
EOF
if [ -n "$doc" ]; then
	cat <<EOF
.PP
The options, output formats and limits are described in the manual
.IR $(printf '%s\n' "$docdir/$doc" | roff) .
EOF
fi
cat <<EOF
.SH SEE ALSO
.BR spent (1)
EOF
