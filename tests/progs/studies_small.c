/* tests/progs/studies_small.c - a short run with locality at several sizes (a 48 KB array swept
 * three times, random reads in 8 KB, a few functions) for hit-curve checks against lackey. */
#include <stdio.h>

static int arr[12288];
static int hot[2048];

static int mix(int x) { return x * 33 + 7; }

int main(void)
{
	long s = 0;
	unsigned r = 1;
	for (int rep = 0; rep < 3; rep++)
		for (int i = 0; i < 12288; i += 2) {
			arr[i] += i;
			r = r * 1103515245u + 12345u;
			s += hot[(r >> 10) & 2047] + mix(i);
		}
	printf("%ld\n", s);
	return 0;
}
