#!/bin/bash
# tests/e2e/daemon_kernel.sh - the daemon keeps each kernel's identity and symbols with its
# database: [kernel.kallsyms] is identified by the build-id plus the boot's _text address,
# DB/kallsyms-HEX (the text symbols of /proc/kallsyms, zstd-compressed, mode 0640) is written
# once per identity, and `spent report -i DB` names each epoch's kernel samples from its own
# kernel's copy: a second epoch made from the first as another boot would be (KASLR: every address and
# _text shifted, its own kallsyms) is reported as a separate kernel, never added into the
# first's rows; `spent db merge` brings both copies along; a database written before
# identities (plain build-id, one DB/kallsyms) still reads as before.
# test: serial (the daemon samples the whole machine, and its checks wait by the clock)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
trap 'stop_daemon; rm -rf "$TMP"' EXIT

DB=$TMP/db
if ! start_daemon "$DB" "$TMP/d.log" -F 1000; then
	fail "daemon_kernel_starts: $(tail -3 "$TMP/d.log")"
	exit 0
fi
# the identity as the kernel itself gives it: build-id from /sys/kernel/notes, _text's address
want_name=$(python3 - <<'PY'
import struct
d = open("/sys/kernel/notes", "rb").read()
p, bid = 0, ""
while p + 12 <= len(d):
    nsz, dsz, typ = struct.unpack_from("<III", d, p)
    name = p + 12; desc = name + ((nsz + 3) & ~3)
    if typ == 3 and d[name:name + 3] == b"GNU":
        bid = d[desc:desc + dsz].hex(); break
    p = desc + ((dsz + 3) & ~3)
text = next(l.split()[0] for l in open("/proc/kallsyms") if l.split()[2:3] == ["_text"])
print("kallsyms-" + bid + text.rjust(16, "0"))
PY
)
KS=$DB/$want_name
check "daemon_kernel_names_copy_by_identity ($(cd "$DB" && ls -d kallsyms* | tr '\n' ' '))" \
	test -f "$KS" -a "$(cd "$DB" && ls -d kallsyms* | wc -l)" = 1
want=$(awk '$1 !~ /^0+$/ && $2 ~ /^[tTwW]$/' /proc/kallsyms | wc -l)
# stored as one zstd frame (a fifth of the text or less): read through the zstd tool here
check daemon_kernel_kallsyms_compressed bash -c "head -c 4 '$KS' | od -An -tx1 | grep -q '28 b5 2f fd' && test \$(stat -c %s '$KS') -lt \$((\$(zstd -dc '$KS' | wc -c) / 4))"
zstd -dc "$KS" > "$TMP/ks.txt" 2>/dev/null
got=$(wc -l < "$TMP/ks.txt" 2>/dev/null || echo 0)
check "daemon_kernel_saves_text_symbols ($got lines, /proc/kallsyms has $want)" \
	test "$got" -gt 1000 -a "$got" -le "$want" -a "$got" -ge $((want * 99 / 100))
check daemon_kernel_kallsyms_mode_0640 test "$(stat -c %a "$KS" 2>/dev/null)" = 640
check daemon_kernel_only_text_symbols bash -c "! awk '\$2 !~ /^[tTwW]\$/' '$TMP/ks.txt' | grep -q ."

# kernel work (a read/write loop through the kernel), sized by time
timeout 1 dd if=/dev/zero of=/dev/null bs=64 2>/dev/null
"$SPENT" db "$DB" flush > /dev/null
check daemon_kernel_stops_on_sigterm stop_daemon

