/* tests/unit/citcat_cpu_cases.h - the instruction sequences test_citcat_cpu.c runs natively and
 * in the simulator, per cpuid feature. Included once, by test_citcat_cpu.c.
 *
 *   claimed     every feature the CITCAT CPU model reports, with sequences whose results must
 *               be equal (the cmocka tests)
 *   gaps        sequences of claimed features known to differ in Unicorn 2.0.1 (QEMU 5.0);
 *               the features stay claimed because x86-64 or glibc require them (FPU, CMOV,
 *               FXSR, SSE, SSE2) or the issue does (SSE3: numpy). --evidence runs them.
 *   candidates  features the model leaves out; --evidence shows why.
 *
 * Each sequence is assembled by gas into .rodata (AT&T syntax, ';' separates instructions) and
 * runs with every register but rsp and r15 random, r15 = a 4 KiB data buffer, random status
 * flags, rounding modes and x87 precision. X(name, asm, compared flags, options). Flags a
 * sequence leaves undefined (per the Intel SDM, for its last flag-writing instruction) are not
 * compared; IGN_* registers differ by nature (the TSC). IN_F32 / IN_F64: the xmm registers and
 * memory hold binary32 / binary64 operands of two-operand arithmetic, drawn with a single NaN
 * encoding (the default NaN), because the simulator picks a different NaN than the CPU when
 * both operands are NaNs (a gap, below). x87 and MMX sequences leave the register stack empty
 * (emms), as callers of C functions must. */

/* gas helpers shared by the sequences: OP %reg1 into a copy of %reg0, result to SLOT(%r15) */
__asm__(".macro mmxop op, slot\n"
	"movq %mm0, %mm2; \\op %mm1, %mm2; movq %mm2, \\slot(%r15)\n"
	".endm\n"
	".macro xmmop op, slot\n"
	"movdqa %xmm0, %xmm2; \\op %xmm1, %xmm2; movdqu %xmm2, \\slot(%r15)\n"
	".endm\n"
	".macro x87op op, slot\n"	/* st0 = (%r15) OP 8(%r15), stored as 80 bits */
	"fldl (%r15); \\op 8(%r15); fstpt \\slot(%r15)\n"
	".endm\n"
	".macro canonical80 off\n"	/* integer bit = (exponent != 0): no pseudo-denormals, unnormals */
	"movzwl \\off+8(%r15), %eax; test $0x7fff, %eax; setnz %al; movzbl %al, %eax; shl $63, %rax;"
	"btrq $63, \\off(%r15); or %rax, \\off(%r15)\n"
	".endm\n"
	".macro fldcw_const value\n"	/* FCW = value, through the last word of the buffer */
	"movw $\\value, 4088(%r15); fldcw 4088(%r15)\n"
	".endm\n"
	".macro ldmxcsr_const value\n"
	"movl $\\value, 4088(%r15); ldmxcsr 4088(%r15)\n"
	".endm\n");

/* a sequence ending in a logic instruction (and): AF is undefined */
#define FL_LOGIC (FL_ALL & ~FL_AF)

#define SNIP(id, text)                                                                      \
	extern const uint8_t snip_##id[], snip_##id##_end[];                                \
	__asm__(".pushsection .rodata.citcat_snippets, \"a\"\n"                            \
		"snip_" #id ":\n" text "\n"                                                  \
		"snip_" #id "_end:\n"                                                        \
		".popsection\n");
#define CASE_SNIP(id, text, flags, opts) SNIP(id, text)
#define CASE_ENTRY(id, text, flags, opts) { #id, snip_##id, snip_##id##_end, flags, opts },
#define NCASES(a) (sizeof(a) / sizeof((a)[0]))
#define FEATURE(name, leaf, reg, bit, cases) { name, leaf, reg, bit, cases, NCASES(cases), 0, NULL }
#define EVIDENCE(name, leaf, reg, bit, cases, avx, why) \
	{ name, leaf, reg, bit, cases, NCASES(cases), avx, why }
#define CASES(list, array) list(CASE_SNIP) static const struct insn_case array[] = { list(CASE_ENTRY) };

/* ---- claimed: leaf 1 edx ---- */

#define FPU_CASES(X)                                                                        \
	X(x87_arith, "x87op faddl, 16; x87op fsubl, 32; x87op fmull, 48; x87op fdivl, 64;"  \
	  "x87op fdivrl, 80; fldl (%r15); fcompl 8(%r15); fnstsw %ax; and $0x4500, %eax",     \
	  FL_LOGIC, 0)                                                                      \
	X(x87_double_store, "fldl (%r15); faddl 8(%r15); fstpl 16(%r15);"                   \
	  "fldl 24(%r15); fmull 32(%r15); fstps 40(%r15); fldl 48(%r15); fstps 56(%r15)",     \
	  FL_ALL, IN_F64)                                                                        \
	X(x87_sqrt_round, "fldl (%r15); fsqrt; fstpt 16(%r15); fldl 8(%r15); frndint;"      \
	  "fstpt 32(%r15); fldl 48(%r15); fabs; fstpl 64(%r15); fldl 72(%r15); fchs;"         \
	  "fstpl 80(%r15)", FL_ALL, IN_F64)                                                      \
	X(x87_int_convert, "fldl (%r15); fistpll 16(%r15); fldl 8(%r15); fistpl 24(%r15);"   \
	  "fldl 32(%r15); fistps 40(%r15); fildll 48(%r15); fstpt 64(%r15);"                  \
	  "fildl 80(%r15); fstps 96(%r15); filds 104(%r15); fstpl 112(%r15)", FL_ALL, 0)      \
	X(x87_compare_codes, "fldl (%r15); fcoml 8(%r15); fnstsw 128(%r15); fldl 16(%r15);"  \
	  "fucomp %st(1); fnstsw 130(%r15); fxam; fnstsw 132(%r15); fstp %st(0); andw $0x4500, 128(%r15);"    \
	  "andw $0x4500, 130(%r15); andw $0x4700, 132(%r15)", FL_LOGIC, 0)                   \
	X(x87_stack, "fldl (%r15); fldl 8(%r15); fldl 16(%r15); fxch %st(2); fsubp;"         \
	  "fld %st(0); fmulp %st, %st(2); fstpt 32(%r15); fstpt 48(%r15)", FL_ALL, IN_F64)        \
	X(x87_constants_nearest, "fldcw_const 0x37f; fldpi; fstpt 16(%r15); fldl2e;"        \
	  "fstpt 32(%r15); fldln2; fstpt 48(%r15); fldlg2; fstpt 64(%r15); fldl2t;"           \
	  "fstpt 80(%r15); fld1; fldz; fstpt 96(%r15); fstpt 112(%r15)", FL_ALL, 0)           \
	X(x87_extended_memory, "canonical80 0; canonical80 16; fldt (%r15); fldt 16(%r15);"  \
	  "faddp; fstpt 32(%r15); fldt 16(%r15); fmull 48(%r15); fstpt 64(%r15)", FL_ALL, 0)

