// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The places a thread's running signal handlers will return to, read off
// its stack: each handler the kernel runs sits above a signal frame whose
// first word (the handler's return address) is the restorer its sigaction
// gave, followed by the saved context. No thread's pc shows such a place,
// yet sigreturn resumes the thread there, so a jump may not be written
// over one (agent/thread_census.cc). Any thread may read any thread's
// stack: every read is arch::kernel_read, which fails where a load would
// fault.
//
//   const Restorers restorers = current_restorers();
//   InterruptedPlace places[8];
//   uint64_t buffer[16];
//   const FrameScan scan =
//       interrupted_places_above(sp, {alt_begin, alt_end}, restorers, places, buffer);
#ifndef DPROBE_ARCH_RUNTIME_SIGNAL_FRAMES_H_
#define DPROBE_ARCH_RUNTIME_SIGNAL_FRAMES_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace dprobe::arch {

// The distinct restorers of every signal's action now (a frame pushed
// before a sigaction changed carries the old one; the C library has one
// restorer for all).
struct Restorers {
  static constexpr size_t kMax = 8;
  uint64_t address[kMax];
  size_t count = 0;
  bool holds(uint64_t word) const noexcept;
};
Restorers current_restorers() noexcept;

// A thread's alternate signal stack, [begin, end); empty when none is known.
struct StackBounds {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Where a handler returns to, and the signal it handles.
struct InterruptedPlace {
  uint64_t pc = 0;
  int signal = 0;
};

// How far above `sp` a stack is read for frames, unless the alternate stack
// it is on ends sooner; a frame found moves the end up as far again above
// the sp it saved. Signal frames lie just above the handler's own frames:
// a handler that runs 256 KiB deep is not seen.
constexpr uint64_t kSignalFrameScanBytes = 256 * 1024;

struct FrameScan {
  size_t found = 0;         // places written to `out`
  bool unreadable = false;  // the stack at sp could not be read: nothing is known
};

// The interrupted places of the signal frames above `sp`, innermost first,
// following each frame's saved sp onto the stack it interrupted; at most
// out.size(). `buffer` is what the stack is read through, a chunk at a
// time (in a signal handler, which may run on a small stack, a small one).
// Words read as frames only when the whole frame checks out (the restorer,
// the flags, the user code segment, the extended state above it, the
// signal number); a frame in dead stack memory above sp can still pass,
// which only makes a caller more careful. On an ISA whose jumps are one
// instruction (arm64), no pc can be inside one: nothing is read.
FrameScan interrupted_places_above(uint64_t sp, StackBounds alternate, const Restorers& restorers,
                                   std::span<InterruptedPlace> out,
                                   std::span<uint64_t> buffer) noexcept;

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_SIGNAL_FRAMES_H_
