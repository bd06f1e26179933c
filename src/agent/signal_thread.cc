// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/signal_thread.h"

#include <cerrno>
#include <cstring>

#include "agent/interrupted_places.h"
#include "agent/kernel_signal.h"
#include "agent/signal_table.h"
#include "arch/runtime/context.h"
#include "arch/runtime/guarded_syscall.h"
#include "arch/runtime/raw_syscall.h"

namespace dprobe::agent {
namespace {

constexpr uint32_t kMostFrames = 16;

struct HandlerFrame {
  SignalMask outer = 0;   // the view before the handler
  SignalMask real = 0;    // the real mask while it runs
  uint64_t frame_sp = 0;  // the agent's frame that called it
  uint64_t alt_low = 0;   // the alternate stack it runs on, if it does
  uint64_t alt_high = 0;
  uint32_t place = 0;  // where it returns to, noted (interrupted_places.h)
};

struct ThreadSignals {
  SignalMask blocked;
  SignalMask pending;
  uint32_t arrivals;
  uint32_t depth;
  siginfo_t info[kHeldCount];
  HandlerFrame frames[kMostFrames];
};

// initial-exec: a plain thread-pointer access from a signal handler, with
// no lazy allocation behind it.
__attribute__((tls_model("initial-exec"))) thread_local ThreadSignals t_signals;

bool frame_live(const HandlerFrame& frame, uint64_t sp, SignalMask real) {
  if (frame.real != real) return false;
  if (frame.alt_high != 0) return sp >= frame.alt_low && sp <= frame.frame_sp;
  return sp <= frame.frame_sp;
}

// The innermost handler's frame is gone (returned, or left by longjmp).
void pop_frame(ThreadSignals& t) {
  forget_interrupted(t.frames[t.depth - 1].place);
  --t.depth;
}

uint64_t lowest_signal(SignalMask set) { return static_cast<uint64_t>(__builtin_ctzll(set)) + 1; }

}  // namespace

SignalMask program_blocked(uint64_t sp, SignalMask real) {
  ThreadSignals& t = t_signals;
  real &= ~kHeld;
  while (t.depth > 0 && !frame_live(t.frames[t.depth - 1], sp, real)) {
    t.blocked = t.frames[t.depth - 1].outer;
    pop_frame(t);
  }
  return t.blocked;
}

void set_view(SignalMask blocked) { t_signals.blocked = blocked & kHeld; }

void set_program_blocked(SignalMask blocked, SignalMask real) {
  ThreadSignals& t = t_signals;
  t.blocked = blocked & kHeld;
  if (t.depth > 0) t.frames[t.depth - 1].real = real & ~kHeld;
}

SignalMask kept_pending() { return __atomic_load_n(&t_signals.pending, __ATOMIC_RELAXED); }

void keep_pending(int sig, const siginfo_t& info, ucontext_t& context) {
  ThreadSignals& t = t_signals;
  const SignalMask bit = signal_bit(sig);
  // One pending instance of a standard signal: a second one merges.
  if ((kept_pending() & bit) == 0) {
    std::memcpy(&t.info[held_index(sig)], &info, sizeof(info));
    __atomic_fetch_or(&t.pending, bit, __ATOMIC_RELAXED);
  }
  __atomic_fetch_add(&t.arrivals, 1, __ATOMIC_RELAXED);
  arch::leave_guarded_window(context);
}

int take_pending(SignalMask wanted, siginfo_t* info) {
  ThreadSignals& t = t_signals;
  const SignalMask found = kept_pending() & wanted & kHeld;
  if (found == 0) return 0;
  const int sig = static_cast<int>(lowest_signal(found));
  if (info != nullptr) std::memcpy(info, &t.info[held_index(sig)], sizeof(*info));
  __atomic_fetch_and(&t.pending, ~signal_bit(sig), __ATOMIC_RELAXED);
  return sig;
}

void release_unblocked() {
  ThreadSignals& t = t_signals;
  SignalMask ready = kept_pending() & ~t.blocked;
  while (ready != 0) {
    siginfo_t info;
    const int sig = take_pending(ready, &info);
    ready &= ~signal_bit(sig);
    // To itself, the siginfo unchanged: the kernel allows any si_code then.
    arch::raw_syscall(SYS_rt_tgsigqueueinfo, arch::own_pid(), arch::raw_gettid(), sig,
                      arch::raw_arg(&info));
  }
}

void enter_handler(SignalMask handler_blocked, SignalMask real, ucontext_t& context,
                   uint64_t frame_sp) {
  ThreadSignals& t = t_signals;
  SignalMask delivered = to_kernel_mask(context.uc_sigmask);
  // The program's handler sees its own view in its context.
  set_kernel_mask(context.uc_sigmask, delivered | t.blocked);
  if (t.depth == kMostFrames) {  // deeper than any real program nests
    t.blocked = handler_blocked & kHeld;
    // Not noted: with no frame to forget it by, the note would stay.
    return;
  }
  HandlerFrame& frame = t.frames[t.depth++];
  frame.place = note_interrupted(arch::context_pc(context));
  frame.outer = t.blocked;
  frame.real = real & ~kHeld;
  frame.frame_sp = frame_sp;
  const auto low = reinterpret_cast<uint64_t>(context.uc_stack.ss_sp);
  const uint64_t high = low + context.uc_stack.ss_size;
  const bool on_alt = context.uc_stack.ss_size != 0 && frame_sp >= low && frame_sp < high;
  frame.alt_low = on_alt ? low : 0;
  frame.alt_high = on_alt ? high : 0;
  t.blocked = handler_blocked & kHeld;
}

void leave_handler(ucontext_t& context, uint64_t frame_sp) {
  ThreadSignals& t = t_signals;
  while (t.depth > 0 && t.frames[t.depth - 1].frame_sp <= frame_sp) pop_frame(t);
  const SignalMask after = to_kernel_mask(context.uc_sigmask);
  t.blocked = after & kHeld;
  set_kernel_mask(context.uc_sigmask, after & ~kHeld);
}

uint32_t pending_arrivals() { return __atomic_load_n(&t_signals.arrivals, __ATOMIC_RELAXED); }

long wait_syscall(long nr, long a, long b, long c, long d, uint32_t seen) {
  return arch::guarded_syscall(nr, a, b, c, d, &t_signals.arrivals, seen);
}

void forget_pending() { __atomic_store_n(&t_signals.pending, 0, __ATOMIC_RELAXED); }

}  // namespace dprobe::agent
