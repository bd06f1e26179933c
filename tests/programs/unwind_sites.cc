// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C++ exceptions and longjmp through call sites that an optimized probe
// displaces (tests/integration/unwind_sites_test.cc): the unwinder finds
// its way by the return addresses those calls push, and setjmp returns a
// second time to the one its call pushed.
//   unwind_sites ROUNDS
// Round r: catcher(r) calls pass_through(r), which calls thrower(r); an
// even r throws r + 1 through pass_through to catcher (which answers
// 1000 + the value), an odd r returns and pass_through answers 2r + 1.
// Then landing(r) calls setjmp, then jump_through(r), which calls
// jumper(r); jumper longjmps back with r % 3 + 1 unless r % 3 == 0
// (landing answers 7r + the value), and then jump_through answers r + 5.
// Prints "unwind_sites: caught C jumped J sum S" and exits 0.
#include <setjmp.h>

#include <cstdio>
#include <cstdlib>

#define PROBED __attribute__((noinline, used))

namespace {
jmp_buf jump_target;
int caught = 0;
int jumped = 0;
}  // namespace

extern "C" {

volatile long sink;

PROBED void thrower(long r) {
  sink = sink + r;
  if (r % 2 == 0) throw r + 1;
}

PROBED long pass_through(long r) {
  const long answer = 2 * r + 1;
  thrower(r);
  sink = sink + answer;
  return answer;
}

PROBED long catcher(long r) {
  try {
    return pass_through(r);
  } catch (long value) {
    ++caught;
    return 1000 + value;
  }
}

PROBED void jumper(long r) {
  sink = sink + r;
  if (r % 3 != 0) longjmp(jump_target, static_cast<int>(r % 3 + 1));
}

PROBED long jump_through(long r) {
  const long answer = r + 5;
  jumper(r);
  sink = sink + answer;
  return answer;
}

PROBED long landing(long r) {
  const int value = setjmp(jump_target);
  if (value != 0) {
    ++jumped;
    return 7 * r + value;
  }
  return jump_through(r);
}

}  // extern "C"

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 30;
  long sum = 0;
  for (long r = 0; r < rounds; ++r) {
    sum += catcher(r);
    sum += landing(r);
  }
  std::printf("unwind_sites: caught %d jumped %d sum %ld\n", caught, jumped, sum);
  return 0;
}
