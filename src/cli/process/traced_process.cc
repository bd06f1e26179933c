// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/traced_process.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "cli/process/proc_status.h"

namespace dprobe::cli {
namespace {

// Below the stack pointer: the red zone a leaf function may use, and then
// some room.
constexpr uint64_t kStackGap = 1024;

std::string errno_text() { return std::strerror(errno); }

std::set<pid_t> list_threads(pid_t pid) {
  std::set<pid_t> tids;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return tids;
  while (dirent* entry = ::readdir(d)) {
    if (entry->d_name[0] != '.') tids.insert(static_cast<pid_t>(std::atol(entry->d_name)));
  }
  ::closedir(d);
  return tids;
}

std::string seize_failure(pid_t pid) {
  const int error = errno;
  std::string text = "cannot trace process " + std::to_string(pid) + ": " + std::strerror(error);
  if (error == EPERM) {
    text +=
        " (it belongs to another user, is set-uid, or ptrace is restricted: see "
        "/proc/sys/kernel/yama/ptrace_scope; run dprobe as its user)";
  } else if (error == ESRCH) {
    text = "no such process: " + std::to_string(pid);
  }
  return text;
}

// A thread that has exited but is not reaped yet: a main thread that
// called pthread_exit stays so while the others run.
bool is_zombie(pid_t pid, pid_t tid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() &&
         (text[close + 2] == 'Z' || text[close + 2] == 'X');
}

// Gone, or on its way: no stat file, or a zombie's or a dead task's.
bool exited(pid_t pid, pid_t tid) {
  const std::string stat =
      "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat";
  return ::access(stat.c_str(), F_OK) != 0 || is_zombie(pid, tid);
}

// Whether this process traces the thread (TracerPid in its status).
bool traced_by_us(pid_t pid, pid_t tid) {
  const std::string tracer =
      status_field("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid), "TracerPid");
  return !tracer.empty() && std::atol(tracer.c_str()) == ::getpid();
}

Result<void> write_memory(pid_t pid, uint64_t address, const void* data, size_t size) {
  iovec local{const_cast<void*>(data), size};
  iovec remote{reinterpret_cast<void*>(address), size};
  if (::process_vm_writev(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size)) return {};
  // process_vm_writev honours page protections; /proc/PID/mem does not need to.
  const std::string path = "/proc/" + std::to_string(pid) + "/mem";
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return fail("cannot write the process's memory: " + errno_text());
  const ssize_t written = ::pwrite(fd, data, size, static_cast<off_t>(address));
  ::close(fd);
  if (written != static_cast<ssize_t>(size)) return fail("cannot write the process's memory");
  return {};
}

bool is_clone_event(int status) { return (status >> 8) == (SIGTRAP | (PTRACE_EVENT_CLONE << 8)); }

}  // namespace

TracedProcess::TracedProcess(TracedProcess&& other) noexcept
    : pid_(other.pid_),
      caller_(other.caller_),
      threads_(std::move(other.threads_)),
      pending_signals_(std::move(other.pending_signals_)),
      scratch_(other.scratch_),
      attached_(other.attached_) {
  other.attached_ = false;
}

TracedProcess::~TracedProcess() { detach(); }

// The calls run on the main thread, or on the first live one when the
// main thread has exited.
Result<TracedProcess> TracedProcess::stop(pid_t pid) {
  auto process = hold(pid, {});
  if (!process) return process;
  if (process->threads_.empty()) {
    return fail("process " + std::to_string(pid) + " has no live thread");
  }
  process->caller_ = process->threads_.contains(pid) ? pid : *process->threads_.begin();
  return process;
}

Result<TracedProcess> TracedProcess::hold(pid_t pid, const std::set<pid_t>& running) {
  TracedProcess process(pid);
  process.attached_ = true;
  if (auto held = process.hold_others(running); !held) {
    process.detach();
    return unexpected(held.error());
  }
  return process;
}

Result<bool> TracedProcess::seize(pid_t tid) {
  if (::ptrace(PTRACE_SEIZE, tid, nullptr, PTRACE_O_TRACECLONE) != 0) {
    if (errno == ESRCH) return false;  // the thread just exited
    // One that is exiting refuses too (EPERM) while /proc still lists it.
    if (errno == EPERM && exited(pid_, tid)) return false;
    // One a seized thread made is ours already (PTRACE_O_TRACECLONE), and
    // reports its first stop.
    if (errno != EPERM || !traced_by_us(pid_, tid)) return fail(seize_failure(pid_));
  } else {
    ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
  }
  threads_.insert(tid);
  if (auto stopped = wait_for_stop(tid); !stopped) return unexpected(stopped.error());
  return threads_.contains(tid);
}

// Threads may be created while we seize: the list is read again until it
// holds nothing new (new ones made after are caught by PTRACE_O_TRACECLONE).
Result<void> TracedProcess::hold_others(const std::set<pid_t>& running) {
  for (int round = 0; round < 100; ++round) {
    bool found_new = false;
    for (pid_t tid : list_threads(pid_)) {
      // A main thread that called pthread_exit stays a zombie while the others run.
      if (threads_.contains(tid) || running.contains(tid) || is_zombie(pid_, tid)) continue;
      found_new = true;
      if (auto seized = seize(tid); !seized) return unexpected(seized.error());
    }
    if (!found_new) return {};
  }
  return fail("the process keeps creating threads; cannot stop them all");
}

Result<void> TracedProcess::wait_for_stop(pid_t tid) {
  while (true) {
    int status = 0;
    // A Ctrl-C meanwhile is for later (attach detaches once set up).
    pid_t waited;
    while ((waited = ::waitpid(tid, &status, __WALL)) < 0 && errno == EINTR) {
    }
    if (waited != tid) return fail("waiting for thread: " + errno_text());
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      threads_.erase(tid);
      return {};
    }
    const int event = status >> 16;
    if (event != 0 && event != PTRACE_EVENT_STOP) {
      // Inside a system call (a clone's, PTRACE_O_TRACECLONE): the thread
      // must finish it first. Taken here, a call would run before the
      // clone returns, and the thread get back the registers of a system
      // call not yet made (clone3 seen to fail, and done again by clone).
      // Interrupted again, it stops once it has returned.
      ::ptrace(PTRACE_CONT, tid, nullptr, nullptr);
      ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
      continue;
    }
    // Stopped by a signal on its way to the thread rather than by our
    // interrupt: it is given on when the thread is let go, not lost.
    if (event == 0) pending_signals_[tid] = WSTOPSIG(status);
    return {};
  }
}

// A thread stopped in nanosleep, poll or a futex wait with a timeout would
// go on through restart_syscall, and stay there: if it is the thread a
// later attach borrows (the main one), the agent's handlers its calls run
// reset the restart block, and the call would fail with EINTR
// (arch::reissue_stopped_syscall). It issues the call again instead (its
// timeout starts over), as the calls themselves do.
void TracedProcess::reissue_interrupted_syscall(pid_t tid) {
  arch::RemoteRegs regs{};
  if (!arch::read_remote_regs(tid, regs)) return;
  if (arch::reissue_stopped_syscall(regs)) (void)arch::write_remote_regs(tid, regs);
}

// A thread can only be let go from a ptrace stop. One created during a call
// (seized through PTRACE_O_TRACECLONE) may not have reported its first stop
// yet: wait for it, then let it go. A signal that stopped it when it was
// seized goes on to it, with its siginfo.
void TracedProcess::let_go(pid_t tid) {
  const auto pending = pending_signals_.find(tid);
  const long sig = pending == pending_signals_.end() ? 0 : pending->second;
  if (pending != pending_signals_.end()) pending_signals_.erase(pending);
  // Only the main thread is borrowed by a later attach: the others keep
  // the kernel's exact restart.
  if (sig == 0 && tid == pid_) reissue_interrupted_syscall(tid);
  const std::string alive = "/proc/" + std::to_string(pid_) + "/task/" + std::to_string(tid);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    if (::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(sig)) == 0) return;
    if (errno != ESRCH || ::access(alive.c_str(), F_OK) != 0) return;
    int status = 0;
    if (::waitpid(tid, &status, __WALL | WNOHANG) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

Result<uint64_t> TracedProcess::push_string(const std::string& text) {
  if (scratch_ == 0) {
    arch::RemoteRegs regs{};
    if (!arch::read_remote_regs(caller_, regs)) {
      return fail("cannot read registers: " + errno_text());
    }
    scratch_ = (arch::remote_sp(regs) - kStackGap) & ~uint64_t{15};
  }
  scratch_ = (scratch_ - text.size() - 1) & ~uint64_t{15};
  if (auto written = write_memory(caller_, scratch_, text.c_str(), text.size() + 1); !written) {
    return unexpected(written.error());
  }
  return scratch_;
}

namespace {

// The signals the agent's handlers take from the code they run on (a
// breakpoint's SIGTRAP, the census's SIGSEGV, a fault's SIGBUS, a
// dispatched system call's SIGSYS). A thread stopped with them blocked (the
// main thread in pthread_create's clone, which blocks every signal) would
// be killed by the first breakpoint its call reaches: the kernel delivers
// a blocked trap as if no handler were there.
constexpr uint64_t kAgentSignals = (uint64_t{1} << (SIGTRAP - 1)) | (uint64_t{1} << (SIGSEGV - 1)) |
                                   (uint64_t{1} << (SIGBUS - 1)) | (uint64_t{1} << (SIGSYS - 1));

// The thread's signal mask with the agent's signals let through, for as
// long as it lives; then the program's own again.
class AgentSignalsOpen {
 public:
  explicit AgentSignalsOpen(pid_t tid) : tid_(tid) {
    saved_ = ::ptrace(PTRACE_GETSIGMASK, tid_, sizeof(mask_), &mask_) == 0;
    if (!saved_ || (mask_ & kAgentSignals) == 0) return;
    uint64_t open = mask_ & ~kAgentSignals;
    changed_ = ::ptrace(PTRACE_SETSIGMASK, tid_, sizeof(open), &open) == 0;
  }
  ~AgentSignalsOpen() {
    if (changed_) (void)::ptrace(PTRACE_SETSIGMASK, tid_, sizeof(mask_), &mask_);
  }
  AgentSignalsOpen(const AgentSignalsOpen&) = delete;
  AgentSignalsOpen& operator=(const AgentSignalsOpen&) = delete;

 private:
  pid_t tid_;
  uint64_t mask_ = 0;
  bool saved_ = false;
  bool changed_ = false;
};

}  // namespace

Result<uint64_t> TracedProcess::call(uint64_t function, std::initializer_list<uint64_t> args,
                                     std::chrono::milliseconds timeout,
                                     const std::function<void()>& between) {
  const AgentSignalsOpen open(caller_);  // while the call runs; given back as it was
  arch::RemoteRegs saved{};
  if (!arch::read_remote_regs(caller_, saved)) {
    return fail("cannot read registers: " + errno_text());
  }
  (void)arch::reissue_stopped_syscall(saved);
  if (scratch_ == 0) scratch_ = (arch::remote_sp(saved) - kStackGap) & ~uint64_t{15};
  arch::RemoteRegs regs = saved;
  // A call returns to address 0: the fault there is how we know it is done.
  const uint64_t return_slot =
      arch::set_up_remote_call(regs, function, {args.begin(), args.size()}, scratch_ - 256);
  const uint64_t return_address = 0;
  if (return_slot != 0) {
    if (auto pushed = write_memory(caller_, return_slot, &return_address, 8); !pushed) {
      return unexpected(pushed.error());
    }
  }
  if (!arch::write_remote_regs(caller_, regs)) {
    return fail("cannot set registers: " + errno_text());
  }
  if (::ptrace(PTRACE_CONT, caller_, nullptr, nullptr) != 0)
    return fail("cannot resume: " + errno_text());

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  uint64_t result = 0;
  while (true) {
    int status = 0;
    const pid_t tid = ::waitpid(-1, &status, __WALL | WNOHANG);
    if (tid == 0) {
      if (between) between();
      if (std::chrono::steady_clock::now() > deadline) {
        if (auto back = take_back(saved); !back) return unexpected(back.error());
        return fail("the process did not finish the call in time (a lock it needs may be held)");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    if (tid < 0) return fail("waiting for the call: " + errno_text());
    if (tid != caller_ && threads_.contains(tid)) {  // held (hold_others): stays so
      if (WIFEXITED(status) || WIFSIGNALED(status)) threads_.erase(tid);
      continue;
    }
    if (tid != caller_) {
      // A thread the call created (the agent's own), seized through
      // PTRACE_O_TRACECLONE: it runs untraced from its first stop, as the
      // other threads do (the call may wait for it).
      if (WIFSTOPPED(status)) ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
      continue;
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) return fail("the process ended during the call");
    if (is_clone_event(status)) {
      ::ptrace(PTRACE_CONT, caller_, nullptr, nullptr);
      continue;
    }
    const int sig = WSTOPSIG(status);
    arch::RemoteRegs now{};
    if (sig == SIGSEGV && arch::read_remote_regs(caller_, now) && arch::remote_pc(now) == 0) {
      result = arch::remote_result(now);
      break;
    }
    // Something else arrived for this thread: it gets it, and the call goes on.
    ::ptrace(PTRACE_CONT, caller_, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig)));
  }
  if (!arch::write_remote_regs(caller_, saved)) {
    return fail("cannot restore registers: " + errno_text());
  }
  return result;
}

// Stops the main thread inside the call that did not return, and puts its
// registers back as they were before it: the call is abandoned where it
// waited, and the thread goes on as if it had never been made.
Result<void> TracedProcess::take_back(const arch::RemoteRegs& regs) {
  ::ptrace(PTRACE_INTERRUPT, caller_, nullptr, nullptr);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t tid = ::waitpid(caller_, &status, __WALL | WNOHANG);
    if (tid == caller_ && (WIFEXITED(status) || WIFSIGNALED(status))) {
      return fail("the process ended during the call");
    }
    if (tid == caller_ && WIFSTOPPED(status)) {
      if (!arch::write_remote_regs(caller_, regs)) {
        return fail("cannot restore registers: " + errno_text());
      }
      return {};
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return fail("the process did not stop to be given its registers back");
}

Result<TracedProcess::StopPoint> TracedProcess::main_stop_point() const {
  arch::RemoteRegs regs{};
  if (!arch::read_remote_regs(caller_, regs)) {
    return fail("cannot read registers: " + errno_text());
  }
  const uint64_t pc = arch::remote_pc(regs);
  uint8_t code[4];  // enough for a system call instruction (syscall: 2, svc: 4)
  const bool readable = static_cast<bool>(read(pc, code, sizeof(code)));
  return StopPoint{pc, arch::in_remote_syscall(regs, {code, readable ? sizeof(code) : 0})};
}

Result<void> TracedProcess::read(uint64_t address, void* out, size_t size) const {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  if (::process_vm_readv(caller_ > 0 ? caller_ : pid_, &local, 1, &remote, 1, 0) !=
      static_cast<ssize_t>(size)) {
    return fail("cannot read the process's memory: " + errno_text());
  }
  return {};
}

void TracedProcess::release_other_threads() {
  for (auto it = threads_.begin(); it != threads_.end();) {
    if (*it == caller_) {
      ++it;
      continue;
    }
    let_go(*it);
    it = threads_.erase(it);
  }
}

void TracedProcess::detach() {
  if (!attached_) return;
  attached_ = false;
  // Threads made while we held the process are seized too (those of the
  // threads let go early are not): find them all.
  for (pid_t tid : list_threads(pid_)) {
    if (!threads_.contains(tid) && traced_by_us(pid_, tid)) threads_.insert(tid);
  }
  for (pid_t tid : threads_) let_go(tid);
}

}  // namespace dprobe::cli
