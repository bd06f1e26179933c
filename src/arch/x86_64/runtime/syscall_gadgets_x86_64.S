/* Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0 */

/*
 * The few instructions Syscall User Dispatch needs inside the agent's own
 * text (agent/syscall_dispatch.h), where a system call is never sent back
 * as SIGSYS:
 *
 * dprobe_dispatch_restorer: the SIGSYS handler's return (and that of any
 *   handler whose rt_sigreturn the dispatch caught): rt_sigreturn itself.
 *
 * dprobe_clone_gadgets: kCloneGadgetCount copies of `syscall; int3; nop`.
 *   clone, clone3, fork and vfork cannot run inside the SIGSYS handler (the
 *   child would start in the handler's frame, on a stack it does not own),
 *   so the handler sends the thread to one of these with the program's
 *   registers unchanged: the call runs there, in the program's own context,
 *   and the int3 brings parent and child each to the agent's SIGTRAP
 *   handler, which records the return and sends it back where the call was
 *   made. One gadget per call site, so the way back is a table lookup.
 *
 * dprobe_site_gadgets: room for the rewritten sites' gadgets (two of 16
 *   bytes per site: `syscall; jmp *0(%rip); .quad <back>`, back to its
 *   trampoline's exit call, and straight back after the site), written
 *   by the registry at run time. A call made here is let through by the
 *   kernel without a read of the thread's selector, which a call made from
 *   the trampoline itself costs (about 45 ns here).
 */

	.text

	.globl	dprobe_dispatch_restorer
	.hidden	dprobe_dispatch_restorer
	.type	dprobe_dispatch_restorer, @function
	.p2align 4
	/* An unwinder looks for the frame's unwind information at the return
	 * address less one: this byte, which none covers (as the C library's
	 * restorer has its nop), so that it falls back to the bytes below. */
	nop
dprobe_dispatch_restorer:
	/* No CFI and no endbr: only the kernel comes here, as a return address.
	 * Unwinders look at it too (a thread cancelled while the SIGSYS handler
	 * makes its call unwinds through the handler), and know a signal frame
	 * without CFI by the C library's exact bytes, `mov $15, %rax; syscall`
	 * (libgcc's x86_64 Linux fallback): the 7-byte move, spelled out. */
	.byte	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00	/* mov $15 (__NR_rt_sigreturn), %rax */
	syscall
	ud2
	.size	dprobe_dispatch_restorer, .-dprobe_dispatch_restorer

	.globl	dprobe_clone_gadgets
	.hidden	dprobe_clone_gadgets
	.globl	dprobe_clone_gadgets_end
	.hidden	dprobe_clone_gadgets_end
	.p2align 4
dprobe_clone_gadgets:
	.rept	64			/* kCloneGadgetCount */
	syscall
	int3
	nop
	.endr
dprobe_clone_gadgets_end:

	.globl	dprobe_site_gadgets
	.hidden	dprobe_site_gadgets
	.globl	dprobe_site_gadgets_end
	.hidden	dprobe_site_gadgets_end
	.p2align 4
dprobe_site_gadgets:
	.fill	1024 * 32, 1, 0xcc	/* 1024 sites' gadgets; never run as int3s */
dprobe_site_gadgets_end:

	.section .note.GNU-stack, "", @progbits
