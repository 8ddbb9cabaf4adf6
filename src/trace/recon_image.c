/* trace/recon_image.c - the images a log names: each executable mapping's file is mapped for
 * decoding (vDSO bytes come from the log), its identity (build-id, else content hash) checked
 * against the recorded one, and
 * an IMAGE_LOAD event with its load bias emitted. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "trace/recon_internal.h"

static void hex(char *out, const uint8_t *id, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = 0;
}

/* Load bias: START minus the vaddr the ELF gives the mapped file OFFSET. */
static uint64_t load_bias(const struct recon_image *im)
{
	uint64_t bias = im->start - im->offset;
	Elf *e;
	size_t n;
	if (!im->map)
		return bias;
	elf_version(EV_CURRENT);
	e = elf_memory((char *)im->bytes, im->n_bytes);
	if (!e)
		return bias;
	if (elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (im->offset >= ph.p_offset && im->offset < ph.p_offset + ph.p_filesz) {
				bias = im->start - (ph.p_vaddr + (im->offset - ph.p_offset));
				break;
			}
		}
	}
	elf_end(e);
	return bias;
}

static int map_file(struct recon_image *im)
{
	struct stat st;
	int fd = binio_open_regular(im->path);	/* a FIFO the log names must not block us */
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_size == 0) {
		close(fd);
		return -EINVAL;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	im->map = m;
	im->bytes = m;
	im->n_bytes = (uint64_t)st.st_size;
	return 0;
}

/* The file at the image's path must be the one traced: same build-id, or the same content
 * hash when it has none (a rebuild without a build-id changes the hash). */
static int check_identity(struct recon *r, const struct recon_image *im, const struct log_image *li,
			  uint64_t where)
{
	uint8_t id[20];
	uint8_t n = 0;
	uint32_t kind = 0, want = li->flags & (LOG_IMG_BUILD_ID | LOG_IMG_CONTENT_HASH);
	char a[41], b[41];
	if (!want || li->build_id_len == 0)
		return 0;
	if (log_image_identity(im->path, id, &n, &kind) < 0)
		n = 0;
	if (kind == want && n == li->build_id_len && memcmp(id, li->build_id, n) == 0)
		return 0;
	hex(a, li->build_id, li->build_id_len > 20 ? 20 : li->build_id_len);
	hex(b, id, n);
	snprintf(r->msg, sizeof(r->msg), "image '%s' changed since it was traced: %s %s in the log, "
		 "%s%s on disk (image record in block at byte %llu); rebuild the log or restore the "
		 "binary", im->path, want == LOG_IMG_BUILD_ID ? "build-id" : "content hash (no build-id)",
		 a, n ? b : "(none)", n && kind != want ? (kind == LOG_IMG_BUILD_ID ? " (a build-id)" :
		 " (a content hash)") : "", (unsigned long long)where);
	return -ESTALE;
}

static int image_add(struct recon *r, struct recon_image **out)
{
	if (ALLOC_GROW(r->p.img, r->p.n_img + 1, r->p.cap_img))
		return -ENOMEM;
	*out = &r->p.img[r->p.n_img];
	memset(*out, 0, sizeof(**out));
	return 0;
}

int recon_on_image(struct recon *r, const struct log_record *rec)
{
	struct log_image li;
	struct recon_image *im;
	int err;

	if (rec->len < sizeof(li))
		goto bad;
	memcpy(&li, rec->payload, sizeof(li));
	size_t pad = ((size_t)li.path_len + 7u) & ~(size_t)7u;
	if (li.path_len == 0 || li.path_len > 4095 || li.build_id_len > 20 ||
	    rec->len != sizeof(li) + pad + li.n_bytes ||
	    ((li.flags & LOG_IMG_BYTES) && li.n_bytes != li.len) || li.len == 0 ||
	    (li.flags & LOG_IMG_BUILD_ID && li.flags & LOG_IMG_CONTENT_HASH))
		goto bad;
	if ((err = image_add(r, &im)) < 0)
		return err;
	im->start = li.start;
	im->len = li.len;
	im->offset = li.offset;
	im->path = strndup((const char *)rec->payload + sizeof(li), li.path_len);
	if (!im->path)
		return -ENOMEM;
	r->p.n_img++;
	if (li.flags & LOG_IMG_BYTES) {
		im->owned = malloc(li.n_bytes ? li.n_bytes : 1);
		if (!im->owned)
			return -ENOMEM;
		memcpy(im->owned, rec->payload + sizeof(li) + pad, li.n_bytes);
		im->bytes = im->owned;
		im->n_bytes = li.n_bytes;
		im->offset = 0;
	} else if (im->path[0] == '/') {
		if ((err = check_identity(r, im, &li, rec->block_offset)) < 0)
			return err;
		map_file(im);	/* unreadable: instructions still reconstruct, without flags */
	}
	struct spent_trace_event *e = NULL;
	if (ALLOC_GROW(r->evs, r->n_evs + 1, r->cap_evs))
		return -ENOMEM;
	e = &r->evs[r->n_evs++];
	memset(e, 0, sizeof(*e));
	e->kind = SPENT_TRACE_EV_IMAGE_LOAD;
	e->pid = r->p.pid;
	e->tid = r->p.last_tid;
	e->time_ns = r->p.cur_time;
	e->before = r->n_insns;
	e->u.image.path = im->path;
	e->u.image.start = im->start;
	e->u.image.end = im->start + im->len;
	e->u.image.base = load_bias(im);
	memcpy(e->u.image.build_id, li.build_id, 20);
	e->u.image.build_id_len = li.build_id_len;
	return 0;
bad:
	snprintf(r->msg, sizeof(r->msg), "corrupt log: bad image record in block at byte %llu",
		 (unsigned long long)rec->block_offset);
	return -EBADMSG;
}

void recon_images_release(struct recon *r)
{
	for (size_t i = 0; i < r->p.n_img; i++) {
		if (r->p.img[i].map)
			munmap(r->p.img[i].map, r->p.img[i].n_bytes);
		free(r->p.img[i].owned);
		free(r->p.img[i].path);
	}
	free(r->p.img);
}
