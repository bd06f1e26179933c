// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The kernel's x86_64 signal frame, from its lowest address: the
// restorer (the handler returns into it), the kernel's ucontext (flags,
// link, alternate stack, the saved registers as struct sigcontext, the
// pointer to the extended state, an 8-byte signal mask), the siginfo; the
// extended state lies above.
#include <sys/ucontext.h>

#include <algorithm>
#include <cstddef>

#include "arch/runtime/safe_memory.h"
#include "arch/runtime/signal_frames.h"

namespace dprobe::arch {
namespace {

// The head of the ucontext, the part a frame is checked by.
struct SavedContext {
  uint64_t flags;
  uint64_t link;
  uint64_t stack[3];
  uint64_t gregs[NGREG];
  uint64_t fpstate;
};
static_assert(offsetof(SavedContext, gregs) == offsetof(ucontext_t, uc_mcontext.gregs));
static_assert(offsetof(SavedContext, fpstate) == offsetof(ucontext_t, uc_mcontext.fpregs));

// The kernel's struct ucontext: the head, the rest of sigcontext, uc_sigmask.
constexpr uint64_t kKernelContextBytes = 5 * 8 + 32 * 8 + 8;
constexpr uint64_t kSiginfoOffset = sizeof(uint64_t) + kKernelContextBytes;
static_assert(offsetof(SavedContext, fpstate) + 8 * 9 == 5 * 8 + 32 * 8,
              "sigcontext: 23 registers, fpstate, 8 reserved words");
constexpr uint64_t kKnownContextFlags =
    0x7;  // UC_FP_XSTATE, UC_SIGCONTEXT_SS, UC_STRICT_RESTORE_SS
constexpr uint64_t kUserCodeSegment = 0x33;
constexpr uint64_t kExtendedStateReach = 64 * 1024;  // above the frame, within the signal's room
constexpr int32_t kLastSignal = 64;
constexpr uint64_t kChunk = 512;  // a handler may run on a small stack
constexpr size_t kMaxStacks = 8;

// The saved context of the frame whose restorer word is at `frame`, if
// what follows it is one the kernel built.
bool read_frame(uint64_t frame, SavedContext& saved) {
  if (!kernel_read(&saved, frame + sizeof(uint64_t), sizeof(saved))) return false;
  const uint64_t state = saved.fpstate;
  return (saved.flags & ~kKnownContextFlags) == 0 && saved.link == 0 &&
         (saved.gregs[REG_CSGSFS] & 0xffff) == kUserCodeSegment &&
         (state == 0 || (state > frame && state - frame < kExtendedStateReach));
}

// Reads [from, to) a chunk at a time for frames, up to the first chunk
// that cannot be read; their pcs go to out[found...], the sps they
// interrupted outside [from, to) to `stacks`.
size_t scan(uint64_t from, uint64_t to, const Restorers& restorers, std::span<InterruptedPlace> out,
            size_t found, uint64_t* stacks, size_t& pending) {
  uint64_t words[kChunk / sizeof(uint64_t)];
  for (uint64_t at = from; at < to && found < out.size();) {
    const uint64_t chunk_end = std::min(to, (at | (kChunk - 1)) + 1);
    if (!kernel_read(words, at, chunk_end - at)) break;
    for (uint64_t i = 0; i < (chunk_end - at) / sizeof(uint64_t) && found < out.size(); ++i) {
      SavedContext saved;
      const uint64_t frame = at + i * sizeof(uint64_t);
      if (!restorers.holds(words[i]) || !read_frame(frame, saved)) continue;
      int32_t signal = 0;
      if (!kernel_read(&signal, frame + kSiginfoOffset, sizeof(signal)) || signal < 1 ||
          signal > kLastSignal) {
        continue;
      }
      out[found++] = {saved.gregs[REG_RIP], signal};
      const uint64_t interrupted_sp = saved.gregs[REG_RSP];
      if ((interrupted_sp < from || interrupted_sp >= to) && pending < kMaxStacks) {
        stacks[pending++] = interrupted_sp;
      }
    }
    at = chunk_end;
  }
  return found;
}

}  // namespace

size_t interrupted_places_above(uint64_t sp, StackBounds alternate, const Restorers& restorers,
                                std::span<InterruptedPlace> out) noexcept {
  if (restorers.count == 0) return 0;
  uint64_t stacks[kMaxStacks] = {sp};
  size_t pending = 1;
  size_t found = 0;
  for (size_t next = 0; next < pending && found < out.size(); ++next) {
    const uint64_t from = stacks[next] & ~uint64_t{7};
    const bool on_alternate = from >= alternate.begin && from < alternate.end;
    const uint64_t to = on_alternate ? alternate.end : from + kSignalFrameScanBytes;
    found = scan(from, to, restorers, out, found, stacks, pending);
  }
  return found;
}

}  // namespace dprobe::arch
