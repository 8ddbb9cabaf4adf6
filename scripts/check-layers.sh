#!/bin/sh
# scripts/check-layers.sh - fail when an #include points up the layer stack (docs/design.md,
# "Layers"): core < collect, profile, trace, citcat, shim < analysis < plot < cli. A file may
# include its own directory, any lower layer, its middle-layer neighbours, and include/spent/.
set -eu
cd "$(dirname "$0")/.."
rank() {
	case $1 in
	core) echo 0 ;;
	collect|profile|trace|citcat|shim) echo 1 ;;
	analysis) echo 2 ;;
	plot) echo 3 ;;
	cli) echo 4 ;;
	*) echo -1 ;;
	esac
}
bad=0
for f in $(find src -name '*.[ch]' | sort); do
	from=$(echo "$f" | cut -d/ -f2)
	rf=$(rank "$from")
	[ "$rf" -ge 0 ] || continue
	for to in $(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' "$f" | sort -u); do
		rt=$(rank "$to")
		[ "$rt" -ge 0 ] || continue
		if [ "$rt" -gt "$rf" ]; then
			echo "check-layers: $f includes $to/ (layer $to is above $from)" >&2
			bad=1
		fi
	done
done
[ $bad = 0 ] && echo "check-layers: no include points up the layer stack"
exit $bad
