#!/bin/bash
# tests/e2e/daemon_kernel.sh - the daemon keeps each kernel's identity and symbols with its
# database: [kernel.kallsyms] is identified by the build-id plus the boot's _text address,
# DB/kallsyms-HEX (the text symbols of /proc/kallsyms, mode 0640) is written once per
# identity, and `spent report -i DB` names each epoch's kernel samples from its own kernel's
# copy: a second epoch made from the first as another boot would be (KASLR: every address and
# _text shifted, its own kallsyms) is reported as a separate kernel, never added into the
# first's rows; `spent db merge` brings both copies along; a database written before
# identities (plain build-id, one DB/kallsyms) still reads as before.
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
got=$(wc -l < "$KS" 2>/dev/null || echo 0)
check "daemon_kernel_saves_text_symbols ($got lines, /proc/kallsyms has $want)" \
	test "$got" -gt 1000 -a "$got" -le "$want" -a "$got" -ge $((want * 99 / 100))
check daemon_kernel_kallsyms_mode_0640 test "$(stat -c %a "$KS" 2>/dev/null)" = 640
check daemon_kernel_only_text_symbols bash -c "! awk '\$2 !~ /^[tTwW]\$/' '$KS' | grep -q ."

# kernel work (a read/write loop through the kernel), sized by time
timeout 1 dd if=/dev/zero of=/dev/null bs=64 2>/dev/null
"$SPENT" db "$DB" flush > /dev/null
check daemon_kernel_stops_on_sigterm stop_daemon

# Another boot of the same kernel, as KASLR makes it: epoch 1 is epoch 0's kernel counts with
# every address and _text moved by 32 MiB, and that boot's kallsyms (also moved, names b2_);
# epoch 0's own copy gets names b1_, so each row says which copy named it.
# kfile SRC DST ID_CUT SHIFT: rewrite a kernel counts file (src/profile/profile_file.h):
# identity cut to ID_CUT bytes (0: whole) with SHIFT added to its _text bytes, offsets + SHIFT
cat > "$TMP/kfile.py" <<'PY'
import struct, sys, zlib
src, dst, cut, shift = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4], 0)
d = open(src, "rb").read()
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
assert d[:4] == b"SPPF" and d[8] == 1
p = 9
n, p = uv(p); p += n            # event name
_, p = uv(p); _, p = uv(p)      # period, flags
n, p = uv(p); p += n            # image path
kind, idlen = d[p], d[p + 1]
ident = bytearray(d[p + 2:p + 2 + idlen]); body = p + 2 + idlen
if cut:
    ident = ident[:cut]
else:
    t = int.from_bytes(ident[-8:], "big") + shift
    ident[-8:] = t.to_bytes(8, "big")
n, q = uv(body); total, q = uv(q); first, r = uv(q)
out = d[:p] + bytes([kind, len(ident)]) + bytes(ident) + enc(n) + enc(total) + enc(first + shift) + d[r:-4]
open(dst, "wb").write(out + struct.pack("<I", zlib.crc32(out)))
print(bytes(ident).hex())
PY
KF=$(ls "$DB"/epoch-0000/_kernel.kallsyms_-*@*.prof 2>/dev/null | head -1)
# the kernel is what is looked at: other images' counts go, so reports symbolize nothing else
find "$DB/epoch-0000" -name '*-*@*.prof' ! -name '_kernel.kallsyms_-*' -delete
mkdir -p "$DB/epoch-0001" && cp "$DB/epoch-0000/span" "$DB/epoch-0001/"
id2=$(python3 "$TMP/kfile.py" "$KF" "$DB/epoch-0001/$(basename "$KF")" 0 0x2000000)
python3 -c 'import sys
for l in open(sys.argv[1]):
    a, t, n = l.split(None, 2)
    sys.stdout.write("%016x %s b2_%s" % (int(a, 16) + 0x2000000, t, n))' "$KS" > "$DB/kallsyms-$id2"
sed -i 's/^\([0-9a-f]* [tTwW] \)/\1b1_/' "$KS"
check "daemon_kernel_second_boot_made (id $id2)" test -s "$DB/kallsyms-$id2" -a "kallsyms-$id2" != "$want_name"

# kernel_rows REPORT_ARGS...: per kernel image, its rows, rows named b1_, b2_, old_, samples;
# and whether each function has the same samples under both kernels
cat > "$TMP/rows.py" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
k = [r for r in rows if r["image"].startswith("[kernel.kallsyms") and r["symbol"]]
imgs = collections.OrderedDict()
for r in k:
    s = imgs.setdefault(r["image"], [0, 0, 0, 0, 0, {}])
    s[0] += 1; s[4] += r["samples"]
    for i, pre in ((1, "b1_"), (2, "b2_"), (3, "old_")):
        s[i] += r["symbol"].startswith(pre)
    s[5][r["symbol"][3:]] = r["samples"]
