/* tests/progs/trace_bench.c - a mixed workload for bench/trace.sh: array sweeps, a linked-list
 * walk, calls through pointers and a branchy loop; N (argv[1]) scales the work. */
#include <stdio.h>
#include <stdlib.h>

struct node { struct node *next; long val; };

static long f_even(long x) { return x / 2; }
static long f_odd(long x) { return 3 * x + 1; }
static long (*const step[2])(long) = { f_even, f_odd };

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20;
	enum { N = 1 << 14 };
	static long a[N];
	static struct node nodes[N];
	long sum = 0;
	for (long i = 0; i < N; i++) {
		nodes[i].next = &nodes[(i * 7919 + 1) % N];
		nodes[i].val = i;
	}
	for (long r = 0; r < n; r++) {
		for (long i = 0; i < N; i++)
			a[i] += i ^ r;
		struct node *p = &nodes[r % N];
		for (long i = 0; i < N; i++, p = p->next)
			sum += p->val;
		for (long i = 1; i < 2000; i++) {
			long x = i + r, k = 0;
			while (x != 1 && k < 50) {
				x = step[x & 1](x);
				k++;
			}
			sum += k;
		}
	}
	printf("%ld %ld\n", sum, a[n % N]);
	return 0;
}
