// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C++ exceptions thrown through probed frames, for
// tests/integration/return_exceptions_test.cc:
//   ret_exceptions MODE [ROUNDS [FRAME]]
// thrower(d, at) recurses (through a volatile function pointer) from depth
// d to depth `at`, where it throws Failure{at}; each thrower frame holds a
// Guard whose destructor counts. thrower(0, -1) never throws: it goes 3
// deep and answers 0 + 1 + 2 = 3. Each thrower frame holds FRAME bytes
// (default 0) of stack of its own. MODE says where the catch is:
//   direct   catch_direct() calls thrower(0, 0): thrown in the probed frame,
//            caught in its direct caller (1 probed frame unwound per round)
//   up       catch_up() -> pass_through() (a Guard, not probed) ->
//            thrower(0, 4): 5 probed frames unwound, caught 2 frames above
//   middle   middle() (probed) catches thrower(0, 2) itself and returns
//            normally (3 thrower frames unwound; middle's return traced)
//   rethrow  catch_rethrown() -> rethrower() (probed: catches, counts,
//            throws again) -> thrower(0, 1): 2 thrower frames and the
//            rethrower frame unwound
//   bare     catch_bare() -> bare_thrower(0, 4), which is thrower without
//            the Guard: 5 probed frames with nothing to clean up unwound
// Each round (ROUNDS, default 10) ends with one call of after(r), which
// returns normally. After the rounds main calls thrower(0, -1), then
// bare_thrower(0, -1), twice: 3 nested probed calls each, answering 3.
// The program checks that each catch caught the right Failure and that
// every Guard was destroyed. Prints "exceptions: ok" and exits 0; "FAIL
// what" on stderr and exit 1 otherwise.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define PROBED __attribute__((noinline, used))

namespace {

int failures = 0;
long guards_made = 0;
long guards_destroyed = 0;
long rethrows = 0;
long frame_bytes = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL %s\n", what);
    ++failures;
  }
}

struct Failure {
  int depth;
};

struct Guard {
  Guard() { ++guards_made; }
  ~Guard() { ++guards_destroyed; }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
};

}  // namespace

extern "C" {
volatile long sink;

PROBED int thrower(int depth, int at);
PROBED int bare_thrower(int depth, int at);
}
static int (*volatile thrower_pointer)(int, int) = thrower;
static int (*volatile bare_thrower_pointer)(int, int) = bare_thrower;

extern "C" {

// Returns depth + (depth + 1) + 2 when it does not throw (stops at 2).
PROBED int thrower(int depth, int at) {
  Guard guard;
  sink = sink + depth;
  if (frame_bytes != 0) {
    volatile char* pad = static_cast<volatile char*>(__builtin_alloca(frame_bytes));
    pad[0] = static_cast<char>(depth);
    pad[frame_bytes - 1] = static_cast<char>(depth);
  }
  if (depth == at) throw Failure{at};
  if (depth == 2 && at < 0) return depth;
  return thrower_pointer(depth + 1, at) + depth;
}

// thrower without a Guard: its frames have no cleanup to run, so the
// unwinder passes them without running any code in them.
PROBED int bare_thrower(int depth, int at) {
  sink = sink + depth;
  if (frame_bytes != 0) {
    volatile char* pad = static_cast<volatile char*>(__builtin_alloca(frame_bytes));
    pad[0] = static_cast<char>(depth);
    pad[frame_bytes - 1] = static_cast<char>(depth);
  }
  if (depth == at) throw Failure{at};
  if (depth == 2 && at < 0) return depth;
  return bare_thrower_pointer(depth + 1, at) + depth;
}

PROBED int rethrower(int at) {
  try {
    return thrower_pointer(0, at);
  } catch (...) {
    ++rethrows;
    throw;
  }
}

PROBED int middle(int at) {
  try {
    return thrower_pointer(0, at);
  } catch (const Failure& failure) {
    return 100 + failure.depth;
  }
}

PROBED long after(long round) {
  sink = sink + round;
  return round + 500;
}

}  // extern "C"

namespace {

void catch_direct() {
  try {
    thrower(0, 0);
    check(false, "thrower(0, 0) returned");
  } catch (const Failure& failure) {
    check(failure.depth == 0, "caught Failure{0}");
  }
}

PROBED int pass_through(int at) {
  Guard guard;
  return thrower(0, at) + 1;
}

void catch_up() {
  try {
    pass_through(4);
    check(false, "thrower(0, 4) returned");
  } catch (const Failure& failure) {
    check(failure.depth == 4, "caught Failure{4}");
  }
}

void catch_bare() {
  try {
    bare_thrower(0, 4);
    check(false, "bare_thrower(0, 4) returned");
  } catch (const Failure& failure) {
    check(failure.depth == 4, "caught Failure{4} from bare_thrower");
  }
}

void catch_rethrown() {
  try {
    rethrower(1);
    check(false, "rethrower(1) returned");
  } catch (const Failure& failure) {
    check(failure.depth == 1, "caught Failure{1} rethrown");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "direct";
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 10;
  if (argc > 3) frame_bytes = std::atol(argv[3]);
  long expected_guards = 0;
  for (int r = 0; r < rounds; ++r) {
    if (std::strcmp(mode, "direct") == 0) {
      catch_direct();
      expected_guards += 1;
    } else if (std::strcmp(mode, "up") == 0) {
      catch_up();
      expected_guards += 6;  // 5 thrower frames and pass_through
    } else if (std::strcmp(mode, "middle") == 0) {
      check(middle(2) == 102, "middle(2) caught Failure{2}");
      expected_guards += 3;
    } else if (std::strcmp(mode, "bare") == 0) {
      catch_bare();
    } else if (std::strcmp(mode, "rethrow") == 0) {
      catch_rethrown();
      expected_guards += 2;
    } else {
      std::fprintf(stderr, "unknown mode %s\n", mode);
      return 2;
    }
    check(after(r) == r + 500, "after(r)");
  }
  check(rethrows == (std::strcmp(mode, "rethrow") == 0 ? rounds : 0), "rethrows counted");
  for (int i = 0; i < 2; ++i) {
    check(thrower(0, -1) == 3, "thrower(0, -1)");
    expected_guards += 3;
    check(bare_thrower(0, -1) == 3, "bare_thrower(0, -1)");
  }
  check(guards_made == expected_guards, "guards made");
  check(guards_destroyed == guards_made, "every guard destroyed");
  if (failures != 0) return 1;
  std::printf("exceptions: ok\n");
  return 0;
}