#define TSC_CASES(X) X(rdtsc, "rdtsc", FL_ALL, IGN_RAX | IGN_RDX)

#define CX8_CASES(X)                                                                        \
	X(cmpxchg8b_equal, "mov (%r15), %eax; mov 4(%r15), %edx; lock cmpxchg8b (%r15)",     \
	  FL_ALL, 0)                                                                        \
	X(cmpxchg8b_random, "lock cmpxchg8b 8(%r15)", FL_ALL, 0)

/* CMOV also covers FCMOVcc and FCOMI (SDM: supported when CMOV and FPU are) */
#define CMOV_CASES(X)                                                                       \
	X(cmov_64, "cmove %rcx, %rax; cmovl %rdx, %rbx; cmova %rsi, %rdi; cmovp 8(%r15), %r8;" \
	  "cmovo %r9, %r10; cmovs %r11, %r12; cmovge %r13, %r14", FL_ALL, 0)                  \
	X(cmov_32_16, "cmovne %ecx, %eax; cmovle %edx, %ebx; cmovbe %si, %di;"              \
	  "cmovnp 8(%r15), %r8d; cmovno %r9w, %r10w; cmovns %r11d, %r12d; cmovc %r13d, %r14d", \
	  FL_ALL, 0)                                                                        \
	X(fcmov, "fldl (%r15); fldl 8(%r15); fcmovb %st(1), %st; fstpl 16(%r15);"           \
	  "fldl 24(%r15); fcmovne %st(1), %st; fstpl 32(%r15); fldl 40(%r15);"               \
	  "fcmovnbe %st(1), %st; fstpl 48(%r15); fldl 56(%r15); fcmovu %st(1), %st;"          \
	  "fstpl 64(%r15); fstp %st(0)", FL_ALL, IN_F64)                                         \
	X(fcomi, "fldl 8(%r15); fldl (%r15); fcomi %st(1), %st; setz %al; setp %bl;"        \
	  "setc %cl; fucomip %st(1), %st; fstp %st(0)", FL_CF | FL_PF | FL_ZF, IN_F64)

#define CLFSH_CASES(X) X(clflush, "clflush (%r15); clflush 64(%r15); mov 64(%r15), %rax", FL_ALL, 0)

#define MMX_CASES(X)                                                                        \
	X(mmx_add_sub, "movq (%r15), %mm0; movq 8(%r15), %mm1; mmxop paddb, 16;"            \
	  "mmxop paddw, 24; mmxop paddd, 32; mmxop paddsb, 40; mmxop paddusw, 48;"            \
	  "mmxop psubw, 56; mmxop psubsw, 64; mmxop psubusb, 72; emms", FL_ALL, 0)            \
	X(mmx_mul_cmp_logic, "movq (%r15), %mm0; movq 8(%r15), %mm1; mmxop pmullw, 16;"      \
	  "mmxop pmulhw, 24; mmxop pmaddwd, 32; mmxop pcmpeqb, 40; mmxop pcmpgtw, 48;"        \
	  "mmxop pcmpgtd, 56; mmxop pand, 64; mmxop pandn, 72; mmxop por, 80; mmxop pxor, 88;" \
	  "emms", FL_ALL, 0)                                                                \
	X(mmx_pack_unpack, "movq (%r15), %mm0; movq 8(%r15), %mm1; mmxop packsswb, 16;"     \
	  "mmxop packssdw, 24; mmxop packuswb, 32; mmxop punpcklbw, 40; mmxop punpckhwd, 48;" \
	  "mmxop punpckldq, 56; mmxop punpckhdq, 64; emms", FL_ALL, 0)                        \
	X(mmx_shift, "movq (%r15), %mm0; movq 8(%r15), %mm1; mmxop psllw, 16;"              \
	  "mmxop psrld, 24; mmxop psraw, 32; mmxop psrlq, 40; movq %mm0, %mm3; psllq $13, %mm3;" \
	  "movq %mm3, 48(%r15); psrad $31, %mm0; movq %mm0, 56(%r15); emms", FL_ALL, 0)        \
	X(mmx_move, "movd %eax, %mm0; movq %rcx, %mm1; paddd %mm1, %mm0; movd %mm0, %edx;"   \
	  "movq %mm1, %rbx; movd 8(%r15), %mm2; movd %mm2, 16(%r15); emms", FL_ALL, 0)

/* the image is zeroed first: the simulator leaves bytes the CPU zeroes (a gap, below);
 * FIP/FDP/FOP (only saved with a pending exception on AMD) and MXCSR_MASK (per CPU) are
 * cleared after, and of MXCSR and FSW only the control bits and the stack top are kept */
#define FXSR_NORMALIZE "movw $0, 518(%r15); movq $0, 520(%r15); movq $0, 528(%r15);"         \
	"andw $0x3800, 514(%r15); andl $0xffc0, 536(%r15); movl $0, 540(%r15)"
#define FXSR_ZERO "lea 512(%r15), %rdi; xor %eax, %eax; mov $64, %ecx; rep stosq;"
#define FXSR_CASES(X)                                                                       \
	X(fxsave_image, FXSR_ZERO "fldl (%r15); fldl 8(%r15); fxsave 512(%r15); fstp %st(0);" \
	  "fstp %st(0);" FXSR_NORMALIZE, FL_LOGIC, IN_F64)                                        \
	X(fxsave_fxrstor_keeps_xmm, FXSR_ZERO "fxsave 512(%r15); pxor %xmm0, %xmm0;"         \
	  "pxor %xmm7, %xmm7; movaps %xmm1, %xmm15; fxrstor 512(%r15);" FXSR_NORMALIZE,       \
	  FL_LOGIC, 0)                                                                      \
	X(fxrstor_loads_memory, FXSR_ZERO "fxsave 512(%r15); mov (%r15), %rax;"              \
	  "mov %rax, 672(%r15); mov %rdx, 800(%r15); fxrstor 512(%r15);" FXSR_NORMALIZE,      \
	  FL_LOGIC, 0)

