#!/bin/bash
# tests/e2e/daemon_kernel.sh - the daemon keeps the kernel's symbols with its database:
# DB/kallsyms (the text symbols of /proc/kallsyms, mode 0640) is written at start, and
# `spent report -i DB` names kernel samples from it rather than from the running kernel.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
trap 'stop_daemon; rm -rf "$TMP"' EXIT

DB=$TMP/db
if ! start_daemon "$DB" "$TMP/d.log" -F 1000; then
	fail "daemon_kernel_starts: $(tail -3 "$TMP/d.log")"
	exit 0
fi
want=$(awk '$1 !~ /^0+$/ && $2 ~ /^[tTwW]$/' /proc/kallsyms | wc -l)
got=$(wc -l < "$DB/kallsyms" 2>/dev/null || echo 0)
check "daemon_kernel_saves_text_symbols ($got lines, /proc/kallsyms has $want)" \
	test "$got" -gt 1000 -a "$got" -le "$want" -a "$got" -ge $((want * 99 / 100))
check daemon_kernel_kallsyms_mode_0640 test "$(stat -c %a "$DB/kallsyms")" = 640
check daemon_kernel_only_text_symbols bash -c "! awk '\$2 !~ /^[tTwW]\$/' '$DB/kallsyms' | grep -q ."

# kernel work (a read/write loop through the kernel), sized by time
timeout 1 dd if=/dev/zero of=/dev/null bs=64 2>/dev/null
"$SPENT" db "$DB" flush > /dev/null
check daemon_kernel_stops_on_sigterm stop_daemon
# the saved copy is what names kernel samples: rename its symbols and look
sed -i 's/^\([0-9a-f]* [tTwW] \)/\1dbk_/' "$DB/kallsyms"
"$SPENT" report -i "$DB" --by function --json > "$TMP/r.json" 2>/dev/null
python3 - "$TMP/r.json" > "$TMP/k.txt" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
k = [r for r in rows if r.get("image") == "[kernel.kallsyms]" and r.get("symbol")]
print(len(k), sum(1 for r in k if r["symbol"].startswith("dbk_")))
PY
read -r nk ndbk < "$TMP/k.txt"
check "daemon_kernel_report_names_from_db_kallsyms ($ndbk of $nk kernel rows)" \
	test "${nk:-0}" -gt 0 -a "${ndbk:-0}" = "${nk:-0}"
