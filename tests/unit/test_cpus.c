/* tests/unit/test_cpus.c - CPU lists (core/cpus.c): perf's -C syntax and the kernel's online
 * list parse to each CPU once in the order given, bad lists are refused, lists format back
 * with runs as ranges, the online CPUs are a non-empty ascending list, and each CPU's place
 * (socket, die, core) is read from sysfs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/cpus.h"

static void parse_lists(void **state)
{
	int *c = NULL;
	size_t n = 0;
	assert_int_equal(cpu_list_parse("0-3,5", &c, &n), 0);
	assert_int_equal(n, 5);
	int want[] = { 0, 1, 2, 3, 5 };
	assert_memory_equal(c, want, sizeof(want));
	free(c);
	assert_int_equal(cpu_list_parse("7,2-3,3,7", &c, &n), 0);	/* once each, as given */
	int want2[] = { 7, 2, 3 };
	assert_int_equal(n, 3);
	assert_memory_equal(c, want2, sizeof(want2));
	free(c);
	const char *bad[] = { "", ",", "1,", "-1", "3-1", "1-", "a", " 1", "1 ", "4096", "0-4096", "1;2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(cpu_list_parse(bad[i], &c, &n), -EINVAL);
}

static void format_lists(void **state)
{
	char buf[64];
	int a[] = { 0, 1, 2, 3, 5, 7, 8 };
	cpu_list_format(a, 7, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,5,7-8");
	cpu_list_format(a, 1, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	cpu_list_format(a, 0, buf, sizeof(buf));
	assert_string_equal(buf, "");
	char small[8];	/* "0-3,5,7-8" does not fit: cut with "..." */
	cpu_list_format(a, 7, small, sizeof(small));
	assert_string_equal(small, "0-3...");
}

static void online_now(void **state)
{
	int *c = NULL;
	size_t n = 0;
	assert_int_equal(cpus_online(&c, &n), 0);
	assert_true(n >= 1);
	assert_true((long)n <= sysconf(_SC_NPROCESSORS_CONF));
	for (size_t i = 1; i < n; i++)
		assert_true(c[i] > c[i - 1]);
	free(c);
}

/* A fake sysfs tree: cpu0 and cpu1 on socket 1, die 0, cores 4 and 5; cpu2 without die_id (a
 * kernel before 5.2) is die 0; cpu3 has no topology */
static void write_num(const char *dir, int cpu, const char *name, int v)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/cpu%d/topology", dir, cpu);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/cpu%d/topology/%s", dir, cpu, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%d\n", v);
	fclose(f);
}

static void places_from_sysfs(void **state)
{
	(void)state;
	char dir[] = "/tmp/spent-cpus.XXXXXX";
	assert_non_null(mkdtemp(dir));
	for (int c = 0; c < 3; c++) {
		write_num(dir, c, "physical_package_id", 1);
		write_num(dir, c, "core_id", 4 + c);
		if (c < 2)
			write_num(dir, c, "die_id", 0);
	}
	struct cpu_place p;
	assert_int_equal(cpu_place_read(dir, 1, &p), 0);
	assert_true(p.socket == 1 && p.die == 0 && p.core == 5);
	assert_int_equal(cpu_place_read(dir, 2, &p), 0);
	assert_true(p.socket == 1 && p.die == 0 && p.core == 6);
	assert_int_equal(cpu_place_read(dir, 3, &p), -ENOENT);
	/* this machine's CPUs all have a place */
	int *cpus = NULL;
	size_t n = 0;
	assert_int_equal(cpus_online(&cpus, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(cpu_place_read(CPU_SYSFS, cpus[i], &p), 0);
	free(cpus);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_lists),
		cmocka_unit_test(format_lists),
		cmocka_unit_test(online_now),
		cmocka_unit_test(places_from_sysfs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