# A profile of `spent record` names the kernel as the daemon does (build-id and _text): merged
# into the daemon's database of the same boot it is the same [kernel.kallsyms], not a second
# one, and its kernel samples are named. Merged into an empty database its kallsyms (what its
# samples need) is that identity's copy; a daemon started there completes it.
"$SPENT" record -e cpu-clock -o "$TMP/rec" -- timeout 1 dd if=/dev/zero of=/dev/null bs=64 > /dev/null 2>&1
cp -a "$DB" "$TMP/withrec"
"$SPENT" db "$TMP/withrec" merge "$TMP/rec" > /dev/null 2> "$TMP/wr.err"
"$SPENT" report -i "$TMP/withrec" --json 2> /dev/null > "$TMP/wr.json"
kimages=$(python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ks = sorted({r["image"] for r in rows if r["image"].startswith("[kernel.kallsyms")})
named = sum(r["samples"] for r in rows if r["image"] in ks and not r["symbol"].startswith("0x"))
print(" ".join(ks), "named", named)' "$TMP/wr.json")
check "daemon_kernel_recorded_profile_merged_is_the_same_kernel ($kimages; $(head -c 120 "$TMP/wr.err"))" \
	test "${kimages%% named*}" = "[kernel.kallsyms]"
check "daemon_kernel_recorded_profile_merged_kernel_samples_named ($kimages)" test "${kimages##* named }" -gt 0
"$SPENT" db "$TMP/fromrec" merge "$TMP/rec" > /dev/null 2>&1
part=$(zstd -dc "$TMP/fromrec/$want_name" 2>/dev/null | wc -l)
check "daemon_kernel_recorded_profile_symbols_filed_by_identity ($part lines)" test "$part" -gt 0 -a "$part" -lt 1000
if start_daemon "$TMP/fromrec" "$TMP/fr.log" -F 1000; then
	stop_daemon
	full=$(zstd -dc "$TMP/fromrec/$want_name" 2>/dev/null | wc -l)
	check "daemon_kernel_start_completes_a_partial_copy ($part -> $full lines, want $want)" \
		test "$full" -ge $((want * 99 / 100))
else
	fail "daemon_kernel_start_completes_a_partial_copy: the daemon did not start: $(tail -2 "$TMP/fr.log")"
fi

# Another boot of the same kernel, as KASLR makes it: epoch 1 is epoch 0's kernel counts with
# every address and _text moved by 32 MiB, and that boot's kallsyms (also moved, names b2_);
# epoch 0's own copy gets names b1_, so each row says which copy named it. And a database from
# before identities (OLD): the kernel's id is its build-id alone, one OLD/kallsyms (names old_).
# One python3 does all of it (its start-up is most of a run here): kernel counts files are
# rewritten as src/profile/profile_file.h lays them out.
KF=$(ls "$DB"/epoch-0000/_kernel.kallsyms_-*@*.prof 2>/dev/null | head -1)
# the kernel is what is looked at: other images' counts go, so reports symbolize nothing else
find "$DB/epoch-0000" -name '*-*@*.prof' ! -name '_kernel.kallsyms_-*' -delete
OLD=$TMP/old
mkdir -p "$DB/epoch-0001" "$OLD/epoch-0000" && cp "$DB/epoch-0000/span" "$DB/epoch-0001/" && cp "$DB/meta" "$OLD/"
id2=$(python3 - "$KF" "$KS" "$DB" "$OLD" "$TMP/ks.txt" <<'PY'
import os, struct, sys, zlib
kf, ks, db, old, ks_text = sys.argv[1:6]
SHIFT = 0x2000000
d = open(kf, "rb").read()
def uv(p):
    v = s = 0
    while True:
        b = d[p]; p += 1; v |= (b & 127) << s; s += 7
        if b < 128: return v, p
def enc(v):
    out = bytearray()
    while True:
        b = v & 127; v >>= 7
        out.append(b | (128 if v else 0))
        if not v: return bytes(out)
# kind 1: event (name, period, flags), image (path, id_kind, id_len, id), n, total, deltas
assert d[:4] == b"SPPF" and d[8] == 1
p = 9
n, p = uv(p); p += n
_, p = uv(p); _, p = uv(p)
n, p = uv(p); p += n
kind, idlen = d[p], d[p + 1]
ident = d[p + 2:p + 2 + idlen]
n, q = uv(p + 2 + idlen); total, q = uv(q); first, r = uv(q)
def write(path, new_id, shift):
    out = d[:p] + bytes([kind, len(new_id)]) + new_id + enc(n) + enc(total) + enc(first + shift) + d[r:-4]
    open(path, "wb").write(out + struct.pack("<I", zlib.crc32(out)))
id2 = ident[:-8] + (int.from_bytes(ident[-8:], "big") + SHIFT).to_bytes(8, "big")
write(os.path.join(db, "epoch-0001", os.path.basename(kf)), id2, SHIFT)
write(os.path.join(old, "epoch-0000", os.path.basename(kf)), ident[:-8], 0)
lines = [l.split(" ", 2) for l in open(ks_text)]
with open(os.path.join(db, "kallsyms-" + id2.hex()), "w") as f:
    f.writelines("%016x %s b2_%s" % (int(a, 16) + SHIFT, t, nm) for a, t, nm in lines)
with open(os.path.join(old, "kallsyms"), "w") as f:
    f.writelines("%s %s old_%s" % (a, t, nm) for a, t, nm in lines)
with open(ks_text, "w") as f:
    f.writelines("%s %s b1_%s" % (a, t, nm) for a, t, nm in lines)
print(id2.hex())
PY
)
# boot 1's copy, renamed b1_, compressed again as the daemon stores it
zstd -q -f "$TMP/ks.txt" -o "$KS"
check "daemon_kernel_second_boot_made (id $id2)" test -s "$DB/kallsyms-$id2" -a "kallsyms-$id2" != "$want_name"

# db list: each epoch's kernel identity
"$SPENT" db "$DB" list --json > "$TMP/list.json" 2>&1
# merge brings each identity's copy
"$SPENT" db "$TMP/db2" merge "$DB" > /dev/null 2>"$TMP/m.err"
check "daemon_kernel_merge_brings_kallsyms ($(cat "$TMP/m.err"))" \
	bash -c "cmp -s '$KS' '$TMP/db2/$want_name' && cmp -s '$DB/kallsyms-$id2' '$TMP/db2/kallsyms-$id2'"
# the reports: the whole database, one epoch by path and by --epoch, the merged one, the old one
"$SPENT" report -i "$DB" --by function --json > "$TMP/r.all" 2>&1
"$SPENT" report -i "$DB/epoch-0001" --by function --json > "$TMP/r.e1" 2>&1
"$SPENT" report -i "$DB" --epoch 0 --by function --json > "$TMP/r.e0" 2>&1
"$SPENT" report -i "$TMP/db2" --by function --json > "$TMP/r.db2" 2>&1
"$SPENT" report -i "$OLD" --by function --json > "$TMP/r.old" 2>&1
# per report: for each kernel image, its rows, those named b1_, b2_, old_, and samples;
# "same" when two kernels have the same samples function by function
python3 - "$TMP" "${want_name#kallsyms-}" "$id2" > "$TMP/k.txt" <<'PY'
import json, sys, collections
tmp = sys.argv[1]
eps = [json.loads(l) for l in open(tmp + "/list.json") if l.strip()]
print("list", "ok" if [e["kernels"] for e in eps] == [[sys.argv[2]], [sys.argv[3]]] else eps)
for name in ("all", "e1", "e0", "db2", "old"):
    rows = [json.loads(l) for l in open("%s/r.%s" % (tmp, name)) if l.startswith("{")]
    imgs = collections.OrderedDict()
    for r in rows:
        if not r["image"].startswith("[kernel.kallsyms") or not r["symbol"]:
            continue
        s = imgs.setdefault(r["image"], [0, 0, 0, 0, 0, {}])
        s[0] += 1; s[4] += r["samples"]
        for i, pre in ((1, "b1_"), (2, "b2_"), (3, "old_")):
            s[i] += r["symbol"].startswith(pre)
        s[5][r["symbol"][3:]] = r["samples"]
    v = list(imgs.values())
    print(name, "same" if len(v) == 2 and v[0][5] == v[1][5] else "differ",
          " | ".join(" ".join(map(str, [k] + s[:5])) for k, s in imgs.items()))
PY
row() { sed -n "s/^$1 //p" "$TMP/k.txt"; }
check "daemon_kernel_list_shows_each_epochs_kernel ($(row list))" test "$(row list)" = ok
# two kernel images, each named only from its own copy, the same samples function by function
read -r same img1 n1 b1a b2a _ _ _ img2 n2 b1b b2b _ <<< "$(row all)"
[ "${b2a:-0}" -gt 0 ] 2>/dev/null && { t=$img1; img1=$img2; img2=$t; t=$n1; n1=$n2; n2=$t; t=$b1a; b1a=$b1b; b1b=$t; t=$b2a; b2a=$b2b; b2b=$t; }
check "daemon_kernel_two_boots_two_images ($(row all))" \
	test -n "$img2" -a "$img1" != "$img2" -a "$img1" != "[kernel.kallsyms]"
check "daemon_kernel_each_boot_named_from_its_copy (b1_ $b1a of $n1, b2_ $b2b of $n2)" \
	test "${n1:-0}" -gt 0 -a "$b1a" = "$n1" -a "$b2a" = 0 -a "$b2b" = "$n2" -a "$b1b" = 0
check daemon_kernel_boots_not_added test "$same" = same
# one epoch: its own kernel only, under the plain name
read -r _ i n b1 b2 o _ x <<< "$(row e1)"
check "daemon_kernel_epoch_path_uses_its_kernel ($(row e1))" test "$i" = "[kernel.kallsyms]" -a "${n:-0}" -gt 0 -a "$n" = "$b2" -a -z "$x"
read -r _ i n b1 b2 o _ x <<< "$(row e0)"
check "daemon_kernel_epoch_option_uses_its_kernel ($(row e0))" test "$i" = "[kernel.kallsyms]" -a "${n:-0}" -gt 0 -a "$n" = "$b1" -a -z "$x"
check "daemon_kernel_merged_reports_the_same ($(row db2))" test "$(row all)" = "$(row db2)"
read -r _ i n b1 b2 o _ x <<< "$(row old)"
check "daemon_kernel_old_database_reads_as_before ($(row old))" test "$i" = "[kernel.kallsyms]" -a "${n:-0}" -gt 0 -a "$n" = "$o" -a -z "$x"

# gc removes the kallsyms-HEX copies no epoch left has kernel samples of (a copy the epochs'
# kernels do not name), and keeps those they name and the running kernel's
cp -r "$DB" "$TMP/gcdb"
fake=kallsyms-0000${id2#????}
cp "$TMP/gcdb/kallsyms-$id2" "$TMP/gcdb/$fake"
"$SPENT" db "$TMP/gcdb" gc --keep 2 > "$TMP/gc.out" 2>&1
check "daemon_kernel_gc_removes_unused_kallsyms ($(cat "$TMP/gc.out"))" \
	test ! -e "$TMP/gcdb/$fake" -a -f "$TMP/gcdb/kallsyms-$id2" -a -f "$TMP/gcdb/$want_name"
