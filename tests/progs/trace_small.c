/* tests/progs/trace_small.c - a small deterministic program for `spent trace` exactness tests:
 * loops, a jump table, indirect calls, read-modify-write memory, string ops; prints a checksum. */
#include <stdio.h>
#include <string.h>

static int table[256];
static char buf[4096];

static int op_add(int a, int b) { return a + b; }
static int op_xor(int a, int b) { return a ^ b; }
static int op_mul(int a, int b) { return a * (b | 1); }
static int (*const ops[3])(int, int) = { op_add, op_xor, op_mul };

static int classify(int x)
{
	switch (x & 7) {	/* a jump table: indirect jumps */
	case 0: return 3;
	case 1: return x >> 1;
	case 2: return x * 5;
	case 3: return -x;
	case 4: return x + 11;
	case 5: return x & 0x55;
	case 6: return x | 0x100;
	default: return 1;
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? 1 + (argv[1][0] - '0') * 10 : 40;
	unsigned sum = 0;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < 256; i++) {
			table[i] += classify(i + r);	/* read-modify-write */
			sum = (unsigned)ops[(i + r) % 3]((int)sum, table[i]);
		}
		memset(buf, r & 0xff, sizeof(buf));	/* rep stos / vector stores */
		memcpy(buf + 1, buf + 2048, 1000);
		sum += (unsigned)buf[r];
	}
#ifdef VARIANT
	sum ^= 0x5a5a;
#endif
	printf("checksum %u\n", sum);
	return 0;
}
