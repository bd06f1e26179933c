// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Return values of every kind, for tests/integration/return_basic_test.cc.
// main makes a fixed sequence of calls (see main); each probed function is
// called exactly kCalls = 3 times, except ret_int (6: 3 from caller_one,
// 3 from caller_two) and ret_leaf (3, from the assembly caller
// call_with_saved, which sets every callee-saved register first) and
// tail_outer, which jumps to tail_inner (a tail call; 3 each, from
// call_tail).
// Every value is checked by the program itself, so a return probe that
// breaks a return value (rax, rdx, xmm0, xmm1, st0) or the caller's
// registers fails the run. Prints the facts the test needs:
//   saved_sp=0x...   the caller's %sp right after each ret_leaf return
// and "ret_basic: ok" last, then exits 0; "FAIL what" on stderr and exit 1
// otherwise.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PROBED __attribute__((noinline, used))

volatile long sink;
static int failures;

// Changed by bump(): @ret_counter read on return shows the new value.
long ret_counter = 41;

struct record {
  int32_t id;  // 0
  int32_t pad;
  int64_t big;       // 8
  const char* name;  // 16
};
static struct record records[3] = {
    {7, 0, -70000000000LL, "seven"}, {8, 0, 80, "eight"}, {9, 0, 90, "nine"}};
static const char* const names[] = {"zero", "one", "two"};

struct pair {
  long lo, hi;
};
struct dpair {
  double a, b;
};

PROBED int ret_int(int x) {
  sink += x;
  return x * 3;
}
PROBED int ret_neg(int x) {
  sink += x;
  return -x - 1;
}
PROBED long ret_long(long x) {
  sink += x;
  return x * 1000003L * 1000003L;
}
PROBED struct record* ret_ptr(int i) {
  sink += i;
  return &records[i];
}
PROBED const char* ret_str(int i) {
  sink += i;
  return names[i];
}
PROBED void* ret_null(int i) {
  sink += i;
  return NULL;
}
PROBED struct pair ret_pair(long x) {  // rax and rdx
  struct pair p = {x + 1, x * -2};
  sink += x;
  return p;
}
PROBED double ret_double(int x) {  // xmm0
  sink += x;
  return x * 0.5;
}
PROBED struct dpair ret_dpair(int x) {  // xmm0 and xmm1
  struct dpair d = {x + 0.25, x - 0.75};
  sink += x;
  return d;
}
PROBED long double ret_ldouble(int x) {  // st0
  sink += x;
  return (long double)x / 3;
}
PROBED long bump(void) { return ++ret_counter; }

PROBED void clobber(long a, long b, long c, long d, long e, long f, long g, long h) {
  sink += a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
}

// $arg1..$arg8 on return are the values at entry, though the function
// reuses the argument registers (it calls clobber) and writes over its
// stack-passed 7th and 8th arguments.
PROBED long args8(long a, long b, long c, long d, long e, long f, long g, long h) {
  clobber(a + 100, b + 100, c + 100, d + 100, e + 100, f + 100, g + 100, h + 100);
  *(volatile long*)&g += 1000;
  *(volatile long*)&h += 1000;
  return a + b + c + d + e + f + g + h;
}

PROBED int caller_one(int x) { return ret_int(x) + 1; }
PROBED int caller_two(int x) { return ret_int(x) + 2; }

