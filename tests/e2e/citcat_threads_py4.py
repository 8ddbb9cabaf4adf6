"""tests/e2e/citcat_threads_py4.py [N] - four python threads computing N steps (100000)
under the GIL, each storing its result under a lock (citcat_threads.sh records and replays
it)."""
import sys
import threading
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
out = {}
lock = threading.Lock()
def work(i):
    s = 0
    for k in range(steps):
        s = (s * 31 + k * i) % 1000003
    with lock:
        out[i] = s
ts = [threading.Thread(target=work, args=(i,)) for i in range(1, 5)]
for t in ts: t.start()
for t in ts: t.join()
print(sorted(out.items()))
