#!/usr/bin/env python3
"""tests/e2e/citcat_rewrite.py - rewrite a citcat recording (docs/citcat.md, format in
src/citcat/recording_format.h) with valid CRCs, to build malformed-but-checksummed recordings
for the e2e tests: the reader must refuse them by their content, not by a checksum.

    citcat_rewrite.py IN OUT OP [OP...]
    citcat_rewrite.py synth OUT

synth writes a minimal valid recording made here, not by the recorder (so the tests that use
it need no CPUID faulting): an anonymous executable page at 0x400000 holding
"mov edi, 7; mov eax, 231; syscall" (exit_group(7)), a stack, one SYSCALL, the EXIT.
IN and OUT are recording files (DIR/recording). Operations, applied in order:
    drop-first KIND      remove the first record of KIND (a number, enum cc_rec_kind)
    drop-all KIND        remove every record of KIND
    set-pc VALUE         set rip (field 16) of the first REGS record (VALUE may be 0x...)
    poke-pc HEX          write the bytes HEX at the initial pc (a MEM record before START)
    switch-to-4242 WHY   a SWITCH to thread 4242 (never created) with reason WHY, after START
    set-r9 VALUE         set the last argument (r9) of the first SYSCALL record
"""
import os
import re
import struct
import sys
import zlib

REC_META, REC_MAP, REC_MEM, REC_REGS, REC_START, REC_SYSCALL, REC_EXIT = 1, 3, 4, 6, 7, 8, 12
REC_SWITCH = 17
MAP_ANON, MAP_STACK = 0, 2
SC_STATE = 4
NREGS, RIP, EFLAGS, RSP = 27, 16, 18, 19
FNV_INIT = 0xCBF29CE484222325
FORMAT_H = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "../../src/citcat/recording_format.h")


def uvarint(buf, pos):
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, pos


def put_uvarint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def svarint(v):
    return put_uvarint(((v << 1) ^ (v >> 63)) & (2**64 - 1))


def string(s):
    return put_uvarint(len(s)) + s.encode()


def fnv64(data):
    h = FNV_INIT
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & (2**64 - 1)
    return h


def synth():
    """The minimal recording (header, records) described in the module comment."""
    version = int(re.search(r"#define CC_VERSION (\d+)", open(FORMAT_H).read()).group(1))
    code_at, stack_top = 0x400000, 0x7FF000
    code = bytes.fromhex("bf07000000" "b8e7000000" "0f05")
    regs = [0] * NREGS
    regs[RIP], regs[RSP], regs[EFLAGS] = code_at, stack_top, 0x202
    u = put_uvarint
    sc_pc = code_at + len(code) - 2
    state = fnv64(struct.pack("<8Q", sc_pc, stack_top, 0, 0, 0, 0, 0, 0))
    recs = [
        (REC_META, string("synthetic exit 7") + string("/") + u(1) + u(0)),
        (REC_REGS, u(NREGS) + b"".join(u(v) for v in regs)),
        (REC_MAP, u(code_at) + u(0x1000) + u(5) + u(MAP_ANON) + u(0) + u(0)),
        (REC_MEM, u(code_at) + u(len(code)) + code),
        (REC_MAP, u(stack_top - 0x2000) + u(0x2000) + u(3) + u(MAP_STACK) + u(0) + u(0)),
        (REC_START, b""),
        (REC_SYSCALL, u(231) + u(7) + b"".join(u(0) for _ in range(5)) + svarint(0) +
         u(SC_STATE) + struct.pack("<Q", state)),
        (REC_EXIT, svarint(7 << 8) + u(1) + u(0) + struct.pack("<Q", FNV_INIT)),
    ]
    return b"SPCITCAT" + struct.pack("<II", version, 0), recs


def frames(data):
    pos = 16
    while pos < len(data):
        kind = data[pos]
        n, p = uvarint(data, pos + 1)
        yield kind, data[p:p + n]
        pos = p + n + 4


def frame(kind, payload):
    crc = zlib.crc32(payload, zlib.crc32(bytes([kind])))
    return bytes([kind]) + put_uvarint(len(payload)) + payload + struct.pack("<I", crc)


def regs(payload):
    count, pos = uvarint(payload, 0)
    vals = []
    for _ in range(count):
        v, pos = uvarint(payload, pos)
        vals.append(v)
    return vals


def set_regs_pc(payload, pc):
    vals = regs(payload)
    vals[RIP] = pc
    return put_uvarint(len(vals)) + b"".join(put_uvarint(v) for v in vals)


def set_syscall_r9(payload, value):
    """A SYSCALL payload is nr, six arguments, then the rest (ret, flags, state)."""
    pos, vals = 0, []
    for _ in range(7):
        v, pos = uvarint(payload, pos)
        vals.append(v)
    vals[6] = value
    return b"".join(put_uvarint(v) for v in vals) + payload[pos:]


def main():
    src, dst, ops = sys.argv[1], sys.argv[2], sys.argv[3:]
    if src == "synth":
        header, recs = synth()
    else:
        data = open(src, "rb").read()
        header, recs = data[:16], list(frames(data))
    i = 0
    while i < len(ops):
        op = ops[i]
        arg = bytes.fromhex(ops[i + 1]) if op == "poke-pc" else int(ops[i + 1], 0)
        i += 2
        if op == "poke-pc":
            pc = regs(next(p for k, p in recs if k == REC_REGS))[RIP]
            start = next(j for j, r in enumerate(recs) if r[0] == REC_START)
            recs.insert(start, (REC_MEM, put_uvarint(pc) + put_uvarint(len(arg)) + arg))
        elif op == "switch-to-4242":
            start = next(j for j, r in enumerate(recs) if r[0] == REC_START)
            recs.insert(start + 1, (REC_SWITCH, put_uvarint(4242) + put_uvarint(arg)))
        elif op == "set-r9":
            idx = next(j for j, r in enumerate(recs) if r[0] == REC_SYSCALL)
            recs[idx] = (REC_SYSCALL, set_syscall_r9(recs[idx][1], arg))
        elif op == "drop-first":
            idx = next(j for j, r in enumerate(recs) if r[0] == arg)
            del recs[idx]
        elif op == "drop-all":
            recs = [r for r in recs if r[0] != arg]
        elif op == "set-pc":
            idx = next(j for j, r in enumerate(recs) if r[0] == REC_REGS)
            recs[idx] = (REC_REGS, set_regs_pc(recs[idx][1], arg))
        else:
            sys.exit("citcat_rewrite.py: unknown operation " + op)
    with open(dst, "wb") as f:
        f.write(header + b"".join(frame(k, p) for k, p in recs))


if __name__ == "__main__":
    main()