// ret_leaf sets every caller-saved register to a known value:
//   rax 0x9999 rcx 0x1111 rdx 0x2222 rsi 0x3333 rdi 0x4444
//   r8 0x5555 r9 0x6666 r10 0x7777 r11 0x8888
// call_with_saved(&saved_sp) sets the callee-saved ones first:
//   rbx 0xb0b0 rbp 0xb9b9 r12 0xc0c0 r13 0xd0d0 r14 0xe0e0 r15 0xf0f0
// pushes 0x5a5a5a (the word on top of the stack at return: $stack0),
// calls ret_leaf, stores %rsp as it is right after the return into
// *saved_sp, checks the callee-saved registers and answers 1 when they
// held, 0 otherwise.
__asm__(
    ".text\n"
    ".globl ret_leaf\n.type ret_leaf,@function\nret_leaf:\n"
    "  mov $0x1111, %ecx\n  mov $0x2222, %edx\n  mov $0x3333, %esi\n"
    "  mov $0x4444, %edi\n  mov $0x5555, %r8d\n  mov $0x6666, %r9d\n"
    "  mov $0x7777, %r10d\n  mov $0x8888, %r11d\n  mov $0x9999, %eax\n"
    "  ret\n"
    ".size ret_leaf, .-ret_leaf\n"
    ".globl call_with_saved\n.type call_with_saved,@function\ncall_with_saved:\n"
    "  .cfi_startproc\n"
    "  push %rbx\n  .cfi_adjust_cfa_offset 8\n  .cfi_rel_offset %rbx, 0\n"
    "  push %rbp\n  .cfi_adjust_cfa_offset 8\n  .cfi_rel_offset %rbp, 0\n"
    "  push %r12\n  .cfi_adjust_cfa_offset 8\n  .cfi_rel_offset %r12, 0\n"
    "  push %r13\n  .cfi_adjust_cfa_offset 8\n  .cfi_rel_offset %r13, 0\n"
    "  push %r14\n  .cfi_adjust_cfa_offset 8\n  .cfi_rel_offset %r14, 0\n"
    "  push %r15\n  .cfi_adjust_cfa_offset 8\n  .cfi_rel_offset %r15, 0\n"
    "  push %rdi\n  .cfi_adjust_cfa_offset 8\n"
    "  mov $0xb0b0, %ebx\n  mov $0xb9b9, %ebp\n  mov $0xc0c0, %r12d\n"
    "  mov $0xd0d0, %r13d\n  mov $0xe0e0, %r14d\n  mov $0xf0f0, %r15d\n"
    "  push $0x5a5a5a\n  .cfi_adjust_cfa_offset 8\n"
    "  call ret_leaf\n"
    "  mov 8(%rsp), %rdi\n  mov %rsp, (%rdi)\n"
    "  add $16, %rsp\n  .cfi_adjust_cfa_offset -16\n"
    "  xor %eax, %eax\n"
    "  cmp $0xb0b0, %rbx\n  jne 1f\n  cmp $0xb9b9, %rbp\n  jne 1f\n"
    "  cmp $0xc0c0, %r12\n  jne 1f\n  cmp $0xd0d0, %r13\n  jne 1f\n"
    "  cmp $0xe0e0, %r14\n  jne 1f\n  cmp $0xf0f0, %r15\n  jne 1f\n"
    "  mov $1, %eax\n"
    "1:\n"
    "  pop %r15\n  .cfi_adjust_cfa_offset -8\n"
    "  pop %r14\n  .cfi_adjust_cfa_offset -8\n"
    "  pop %r13\n  .cfi_adjust_cfa_offset -8\n"
    "  pop %r12\n  .cfi_adjust_cfa_offset -8\n"
    "  pop %rbp\n  .cfi_adjust_cfa_offset -8\n"
    "  pop %rbx\n  .cfi_adjust_cfa_offset -8\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size call_with_saved, .-call_with_saved\n");
long ret_leaf(void);
int call_with_saved(uint64_t* saved_sp);

// tail_outer(x) jumps to tail_inner(x + 1), which answers 3 * (x + 1):
// both return, through one `ret`, to call_tail.
__asm__(
    ".text\n"
    ".globl tail_outer\n.type tail_outer,@function\ntail_outer:\n"
    "  add $1, %edi\n  jmp tail_inner\n"
    ".size tail_outer, .-tail_outer\n"
    ".globl tail_inner\n.type tail_inner,@function\ntail_inner:\n"
    "  lea (%rdi,%rdi,2), %eax\n  ret\n"
    ".size tail_inner, .-tail_inner\n");
int tail_outer(int x);
PROBED int call_tail(int x) { return tail_outer(x) + 1; }

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAIL %s\n", what);
    ++failures;
  }
}

int main(void) {
  for (int i = 0; i < 3; ++i) {
    check(caller_one(i) == i * 3 + 1, "caller_one");
    check(caller_two(i + 10) == (i + 10) * 3 + 2, "caller_two");
  }
  for (int i = 0; i < 3; ++i) {
    check(ret_neg(i * 100) == -i * 100 - 1, "ret_neg");
    check(ret_long(i + 5) == (i + 5) * 1000003L * 1000003L, "ret_long");
    check(ret_ptr(i) == &records[i], "ret_ptr");
    check(strcmp(ret_str(i), names[i]) == 0, "ret_str");
    check(ret_null(i) == NULL, "ret_null");
    const struct pair p = ret_pair(i + 20);
    check(p.lo == i + 21 && p.hi == (i + 20) * -2, "ret_pair");
    check(ret_double(i + 1) == (i + 1) * 0.5, "ret_double");
    const struct dpair d = ret_dpair(i);
    check(d.a == i + 0.25 && d.b == i - 0.75, "ret_dpair");
    volatile long double third = (long double)(i + 7) / 3;
    check(ret_ldouble(i + 7) == third, "ret_ldouble");
    check(bump() == 42 + i, "bump");
    const long base = 10 * (i + 1);
    const long sum =
        args8(base + 1, base + 2, base + 3, base + 4, base + 5, base + 6, base + 7, base + 8);
    check(sum == 8 * base + 36 + 2000, "args8");
    uint64_t saved_sp = 0;
    check(call_with_saved(&saved_sp) == 1, "callee-saved registers across ret_leaf");
    printf("saved_sp=0x%llx\n", (unsigned long long)saved_sp);
    check(call_tail(i) == 3 * (i + 1) + 1, "call_tail");
  }
  if (failures != 0) return 1;
  printf("ret_basic: ok\n");
  return 0;
}