#define SSE_CASES(X)                                                                        \
	X(sse_arith, "addps %xmm1, %xmm0; subps %xmm3, %xmm2; mulps %xmm5, %xmm4;"          \
	  "divps %xmm7, %xmm6; addss %xmm9, %xmm8; subss %xmm11, %xmm10; mulss %xmm13, %xmm12;" \
	  "divss 32(%r15), %xmm14", FL_ALL, IN_F32)                                         \
	X(sse_sqrt_min_max, "sqrtps %xmm1, %xmm0; sqrtss %xmm3, %xmm2; maxps %xmm5, %xmm4;"  \
	  "minps %xmm7, %xmm6; maxss %xmm9, %xmm8; minss 48(%r15), %xmm10; minps %xmm10, %xmm11", \
	  FL_ALL, IN_F32)                                                                   \
	X(sse_compare, "cmpps $0, %xmm1, %xmm0; cmpps $1, %xmm3, %xmm2; cmpps $2, %xmm5, %xmm4;" \
	  "cmpps $3, %xmm7, %xmm6; cmpps $4, %xmm9, %xmm8; cmpps $5, %xmm11, %xmm10;"         \
	  "cmpps $6, %xmm13, %xmm12; cmpss $7, %xmm15, %xmm14", FL_ALL, 0)                    \
	X(sse_comi, "ucomiss %xmm1, %xmm0; setz %al; setp %bl; setc %cl; comiss %xmm3, %xmm2", \
	  FL_ALL, 0)                                                                        \
	X(sse_convert, "cvtsi2ss %rax, %xmm0; cvtsi2ssl %ecx, %xmm1; cvttss2si %xmm2, %rdx;"  \
	  "cvtss2si %xmm3, %rbx; cvttss2si %xmm4, %esi; cvtss2si %xmm5, %edi;"                \
	  "movq (%r15), %mm0; cvtpi2ps %mm0, %xmm6; cvttps2pi %xmm7, %mm1; movq %mm1, 8(%r15);" \
	  "cvtps2pi %xmm8, %mm2; movq %mm2, 16(%r15); emms", FL_ALL, 0)                       \
	X(sse_shuffle_move, "shufps $0x1b, %xmm1, %xmm0; shufps $0xe1, %xmm3, %xmm2;"        \
	  "unpcklps %xmm5, %xmm4; unpckhps %xmm7, %xmm6; movhlps %xmm9, %xmm8;"               \
	  "movlhps %xmm11, %xmm10; movss %xmm13, %xmm12; movss 64(%r15), %xmm13;"             \
	  "movhps 72(%r15), %xmm14; movlps 80(%r15), %xmm15; movhps %xmm1, 88(%r15)", FL_ALL, 0) \
	X(sse_logic_store, "andps %xmm1, %xmm0; andnps %xmm3, %xmm2; orps %xmm5, %xmm4;"     \
	  "xorps %xmm7, %xmm6; movmskps %xmm8, %eax; movaps %xmm9, 96(%r15);"                 \
	  "movups %xmm10, 113(%r15); movups 130(%r15), %xmm11; movss %xmm12, 160(%r15);"      \
	  "movntps %xmm13, 176(%r15); sfence; prefetchnta 256(%r15)", FL_ALL, 0)              \
	X(sse_mxcsr_control, "stmxcsr (%r15); andl $0xffc0, (%r15); movl (%r15), %eax;"     \
	  "xorl $0x6000, (%r15); ldmxcsr (%r15); addps %xmm1, %xmm0; cvtss2si %xmm2, %ecx;"    \
	  "stmxcsr 4(%r15); andl $0xffc0, 4(%r15)", FL_LOGIC, IN_F32)                              \
	X(sse_mmx_integer, "movq (%r15), %mm0; movq 8(%r15), %mm1; mmxop pavgb, 16;"         \
	  "mmxop pavgw, 24; mmxop pmaxsw, 32; mmxop pminub, 40; mmxop pmulhuw, 48;"           \
	  "mmxop psadbw, 56; pshufw $0x1b, %mm1, %mm3; movq %mm3, 64(%r15);"                  \
	  "pextrw $2, %mm0, %eax; pinsrw $1, %ecx, %mm1; movq %mm1, 72(%r15);"                \
	  "pmovmskb %mm0, %edx; movntq %mm0, 80(%r15); lea 96(%r15), %rdi;"                   \
	  "maskmovq %mm1, %mm0; emms", FL_ALL, 0)

#define SSE2_CASES(X)                                                                       \
	X(sse2_arith, "addpd %xmm1, %xmm0; subpd %xmm3, %xmm2; mulpd %xmm5, %xmm4;"         \
	  "divpd %xmm7, %xmm6; addsd %xmm9, %xmm8; subsd %xmm11, %xmm10; mulsd %xmm13, %xmm12;" \
	  "divsd 32(%r15), %xmm14", FL_ALL, IN_F64)                                         \
	X(sse2_sqrt_min_max, "sqrtpd %xmm1, %xmm0; sqrtsd %xmm3, %xmm2; maxpd %xmm5, %xmm4;" \
	  "minpd %xmm7, %xmm6; maxsd %xmm9, %xmm8; minsd 48(%r15), %xmm10; maxpd %xmm10, %xmm11", \
	  FL_ALL, IN_F64)                                                                   \
	X(sse2_compare, "cmppd $0, %xmm1, %xmm0; cmppd $1, %xmm3, %xmm2; cmppd $2, %xmm5, %xmm4;" \
	  "cmppd $3, %xmm7, %xmm6; cmppd $4, %xmm9, %xmm8; cmpsd $5, %xmm11, %xmm10;"         \
	  "cmpsd $6, %xmm13, %xmm12; cmpsd $7, %xmm15, %xmm14", FL_ALL, 0)                    \
	X(sse2_comi, "ucomisd %xmm1, %xmm0; setz %al; setp %bl; setc %cl; comisd %xmm3, %xmm2", \
	  FL_ALL, 0)                                                                        \
	X(sse2_convert_scalar, "cvtsd2ss %xmm1, %xmm0; cvtss2sd %xmm3, %xmm2;"              \
	  "cvtsi2sd %rax, %xmm4; cvtsi2sdl %ecx, %xmm5; cvttsd2si %xmm6, %rdx;"               \
	  "cvtsd2si %xmm7, %rbx; cvttsd2si %xmm8, %esi; cvtsd2si %xmm9, %edi;"                \
	  "cvtsd2ss 8(%r15), %xmm10", FL_ALL, 0)                                            \
	X(sse2_convert_packed, "cvtdq2pd %xmm1, %xmm0; cvtpd2dq %xmm3, %xmm2;"              \
	  "cvttpd2dq %xmm5, %xmm4; cvtdq2ps %xmm7, %xmm6; cvtps2dq %xmm9, %xmm8;"             \
	  "cvttps2dq %xmm11, %xmm10; cvtpd2ps %xmm13, %xmm12; cvtps2pd %xmm15, %xmm14;"       \
	  "movq (%r15), %mm0; cvtpi2pd %mm0, %xmm1; cvtpd2pi %xmm3, %mm1; movq %mm1, 8(%r15);" \
	  "cvttpd2pi %xmm5, %mm2; movq %mm2, 16(%r15); emms", FL_ALL, 0)                      \
	X(sse2_int_arith, "xmmop paddb, 16; xmmop paddw, 32; xmmop paddd, 48; xmmop paddq, 64;" \
	  "xmmop psubq, 80; xmmop paddsb, 96; xmmop paddusw, 112; xmmop psubsw, 128;"          \
	  "xmmop pmullw, 144; xmmop pmulhw, 160; xmmop pmulhuw, 176; xmmop pmuludq, 192;"      \
	  "xmmop pmaddwd, 208; xmmop psadbw, 224; xmmop pavgb, 240; xmmop psubusb, 256",      \
	  FL_ALL, 0)                                                                        \
	X(sse2_int_compare_logic, "xmmop pcmpeqb, 16; xmmop pcmpgtw, 32; xmmop pcmpgtd, 48;" \
	  "xmmop pand, 64; xmmop pandn, 80; xmmop por, 96; xmmop pxor, 112; xmmop pmaxsw, 128;" \
	  "xmmop pminub, 144; xmmop pcmpeqd, 160; pmovmskb %xmm0, %eax; movmskpd %xmm1, %ecx", \
	  FL_ALL, 0)                                                                        \
	X(sse2_shift, "xmmop psllw, 16; xmmop psrld, 32; xmmop psraw, 48; xmmop psrlq, 64;" \
	  "xmmop psllq, 80; xmmop psrad, 96; psllw $3, %xmm3; psrld $17, %xmm4;"              \
	  "psraw $15, %xmm5; psrlq $40, %xmm6; pslldq $5, %xmm7; psrldq $11, %xmm8;"           \
	  "psrad $40, %xmm9", FL_ALL, 0)                                                    \
	X(sse2_pack_shuffle, "xmmop packsswb, 16; xmmop packuswb, 32; xmmop packssdw, 48;"  \
	  "xmmop punpcklbw, 64; xmmop punpckhwd, 80; xmmop punpckldq, 96;"                   \
	  "xmmop punpckhqdq, 112; xmmop punpcklqdq, 128; pshufd $0x1b, %xmm3, %xmm4;"         \
	  "pshuflw $0xd2, %xmm5, %xmm6; pshufhw $0x39, %xmm7, %xmm8; shufpd $1, %xmm9, %xmm10;" \
	  "unpcklpd %xmm11, %xmm12; unpckhpd %xmm13, %xmm14", FL_ALL, 0)                      \
	X(sse2_move, "movd %eax, %xmm0; movd %xmm1, %ecx; movq %xmm2, %rdx; movq %rbx, %xmm3;" \
	  "movq %xmm4, %xmm5; movdqa 16(%r15), %xmm6; movdqu 33(%r15), %xmm7;"                \
	  "movsd %xmm8, %xmm9; movsd 56(%r15), %xmm10; movhpd 64(%r15), %xmm11;"              \
	  "movlpd 72(%r15), %xmm12; pextrw $5, %xmm13, %esi; pinsrw $3, %edi, %xmm14;"         \
	  "movdqu %xmm15, 81(%r15); movntdq %xmm1, 112(%r15); movnti %r8, 128(%r15);"          \
	  "movq (%r15), %mm0; movq2dq %mm0, %xmm4; movdq2q %xmm6, %mm1; movq %mm1, 136(%r15);" \
	  "lea 160(%r15), %rdi; maskmovdqu %xmm2, %xmm1; lfence; mfence; pause; emms", FL_ALL, 0)

