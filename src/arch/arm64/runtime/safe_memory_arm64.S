/* Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0 */
/*
 * The fault-safe copies of arch/runtime/safe_memory.h for arm64.
 *
 * Every load or store that may touch a bad address lies between a
 * .L*_fault_begin and a .L*_fault_end label; the table at the end maps
 * each range to an exit that returns "fault" (the kernel's __ex_table,
 * with self-relative entries). The routines are leaves that keep the
 * stack pointer and x30 and use only x0..x9, so an exit is a plain ret.
 * Unaligned word loads are fine on Linux user memory; a word straddling a
 * bad page faults, which the whole copy would anyway.
 */
	.section dprobe_hit, "ax", %progbits  /* the hit path (base/hit_path.h) */
/*
 * int dprobe_safe_copy(uint64_t dst, uint64_t src, size_t size)
 *   x0 = dst, x1 = src, x2 = size; returns 1, or 0 on a fault.
 */
	.globl	dprobe_safe_copy
	.hidden	dprobe_safe_copy
	.type	dprobe_safe_copy, %function
	.p2align 4
dprobe_safe_copy:
	.cfi_startproc
.Lcopy_fault_begin:
.Lcopy_words:
	cmp	x2, #8
	b.lo	.Lcopy_bytes
	ldr	x3, [x1], #8
	str	x3, [x0], #8
	sub	x2, x2, #8
	b	.Lcopy_words
.Lcopy_bytes:
	cbz	x2, .Lcopy_done
	ldrb	w3, [x1], #1
	strb	w3, [x0], #1
	sub	x2, x2, #1
	b	.Lcopy_bytes
.Lcopy_fault_end:
.Lcopy_done:
	mov	w0, #1
	ret
.Lcopy_fault_exit:
	mov	w0, #0
	ret
	.cfi_endproc
	.size	dprobe_safe_copy, . - dprobe_safe_copy

/*
 * int64_t dprobe_safe_copy_string(uint64_t dst, uint64_t src, size_t capacity)
 *   x0 = dst, x1 = src, x2 = capacity; returns the bytes written with the
 *   NUL (1..capacity, 0 for capacity 0), or -1 on a fault. A byte at a
 *   time: never reads past the NUL.
 */
	.globl	dprobe_safe_copy_string
	.hidden	dprobe_safe_copy_string
	.type	dprobe_safe_copy_string, %function
	.p2align 4
dprobe_safe_copy_string:
	.cfi_startproc
	mov	x3, #0			/* x3: bytes copied, NUL excluded */
	cbz	x2, .Lstring_empty
	sub	x2, x2, #1		/* x2: room before the NUL */
.Lstring_fault_begin:
.Lstring_loop:
	cmp	x3, x2
	b.eq	.Lstring_truncate
	ldrb	w4, [x1, x3]
	strb	w4, [x0, x3]
	cbz	w4, .Lstring_found
	add	x3, x3, #1
	b	.Lstring_loop
.Lstring_truncate:
	strb	wzr, [x0, x3]
.Lstring_fault_end:
.Lstring_found:
	add	x0, x3, #1
	ret
.Lstring_empty:
	mov	x0, #0
	ret
.Lstring_fault_exit:
	mov	x0, #-1
	ret
	.cfi_endproc
	.size	dprobe_safe_copy_string, . - dprobe_safe_copy_string

/*
 * The fault table: { begin, end, exit }, each relative to its own field.
 * Read by arch/runtime/safe_memory_fixup.cc.
 */
	.section .rodata, "a"
	.p2align 2
	.globl	dprobe_safe_memory_faults
	.hidden	dprobe_safe_memory_faults
	.type	dprobe_safe_memory_faults, %object
dprobe_safe_memory_faults:
	.long	.Lcopy_fault_begin - .
	.long	.Lcopy_fault_end - .
	.long	.Lcopy_fault_exit - .
	.long	.Lstring_fault_begin - .
	.long	.Lstring_fault_end - .
	.long	.Lstring_fault_exit - .
.Lfaults_end:
	.size	dprobe_safe_memory_faults, . - dprobe_safe_memory_faults

	.globl	dprobe_safe_memory_fault_count
	.hidden	dprobe_safe_memory_fault_count
	.type	dprobe_safe_memory_fault_count, %object
dprobe_safe_memory_fault_count:
	.long	(.Lfaults_end - dprobe_safe_memory_faults) / 12
	.size	dprobe_safe_memory_fault_count, 4

	.section .note.GNU-stack, "", %progbits
