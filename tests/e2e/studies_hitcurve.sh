#!/bin/bash
# tests/e2e/studies_hitcurve.sh - `spent hitcurve` on a `spent trace` log against caches
# simulated independently (Python) over lackey's reference stream of the same program: direct-
# mapped and fully-associative LRU hits at 1K, 8K and 64K, i- and d-stream, within 1%. Then
# `spent memmap` writes a PNG of the expected size covering every instruction.
source "$(dirname "$0")/lib.sh"
VL=$SPENT_BUILD/valgrind/lib
P=$PROGS/studies_small
E=(env -i PATH=/usr/bin:/bin)

"${E[@]}" "$SPENT" trace -o "$TMP/s.log" -- "$P" > /dev/null 2> "$TMP/t.err"
check "studies_small runs under spent trace" test $? -eq 0
"${E[@]}" VALGRIND_LIB="$VL" valgrind --tool=lackey --trace-mem=yes --log-fd=9 "$P" \
	9> "$TMP/lackey.txt" > /dev/null 2>&1
"$SPENT" hitcurve "$TMP/s.log" --min 1K --max 64K --json --svg "$TMP/hc.svg" > "$TMP/hc.json"
check "hitcurve --json exits 0" test $? -eq 0

python3 - "$TMP/lackey.txt" "$TMP/hc.json" <<'PY'
import json, sys
from collections import OrderedDict
LINE, SIZES = 64, [1024, 8192, 65536]
dm = [dict() for _ in SIZES]
lru = [OrderedDict() for _ in SIZES]
hits = {(s, kind, z): 0 for s in "id" for kind in ("dm", "lru") for z in SIZES}
refs = {"i": 0, "d": 0}

def touch(line):
    """per size: (direct-mapped hit, LRU hit) for one line, updating the caches"""
    out = []
    for j, size in enumerate(SIZES):
        n = size // LINE
        d = dm[j].get(line % n) == line
        dm[j][line % n] = line
        c = lru[j]
        h = line in c
        if h:
            c.move_to_end(line)
        else:
            c[line] = 1
            if len(c) > n:
                c.popitem(last=False)
        out.append((d, h))
    return out

for raw in open(sys.argv[1], errors="replace"):
    if raw.startswith("=="):
        continue
    kind = "i" if raw.startswith("I") else "d" if raw[:2] in (" L", " S", " M") else None
    if not kind:
        continue
    a, sz = raw[2:].strip().split(",")
    a, sz = int(a, 16), int(sz)
    l1, l2 = a // LINE, (a + sz - 1) // LINE
    r = touch(l1)
    if l2 != l1:
        r = [(x[0] and y[0], x[1] and y[1]) for x, y in zip(r, touch(l2))]
    refs[kind] += 1
    for j, z in enumerate(SIZES):
        hits[(kind, "dm", z)] += r[j][0]
        hits[(kind, "lru", z)] += r[j][1]

ours = {}
for l in open(sys.argv[2]):
    o = json.loads(l)
    if "stream" in o and o["size"] in SIZES:
        ours[(o["stream"], "dm", o["size"])] = o["dm_hits"]
        ours[(o["stream"], "lru", o["size"])] = o["lru_hits"]
for key, want in sorted(hits.items()):
    got = ours.get(key)
    name = "%s-stream %s hits at %dK" % (key[0], "direct-mapped" if key[1] == "dm" else "LRU", key[2] // 1024)
    if got is not None and abs(got - want) <= 0.01 * want:
        print("PASS %s within 1%% of the lackey-driven simulation (%d vs %d)" % (name, got, want))
    else:
        print("FAIL %s within 1%% of the lackey-driven simulation: ours %s, lackey %d" % (name, got, want))
print(("PASS" if refs["d"] > 50000 else "FAIL") + " lackey saw data references (%d)" % refs["d"])
PY

check "the hit-curve SVG is well-formed XML with curves" python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
sys.exit(0 if len(r.findall(".//{http://www.w3.org/2000/svg}polyline")) == 4 else 1)' "$TMP/hc.svg"
check "the CPI estimate is at least 1" python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])][-1]
sys.exit(0 if o["cpi_direct_mapped"] >= 1 and o["cpi_lru"] >= 1 else 1)' "$TMP/hc.json"

"$SPENT" memmap "$TMP/s.log" --png "$TMP/m.png" --width 500 --height 300 > "$TMP/mm.txt"
check "memmap exits 0" test $? -eq 0
n=$("$SPENT" trace stats --json "$TMP/s.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["instructions"])')
check "memmap covered every instruction ($n)" grep -q "$n instructions" "$TMP/mm.txt"
check "the PNG has the plot size plus margins (640x430)" python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(33)
sys.exit(0 if b[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", b[16:24]) == (640, 454) else 1)' "$TMP/m.png"
"$SPENT" memmap "$TMP/s.log" --mod 0 > /dev/null 2>&1
check "--mod 0 is refused" test $? -eq 2

# the hit curves on a log axis, every size drawn (the smallest one's hits are orders of
# magnitude above the largest's), and the plot says so
check "hitcurve SVG: log scale, said on the plot, from the smallest size" python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
t = [e.text or "" for e in r.iter("{http://www.w3.org/2000/svg}text")]
sys.exit(0 if any("log scale" in x for x in t) and "1K" in t and "0.01" in t or "0.1" in t else 1)' "$TMP/hc.svg"
# every label of the memory map inside the picture: the last x label ends before the edge
check "memmap: the last x-axis label is inside the picture" python3 -c '
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
w, h = struct.unpack(">II", b[16:24])
i, raw = 8, b""
while i < len(b):
    n, = struct.unpack(">I", b[i:i + 4])
    if b[i + 4:i + 8] == b"IDAT": raw += b[i + 8:i + 8 + n]
    i += 12 + n
px, stride, prev, rows = zlib.decompress(raw), 3 * w, bytearray(3 * w), []
for y in range(h):  # undo the PNG row filters (RGB, 3 bytes a pixel)
    f, cur = px[y * (stride + 1)], bytearray(px[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for x in range(stride):
        a = cur[x - 3] if x >= 3 else 0; up = prev[x]; c = prev[x - 3] if x >= 3 else 0
        if f == 1: cur[x] = (cur[x] + a) & 255
        elif f == 2: cur[x] = (cur[x] + up) & 255
        elif f == 3: cur[x] = (cur[x] + (a + up) // 2) & 255
        elif f == 4:
            p = a + up - c; pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
            cur[x] = (cur[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
    rows.append(cur); prev = cur
# the right margin (last 3 columns) holds no dark pixel: no label was cut at the edge
dark = sum(1 for r in rows for x in range(w - 3, w) if r[3 * x] < 128)
sys.exit(0 if dark == 0 else 1)' "$TMP/m.png"
