/* core/kernel_id.c - kernel identities (build-id + _text) and the names derived from them:
 * the database file of their symbols and the label a report shows (see kernel_id.h). */
#include "core/kernel_id.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kernel_id_add_text(struct spent_profile_image *id, uint64_t text)
{
	if (id->id_kind != SPENT_PROFILE_ID_BUILDID || !id->id_len ||
	    id->id_len > SPENT_PROFILE_ID_MAX - KERNEL_ID_TEXT_LEN || !text)
		return -EINVAL;
	for (int i = 0; i < KERNEL_ID_TEXT_LEN; i++)
		id->id[id->id_len + i] = (uint8_t)(text >> (8 * (KERNEL_ID_TEXT_LEN - 1 - i)));
	id->id_len += KERNEL_ID_TEXT_LEN;
	return 0;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = 0;
}

void kernel_id_hex(const struct spent_profile_image *id, char *out, size_t len)
{
	char h[2 * SPENT_PROFILE_ID_MAX + 1];
	hex(id->id, id->id_len <= SPENT_PROFILE_ID_MAX ? id->id_len : 0, h);
	snprintf(out, len, "%s", h);
}

int kernel_id_kallsyms_name(const struct spent_profile_image *id, char *out, size_t len)
{
	char h[2 * SPENT_PROFILE_ID_MAX + 1];
	if (!id->id_len || id->id_len > SPENT_PROFILE_ID_MAX)
		return -EINVAL;
	hex(id->id, id->id_len, h);
	int n = snprintf(out, len, "%s%s", KERNEL_KALLSYMS_PREFIX, h);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool kernel_id_is_kallsyms_name(const char *name)
{
	size_t p = strlen(KERNEL_KALLSYMS_PREFIX);
	if (strncmp(name, KERNEL_KALLSYMS_PREFIX, p))
		return false;
	size_t n = strspn(name + p, "0123456789abcdef");
	return n && n % 2 == 0 && n <= 2 * SPENT_PROFILE_ID_MAX && !name[p + n];
}

void kernel_id_short(const struct spent_profile_image *id, char *out, size_t len)
{
	char a[9], b[9];
	if (!id->id_len || id->id_len > SPENT_PROFILE_ID_MAX) {
		snprintf(out, len, "-");
		return;
	}
	size_t n = id->id_len < 4 ? id->id_len : 4;
	hex(id->id, n, a);
	hex(id->id + id->id_len - n, n, b);
	snprintf(out, len, "%s..%s", a, b);
}

void kernel_id_label(const struct spent_profile_image *id, char *out, size_t len)
{
	char s[24];
	if (!id->id_len || id->id_len > SPENT_PROFILE_ID_MAX) {
		snprintf(out, len, "%s", SPENT_PROFILE_KERNEL_PATH);
		return;
	}
	kernel_id_short(id, s, sizeof(s));
	snprintf(out, len, "[kernel.kallsyms:%s]", s);
}

uint64_t kernel_id_text_address(const char *line)
{
	uint64_t a = 0;
	const char *p = line;
	for (;; p++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
		if (d < 0 || p - line >= 16)
			break;
		a = a << 4 | (uint64_t)d;
	}
	if (p == line || p[0] != ' ' || (p[1] != 't' && p[1] != 'T') || p[2] != ' ')
		return 0;
	const char *name = p + 3;
	return strcspn(name, " \t\n") == 5 && !strncmp(name, "_text", 5) ? a : 0;
}

uint64_t kernel_id_running_text(void)
{
	uint64_t text = 0;
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/kallsyms", "re");
	/* _text is among the first lines (sorted by address); it also ends the read when its
	 * address is hidden, rather than reading 200,000 lines of zeros */
	while (f && getline(&line, &cap, f) > 0) {
		const char *name = strchr(line, ' ');
		if ((text = kernel_id_text_address(line)) ||
		    (name && name[1] && name[2] == ' ' && !strncmp(name + 3, "_text", 5) &&
		     strchr(" \t\n", name[8] ? name[8] : ' ')))
			break;
	}
	free(line);
	if (f)
		fclose(f);
	return text;
}

uint64_t kernel_id_text(const struct spent_profile_image *id)
{
	if (id->id_kind != SPENT_PROFILE_ID_BUILDID || id->id_len < 16 + KERNEL_ID_TEXT_LEN)
		return 0;
	uint64_t text = 0;
	for (int i = 0; i < KERNEL_ID_TEXT_LEN; i++)
		text = text << 8 | id->id[id->id_len - KERNEL_ID_TEXT_LEN + i];
	return text >> 47 == 0x1ffff ? text : 0;	/* the kernel's half of the address space */
}

bool kernel_id_has_text(const struct spent_profile_image *id)
{
	return kernel_id_text(id) != 0;
}
