/* trace/valgrind/sp_proc.c - the spent tool across a process tree: the LOG_REC_PROCESS record
 * that opens each process's stream (the command, every exec'd program: Valgrind runs a new tool
 * instance there with --trace-children=yes), and fork: the parent sends what it buffered before
 * the fork, and the child, which inherits the parent's tool state, starts a stream of its own
 * that a reader can replay alone (its images, superblocks and value deltas sent again). */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_xarray.h"

#include "trace/log_format.h"
#include "trace/valgrind/sp_tool.h"

static Bool follow_children = True;

/* OUT := DIR "/" NAME with "." components and repeated slashes dropped (DIR is absolute);
 * NAME alone when it is absolute. ".." stays: folded by text, "link/../x" named a file that
 * does not exist when link is a symbolic link to a directory elsewhere. */
static void join_clean(const HChar *dir, const HChar *name, HChar *out, SizeT len)
{
	HChar tmp[4096];
	if (name[0] == '/')
		VG_(snprintf)(tmp, sizeof(tmp), "%s", name);
	else
		VG_(snprintf)(tmp, sizeof(tmp), "%s/%s", dir, name);
	SizeT o = 0;
	const HChar *c = tmp;
	while (*c) {
		while (*c == '/')
			c++;
		const HChar *e = c;
		while (*e && *e != '/')
			e++;
		SizeT n = (SizeT)(e - c);
		if (n && !(n == 1 && c[0] == '.')) {
			if (o + 1 + n >= len)
				break;	/* cut, not a component skipped and the rest kept */
			out[o++] = '/';
			VG_(memcpy)(out + o, c, n);
			o += n;
		}
		c = e;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = 0;
}

/* what execvp and Valgrind take from a PATH directory: a regular file someone may execute */
static Bool is_program(const HChar *path)
{
	struct vg_stat st;
	return !sr_isError(VG_(stat)(path, &st)) && (st.mode & VKI_S_IFMT) == VKI_S_IFREG &&
	       (st.mode & 0111);
}

/*
 * The absolute path of the program this instance runs, by the name it was run by. A child's
 * exec hands over the path it gave execve (execvp's absolute one, usually), but the command is
 * given as typed ("gzip", "./s.out"), which Valgrind looked up as execvp does: in PATH for a
 * bare name, else from the working directory. So look it up the same way. Symlinks stay as
 * named: the file name is what --comm selects by, and an exec'd child's is not resolved
 * either. When the lookup finds nothing, the name as given stays.
 */
static const HChar *exe_path(void)
{
	static HChar path[4096];	/* a forked child runs its parent's program: kept */
	const HChar *exe = VG_(args_the_exename) ? VG_(args_the_exename) : "";
	const HChar *wd = VG_(get_startup_wd)();
	if (path[0])
		return path;
	if (exe[0] == '/' || !wd) {
		VG_(snprintf)(path, sizeof(path), "%s", exe);
	} else if (VG_(strchr)(exe, '/')) {
		join_clean(wd, exe, path, sizeof(path));
	} else {
		const HChar *d = VG_(getenv)("PATH");
		while (d && !path[0]) {
			const HChar *e = d;
			while (*e && *e != ':')
				e++;
			HChar dir[4096], cand[4096];
			SizeT n = (SizeT)(e - d) < sizeof(dir) ? (SizeT)(e - d) : sizeof(dir) - 1;
			VG_(memcpy)(dir, d, n);	/* Valgrind's printf has no "%.*s" */
			dir[n] = 0;
			join_clean(wd, dir, cand, sizeof(cand));	/* an empty entry is the wd */
			join_clean(cand, exe, dir, sizeof(dir));
			if (is_program(dir))
				VG_(snprintf)(path, sizeof(path), "%s", dir);
			d = *e ? e + 1 : NULL;
		}
		if (!path[0])	/* a bare name a child exec'd: execve reads it from the wd */
			join_clean(wd, exe, path, sizeof(path));
		if (!is_program(path))
			VG_(snprintf)(path, sizeof(path), "%s", exe);
	}
	return path;
}

void sp_emit_process(UInt flags)
{
	const HChar *exe = VG_(args_the_exename) ? VG_(args_the_exename) : "";
	const HChar *path = exe_path();
	UInt plen = (UInt)VG_(strlen)(path), elen = (UInt)VG_(strlen)(exe), alen = 0, argc = 0;
	if (plen > 4095)
		plen = 4095;
	if (elen > 4095)
		elen = 4095;
	/* argv[0] is the exe name as given; then the client's arguments, as much as fits */
	Word n = VG_(args_for_client) ? VG_(sizeXA)(VG_(args_for_client)) : 0;
	UInt room = 64u << 10;
	alen = elen + 1;
	argc = 1;
	for (Word i = 0; i < n; i++) {
		const HChar *a = *(HChar **)VG_(indexXA)(VG_(args_for_client), i);
		UInt l = (UInt)VG_(strlen)(a) + 1;
		if (alen + l > room)
			break;
		alen += l;
		argc++;
	}
	UInt ppad = (plen + 7u) & ~7u;
	UChar *b = sp_rec_begin(LOG_REC_PROCESS, (UInt)sizeof(struct log_process) + ppad + alen);
	struct log_process *p = (struct log_process *)b;
	VG_(memset)(p, 0, sizeof(*p));
	p->pid = (UInt)VG_(getpid)();
	p->ppid = (UInt)VG_(getppid)();
	p->time_ns = sp_now_ns();
	p->flags = flags;
	p->path_len = plen;
	p->argv_len = alen;
	p->argc = argc;
	UChar *q = b + sizeof(*p);
	VG_(memcpy)(q, path, plen);
	VG_(memset)(q + plen, 0, ppad - plen);
	q += ppad;
	VG_(memcpy)(q, exe, elen);
	q[elen] = 0;
	q += elen + 1;
	for (UInt i = 0; i + 1 < argc; i++) {
		const HChar *a = *(HChar **)VG_(indexXA)(VG_(args_for_client), (Word)i);
		UInt l = (UInt)VG_(strlen)(a) + 1;
		VG_(memcpy)(q, a, l);
		q += l;
	}
}

/* The latest CODE record of every key, by key. */
struct kept_code {
	struct kept_code *next;
	Addr key;
	UInt len;
	UChar payload[0];
};
#define KEPT_BUCKETS (1u << 16)
static struct kept_code *kept[KEPT_BUCKETS];

static UInt kept_slot(Addr key)
{
	return (UInt)(((ULong)key * 0x9E3779B97F4A7C15ULL) >> 48) & (KEPT_BUCKETS - 1);
}

void sp_code_keep(Addr key, const UChar *b, UInt len)
{
	struct kept_code **pp = &kept[kept_slot(key)];
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->key == key) {
			struct kept_code *old = *pp;
			*pp = old->next;
			VG_(free)(old);
			break;
		}
	struct kept_code *k = VG_(malloc)("sp.kept", sizeof(*k) + len);
	k->key = key;
	k->len = len;
	VG_(memcpy)(k->payload, b, len);
	k->next = kept[kept_slot(key)];
	kept[kept_slot(key)] = k;
}

Bool sp_code_known(Addr key)
{
	for (const struct kept_code *k = kept[kept_slot(key)]; k; k = k->next)
		if (k->key == key)
			return True;
	return False;
}

void sp_code_resend(void)
{
	for (UInt i = 0; i < KEPT_BUCKETS; i++)
		for (struct kept_code *k = kept[i]; k; k = k->next) {
			UChar *b = sp_rec_begin(LOG_REC_CODE, k->len);
			VG_(memcpy)(b, k->payload, k->len);
		}
}

/* Before the fork: everything buffered leaves now, as the parent's. */
static void sp_atfork_pre(ThreadId tid)
{
	sp_flush_data();
	sp_out_write();
}

static void sp_atfork_child(ThreadId tid)
{
	sp_out_fork_child(VG_(getpid)());
	if (!follow_children) {
		sp_stop_logging();
		sp_out_close();
		return;
	}
	sp_emit_process(LOG_PROC_FORK);
	sp_fork_child_reset(tid);
}

void sp_proc_init(Bool children)
{
	follow_children = children;
	VG_(atfork)(sp_atfork_pre, NULL, sp_atfork_child);
}