/* ---- claimed: leaf 1 ecx ---- */

/* fisttp of in-range values: quotients a / (|b| + 1) of integers of the target width,
 * divided at full precision (a single-precision quotient can round up out of range) */
#define SSE3_CASES(X)                                                                       \
	X(sse3_horizontal_single, "addsubps %xmm1, %xmm0; haddps %xmm5, %xmm4;"             \
	  "hsubps %xmm9, %xmm8; haddps 32(%r15), %xmm12", FL_ALL, IN_F32)                     \
	X(sse3_horizontal_double, "addsubpd %xmm3, %xmm2; haddpd %xmm7, %xmm6;"             \
	  "hsubpd %xmm11, %xmm10; hsubpd 48(%r15), %xmm13", FL_ALL, IN_F64)                   \
	X(sse3_move, "movddup %xmm1, %xmm0; movddup 8(%r15), %xmm2; movshdup %xmm3, %xmm4;"  \
	  "movsldup %xmm5, %xmm6; movshdup 16(%r15), %xmm7; lddqu 37(%r15), %xmm8", FL_ALL, 0) \
	X(sse3_fisttp_in_range, "fldcw_const 0x37f; fildl (%r15); fildl 8(%r15); fabs; fld1;" \
	  "faddp; fdivrp;"                                                                    \
	  "fld %st(0); fisttpl 16(%r15); fisttpll 24(%r15); filds 32(%r15); filds 40(%r15);"    \
	  "fabs; fld1; faddp; fdivrp; fisttps 48(%r15)", FL_ALL, 0)

#define SSSE3_CASES(X)                                                                      \
	X(ssse3_shuffle_align, "xmmop pshufb, 16; palignr $0, %xmm3, %xmm4;"                \
	  "palignr $5, %xmm5, %xmm6; palignr $16, %xmm7, %xmm8; palignr $21, %xmm9, %xmm10;"   \
	  "palignr $33, %xmm11, %xmm12; pshufb 32(%r15), %xmm13", FL_ALL, 0)                  \
	X(ssse3_horizontal, "xmmop phaddw, 16; xmmop phaddd, 32; xmmop phaddsw, 48;"        \
	  "xmmop phsubw, 64; xmmop phsubd, 80; xmmop phsubsw, 96", FL_ALL, 0)                 \
	X(ssse3_mul_sign_abs, "xmmop pmaddubsw, 16; xmmop pmulhrsw, 32; xmmop psignb, 48;"   \
	  "xmmop psignw, 64; xmmop psignd, 80; pabsb %xmm3, %xmm4; pabsw %xmm5, %xmm6;"        \
	  "pabsd %xmm7, %xmm8", FL_ALL, 0)                                                  \
	X(ssse3_mmx, "movq (%r15), %mm0; movq 8(%r15), %mm1; mmxop pshufb, 16;"              \
	  "mmxop phaddw, 24; mmxop pmaddubsw, 32; mmxop pmulhrsw, 40; mmxop psignb, 48;"       \
	  "pabsw %mm1, %mm3; movq %mm3, 56(%r15); palignr $3, %mm1, %mm0; movq %mm0, 64(%r15);" \
	  "emms", FL_ALL, 0)

#define CX16_CASES(X)                                                                       \
	X(cmpxchg16b_equal, "mov (%r15), %rax; mov 8(%r15), %rdx; lock cmpxchg16b (%r15)",   \
	  FL_ALL, 0)                                                                        \
	X(cmpxchg16b_random, "lock cmpxchg16b 16(%r15)", FL_ALL, 0)

#define AES_CASES(X)                                                                        \
	X(aes_rounds, "aesenc %xmm1, %xmm0; aesenclast %xmm3, %xmm2; aesdec %xmm5, %xmm4;"  \
	  "aesdeclast %xmm7, %xmm6; aesenc 16(%r15), %xmm8", FL_ALL, 0)                       \
	X(aes_key, "aesimc %xmm1, %xmm0; aeskeygenassist $0x01, %xmm3, %xmm2;"             \
	  "aeskeygenassist $0x1b, %xmm5, %xmm4; aeskeygenassist $0x36, %xmm7, %xmm6", FL_ALL, 0)