same = len(imgs) == 2 and list(imgs.values())[0][5] == list(imgs.values())[1][5]
for name, s in imgs.items():
    print(name, *s[:5])
print("same" if same else "differ")
PY
kernel_rows() {
	"$SPENT" report "$@" --by function --json > "$TMP/r.json" 2>"$TMP/r.err"
	python3 "$TMP/rows.py" "$TMP/r.json"
}
kernel_rows -i "$DB" > "$TMP/k.txt"
# two kernel images, each named only from its own copy, the same samples function by function
read -r img1 n1 b1a b2a _ s1 < <(sed -n 1p "$TMP/k.txt")
read -r img2 n2 b1b b2b _ s2 < <(sed -n 2p "$TMP/k.txt")
[ "$b2a" -gt 0 ] 2>/dev/null && { t=$img1; img1=$img2; img2=$t; t=$n1; n1=$n2; n2=$t; t=$b1a; b1a=$b1b; b1b=$t; t=$b2a; b2a=$b2b; b2b=$t; }
check "daemon_kernel_two_boots_two_images ($(head -c 400 "$TMP/k.txt" | tr '\n' '|'))" \
	test "$(wc -l < "$TMP/k.txt")" = 3 -a "$img1" != "$img2" -a "$img1" != "[kernel.kallsyms]"
check "daemon_kernel_each_boot_named_from_its_copy (b1_ $b1a of $n1, b2_ $b2b of $n2)" \
	test "${n1:-0}" -gt 0 -a "$b1a" = "$n1" -a "$b2a" = 0 -a "$b2b" = "$n2" -a "$b1b" = 0
check daemon_kernel_boots_not_added grep -qx same "$TMP/k.txt"
# one epoch: its own kernel only, under the plain name
kernel_rows -i "$DB/epoch-0001" > "$TMP/k1.txt"
check "daemon_kernel_epoch_path_uses_its_kernel ($(head -1 "$TMP/k1.txt"))" \
	bash -c "[ \$(wc -l < '$TMP/k1.txt') = 2 ] && read -r i n b1 b2 o s < '$TMP/k1.txt' && [ \"\$i\" = '[kernel.kallsyms]' -a \"\$n\" = \"\$b2\" -a \"\$n\" -gt 0 ]"
kernel_rows -i "$DB" --epoch 0 > "$TMP/k0.txt"
check "daemon_kernel_epoch_option_uses_its_kernel ($(head -1 "$TMP/k0.txt"))" \
	bash -c "[ \$(wc -l < '$TMP/k0.txt') = 2 ] && read -r i n b1 b2 o s < '$TMP/k0.txt' && [ \"\$n\" = \"\$b1\" -a \"\$n\" -gt 0 ]"

# merge brings each identity's copy, and the merged database reports the same
"$SPENT" db "$TMP/db2" merge "$DB" > /dev/null 2>"$TMP/m.err"
check "daemon_kernel_merge_brings_kallsyms ($(cat "$TMP/m.err"))" \
	bash -c "cmp -s '$KS' '$TMP/db2/$want_name' && cmp -s '$DB/kallsyms-$id2' '$TMP/db2/kallsyms-$id2'"
kernel_rows -i "$TMP/db2" > "$TMP/k2.txt"
check daemon_kernel_merged_reports_the_same cmp -s "$TMP/k.txt" "$TMP/k2.txt"

# a database from before identities: the kernel's id is its build-id alone, one DB/kallsyms
OLD=$TMP/old
mkdir -p "$OLD/epoch-0000" && cp "$DB/meta" "$OLD/" && cp "$DB"/epoch-0000/*-*@*.prof "$OLD/epoch-0000/"
python3 "$TMP/kfile.py" "$KF" "$OLD/epoch-0000/$(basename "$KF")" $(( (${#want_name} - 9 - 16) / 2 )) 0 > /dev/null
sed 's/^\([0-9a-f]* [tTwW] \)b1_/\1old_/' "$KS" > "$OLD/kallsyms"
kernel_rows -i "$OLD" > "$TMP/ko.txt"
check "daemon_kernel_old_database_reads_as_before ($(head -1 "$TMP/ko.txt"))" \
	bash -c "[ \$(wc -l < '$TMP/ko.txt') = 2 ] && read -r i n b1 b2 o s < '$TMP/ko.txt' && [ \"\$i\" = '[kernel.kallsyms]' -a \"\$n\" = \"\$o\" -a \"\$n\" -gt 0 ]"
