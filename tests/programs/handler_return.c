// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A thread that goes back into the bytes a jump to a probe's trampoline
// would replace, for tests/integration/handler_return_test.cc. x86_64 only
// (its asm).
//   handler_return   a signal handler that began before any tracer came
//                    returns there: main divides by zero inside the first bytes of
//                    division_entry: SIGFPE, whose handler prints
//                    "handler_return: in handler", waits until the
//                    function's first byte changes (a tracer armed a probe
//                    there) and 500 ms more (time to make the probe a jump
//                    if it were to), makes the divisor 1 and returns into
//                    those bytes, where the division runs again. Then 1000
//                    more calls, and a wait (at most 5 s) for the probe to
//                    become a jump. Prints "handler_return: quotient Q calls
//                    ok K jump J" (K: 1 when every call was right; J: 1
//                    when the first byte became a jmp)
//   handler_return fill
//                    where `attach` stops the thread, it goes back to: main
//                    fills 64 MiB again and again with fill_entry, which
//                    spends its time in a rep stosb two bytes in. Prints
//                    "handler_return: filling", and once it saw the
//                    function's first byte become a jmp (or after 30 s)
//                    and made one more call through it,
//                    "handler_return: fills ok K jump J" (K: 1 when every
//                    fill was right; J: 1 when it saw the jmp)
// Exits 0 when every call was right.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

// mov %esi, %eax; xor %edx, %edx; div %edi; ret: dividend / divisor. The
// division is at byte 4, inside the first five.
__asm__(
    ".text\n"
    ".globl division_entry\n"
    ".type division_entry, @function\n"
    "division_entry:\n"
    "  .cfi_startproc\n"
    "  mov %esi, %eax\n"
    "  xor %edx, %edx\n"
    "  div %edi\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size division_entry, .-division_entry\n");
unsigned division_entry(unsigned divisor, unsigned dividend);

// mov %esi, %eax; rep stosb; nop; nop; ret: fills n (rcx, the fourth
// argument) bytes at `to` with `byte`. The rep stosb is at byte 2.
__asm__(
    ".text\n"
    ".globl fill_entry\n"
    ".type fill_entry, @function\n"
    "fill_entry:\n"
    "  .cfi_startproc\n"
    "  mov %esi, %eax\n"
    "  rep stosb\n"
    "  nop\n"
    "  nop\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size fill_entry, .-fill_entry\n");
void fill_entry(void* to, int byte, long unused, size_t n);

static unsigned char first_byte(void) { return *(volatile const unsigned char*)division_entry; }

static unsigned char original_byte;

static void divide_by_one(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)info;
  static const char line[] = "handler_return: in handler\n";
  if (write(1, line, sizeof(line) - 1) < 0) return;
  for (int wait = 0; wait < 30000 && first_byte() == original_byte; ++wait) usleep(1000);
  usleep(500000);
  ((ucontext_t*)context)->uc_mcontext.gregs[REG_RDI] = 1;
}

static int fill(void) {
  const size_t size = (size_t)64 << 20;
  unsigned char* buffer = malloc(size);
  if (buffer == NULL) return 1;
  printf("handler_return: filling\n");
  int good = 1;
  int jump = 0;
  const time_t deadline = time(NULL) + 30;
  for (unsigned round = 0; !jump && time(NULL) < deadline; ++round) {
    const unsigned char byte = (unsigned char)round;
    fill_entry(buffer, byte, 0, size);
    good &= buffer[0] == byte && buffer[size / 2] == byte && buffer[size - 1] == byte;
    jump = *(volatile const unsigned char*)fill_entry == 0xe9;
  }
  // One more call, through the jump: the thread that was moved out of its
  // bytes may have finished that fill in the trampoline's copy and seen
  // the jump without a single call after it (then nothing was traced).
  if (jump) {
    fill_entry(buffer, 0x5a, 0, size);
    good &= buffer[0] == 0x5a && buffer[size - 1] == 0x5a;
  }
  printf("handler_return: fills ok %d jump %d\n", good, jump);
  free(buffer);
  return good ? 0 : 1;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc > 1 && strcmp(argv[1], "fill") == 0) return fill();
  original_byte = first_byte();
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = divide_by_one;
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGFPE, &action, NULL);
  const unsigned quotient = division_entry(0, 110);
  int good = 1;
  for (unsigned i = 0; i < 1000; ++i) good &= division_entry(1, i) == i;
  int jump = 0;
  for (int wait = 0; wait < 5000 && !jump; ++wait) {
    jump = first_byte() == 0xe9;
    if (!jump) usleep(1000);
  }
  printf("handler_return: quotient %u calls ok %d jump %d\n", quotient, good, jump);
  return quotient == 110 && good ? 0 : 1;
}