/* ---- claimed: leaf 7 ebx ---- */

#define ADX_CASES(X)                                                                        \
	X(adcx_adox, "adcx %rcx, %rax; adox %rdx, %rbx; adcx %esi, %edi; adox %r8d, %r9d;"    \
	  "adcx 8(%r15), %r10", FL_ALL, 0)

/* ---- claimed: leaf 0x80000001 ---- */

#define LAHF_CASES(X) X(lahf_sahf, "sahf; lahf; mov %eax, %ebx; mov %ch, %ah; sahf", FL_ALL, 0)

#define LZCNT_CASES(X)                                                                      \
	X(lzcnt, "lzcnt %rcx, %rax; lzcnt %dx, %bx; lzcnt %esi, %edi", FL_CF | FL_ZF, 0)      \
	X(lzcnt_memory, "lzcnt 8(%r15), %r8", FL_CF | FL_ZF, 0)

#define RDTSCP_CASES(X) X(rdtscp, "rdtscp", FL_ALL, IGN_RAX | IGN_RCX | IGN_RDX)

/* bsf/bsr leave the destination undefined for a zero source: cmovz makes it the source */
#define LM_CASES(X)                                                                         \
	X(lm_add_sub, "add %rcx, %rax; adc %rdx, %rbx; sbb %rsi, %rdi; sub 8(%r15), %r8;"     \
	  "neg %r9; inc %r10; dec %r11d; cmp %r12, %r13", FL_ALL, 0)                          \
	X(lm_mul, "mov %rdi, %rax; mulq %rsi; imul %rcx, %rbx; imul $0x12345, %r8, %r9",     \
	  FL_CF | FL_OF, 0)                                                                 \
	X(lm_imul_wide, "mov %rdi, %rax; imulq %rsi", FL_CF | FL_OF, 0)                       \
	X(lm_div, "mov %rsi, %rcx; or $1, %rcx; xor %edx, %edx; mov %rdi, %rax; div %rcx;"    \
	  "mov %rax, %r8; mov %r9, %rax; and $0xffff, %rbx; or $2, %rbx; cqo; idiv %rbx", 0, 0) \
	X(lm_shift, "shl %cl, %rax; shr %cl, %rdx; sar %cl, %rbx; shl $7, %rsi; sar $63, %rdi;" \
	  "shr %cl, %r8d", FL_CF | FL_ZF | FL_SF | FL_PF, 0)                                  \
	X(lm_rotate, "rol %cl, %rax; ror $13, %rdx; rcl %cl, %rbx; rcr $1, %rsi; rol $1, %rdi", \
	  FL_CF | FL_OF, 0)                                                                 \
	X(lm_double_shift, "shld %cl, %rdx, %rax; shrd $17, %rsi, %rbx; shrd %cl, %r8, %rdi", \
	  FL_CF | FL_ZF | FL_SF | FL_PF, 0)                                                   \
	X(lm_bit_test, "bt %rcx, %rax; bts $63, %rdx; btr %rsi, %rbx; btc $5, %rdi;"          \
	  "btsq $70, 8(%r15)", FL_CF | FL_ZF, 0)                                            \
	X(lm_bit_scan, "bsf %rcx, %rax; cmovz %rcx, %rax; bsr %rdx, %rbx; cmovz %rdx, %rbx;"  \
	  "bsf %esi, %edi; cmovz %esi, %edi", FL_ZF, 0)                                       \
	X(lm_misc, "movslq %ecx, %rax; cqo; bswap %rbx; xadd %rsi, %rdi;"                     \
	  "movabs $0x123456789abcdef0, %r8; lea 8(%rax,%rcx,4), %r9; xchg %r10, %r11;"         \
	  "cmpxchg %r12, %r13", FL_ALL, 0)                                                  \
	X(lm_setcc_extend, "setb %al; setl %bl; seto %cl; setp %dl; movzbl %al, %esi;"        \
	  "movsbq %bl, %rdi; movzwq %cx, %r8; movswl %dx, %r9d; cmovg %r10, %r11", FL_ALL, 0) \
	X(lm_string, "lea 256(%r15), %rdi; lea 512(%r15), %rsi; mov $37, %ecx; rep movsb;"    \
	  "lea 1024(%r15), %rdi; mov $9, %ecx; rep stosq; lea 256(%r15), %rdi;"                \
	  "lea 512(%r15), %rsi; mov $40, %ecx; repe cmpsb", FL_ALL, 0)

/* ---- gaps of claimed features (evidence only) ---- */

#define GAP_X87_BINARY64_CASES(X)                                                            \
	X(gap_fprem, "fldl 8(%r15); fldl (%r15); fprem; fstpt 16(%r15); fstp %st(0);"        \
	  "fldl 40(%r15); fldl 32(%r15); fprem1; fstpt 48(%r15); fstp %st(0)", FL_ALL, 0)      \
	X(gap_fscale_fxtract, "fldl 8(%r15); fldl (%r15); fscale; fstpt 16(%r15);"           \
	  "fstp %st(0); fldl 32(%r15); fxtract; fstpt 48(%r15); fstpt 64(%r15)", FL_ALL, 0)    \
	X(gap_fsin_fcos, "fldl (%r15); fsin; fstpt 16(%r15); fldl 8(%r15); fcos;"           \
	  "fstpt 32(%r15); fldl 48(%r15); fsincos; fstpt 64(%r15); fstpt 80(%r15)", FL_ALL, 0) \
	X(gap_fptan_fpatan, "fldl (%r15); fptan; fstpt 16(%r15); fstpt 32(%r15);"           \
	  "fldl 48(%r15); fldl 56(%r15); fpatan; fstpt 64(%r15)", FL_ALL, 0)                  \
	X(gap_f2xm1_fyl2x, "fldl (%r15); f2xm1; fstpt 16(%r15); fldl 32(%r15);"             \
	  "fldl 40(%r15); fyl2x; fstpt 48(%r15); fldl 64(%r15); fldl 72(%r15); fyl2xp1;"       \
	  "fstpt 80(%r15)", FL_ALL, 0)

