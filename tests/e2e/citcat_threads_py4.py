"""tests/e2e/citcat_threads_py4.py - four python threads computing under the GIL, each
storing its result under a lock (citcat_threads.sh records and replays it)."""
import threading
out = {}
lock = threading.Lock()
def work(i):
    s = 0
    for k in range(100000):
        s = (s * 31 + k * i) % 1000003
    with lock:
        out[i] = s
ts = [threading.Thread(target=work, args=(i,)) for i in range(1, 5)]
for t in ts: t.start()
for t in ts: t.join()
print(sorted(out.items()))
