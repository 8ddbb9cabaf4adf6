#!/usr/bin/env python3
# tests/e2e/unit_sandbox.py - run a command under the sandbox a systemd unit's [Service] section
# asks for, without systemd (test machines and CI containers do not run it as PID 1), so a test
# can show the service works inside its own restrictions.
#
#   unit_sandbox.py UNIT RWDIR -- CMD...
#
# Applied as systemd would: CapabilityBoundingSet, NoNewPrivileges, SystemCallFilter (groups
# expanded by systemd-analyze, the settings in order, SystemCallErrorNumber), SystemCallArchitectures=
# native, RestrictAddressFamilies, MemoryDenyWriteExecute (the seccomp rules systemd uses), UMask,
# ProtectSystem=strict + ProtectHome=read-only + ProtectKernelTunables/ControlGroups (every mount
# read-only but /proc, /dev and RWDIR, the state directory; /proc/sys read-only too),
# PrivateDevices (a /dev with null, zero, full, random, urandom), PrivateNetwork, PrivateIPC,
# ProtectHostname (new network, IPC and UTS namespaces). Not applied: PrivateTmp (callers keep
# their files in /tmp), RestrictNamespaces, LockPersonality, ProtectClock, IPAddressDeny (no IP
# socket can be made anyway). Needs root.
import ctypes
import errno
import os
import re
import socket
import subprocess
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def die(msg):
    sys.stderr.write("unit_sandbox: %s\n" % msg)
    sys.exit(125)


def check(rc, what):
    if rc != 0:
        e = ctypes.get_errno()
        die("%s: %s" % (what, os.strerror(e)))


def service_settings(unit):
    """[Service] KEY=VALUE pairs in order (keys repeat)."""
    out, section = [], None
    for line in open(unit):
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line:
            k, v = line.split("=", 1)
            out.append((k.strip(), v.strip()))
    return out


def header_numbers(path, prefix):
    nums = {}
    for line in open(path):
        m = re.match(r"#define\s+%s(\w+)\s+(\d+)\b" % prefix, line)
        if m:
            nums[m.group(1).lower()] = int(m.group(2))
    return nums


_groups = {}


def syscall_group(name):
    """The syscall names of a systemd group, nested groups expanded."""
    if name not in _groups:
        try:
            out = subprocess.run(["systemd-analyze", "syscall-filter", name], check=True,
                                 capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            die("cannot expand %s with systemd-analyze (install systemd: scripts/deps.sh): %s" % (name, e))
        s = set()
        for line in out.splitlines()[1:]:
            t = line.strip()
            if t and not t.startswith("#"):
                s |= syscall_group(t) if t.startswith("@") else {t}
        _groups[name] = s
    return _groups[name]


def syscall_filter(settings):
    """The allowed syscall names: the first setting is an allow list, later ones add or (~) remove."""
    allowed = None
    for k, v in settings:
        if k != "SystemCallFilter":
            continue
        deny = v.startswith("~")
        names = set()
        for t in v.lstrip("~").split():
            names |= syscall_group(t) if t.startswith("@") else {t}
        if allowed is None:
            if deny:
                die("deny-list SystemCallFilter not supported")
            allowed = names
        elif deny:
            allowed -= names
        else:
            allowed |= names
    return allowed


# classic BPF for seccomp
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JSET_K, BPF_JGE_K, BPF_RET_K = 0x20, 0x15, 0x45, 0x35, 0x06
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
AUDIT_ARCH_X86_64 = 0xC000003E
OFF_NR, OFF_ARCH = 0, 4


def off_arg(i):
    return 16 + 8 * i      # low 32 bits of argument i (little endian)


def seccomp_program(allowed, nr, err, families, mdwe):
    deny = SECCOMP_RET_ERRNO | err
    prog = [(BPF_LD_W_ABS, 0, 0, OFF_ARCH), (BPF_JEQ_K, 1, 0, AUDIT_ARCH_X86_64), (BPF_RET_K, 0, 0, deny),
            (BPF_LD_W_ABS, 0, 0, OFF_NR), (BPF_JGE_K, 0, 1, 0x40000000), (BPF_RET_K, 0, 0, deny)]
    PROT_WRITE, PROT_EXEC = 2, 4
    if families is not None:
        # socket(family, ...): other families fail with EAFNOSUPPORT, as with systemd
        body = []
        for f in sorted(families):
            body += [(BPF_JEQ_K, 0, 1, f), (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW)]
        body.append((BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EAFNOSUPPORT))
        prog += [(BPF_JEQ_K, 0, len(body) + 2, nr["socket"]), (BPF_LD_W_ABS, 0, 0, off_arg(0))]
        prog += body + [(BPF_LD_W_ABS, 0, 0, OFF_NR)]
    if mdwe:
        # systemd's rules: mmap with PROT_WRITE and PROT_EXEC, mprotect/pkey_mprotect with
        # PROT_EXEC fail with EPERM
        prog += [(BPF_JEQ_K, 0, 5, nr["mmap"]), (BPF_LD_W_ABS, 0, 0, off_arg(2)),
                 (BPF_JSET_K, 0, 2, PROT_WRITE), (BPF_JSET_K, 0, 1, PROT_EXEC),
                 (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM), (BPF_LD_W_ABS, 0, 0, OFF_NR)]
        for name in ("mprotect", "pkey_mprotect"):
            prog += [(BPF_JEQ_K, 0, 4, nr[name]), (BPF_LD_W_ABS, 0, 0, off_arg(2)),
                     (BPF_JSET_K, 0, 1, PROT_EXEC), (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
                     (BPF_LD_W_ABS, 0, 0, OFF_NR)]
    for name in sorted(allowed):
        if name in nr:
            prog += [(BPF_JEQ_K, 0, 1, nr[name]), (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW)]
    prog.append((BPF_RET_K, 0, 0, deny))
    return prog


def install_seccomp(prog):
    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    arr = (SockFilter * len(prog))(*[SockFilter(*i) for i in prog])
    fprog = SockFprog(len(prog), arr)
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0), "seccomp")


MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS = 0x20000, 0x40000000, 0x08000000, 0x04000000


def mount(src, dst, fstype, flags, data=None):
    check(libc.mount(src and src.encode(), dst.encode(), fstype and fstype.encode(), flags,
                     data and data.encode()), "mount %s" % dst)


# per-mount options kept when a mount is made read-only: a remount sets the flags it is given,
# and in a container some of them are locked
MNT_KEEP = {"nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048,
            "relatime": 1 << 21, "strictatime": 1 << 24}


def mounts():
    """(mount point, its per-mount flags to keep) for every mount."""
    out = []
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        flags = sum(MNT_KEEP.get(o, 0) for o in f[5].split(","))
        out.append((f[4].encode().decode("unicode_escape"), flags))
    return out


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        die("usage: unit_sandbox.py UNIT RWDIR -- CMD...")
    unit, rwdir, cmd = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[4:]
    settings = service_settings(unit)
    get = lambda k: [v for kk, v in settings if kk == k]
    caps = header_numbers("/usr/include/linux/capability.h", "CAP_")
    nr = header_numbers("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "__NR_")
    allowed = syscall_filter(settings)

    # ProtectSystem=strict, ProtectHome=read-only, ProtectKernelTunables, ProtectControlGroups
    check(libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    # the devices PrivateDevices keeps, opened before /dev is replaced (in the new namespace:
    # a bind mount's source must be in it), bound in afterwards
    devs = {d: os.open("/dev/" + d, os.O_PATH) for d in ("null", "zero", "full", "random", "urandom")}
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount(rwdir, rwdir, None, MS_BIND)
    for m, keep in mounts():
        if m == rwdir or m == "/proc" or m.startswith("/proc/") or m == "/dev" or m.startswith("/dev/"):
            continue
        mount(None, m, None, MS_REMOUNT | MS_BIND | MS_RDONLY | keep)
    mount("/proc/sys", "/proc/sys", None, MS_BIND)
    mount(None, "/proc/sys", None, MS_REMOUNT | MS_BIND | MS_RDONLY | dict(mounts()).get("/proc/sys", 0))
    mount("tmpfs", "/dev", "tmpfs", 0, "mode=755")
    for d, fd in devs.items():
        open("/dev/" + d, "w").close()
        mount("/proc/self/fd/%d" % fd, "/dev/" + d, None, MS_BIND)
        os.close(fd)

    for v in get("UMask"):
        os.umask(int(v, 8))
    PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 24, 38
    for v in get("CapabilityBoundingSet"):
        bounding = {caps[c.lower()[4:]] for c in v.split()}
        last = int(open("/proc/sys/kernel/cap_last_cap").read())
        for c in range(last + 1):
            if c not in bounding:
                check(libc.prctl(PR_CAPBSET_DROP, c, 0, 0, 0), "drop capability %d" % c)
    if "yes" in get("NoNewPrivileges"):
        check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")

    if allowed is not None:
        err = get("SystemCallErrorNumber")
        errnum = getattr(errno, err[-1]) if err else 1
        fams = None
        for v in get("RestrictAddressFamilies"):
            fams = {getattr(socket, f) for f in v.split()}
        if get("SystemCallArchitectures") != ["native"]:
            die("only SystemCallArchitectures=native is emulated")
        install_seccomp(seccomp_program(allowed, nr, errnum, fams, "yes" in get("MemoryDenyWriteExecute")))
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main()