#define GAP_X87_OTHER_CASES(X)                                                               \
	X(gap_x87_constants_directed_rounding, "fldpi; fstpt 16(%r15); fldl2e; fstpt 32(%r15);" \
	  "fldln2; fstpt 48(%r15); fldlg2; fstpt 64(%r15)", FL_ALL, 0)                       \
	X(gap_ftst_c1, "fldl (%r15); fxam; ftst; fnstsw %ax; fstp %st(0);"                  \
	  "and $0x4700, %eax", FL_LOGIC, 0)                                                 \
	X(gap_x87_exception_flags, "fldl (%r15); fdivl 8(%r15); fstp %st(0); fnstsw %ax;"   \
	  "and $0x3f, %eax", FL_LOGIC, 0)                                                   \
	X(gap_noncanonical_80bit, "fldt (%r15); fldt 16(%r15); faddp; fstpt 32(%r15)",       \
	  FL_ALL, 0)                                                                        \
	X(gap_x87_signalling_nan_loads, "fldl (%r15); fstpl 16(%r15); flds 8(%r15);"         \
	  "fstps 24(%r15); fldl 32(%r15); fstpt 48(%r15)", FL_ALL, 0)                         \
	X(gap_x87_under_mxcsr_fz, "ldmxcsr_const 0x9f80; fldl (%r15); fmull 8(%r15);"       \
	  "fstpl 16(%r15)", FL_ALL, 0)                                                      \
	X(gap_fcomi_os_flags, "fldl 8(%r15); fldl (%r15); fcomip %st(1), %st; fstp %st(0)",  \
	  FL_ALL, 0)

#define GAP_FXSR_CASES(X)                                                                   \
	X(gap_fxsave_reserved_bytes, "fldl (%r15); fxsave 512(%r15); fstp %st(0);"          \
	  FXSR_NORMALIZE, FL_LOGIC, 0)

#define GAP_SSE_CASES(X)                                                                    \
	X(gap_nan_pairs_single, "addps %xmm1, %xmm0; subps %xmm3, %xmm2; mulps %xmm5, %xmm4;" \
	  "divps %xmm7, %xmm6; maxps %xmm9, %xmm8; haddps %xmm11, %xmm10", FL_ALL, 0)        \
	X(gap_nan_pairs_double, "addpd %xmm1, %xmm0; subpd %xmm3, %xmm2; mulpd %xmm5, %xmm4;" \
	  "dppd $0x31, %xmm7, %xmm6", FL_ALL, 0)                                             \
	X(gap_mxcsr_fz, "ldmxcsr_const 0x9f80; mulps %xmm1, %xmm0; mulpd %xmm3, %xmm2;"     \
	  "divss %xmm5, %xmm4", FL_ALL, 0)                                                  \
	X(gap_mxcsr_daz, "ldmxcsr_const 0x1fc0; addps %xmm1, %xmm0; maxps %xmm3, %xmm2;"    \
	  "minpd %xmm5, %xmm4; cvtss2sd %xmm7, %xmm6", FL_ALL, 0)                            \
	X(gap_mxcsr_exception_flags, "addps %xmm1, %xmm0; divpd %xmm3, %xmm2;"              \
	  "cvttsd2si %xmm4, %eax; stmxcsr (%r15)", FL_ALL, 0)                                 \
	X(gap_approximate_reciprocals, "rcpps %xmm1, %xmm0; rsqrtps %xmm3, %xmm2;"          \
	  "rcpss %xmm5, %xmm4; rsqrtss %xmm7, %xmm6", FL_ALL, 0)

#define GAP_SSE3_CASES(X)                                                                   \
	X(gap_fisttp_out_of_range, "fldl (%r15); fisttpll 16(%r15); fldl 8(%r15);"          \
	  "fisttpl 24(%r15); fldl 32(%r15); fisttps 40(%r15)", FL_ALL, 0)

/* ---- candidates: left out of the model (evidence only) ---- */

#define BMI1_CASES(X)                                                                       \
	X(andn, "andn %rdx, %rcx, %rax; andn %esi, %edi, %ebx", FL_CF | FL_ZF | FL_SF | FL_OF, 0) \
	X(bextr, "bextr %rcx, %rdx, %rax; bextr %esi, 8(%r15), %ebx", FL_CF | FL_ZF | FL_OF, 0) \
	X(blsi, "blsi %rcx, %rax; blsi %edx, %ebx", FL_CF | FL_ZF | FL_SF | FL_OF, 0)          \
	X(blsmsk, "blsmsk %rcx, %rax; blsmsk %edx, %ebx", FL_CF | FL_ZF | FL_SF | FL_OF, 0)    \
	X(blsr, "blsr %rcx, %rax; blsr 8(%r15), %ebx", FL_CF | FL_ZF | FL_SF | FL_OF, 0)       \
	X(tzcnt, "tzcnt %rcx, %rax; tzcnt %dx, %bx; tzcnt %esi, %edi", FL_CF | FL_ZF, 0)

#define BMI2_CASES(X)                                                                       \
	X(pdep, "pdep %rdx, %rcx, %rax; pdep %esi, %edi, %ebx", FL_ALL, 0)                    \
	X(pext, "pext %rdx, %rcx, %rax; pext %esi, %edi, %ebx", FL_ALL, 0)                    \
	X(bzhi, "bzhi %rdx, %rcx, %rax", FL_CF | FL_ZF | FL_SF | FL_OF, 0)                    \
	X(mulx_rorx_shifts, "mulx %rcx, %rbx, %rsi; rorx $13, %rdi, %r8; sarx %rcx, %r9, %r10;" \
	  "shlx %rdx, %r11, %r12; shrx %ecx, %r13d, %r14d", FL_ALL, 0)

#define SSE41_CASES(X)                                                                      \
	X(sse41_blend, "blendps $5, %xmm1, %xmm2; blendpd $1, %xmm3, %xmm4;"                \
	  "pblendw $0xa5, %xmm5, %xmm6; blendvps %xmm0, %xmm7, %xmm8;"                        \
	  "blendvpd %xmm0, %xmm9, %xmm10; pblendvb %xmm0, %xmm11, %xmm12", FL_ALL, 0)         \
	X(sse41_round, "roundps $0, %xmm1, %xmm0; roundps $1, %xmm3, %xmm2;"                \
	  "roundpd $2, %xmm5, %xmm4; roundpd $3, %xmm7, %xmm6; roundss $4, %xmm9, %xmm8;"      \
	  "roundsd $9, %xmm11, %xmm10; roundsd $12, %xmm13, %xmm12; roundss $10, 16(%r15), %xmm14", \
	  FL_ALL, 0)                                                                        \
	X(sse41_dot_product_single, "dpps $0xff, %xmm1, %xmm0; dpps $0x71, %xmm3, %xmm2;"    \
	  "dpps $0xa5, %xmm5, %xmm4", FL_ALL, IN_F32)                                       \
	X(sse41_dot_product_double, "dppd $0x31, %xmm7, %xmm6; dppd $0xff, %xmm9, %xmm8;"    \
	  "dppd $0x12, %xmm11, %xmm10", FL_ALL, IN_F64)                                      \
	X(sse41_insert_extract, "insertps $0x1d, %xmm1, %xmm0; insertps $0xc2, %xmm3, %xmm2;" \
	  "insertps $0x40, 16(%r15), %xmm4; extractps $2, %xmm5, %eax; pextrb $13, %xmm6, %ecx;" \
	  "pextrd $3, %xmm7, %edx; pextrq $1, %xmm8, %rbx; pinsrb $9, %esi, %xmm9;"            \
	  "pinsrd $2, %edi, %xmm10; pinsrq $1, %r8, %xmm11; pextrw $6, %xmm12, 32(%r15);"      \
	  "pextrb $1, %xmm13, 40(%r15)", FL_ALL, 0)                                          \
	X(sse41_integer, "xmmop pmulld, 16; xmmop pmuldq, 32; xmmop pminsb, 48;"            \
	  "xmmop pminsd, 64; xmmop pminuw, 80; xmmop pminud, 96; xmmop pmaxsb, 112;"          \
	  "xmmop pmaxsd, 128; xmmop pmaxuw, 144; xmmop pmaxud, 160; xmmop pcmpeqq, 176;"      \
	  "xmmop packusdw, 192; phminposuw %xmm3, %xmm4; mpsadbw $0, %xmm5, %xmm6;"           \
	  "mpsadbw $5, %xmm7, %xmm8; mpsadbw $2, 48(%r15), %xmm9", FL_ALL, 0)                 \
	X(sse41_extend, "pmovsxbw %xmm1, %xmm0; pmovsxbd %xmm3, %xmm2; pmovsxbq %xmm5, %xmm4;" \
	  "pmovsxwd %xmm7, %xmm6; pmovsxwq %xmm9, %xmm8; pmovsxdq %xmm11, %xmm10;"             \
	  "pmovzxbw %xmm13, %xmm12; pmovzxbd %xmm15, %xmm14; pmovzxbq 8(%r15), %xmm1;"         \
	  "pmovzxwd 16(%r15), %xmm3; pmovzxwq %xmm5, %xmm7; pmovzxdq 24(%r15), %xmm9;"         \
	  "movntdqa 64(%r15), %xmm11", FL_ALL, 0)                                           \
	X(sse41_ptest, "ptest %xmm1, %xmm0; setz %al; setc %cl; ptest %xmm2, %xmm2",         \
	  FL_ALL, 0)

