#!/bin/sh
# scripts/manpage.sh - write one man page on stdout from what the built binary says about itself:
# `spent --man` (spent(1), with the installed directories added here) and `spent CMD --man` (the
# page generated from the command's option table). A command not on the table yet gets a plain
# page from `spent help CMD` and the first line of the docs/*.md manual that covers it.
#
#   scripts/manpage.sh SPENT ''  DOCDIR PKGLIBDIR    spent(1): the command list, environment
#   scripts/manpage.sh SPENT CMD DOCDIR PKGLIBDIR    spent-CMD(1)
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
	# spent(1) from the binary, with the installed directories added before SEE ALSO
	page=$("$spent" --man)
	printf '%s\n' "$page" | sed '/^\.SH SEE ALSO/,$d'
	cat <<EOF
.SH FILES
.TP
.I $(printf '%s\n' "$pkglibdir" | roff)
the Valgrind tool (valgrind/) and the Shim libraries
.TP
.I $(printf '%s\n' "$docdir" | roff)
the manuals, one per area
EOF
	printf '%s\n' "$page" | sed -n '/^\.SH SEE ALSO/,$p'
	exit 0
fi

# a command on the option table writes its own page; the installed manual is named before
# SEE ALSO
if page=$("$spent" "$cmd" --man 2>/dev/null); then
	doc=$(manual "$cmd")
	printf '%s\n' "$page" | sed '/^\.SH SEE ALSO/,$d'
	[ -z "$doc" ] || printf '.SH MANUAL\nThe output formats and limits are described in\n.IR %s .\n' \
		"$(printf '%s\n' "$docdir/$doc" | roff)"
	printf '%s\n' "$page" | sed -n '/^\.SH SEE ALSO/,$p'
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
