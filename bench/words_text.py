#!/usr/bin/env python3
# bench/words_text.py OUT [MB] - a text of random words (seeded: the same on every machine),
# MB megabytes (default 3), the input bench/studies.sh and bench/studies_ab.sh gzip.
import random
import sys
r = random.Random(1)
w = [''.join(r.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(r.randint(2, 9))) for _ in range(5000)]
out, n, size = [], 0, int(sys.argv[2] if len(sys.argv) > 2 else 3) << 20
while n < size:
    s = ' '.join(r.choice(w) for _ in range(12)) + '\n'
    out.append(s)
    n += len(s)
open(sys.argv[1], 'w').write(''.join(out))