#define SSE42_CASES(X)                                                                      \
	X(pcmpistri_tail_partial_match, "movabs $0x6867666564636261, %rax; movq %rax, %xmm1;" \
	  "movabs $0x706f6e6d6c6b6a69, %rax; pinsrq $1, %rax, %xmm1; mov $0x7170, %eax;"       \
	  "movq %rax, %xmm0; pcmpistri $0x0c, %xmm1, %xmm0", FL_ALL, 0)                       \
	X(pcmpistri_ordered_msb, "pcmpistri $0x4c, %xmm1, %xmm0", FL_ALL, 0)                \
	X(pcmpistri_equal_any, "pcmpistri $0x00, %xmm1, %xmm0", FL_ALL, 0)                 \
	X(pcmpistri_ranges, "pcmpistri $0x04, %xmm1, %xmm0", FL_ALL, 0)                     \
	X(pcmpistri_equal_each_negated, "pcmpistri $0x18, %xmm1, %xmm0", FL_ALL, 0)         \
	X(pcmpistrm_mask, "pcmpistrm $0x40, %xmm1, %xmm2", FL_ALL, 0)                       \
	X(pcmpestri_ordered, "pcmpestri $0x0c, %xmm1, %xmm0", FL_ALL, 0)                    \
	X(pcmpestri_masked_negated, "pcmpestri $0x7a, %xmm1, %xmm0", FL_ALL, 0)             \
	X(crc32, "crc32b %cl, %eax; crc32w %dx, %ebx; crc32l %esi, %edi; crc32q %r8, %r9;"   \
	  "crc32b (%r15), %r10d; crc32q 8(%r15), %r11", FL_ALL, 0)                           \
	X(pcmpgtq, "pcmpgtq %xmm1, %xmm0; pcmpgtq 16(%r15), %xmm2", FL_ALL, 0)

#define POPCNT_CASES(X) X(popcnt, "popcnt %rax, %rcx; popcnt %edx, %ebx; popcnt %si, %di", FL_ALL, 0)

#define PCLMUL_CASES(X)                                                                     \
	X(pclmulqdq, "pclmulqdq $0x00, %xmm1, %xmm0; pclmulqdq $0x11, %xmm3, %xmm2", FL_ALL, 0)

#define AVX_CASES(X)                                                                        \
	X(avx_three_operand_float, "vaddps %xmm2, %xmm1, %xmm0; vmulpd %xmm5, %xmm4, %xmm3;"  \
	  "vsubss %xmm8, %xmm7, %xmm6; vdivsd %xmm11, %xmm10, %xmm9", FL_ALL, 0)               \
	X(avx_three_operand_integer, "vpaddd %xmm2, %xmm1, %xmm0; vpxor %xmm5, %xmm4, %xmm3;" \
	  "vpshufb %xmm8, %xmm7, %xmm6; vpunpcklbw %xmm11, %xmm10, %xmm9", FL_ALL, 0)          \
	X(avx_256, "vaddps %ymm1, %ymm2, %ymm3; vmovups %ymm3, 64(%r15);"                     \
	  "vxorps %ymm4, %ymm5, %ymm6; vmovups %ymm6, 128(%r15); vzeroupper", FL_ALL, 0)

#define FMA_CASES(X)                                                                        \
	X(fma, "vfmadd231sd %xmm2, %xmm1, %xmm0; vfmadd132ps %xmm5, %xmm4, %xmm3;"           \
	  "vfnmsub213pd %xmm8, %xmm7, %xmm6", FL_ALL, 0)

#define F16C_CASES(X)                                                                       \
	X(f16c, "vcvtph2ps %xmm1, %xmm0; vcvtps2ph $0, %xmm2, %xmm3; vcvtps2ph $4, %xmm4, %xmm5", \
	  FL_ALL, 0)

#define MOVBE_CASES(X)                                                                      \
	X(movbe, "movbe (%r15), %rax; movbe %rcx, 8(%r15); movbe 16(%r15), %bx;"              \
	  "movbe 24(%r15), %edx", FL_ALL, 0)

#define SSE4A_CASES(X)                                                                      \
	X(sse4a, "extrq $8, $4, %xmm0; insertq $8, $4, %xmm1, %xmm2; extrq %xmm3, %xmm4;"     \
	  "movntsd %xmm5, 64(%r15)", FL_ALL, 0)

#define AMD3DNOW_CASES(X)                                                                   \
	X(amd3dnow, "movq (%r15), %mm0; movq 8(%r15), %mm1; mmxop pfadd, 16;"                 \
	  "mmxop pfmul, 24; femms", FL_ALL, 0)

