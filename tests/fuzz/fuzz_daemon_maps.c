/* tests/fuzz/fuzz_daemon_maps.c - libFuzzer target for what the daemon reads about processes:
 * /proc/PID/maps lines (file names are chosen by any user: spaces, " (deleted)", garbage)
 * through procmaps_parse_line into the daemon's map table, mixed with fork/exec/exit/reap
 * records, then pc lookups. Never crash; a resolved pc names an image that exists. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "collect/daemon_maps.h"
#include "core/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each input line: one opcode byte, one pid byte, then the rest of the line. */
static void one_line(struct dmaps *m, char *line, uint64_t *gen)
{
	pid_t pid = 1 + (unsigned char)line[1] % 8;
	struct procmaps_line ml;
	char path[256];
	uint32_t img;
	uint64_t off;

	switch ((unsigned char)line[0] % 6) {
	case 0:
	case 1:
		if (procmaps_parse_line(line + 2, &ml) || ml.end < ml.start || strlen(ml.path) >= 200)
			break;
		/* the daemon opens image files when it places a sample: never a real one here */
		snprintf(path, sizeof(path), "%s%s", ml.path[0] == '/' ? "/nonexistent-spent-fuzz" : "",
			 ml.path);
		struct dmaps_mmap mm = { .pid = pid, .start = ml.start, .len = ml.end - ml.start,
			.pgoff = ml.pgoff, .dev = makedev(ml.dev_major, ml.dev_minor), .ino = ml.ino,
			.prot = ml.exec ? PROT_EXEC : 0, .path = path };
		dmaps_mmap(m, &mm);
		if (dmaps_resolve(m, pid, ml.start, &img, &off) == 0 && !dmaps_image(m, img))
			abort();
		break;
	case 2: dmaps_fork(m, pid, 1 + (unsigned char)line[1] / 8 % 8); break;
	case 3: dmaps_exec(m, pid); break;
	case 4: dmaps_exit(m, pid, *gen); break;
	default: dmaps_reap(m, (*gen)++); break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dmaps *m = NULL;
	char *text = malloc(size + 1), *line, *save = NULL;
	uint64_t gen = 0;

	if (!text || dmaps_new(&m)) {
		free(text);
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strlen(line) >= 2)
			one_line(m, line, &gen);
	/* every process's every page of the first 64 KiB and a kernel pc */
	for (pid_t pid = 0; pid <= 8; pid++) {
		uint32_t img;
		uint64_t off;
		for (uint64_t pc = 0; pc < 65536; pc += 4096)
			if (dmaps_resolve(m, pid, pc, &img, &off) == 0 && !dmaps_image(m, img))
				abort();
		if (dmaps_resolve(m, pid, 0xffffffff81000000ull, &img, &off) || img != DIMAGE_KERNEL)
			abort();
	}
	dmaps_free(m);
	free(text);
	return 0;
}
