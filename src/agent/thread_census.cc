// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/thread_census.h"

#include <fcntl.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "agent/hit/descriptor_gate.h"
#include "agent/interrupted_places.h"
#include "arch/probe_insn.h"
#include "arch/runtime/context.h"
#include "arch/runtime/raw_syscall.h"
#include "arch/runtime/safe_memory.h"
#include "arch/runtime/signal_frames.h"

namespace dprobe::agent {
namespace {

using Ranges = std::vector<core::DisplacedRange>;
constexpr size_t kNowhere = kInNoRange;
constexpr size_t kClear = SIZE_MAX - 1;  // answered: outside every range, or moved out

uint64_t own_stack_pointer() { return reinterpret_cast<uint64_t>(__builtin_frame_address(0)); }

arch::StackBounds own_alternate_stack() {
  stack_t stack{};
  if (arch::raw_failed(arch::raw_syscall(SYS_sigaltstack, 0, arch::raw_arg(&stack))) ||
      (stack.ss_flags & SS_DISABLE) != 0) {
    return {};
  }
  const auto begin = reinterpret_cast<uint64_t>(stack.ss_sp);
  return {begin, begin + stack.ss_size};
}

void pause_microseconds(long us) {
  const timespec pause{0, us * 1000};
  arch::raw_syscall(SYS_nanosleep, arch::raw_arg(&pause), 0);
}

// ---- Looking: /proc/self/task/TID/syscall --------------------------------------

// The whole of a small file of /proc (descriptor_gate.h); empty when the
// thread is gone (no such file, or no such thread to read); nullopt when it
// was not read: the program's opens kept it from opening, or the open or
// the read failed for another reason (no descriptor free, no memory), which
// says nothing of the thread.
std::optional<std::string> read_proc(const std::string& path) {
  char buffer[512];
  long failure = 0;
  const long n = read_file_through_gate(path.c_str(), buffer, sizeof(buffer) - 1, &failure);
  if (n < 0) return std::nullopt;
  if (failure != 0 && failure != -ENOENT && failure != -ESRCH) return std::nullopt;
  return std::string(buffer, static_cast<size_t>(n));
}

}  // namespace

size_t range_holding(uint64_t pc, const core::DisplacedRange* ranges, size_t count, bool waiting) {
  for (size_t i = 0; i < count; ++i) {
    const core::DisplacedRange& r = ranges[i];
    if ((pc > r.begin && pc < r.end) || (pc >= r.slot && pc < r.slot_end)) return i;
    if (waiting && r.restarts_at_end && pc == r.end) return i;
  }
  return kNowhere;
}

TaskSyscall parse_task_syscall(const std::string& text) {
  if (text.empty()) return {};
  const size_t last = text.find_last_of(' ');
  if (text.rfind("running", 0) == 0 || last == std::string::npos) return {TaskSyscall::kOnCore};
  const size_t before_last = text.find_last_of(' ', last - 1);
  if (before_last == std::string::npos) return {TaskSyscall::kOnCore};
  char* end = nullptr;
  const long nr = std::strtol(text.c_str(), &end, 10);
  const uint64_t arg = nr >= 0 ? std::strtoull(end, nullptr, 16) : 0;
  return {TaskSyscall::kStopped, nr, arg,
          std::strtoull(text.c_str() + before_last + 1, nullptr, 16),
          std::strtoull(text.c_str() + last + 1, nullptr, 16)};
}

bool waits_in_vfork(long nr, uint64_t arg) {
#ifdef SYS_vfork
  if (nr == SYS_vfork) return true;
#endif
  if (nr == SYS_clone) return (arg & CLONE_VFORK) != 0;
  uint64_t flags = 0;  // clone3: the first field of its struct clone_args
  return nr == SYS_clone3 && arch::kernel_read(&flags, arg, sizeof(flags)) &&
         (flags & CLONE_VFORK) != 0;
}

namespace {

struct Sighting {
  enum Kind { kGone, kStopped, kOnCore } kind = kGone;
  uint64_t pc = 0;            // kStopped: the user pc the thread goes back to
  uint64_t sp = 0;            // kStopped: its stack pointer there
  bool lends_memory = false;  // kStopped in vfork: see waits_in_vfork()
};

Sighting look_at(uint32_t tid) {
  const std::optional<std::string> read =
      read_proc("/proc/self/task/" + std::to_string(tid) + "/syscall");
  if (!read) return {Sighting::kOnCore};  // not looked at: to be asked
  const TaskSyscall seen = parse_task_syscall(*read);
  if (seen.kind == TaskSyscall::kGone) return {};
  if (seen.kind == TaskSyscall::kOnCore) return {Sighting::kOnCore};
  return {Sighting::kStopped, seen.pc, seen.sp, seen.nr >= 0 && waits_in_vfork(seen.nr, seen.arg)};
}

// ---- Asking: a tagged SIGSEGV, answered by the handler --------------------------

constexpr uint32_t kTag = 0x64707262;    // "dprb", above the round in si_value
constexpr size_t kMaxAsked = 256;        // threads asked at once
constexpr int kAnswerWaits = 1000;       // of 50 us each: a thread on a core answers at once
constexpr uint64_t kHandlerRoom = 2048;  // stack an answer needs to read its own for frames

// A thread not yet known to be clear, and the range it was last seen in
// (its bytes past the first, or its slot): it can be in that one only, as
// every other range's way in leads to the copy.
struct Unknown {
  uint32_t tid = 0;
  size_t range = kNowhere;  // never seen
  bool vforking = false;    // last seen in vfork: not asked, its child is what runs
};

// One round of questions. The handler takes part only while the round is
// open and it is counted in `busy`, so the asker knows when none is left
// reading the ranges.
struct Board {
  std::atomic<uint32_t> round{0};
  std::atomic<bool> open{false};
  std::atomic<int> busy{0};
  const core::DisplacedRange* ranges = nullptr;
  size_t count = 0;
  arch::Restorers restorers;
  // A bit per range that a running signal handler returns into, set by
  // whoever reads a thread's stack (the census, or a thread answering).
  std::atomic<uint64_t>* framed = nullptr;
  std::atomic<bool> stack_unreadable{false};
  std::atomic<uint32_t> answered{0};
  std::array<std::atomic<uint64_t>, kMaxAsked> answers{};  // tid << 32 | (range + 1, or 0: clear)
};
Board g_board;

// Whether a handler's frame holds the trap of the range's own breakpoint:
// the agent's trap handler resumes it in the range's copy, never there.
bool own_breakpoint_trap(const arch::InterruptedPlace& place, const core::DisplacedRange& range) {
  return place.signal == SIGTRAP && arch::probe_address_of_trap(place.pc) == range.begin;
}

void mark_framed(const arch::InterruptedPlace& place) {
  const size_t range = range_holding(place.pc, g_board.ranges, g_board.count);
  if (range == kNowhere || own_breakpoint_trap(place, g_board.ranges[range])) return;
  g_board.framed[range / 64].fetch_or(uint64_t{1} << (range % 64));
}

// Marks the ranges the running signal handlers of a thread whose stack is
// at `sp` return into (their frames are above sp). Safe in a handler.
void note_frames(uint64_t sp, arch::StackBounds alternate, std::span<uint64_t> buffer) {
  constexpr size_t kMaxPlaces = 8;
  arch::InterruptedPlace places[kMaxPlaces];
  const arch::FrameScan scan =
      arch::interrupted_places_above(sp, alternate, g_board.restorers, places, buffer);
  if (scan.unreadable) g_board.stack_unreadable.store(true);
  for (size_t i = 0; i < scan.found; ++i) mark_framed(places[i]);
}

// What the census reads other threads' stacks and its own through: it
// runs under the registry's writer lock, one at a time.
uint64_t g_stack_buffer[512];

// `attach`: where the thread that loads the agent goes back to.
std::array<std::atomic<uint64_t>, 4> g_caller_places{};
std::atomic<size_t> g_caller_place_count{0};
std::atomic<uint32_t> g_parked{0};

// A thread of the process is about to exec: a question left pending would
// come to the new program, which does not hold SIGSEGV, and kill it.
std::atomic<bool> g_quiet{false};

// The thread's alternate signal stack, as the kernel saved it in the frame.
arch::StackBounds alternate_stack(const ucontext_t& context) {
  const stack_t& stack = context.uc_stack;
  if ((stack.ss_flags & SS_DISABLE) != 0 || stack.ss_sp == nullptr) return {};
  const auto begin = reinterpret_cast<uint64_t>(stack.ss_sp);
  return {begin, begin + stack.ss_size};
}

bool send_question(uint32_t tid, uint32_t round) { return send_tagged_signal(tid, kTag, round); }

// Asks the threads of `unknown` (at most kMaxAsked) where they are: those
// that answer clear are taken out, the others' ranges updated.
void ask(std::vector<Unknown>& unknown, const Ranges& ranges) {
  const uint32_t round = g_board.round.load() + 1;
  g_board.ranges = ranges.data();
  g_board.count = ranges.size();
  g_board.answered.store(0);
  g_board.round.store(round);
  g_board.open.store(true);
  // Opened first, then looked: a thread about to exec either sees the
  // round open and waits for it, or is seen here (hold_questions_for_exec).
  if (g_quiet.load()) {
    g_board.open.store(false);
    return;
  }
  uint32_t sent = 0;
  for (const Unknown& thread : unknown) sent += send_question(thread.tid, round) ? 1u : 0u;
  for (int wait = 0; wait < kAnswerWaits && g_board.answered.load() < sent; ++wait) {
    pause_microseconds(50);
  }
  g_board.open.store(false);
  while (g_board.busy.load() != 0) arch::raw_syscall(SYS_sched_yield);
  const size_t answered = std::min<size_t>(g_board.answered.load(), kMaxAsked);
  for (size_t i = 0; i < answered; ++i) {
    const uint64_t answer = g_board.answers[i].load();
    const auto tid = static_cast<uint32_t>(answer >> 32);
    const auto in = static_cast<uint32_t>(answer);
    for (Unknown& thread : unknown) {
      if (thread.tid == tid) thread.range = in == 0 ? kClear : in - 1;
    }
  }
  std::erase_if(unknown, [](const Unknown& thread) { return thread.range == kClear; });
}

void ask_all(std::vector<Unknown>& unknown, const Ranges& ranges) {
  std::vector<Unknown> left;
  std::vector<Unknown> askable;
  for (const Unknown& thread : unknown) (thread.vforking ? left : askable).push_back(thread);
  for (size_t at = 0; at < askable.size(); at += kMaxAsked) {
    const auto first = askable.begin() + static_cast<ptrdiff_t>(at);
    const auto last =
        askable.begin() + static_cast<ptrdiff_t>(std::min(at + kMaxAsked, askable.size()));
    std::vector<Unknown> some(first, last);
    ask(some, ranges);
    left.insert(left.end(), some.begin(), some.end());
  }
  unknown = std::move(left);
}

// Looks at each thread of `unknown`: those outside every range (or gone)
// are taken out, those stopped inside one noted there. A thread stopped
// outside has its stack read for a handler that returns into one (its
// alternate stack is not known from here: read as any other).
void look(std::vector<Unknown>& unknown, const Ranges& ranges) {
  std::erase_if(unknown, [&](Unknown& thread) {
    const Sighting seen = look_at(thread.tid);
    thread.vforking = seen.lends_memory;
    if (seen.kind == Sighting::kGone) return true;
    if (seen.kind == Sighting::kOnCore || seen.lends_memory) return false;
    thread.range = range_holding(seen.pc, ranges.data(), ranges.size(), /*waiting=*/true);
    note_frames(seen.sp, {}, g_stack_buffer);
    return thread.range == kNowhere;
  });
}

}  // namespace

// Looked at first, asked only if still on a core (or inside) after a pause:
// most threads wait in the kernel, and a question is a signal. A thread
// still inside a range at the end keeps that one from being clear; one
// never seen anywhere keeps them all.
Result<std::vector<bool>, std::string> clear_threads(const Ranges& ranges) {
  constexpr int kRounds = 4;
  const std::optional<std::vector<uint32_t>> others = other_threads();
  if (!others) return unexpected(std::string("the process's threads could not be listed"));
  std::vector<Unknown> unknown;
  for (const uint32_t tid : *others) unknown.push_back({tid});
  g_board.restorers = arch::current_restorers();
  g_board.ranges = ranges.data();
  g_board.count = ranges.size();
  const auto framed = std::make_unique<std::atomic<uint64_t>[]>(ranges.size() / 64 + 1);
  g_board.framed = framed.get();
  g_board.stack_unreadable.store(false);
  for (int round = 0; round < kRounds && !unknown.empty(); ++round) {
    if (round > 0) pause_microseconds(500);
    look(unknown, ranges);
    if (round > 0 && round + 1 < kRounds && !unknown.empty()) ask_all(unknown, ranges);
  }
  std::vector<bool> clear(ranges.size(), true);
  for (const Unknown& thread : unknown) {
    if (thread.vforking) {
      return unexpected("thread " + std::to_string(thread.tid) +
                        " waits in vfork: its child runs this code until it execs, and could be "
                        "inside the displaced bytes");
    }
    if (thread.range == kNowhere) {
      return unexpected("thread " + std::to_string(thread.tid) +
                        " did not answer where it runs: it could be inside the displaced bytes");
    }
    clear[thread.range] = false;
  }
  // A place a running handler of the program returns to is on a stack,
  // not in any thread's pc: this thread's own too.
  const auto hidden = hidden_return_places();
  if (hidden) {
    for (const arch::InterruptedPlace& place : *hidden) mark_framed(place);
  }
  g_board.framed = nullptr;  // freed on return; no round is open
  if (!hidden || g_board.stack_unreadable.load()) {
    return unexpected(std::string("a thread's stack could not be read for signal frames"));
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    if ((framed[i / 64].load() >> (i % 64)) & 1) clear[i] = false;
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (clear[i] && interrupted_inside(ranges[i].begin, ranges[i].end)) clear[i] = false;
  }
  return clear;
}

void set_caller_places(std::span<const uint64_t> places) noexcept {
  g_caller_place_count.store(0);
  const size_t count = std::min(places.size(), g_caller_places.size());
  for (size_t i = 0; i < count; ++i) g_caller_places[i].store(places[i]);
  g_caller_place_count.store(count);
}

// The signal frames on a stack from `sp` up, appended to `places`; false
// when the stack could not be read.
bool add_frames_above(uint64_t sp, arch::StackBounds alternate,
                      std::vector<arch::InterruptedPlace>& places) {
  constexpr size_t kMaxPlaces = 16;
  arch::InterruptedPlace frames[kMaxPlaces];
  const arch::FrameScan scan = arch::interrupted_places_above(
      sp, alternate, arch::current_restorers(), frames, g_stack_buffer);
  places.insert(places.end(), frames, frames + scan.found);
  return !scan.unreadable;
}

// The parked thread's places, or false when it is not seen waiting.
bool add_parked_places(uint32_t tid, std::vector<arch::InterruptedPlace>& places) {
  const Sighting seen = look_at(tid);
  if (seen.kind != Sighting::kStopped) return false;
  places.push_back({seen.pc, 0});
  places.push_back({seen.pc - arch::kSyscallInsnBytes, 0});
  return add_frames_above(seen.sp, {}, places);
}

std::optional<std::vector<arch::InterruptedPlace>> hidden_return_places() {
  std::vector<arch::InterruptedPlace> places;
  if (!add_frames_above(own_stack_pointer(), own_alternate_stack(), places)) return std::nullopt;
  const size_t callers = g_caller_place_count.load();
  for (size_t i = 0; i < callers; ++i) places.push_back({g_caller_places[i].load(), 0});
  const uint32_t parked = g_parked.load();
  if (parked != 0 && !add_parked_places(parked, places)) return std::nullopt;
  return places;
}

void set_parked_thread(uint32_t tid) noexcept { g_parked.store(tid); }

bool parked_thread_settled() {
  for (int wait = 0; wait < 10000; ++wait) {
    const uint32_t parked = g_parked.load();
    if (parked != 0 && look_at(parked).kind == Sighting::kStopped) return true;
    pause_microseconds(100);
  }
  return false;
}

bool no_other_threads() {
  const std::optional<std::vector<uint32_t>> others = other_threads();
  if (!others) return false;
  const uint32_t parked = g_parked.load();
  return std::all_of(others->begin(), others->end(), [&](uint32_t tid) { return tid == parked; });
}

bool answer_question(int sig, const siginfo_t* info, ucontext_t& context) {
  if (tag_of(sig, *info) != kTag) return false;
  const auto value = reinterpret_cast<uint64_t>(info->si_value.sival_ptr);
  g_board.busy.fetch_add(1);
  if (g_board.open.load() && g_board.round.load() == static_cast<uint32_t>(value)) {
    const uint64_t pc = arch::context_pc(context);
    const size_t inside = range_holding(pc, g_board.ranges, g_board.count);
    bool clear = inside == kNowhere;
    if (!clear) {
      const core::DisplacedRange& range = g_board.ranges[inside];
      if (pc > range.begin && pc < range.end) {
        // Mid-way through the displaced instructions: on in the copy, where
        // each starts at its offset in the original.
        arch::set_context_pc(context, range.copy + (pc - range.begin));
        clear = true;
      } else if (pc >= range.slot && pc - range.slot <= range.end - range.begin) {
        // In the out-of-line slot a trap sent it to before traps went to the
        // trampoline (a thread the machine had not run since): at its copy
        // of the first displaced instruction, or at its jump back past it.
        // The copy holds that instruction, and the next at the same offset.
        arch::set_context_pc(context, range.copy + (pc - range.slot));
        clear = true;
      }
    }
    // Handlers this signal interrupted may return into others. Read with
    // a small buffer, and not at all with little room left on the
    // alternate stack this handler may run on (the program's, maybe small).
    const arch::StackBounds alternate = alternate_stack(context);
    const uint64_t here = own_stack_pointer();
    if (here >= alternate.begin && here < alternate.end && here - alternate.begin < kHandlerRoom) {
      g_board.stack_unreadable.store(true);
    } else {
      uint64_t buffer[16];
      note_frames(arch::context_sp(context), alternate, buffer);
    }
    // The asker reads the answers only once the round is closed and no
    // handler is busy: the count may run ahead of the stores.
    const uint32_t index = g_board.answered.fetch_add(1);
    if (index < kMaxAsked) {
      const uint64_t where = clear ? 0 : inside + 1;
      g_board.answers[index].store((uint64_t{arch::raw_gettid()} << 32) | where);
    }
  }
  g_board.busy.fetch_sub(1);
  return true;  // a late question of a closed round is answered by nothing
}

std::optional<std::vector<uint32_t>> other_threads() {
  std::vector<uint32_t> tids;
  if (!enter_agent_open()) return std::nullopt;
  const long fd = arch::raw_syscall(SYS_openat, AT_FDCWD, arch::raw_arg("/proc/self/task"),
                                    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (arch::raw_failed(fd)) {
    leave_agent_open();
    return std::nullopt;
  }
  const uint32_t self = arch::raw_gettid();
  alignas(8) char buffer[4096];
  while (true) {
    const long n = arch::raw_syscall(SYS_getdents64, fd, arch::raw_arg(buffer), sizeof(buffer));
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      struct Dirent {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* entry = reinterpret_cast<const Dirent*>(buffer + at);
      const auto tid = static_cast<uint32_t>(std::strtoul(entry->name, nullptr, 10));
      if (tid != 0 && tid != self) tids.push_back(tid);
      at += entry->reclen;
    }
  }
  arch::raw_syscall(SYS_close, fd);
  leave_agent_open();
  return tids;
}

void hold_questions_for_exec() noexcept {
  g_quiet.store(true);
  // A round open now may have asked this thread: the pause's system call
  // lets the question in, the handler answers it, and the round ends.
  while (g_board.open.load() || g_board.busy.load() != 0) pause_microseconds(50);
}

void release_questions() noexcept { g_quiet.store(false); }

bool send_tagged_signal(uint32_t tid, uint32_t tag, uint32_t low) {
  siginfo_t info{};
  info.si_signo = kQuestionSignal;
  info.si_code = SI_QUEUE;
  info.si_pid = static_cast<pid_t>(arch::own_pid());
  info.si_uid = static_cast<uid_t>(arch::raw_syscall(SYS_getuid));
  info.si_value.sival_ptr = reinterpret_cast<void*>((uint64_t{tag} << 32) | low);
  return !arch::raw_failed(arch::raw_syscall(SYS_rt_tgsigqueueinfo, info.si_pid, tid,
                                             kQuestionSignal, arch::raw_arg(&info)));
}

uint32_t tag_of(int sig, const siginfo_t& info) {
  if (sig != kQuestionSignal || info.si_code != SI_QUEUE ||
      static_cast<uint32_t>(info.si_pid) != arch::own_pid()) {
    return 0;
  }
  return static_cast<uint32_t>(reinterpret_cast<uint64_t>(info.si_value.sival_ptr) >> 32);
}

}  // namespace dprobe::agent
