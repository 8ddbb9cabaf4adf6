#!/bin/bash
# bench/profile_detail.sh - detail rows (who and when) at scale: bench/profile_detail.c's
# 1M samples through spent_profile_add_detail, spent_profile_merge, write_epoch (new and merging), read_epoch,
# and the samples file's bytes per row. Not a test: prints numbers.
#   usage: bench/profile_detail.sh [SECONDS=1000] [THREADS=1]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
lib=${SPENT:-$top/build/spent}
tmp=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -I"$top/include" -I"$top/src" -D_GNU_SOURCE -o "$tmp/pd" "$top/bench/profile_detail.c" \
	"$(dirname "$lib")/libspent.a" -lz -lpfm -ldw -lelf -lbpf -lZydis -lzstd -llz4 -lpthread -lm -ldl || exit 1
"$tmp/pd" "$tmp/prof" "${1:-1000}" "${2:-1}"
