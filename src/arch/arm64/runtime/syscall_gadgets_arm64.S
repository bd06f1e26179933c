/* Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0 */
/*
 * The arm64 counterparts of syscall_gadgets_x86_64.S (see there for what
 * they are for): the dispatch's restorer, rt_sigreturn itself, and
 * kCloneGadgetCount copies of `svc #0; brk #0x6470`, whose trap reports
 * the brk's own address (arch::kCloneGadgetTrapOffset).
 */
	.text

	.globl	dprobe_dispatch_restorer
	.hidden	dprobe_dispatch_restorer
	.type	dprobe_dispatch_restorer, %function
	.p2align 4
dprobe_dispatch_restorer:
	mov	x8, #139		/* __NR_rt_sigreturn */
	svc	#0
	udf	#0
	.size	dprobe_dispatch_restorer, .-dprobe_dispatch_restorer

	.globl	dprobe_clone_gadgets
	.hidden	dprobe_clone_gadgets
	.globl	dprobe_clone_gadgets_end
	.hidden	dprobe_clone_gadgets_end
	.p2align 4
dprobe_clone_gadgets:
	.rept	64			/* kCloneGadgetCount */
	svc	#0
	brk	#0x6470
	.endr
dprobe_clone_gadgets_end:

	/* No rewritten system call sites on arm64: no room for their gadgets. */
	.globl	dprobe_site_gadgets
	.hidden	dprobe_site_gadgets
	.globl	dprobe_site_gadgets_end
	.hidden	dprobe_site_gadgets_end
dprobe_site_gadgets:
dprobe_site_gadgets_end:

	.section .note.GNU-stack, "", %progbits
