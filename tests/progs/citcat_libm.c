/* tests/progs/citcat_libm.c - libm calls with double and float arguments through the PLT, for
 * citcat's replay of floating-point state. Linked with -z lazy (mk/citcat.mk): the first call
 * of each function runs ld.so's resolver between the caller loading xmm0/xmm1 and libm reading
 * them, which must save and restore them (fxsave/fxrstor under the CITCAT CPU model). Results
 * print exactly (%a); the arguments come from argv so nothing is computed at compile time.
 *
 *   citcat_libm [X [Y]]     defaults: X = -0.5, Y = 2.25 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	double x = argc > 1 ? strtod(argv[1], NULL) : -0.5;
	double y = argc > 2 ? strtod(argv[2], NULL) : 2.25;
	float xf = (float)x, yf = (float)y;
	/* each line's call is the function's first: lazily bound */
	printf("exp(x) %a\n", exp(x));
	printf("log(y) %a\n", log(y));
	printf("pow(y, x) %a\n", pow(y, x));
	printf("sin(x) %a\n", sin(x));
	printf("cos(y) %a\n", cos(y));
	printf("atan2(x, y) %a\n", atan2(x, y));
	printf("hypot(x, y) %a\n", hypot(x, y));
	printf("cbrt(y) %a\n", cbrt(y));
	printf("fmod(y, x) %a\n", fmod(y, x));
	printf("ldexp(x, 7) %a\n", ldexp(x, 7));
	printf("expf(x) %a\n", (double)expf(xf));
	printf("logf(y) %a\n", (double)logf(yf));
	printf("powf(y, x) %a\n", (double)powf(yf, xf));
	printf("sinf(x) %a\n", (double)sinf(xf));
	printf("atan2f(x, y) %a\n", (double)atan2f(xf, yf));
	/* bound by now: the same value through the resolved PLT slot */
	printf("exp(x) again %a\n", exp(x));
	return 0;
}