CASES(FPU_CASES, fpu_cases)
CASES(TSC_CASES, tsc_cases)
CASES(CX8_CASES, cx8_cases)
CASES(CMOV_CASES, cmov_cases)
CASES(CLFSH_CASES, clfsh_cases)
CASES(MMX_CASES, mmx_cases)
CASES(FXSR_CASES, fxsr_cases)
CASES(SSE_CASES, sse_cases)
CASES(SSE2_CASES, sse2_cases)
CASES(SSE3_CASES, sse3_cases)
CASES(SSSE3_CASES, ssse3_cases)
CASES(CX16_CASES, cx16_cases)
CASES(SSE41_CASES, sse41_cases)
CASES(AES_CASES, aes_cases)
CASES(ADX_CASES, adx_cases)
CASES(LAHF_CASES, lahf_cases)
CASES(LZCNT_CASES, lzcnt_cases)
CASES(RDTSCP_CASES, rdtscp_cases)
CASES(LM_CASES, lm_cases)
CASES(GAP_X87_BINARY64_CASES, gap_x87_binary64_cases)
CASES(GAP_X87_OTHER_CASES, gap_x87_other_cases)
CASES(GAP_FXSR_CASES, gap_fxsr_cases)
CASES(GAP_SSE_CASES, gap_sse_cases)
CASES(GAP_SSE3_CASES, gap_sse3_cases)
CASES(BMI1_CASES, bmi1_cases)
CASES(BMI2_CASES, bmi2_cases)
CASES(SSE42_CASES, sse42_cases)
CASES(POPCNT_CASES, popcnt_cases)
CASES(PCLMUL_CASES, pclmul_cases)
CASES(AVX_CASES, avx_cases)
CASES(FMA_CASES, fma_cases)
CASES(F16C_CASES, f16c_cases)
CASES(MOVBE_CASES, movbe_cases)
CASES(SSE4A_CASES, sse4a_cases)
CASES(AMD3DNOW_CASES, amd3dnow_cases)

static const struct feature_test claimed[] = {
	FEATURE("FPU", 1, CC_CPUID_EDX, 0, fpu_cases),
	FEATURE("TSC", 1, CC_CPUID_EDX, 4, tsc_cases),
	FEATURE("CX8", 1, CC_CPUID_EDX, 8, cx8_cases),
	FEATURE("CMOV", 1, CC_CPUID_EDX, 15, cmov_cases),
	FEATURE("CLFSH", 1, CC_CPUID_EDX, 19, clfsh_cases),
	FEATURE("MMX", 1, CC_CPUID_EDX, 23, mmx_cases),
	FEATURE("FXSR", 1, CC_CPUID_EDX, 24, fxsr_cases),
	FEATURE("SSE", 1, CC_CPUID_EDX, 25, sse_cases),
	FEATURE("SSE2", 1, CC_CPUID_EDX, 26, sse2_cases),
	FEATURE("SSE3", 1, CC_CPUID_ECX, 0, sse3_cases),
	FEATURE("SSSE3", 1, CC_CPUID_ECX, 9, ssse3_cases),
	FEATURE("CX16", 1, CC_CPUID_ECX, 13, cx16_cases),
	FEATURE("AES", 1, CC_CPUID_ECX, 25, aes_cases),
	FEATURE("ADX", 7, CC_CPUID_EBX, 19, adx_cases),
	FEATURE("LAHF_LM", 0x80000001, CC_CPUID_ECX, 0, lahf_cases),
	FEATURE("LZCNT", 0x80000001, CC_CPUID_ECX, 5, lzcnt_cases),
	FEATURE("RDTSCP", 0x80000001, CC_CPUID_EDX, 27, rdtscp_cases),
	FEATURE("LM", 0x80000001, CC_CPUID_EDX, 29, lm_cases),
};

static const struct feature_test gaps[] = {
	EVIDENCE("FPU", 1, CC_CPUID_EDX, 0, gap_x87_binary64_cases, 0,
		 "claimed (x86-64 baseline); QEMU 5.0 computes these through binary64, so 80-bit "
		 "results, NaNs and edge cases differ: long double libm (expl, fmodl, sinl...)"),
	EVIDENCE("FPU", 1, CC_CPUID_EDX, 0, gap_x87_other_cases, 0,
		 "claimed (x86-64 baseline); constants ignore directed rounding, C1 and exception "
		 "flags are not maintained, loads keep signalling NaNs signalling, pseudo-denormals "
		 "and unnormals are taken as they are, MXCSR.FZ flushes x87 results, fcomi keeps "
		 "OF/SF/AF"),
	EVIDENCE("FXSR", 1, CC_CPUID_EDX, 24, gap_fxsr_cases, 0,
		 "claimed (x86-64 baseline); fxsave leaves bytes 10-15 of each x87 slot unwritten"),
	EVIDENCE("SSE", 1, CC_CPUID_EDX, 25, gap_sse_cases, 0,
		 "claimed (x86-64 baseline); two NaN operands give the larger-significand NaN, not "
		 "the first; MXCSR.FZ is applied to x87 instead, DAZ not to min/max; exception flags "
		 "are never set; rcp/rsqrt are exact, the CPU's approximate"),
	EVIDENCE("SSE3", 1, CC_CPUID_ECX, 0, gap_sse3_cases, 0,
		 "claimed (numpy needs it); fisttp of NaN or out-of-range values stores the largest "
		 "integer instead of the integer indefinite"),
};

static const struct feature_test candidates[] = {
	EVIDENCE("BMI1", 7, CC_CPUID_EBX, 3, bmi1_cases, 0, "blsi sets CF inverted"),
	EVIDENCE("BMI2", 7, CC_CPUID_EBX, 8, bmi2_cases, 0, "pdep/pext/bzhi compute wrong results"),
	EVIDENCE("SSE4_1", 1, CC_CPUID_ECX, 19, sse41_cases, 0,
		 "dpps/dppd add the products one by one to +0 (the CPU: pairwise), so rounding and "
		 "the sign of zero differ"),
	EVIDENCE("SSE4_2", 1, CC_CPUID_ECX, 20, sse42_cases, 0,
		 "pcmpXstrX equal-ordered misses partial matches at the end of the haystack"),
	EVIDENCE("POPCNT", 1, CC_CPUID_ECX, 23, popcnt_cases, 0, "the simulator raises #UD"),
	EVIDENCE("PCLMULQDQ", 1, CC_CPUID_ECX, 1, pclmul_cases, 0, "the simulator raises #UD"),
	EVIDENCE("AVX", 1, CC_CPUID_ECX, 28, avx_cases, 1,
		 "VEX three-operand forms ignore a source; no 256-bit state"),
	EVIDENCE("FMA", 1, CC_CPUID_ECX, 12, fma_cases, 1, "needs AVX"),
	EVIDENCE("F16C", 1, CC_CPUID_ECX, 29, f16c_cases, 1, "needs AVX"),
	EVIDENCE("MOVBE", 1, CC_CPUID_ECX, 22, movbe_cases, 0, "not in the simulator's own model"),
	EVIDENCE("SSE4A", 0x80000001, CC_CPUID_ECX, 6, sse4a_cases, 0, "AMD only"),
	EVIDENCE("3DNOW", 0x80000001, CC_CPUID_EDX, 31, amd3dnow_cases, 0,
		 "no CPU since 2011 has it, so nothing can check the simulator's"),
};
