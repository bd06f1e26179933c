/* Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0 */

/*
 * The fault-safe copies of arch/runtime/safe_memory.h for x86_64.
 *
 * Every load or store that may touch a bad address lies between a
 * .L*_fault_begin and a .L*_fault_end label. The table at the end of the
 * file (the kernel's __ex_table, with the same self-relative entries so it
 * needs no relocation) maps each range to an exit that returns "fault";
 * fixup_memory_fault() moves a faulting context there. For that to be a
 * plain `ret`, the routines are leaves that never move the stack pointer,
 * and they use only call-clobbered registers.
 *
 * They call nothing: they run in a signal handler, or a trampoline, while
 * the traced program is stopped at a probe.
 */

#if defined(__CET__)
#include <cet.h>
#else
#define _CET_ENDBR
#endif

	.intel_syntax noprefix
	.section dprobe_hit, "ax", @progbits  /* the hit path (base/hit_path.h) */

/*
 * int dprobe_safe_copy(uint64_t dst, uint64_t src, size_t size)
 *   rdi = dst, rsi = src, rdx = size; returns 1, or 0 on a fault.
 */
	.globl	dprobe_safe_copy
	.hidden	dprobe_safe_copy
	.type	dprobe_safe_copy, @function
	.p2align 4
dprobe_safe_copy:
	.cfi_startproc
	_CET_ENDBR
.Lcopy_fault_begin:
	/* Past a few hundred bytes rep movsb (fast strings) beats any loop. */
	cmp	rdx, 256
	jae	.Lcopy_bulk
.Lcopy_words:
	/* Unaligned words are fine on x86; a word straddling a bad page
	 * faults, which the whole copy would anyway. */
	cmp	rdx, 8
	jb	.Lcopy_bytes
	mov	rax, qword ptr [rsi]
	mov	qword ptr [rdi], rax
	add	rsi, 8
	add	rdi, 8
	sub	rdx, 8
	jmp	.Lcopy_words
.Lcopy_bytes:
	test	rdx, rdx
	jz	.Lcopy_done
	movzx	eax, byte ptr [rsi]
	mov	byte ptr [rdi], al
	inc	rsi
	inc	rdi
	dec	rdx
	jmp	.Lcopy_bytes
.Lcopy_bulk:
	/* A probe may hit between the program's std and cld; the saved
	 * flags are restored after the hit, so clearing DF here is safe. */
	cld
	mov	rcx, rdx
	rep movsb
.Lcopy_fault_end:
.Lcopy_done:
	mov	eax, 1
	ret
.Lcopy_fault_exit:
	xor	eax, eax
	ret
	.cfi_endproc
	.size	dprobe_safe_copy, . - dprobe_safe_copy

/*
 * int64_t dprobe_safe_copy_string(uint64_t dst, uint64_t src, size_t capacity)
 *   rdi = dst, rsi = src, rdx = capacity; returns the bytes written with
 *   the NUL (1..capacity, 0 for capacity 0), or -1 on a fault.
 *
 * Word steps only from an 8-aligned source: an aligned word never crosses
 * a page, so reading up to 7 bytes past the NUL cannot fault where the
 * byte loop would not have.
 */
	.globl	dprobe_safe_copy_string
	.hidden	dprobe_safe_copy_string
	.type	dprobe_safe_copy_string, @function
	.p2align 4
dprobe_safe_copy_string:
	.cfi_startproc
	_CET_ENDBR
	xor	eax, eax		/* rax: bytes copied, NUL excluded */
	test	rdx, rdx
	jz	.Lstring_out
	dec	rdx			/* rdx: room before the NUL */
	movabs	r9, 0x0101010101010101
	movabs	r11, 0x8080808080808080
.Lstring_fault_begin:
.Lstring_head:
	test	sil, 7
	jz	.Lstring_words
	cmp	rax, rdx
	je	.Lstring_truncate
	movzx	ecx, byte ptr [rsi]
	mov	byte ptr [rdi], cl
	test	cl, cl
	jz	.Lstring_found
	inc	rsi
	inc	rdi
	inc	rax
	jmp	.Lstring_head
.Lstring_words:
	mov	rcx, rdx
	sub	rcx, rax
	cmp	rcx, 8
	jb	.Lstring_tail
	mov	rcx, qword ptr [rsi]
	/* Has a zero byte: (w - 0x01..01) & ~w & 0x80..80 is not zero. */
	mov	r8, rcx
	sub	r8, r9
	mov	r10, rcx
	not	r10
	and	r8, r10
	and	r8, r11
	jnz	.Lstring_tail		/* the NUL is in this word: finish by bytes */
	mov	qword ptr [rdi], rcx
	add	rsi, 8
	add	rdi, 8
	add	rax, 8
	jmp	.Lstring_words
.Lstring_tail:
	cmp	rax, rdx
	je	.Lstring_truncate
	movzx	ecx, byte ptr [rsi]
	mov	byte ptr [rdi], cl
	test	cl, cl
	jz	.Lstring_found
	inc	rsi
	inc	rdi
	inc	rax
	jmp	.Lstring_tail
.Lstring_truncate:
	mov	byte ptr [rdi], 0
.Lstring_fault_end:
.Lstring_found:
	inc	rax			/* count the NUL */
.Lstring_out:
	ret
.Lstring_fault_exit:
	mov	rax, -1
	ret
	.cfi_endproc
	.size	dprobe_safe_copy_string, . - dprobe_safe_copy_string

/*
 * The fault table: { begin, end, exit }, each relative to its own field.
 * Read by safe_memory_fixup.cc.
 */
	.section .rodata, "a"
	.p2align 2
	.globl	dprobe_safe_memory_faults
	.hidden	dprobe_safe_memory_faults
	.type	dprobe_safe_memory_faults, @object
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
	.type	dprobe_safe_memory_fault_count, @object
dprobe_safe_memory_fault_count:
	.long	(.Lfaults_end - dprobe_safe_memory_faults) / 12
	.size	dprobe_safe_memory_fault_count, 4

	.section .note.GNU-stack, "", @progbits
