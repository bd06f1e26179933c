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
// UC_FP_XSTATE, UC_SIGCONTEXT_SS, UC_STRICT_RESTORE_SS
constexpr uint64_t kKnownContextFlags = 0x7;
constexpr uint64_t kUserCodeSegment = 0x33;
constexpr uint64_t kExtendedStateReach = 64 * 1024;  // above the frame, within the signal's room
constexpr int32_t kLastSignal = 64;
constexpr size_t kMaxStacks = 8;
constexpr uint64_t kPageBytes = 4096;

// The saved context of the frame whose restorer word is at `frame`, if
// what follows it is one the kernel built.
bool read_frame(uint64_t frame, SavedContext& saved) {
  if (!kernel_read(&saved, frame + sizeof(uint64_t), sizeof(saved))) return false;
  const uint64_t state = saved.fpstate;
  return (saved.flags & ~kKnownContextFlags) == 0 && saved.link == 0 &&
         (saved.gregs[REG_CSGSFS] & 0xffff) == kUserCodeSegment &&
         (state == 0 || (state > frame && state - frame < kExtendedStateReach));
}

// Reads a stack region for frames a buffer at a time, from a word below
// its start (a thread in the restorer has returned from the handler and
// its sp is one word above the frame), up to the first chunk that cannot
// be read. A frame whose saved sp is in the region takes the region's end
// further up (an outer handler's frame lies above it); one elsewhere is
// another region to read.
class FrameScanner {
 public:
  FrameScanner(const Restorers& restorers, std::span<InterruptedPlace> out,
               std::span<uint64_t> buffer)
      : restorers_(restorers), out_(out), buffer_(buffer) {}

  // False when the region's first chunk cannot be read.
  bool scan(uint64_t sp, StackBounds alternate) {
    const uint64_t from = (sp & ~uint64_t{7}) - sizeof(uint64_t);
    const bool on_alternate = from >= alternate.begin && from < alternate.end;
    uint64_t to = on_alternate ? alternate.end : from + kSignalFrameScanBytes;
    const uint64_t chunk = buffer_.size_bytes();
    for (uint64_t at = from; at < to && found_ < out_.size();) {
      // Never across a page: one unmapped page would fail the whole read.
      const uint64_t page_end = (at | (kPageBytes - 1)) + 1;
      const uint64_t chunk_end = std::min({to, at + chunk, page_end});
      if (!kernel_read(buffer_.data(), at, chunk_end - at)) return at != from;
      for (uint64_t i = 0; i < (chunk_end - at) / sizeof(uint64_t) && found_ < out_.size(); ++i) {
        const uint64_t interrupted_sp = take_frame(at + i * sizeof(uint64_t), buffer_[i]);
        if (interrupted_sp == 0) continue;
        if (interrupted_sp >= from && interrupted_sp < to) {
          if (!on_alternate) to = std::max(to, interrupted_sp + kSignalFrameScanBytes);
        } else if (pending_ < kMaxStacks) {
          stacks_[pending_++] = interrupted_sp;
        }
      }
      at = chunk_end;
    }
    return true;
  }

  // Reads the regions frames led to, after the first.
  void follow(StackBounds alternate) {
    for (size_t next = 0; next < pending_ && found_ < out_.size(); ++next) {
      (void)scan(stacks_[next], alternate);
    }
  }

  size_t found() const { return found_; }

 private:
  // Notes the frame at `frame` (whose first word is `word`) if it is one;
  // returns the sp it interrupted, or 0.
  uint64_t take_frame(uint64_t frame, uint64_t word) {
    SavedContext saved;
    int32_t signal = 0;
    if (!restorers_.holds(word) || !read_frame(frame, saved) ||
        !kernel_read(&signal, frame + kSiginfoOffset, sizeof(signal)) || signal < 1 ||
        signal > kLastSignal) {
      return 0;
    }
    out_[found_++] = {saved.gregs[REG_RIP], signal};
    return saved.gregs[REG_RSP];
  }

  const Restorers& restorers_;
  std::span<InterruptedPlace> out_;
  std::span<uint64_t> buffer_;
  size_t found_ = 0;
  uint64_t stacks_[kMaxStacks] = {};
  size_t pending_ = 0;
};

}  // namespace

FrameScan interrupted_places_above(uint64_t sp, StackBounds alternate, const Restorers& restorers,
                                   std::span<InterruptedPlace> out,
                                   std::span<uint64_t> buffer) noexcept {
  if (restorers.count == 0 || out.empty() || buffer.empty()) return {};
  FrameScanner scanner(restorers, out, buffer);
  if (!scanner.scan(sp, alternate)) return {0, true};
  scanner.follow(alternate);
  return {scanner.found(), false};
}

}  // namespace dprobe::arch
