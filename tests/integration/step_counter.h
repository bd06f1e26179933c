// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// An oracle for hit counts that shares nothing with dprobe: a program run
// under ptrace, stopped at the entry of one of its functions (a breakpoint
// of the oracle's own, through PTRACE_POKETEXT), then single-stepped until
// that call returns. Every instruction executed meanwhile is counted by
// address, and reported as SYMBOL+OFFSET for the symbols asked about.
//
//   const StepCounts counts = count_steps(program("boundaries_O2"), {"60"}, "run_all",
//                                         {"run_all", "sum_loop"});
//   counts.runs.at({"sum_loop", 4})   // times the instruction at sum_loop+4 ran
//
// A rep-prefixed instruction traps once per iteration at the same address:
// consecutive steps at one address count once (no function of the test
// programs jumps to itself).
#ifndef DPROBE_TESTS_INTEGRATION_STEP_COUNTER_H_
#define DPROBE_TESTS_INTEGRATION_STEP_COUNTER_H_

#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"
#include "integration/live_process.h"

namespace dprobe::integration {

struct StepCounts {
  std::string error;  // empty when the counts are complete
  std::map<std::pair<std::string, uint64_t>, uint64_t> runs;
  int status = -1;  // the program's exit status
  std::string out;  // its stdout
};

namespace detail {

struct FunctionRange {
  std::string name;
  uint64_t begin;
  uint64_t end;
};

inline const FunctionRange* function_at(const std::vector<FunctionRange>& functions, uint64_t pc) {
  for (const FunctionRange& f : functions) {
    if (pc >= f.begin && pc < f.end) return &f;
  }
  return nullptr;
}

// Stopped by a SIGTRAP, as single steps and breakpoints stop a tracee.
inline bool wait_trap(pid_t pid) {
  int wstatus = 0;
  return ::waitpid(pid, &wstatus, 0) == pid && WIFSTOPPED(wstatus) && WSTOPSIG(wstatus) == SIGTRAP;
}

// Steps from `entry`'s first instruction until it returns, counting.
inline std::string step_through_call(pid_t pid, uint64_t entry,
                                     const std::vector<FunctionRange>& functions,
                                     StepCounts& counts) {
  errno = 0;
  const long word = ::ptrace(PTRACE_PEEKTEXT, pid, entry, nullptr);
  if (errno != 0) return "cannot read the entry";
  const long trap = static_cast<long>((static_cast<unsigned long>(word) & ~0xfful) | 0xccul);
  if (::ptrace(PTRACE_POKETEXT, pid, entry, trap) != 0) return "cannot write the breakpoint";
  if (::ptrace(PTRACE_CONT, pid, nullptr, nullptr) != 0 || !wait_trap(pid))
    return "never reached the entry";
  user_regs_struct regs{};
  ::ptrace(PTRACE_GETREGS, pid, nullptr, &regs);
  if (regs.rip != entry + 1) return "stopped elsewhere than the entry: " + hex(regs.rip);
  ::ptrace(PTRACE_POKETEXT, pid, entry, word);
  regs.rip = entry;
  ::ptrace(PTRACE_SETREGS, pid, nullptr, &regs);
  const uint64_t return_sp = regs.rsp + 8;
  const uint64_t return_address =
      static_cast<uint64_t>(::ptrace(PTRACE_PEEKDATA, pid, regs.rsp, nullptr));
  uint64_t previous = 0;
  while (!(regs.rip == return_address && regs.rsp == return_sp)) {
    if (regs.rip != previous) {
      if (const FunctionRange* f = function_at(functions, regs.rip))
        ++counts.runs[{f->name, regs.rip - f->begin}];
    }
    previous = regs.rip;
    if (::ptrace(PTRACE_SINGLESTEP, pid, nullptr, nullptr) != 0 || !wait_trap(pid))
      return "a step did not stop at " + hex(previous);
    ::ptrace(PTRACE_GETREGS, pid, nullptr, &regs);
  }
  return "";
}

}  // namespace detail

inline StepCounts count_steps(const std::string& path, const std::vector<std::string>& args,
                              const std::string& entry_symbol,
                              const std::vector<std::string>& symbols) {
  StepCounts counts;
  TempDir dir;
  std::vector<std::string> storage{path};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string out_path = dir.file("out");
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (pid < 0 || !detail::wait_trap(pid)) {
    counts.error = "the program did not stop at its exec";
    return counts;
  }
  // Its executable is mapped at the exec stop: the symbols' addresses.
  std::vector<detail::FunctionRange> functions;
  for (const std::string& symbol : symbols) {
    const auto address = symbol_address(pid, symbol);
    const auto size = symbol_size(path, symbol);
    if (!address || !size) counts.error = "no address or size for " + symbol + " (nm)";
    if (address && size) functions.push_back({symbol, *address, *address + *size});
  }
  const auto entry = symbol_address(pid, entry_symbol);
  if (counts.error.empty() && !entry) counts.error = "no address for " + entry_symbol;
  if (counts.error.empty())
    counts.error = detail::step_through_call(pid, *entry, functions, counts);
  if (!counts.error.empty()) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return counts;
  }
  // To its end, untouched.
  ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  counts.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  counts.out = read_file(out_path);
  return counts;
}

}  // namespace dprobe::integration

#endif  // DPROBE_TESTS_INTEGRATION_STEP_COUNTER_H_
