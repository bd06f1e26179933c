// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// System calls at the edges (tests/programs/syscall_edges.c), where the
// program must behave exactly as it does untraced: a signal that
// interrupts a blocking read (EINTR, or the read restarted), a program
// with its own SIGSYS handler and a seccomp filter that traps a call, a
// program that closes every descriptor before it works.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"
#include "integration/syscall_lines.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kEdges = program("syscall_edges_O2");

// The exit lines of the system call `name`.
std::vector<std::string> results_of(const std::string& trace, std::string_view name) {
  std::vector<std::string> results;
  for (const SyscallLine& line : syscall_lines_of(parse_syscall_trace(trace), name)) {
    if (line.is_exit()) results.push_back(line.result());
  }
  return results;
}

// ---- Signals in blocking calls -----------------------------------------------------

// SIGALRM's handler, installed without SA_RESTART, runs while read waits
// on an empty pipe: the read fails with EINTR, in the trace and in the
// program; the next read gets what the handler wrote.
TEST(SyscallSignals, AHandlerWithoutRestartInterruptsTheRead) {
  const RunResult run =
      run_traced({"syscalls:sys_enter_read", "syscalls:sys_exit_read"}, {kEdges, "eintr"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("syscall_edges: read -1 errno 4 then 4 'data'\n")) << run;
  EXPECT_THAT(results_of(run.out, "read"), ElementsAre("0xfffffffffffffffc", "0x4")) << run;
}

// With SA_RESTART the program never sees the interruption: its one read
// returns the data the handler wrote.
TEST(SyscallSignals, AHandlerWithRestartLetsTheReadGetTheData) {
  const RunResult run =
      run_traced({"syscalls:sys_enter_read", "syscalls:sys_exit_read"}, {kEdges, "restart"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("syscall_edges: read 4 errno 0 then 4 'data'\n")) << run;
  const auto results = results_of(run.out, "read");
  ASSERT_FALSE(results.empty()) << run;
  EXPECT_EQ(results.back(), "0x4") << run;
}

// A thread cancelled (pthread_cancel) while it waits in a read that the
// dispatch makes for it unwinds through the agent's SIGSYS handler and on
// through its own frames, whose cleanup handlers count (ret_threads
// checks them and says "threads: ok"). It took the program down with
// SIGABRT: the agent's handler had unwind tables with a personality (the
// agent's own copy, whose unwinder was never set up), and its restorer was
// not known as a signal frame's.
TEST(SyscallSignals, AThreadCancelledInADispatchedCallUnwindsThroughTheAgent) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{}, std::vector<std::string>{"--no-optimize"}}) {
    std::vector<std::string> args = options;
    args.insert(args.end(), {"-o", "/dev/null"});
    const RunResult run =
        run_traced({"syscalls:sys_enter_read"}, {program("ret_threads_O2"), "cancel"}, args);
    EXPECT_EQ(run.status, 0) << run;
    EXPECT_THAT(run.out, HasSubstr("threads: ok")) << run;
  }
}

// A thread faulted in the middle of the bytes that rewriting fault_site
// replaces, and its handler waits while another thread calls from that
// site until it sees it rewritten: no thread's pc is inside those bytes,
// but the handler returns into them. The site stays on the dispatch until
// the handler is done, and every call gets its answer. (Without the
// agent's note of where handlers return, the site was rewritten under the
// handler, which then returned into the middle of the jump: SIGILL, a
// wrong answer, or a hang.)
TEST(SyscallSignals, AHandlerThatReturnsIntoASiteKeepsItFromBeingRewritten) {
  const RunResult untraced = run_program({kEdges, "handler_in_site"});
  ASSERT_EQ(untraced.status, 0) << untraced;
  for (int run_number = 0; run_number < 3; ++run_number) {
    const RunResult run = run_traced({"syscalls:sys_enter_getppid"}, {kEdges, "handler_in_site"},
                                     {"-o", "/dev/null"});
    ASSERT_EQ(run.status, 0) << run;
    EXPECT_EQ(run.out, "syscall_edges: handler_in_site ppid 1\n") << run;
  }
}

// The same with a handler the kernel runs itself (SIGFPE, which the agent
// does not hold, so no note of it is taken): the census reads the signal
// frame off the waiting thread's stack. (Before, the site was rewritten
// under the handler: SIGILL in every run.)
TEST(SyscallSignals, AHandlerTheAgentDoesNotSeeThatReturnsIntoASiteKeepsItFromBeingRewritten) {
  const RunResult untraced = run_program({kEdges, "handler_in_site", "division"});
  ASSERT_EQ(untraced.status, 0) << untraced;
  for (int run_number = 0; run_number < 3; ++run_number) {
    const RunResult run = run_traced({"syscalls:sys_enter_getppid"},
                                     {kEdges, "handler_in_site", "division"}, {"-o", "/dev/null"});
    ASSERT_EQ(run.status, 0) << run;
    EXPECT_EQ(run.out, "syscall_edges: handler_in_site ppid 1\n") << run;
  }
}

// A thread cancelled while it waits in an open the dispatch makes for it
// (of a FIFO with no writer) never leaves the agent's descriptor gate: the
// agent lets its hold go once the thread is gone, and its own /proc reads
// (the census that rewriting a site needs) work again: the program sees
// its site rewritten. (Before, the gate stayed held for good and no site
// was rewritten again.)
TEST(SyscallSignals, AThreadCancelledInAnOpenLeavesTheAgentItsFiles) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const RunResult run =
      run_traced({"syscalls:sys_enter_getppid"}, {kEdges, "cancel_in_open", dir.file("fifo")},
                 {"-o", "/dev/null"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_EQ(run.out, "syscall_edges: cancel_in_open canceled 1 calls ok 1\n") << run;
  EXPECT_THAT(run.err, HasSubstr("syscall_edges: site rewritten 1\n")) << run;
}

// ---- A program's own SIGSYS -----------------------------------------------------------

// The program's seccomp filter traps getpid (SECCOMP_RET_TRAP): its own
// handler still gets that SIGSYS, with si_code SYS_SECCOMP and the call's
// number, and its answer (4242) is what getpid returns; the sandboxed
// program then makes a thread that works.
TEST(SyscallSeccomp, TheProgramsOwnHandlerGetsItsSigsys) {
  const RunResult run = run_traced({"syscalls:sys_enter_getppid"}, {kEdges, "seccomp"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("syscall_edges: seccomp getpid 4242 code 1 nr 39 ")) << run;
  EXPECT_THAT(run.out, HasSubstr(" errno 0 thread 1 ")) << run;
}

// The thread the sandboxed program makes is traced: main's getppid and
// the thread's three (the agent no longer asks getpid in the new thread,
// which the program's filter trapped).
TEST(SyscallSeccomp, AThreadOfTheSandboxedProgramIsTraced) {
  const RunResult run = run_traced({"syscalls:sys_enter_getppid"}, {kEdges, "seccomp"});
  ASSERT_EQ(run.status, 0) << run;
  const std::map<uint64_t, size_t> calls = lines_per_tid(parse_syscall_trace(run.out));
  ASSERT_EQ(calls.size(), 2u) << "main and its thread: " << run;
  EXPECT_EQ(calls.begin()->second + calls.rbegin()->second, 4u) << run;
}

// Exactly as untraced, down to what its handler is told: one SIGSYS (its
// getpid's), at its own call site ("site 1 ... traps 1").
TEST(SyscallSeccomp, TheProgramBehavesExactlyAsUntraced) {
  const RunResult untraced = run_program({kEdges, "seccomp"});
  ASSERT_EQ(untraced.status, 0) << untraced;
  ASSERT_THAT(untraced.out, HasSubstr(" site 1 ")) << untraced;
  ASSERT_THAT(untraced.out, HasSubstr(" traps 1\n")) << untraced;
  const RunResult run =
      run_traced({"syscalls:sys_enter_getppid"}, {kEdges, "seccomp"}, {"-o", "/dev/null"});
  EXPECT_EQ(run.status, untraced.status) << run;
  EXPECT_EQ(run.out, untraced.out) << run;
}

// Its site rewritten, the trapped call is made from the agent's gadget
// for that site: the program's handler is still told its own site, every
// time, and its answer is still the call's result.
TEST(SyscallSeccomp, ARewrittenSitesTrapsReachTheProgramAsItsOwn) {
  const RunResult untraced = run_program({kEdges, "seccomp_loop"});
  ASSERT_EQ(untraced.status, 0) << untraced;
  EXPECT_EQ(untraced.out, "syscall_edges: seccomp loop answered 1 site 1 traps 1\n");
  const RunResult run = run_traced({"syscalls:sys_enter_getpid", "syscalls:sys_exit_getpid"},
                                   {kEdges, "seccomp_loop"}, {"-o", "/dev/null"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_EQ(run.out, untraced.out) << run;
  EXPECT_THAT(run.err, HasSubstr("syscall_edges: site rewritten 1\n")) << run;
}

// ---- No descriptors ------------------------------------------------------------------

// The program closes 0..1023 (and, with "range", every descriptor through
// close_range, the agent's too) before it works: its calls are traced on,
// its file opens as descriptor 0, and what it writes there is whole.
void expect_traced_on_after_closing(const std::string& how) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string file = dir.file("out");
  std::vector<std::string> command{kEdges, "closeall", file};
  if (!how.empty()) command.push_back(how);
  const RunResult run = run_traced({"syscalls:sys_exit_openat", "syscalls:sys_*_getppid"}, command);
  ASSERT_EQ(run.status, 0) << run;
  const std::string written = read_file(file);
  const auto ppid = last_number_after(written, " ppid ");
  ASSERT_TRUE(ppid) << written;
  EXPECT_EQ(written, "syscall_edges: closeall fd 0 ppid " + std::to_string(*ppid) + "\n");
  const auto lines = parse_syscall_trace(run.out);
  const auto opened = results_of(run.out, "openat");
  ASSERT_FALSE(opened.empty()) << run;
  EXPECT_EQ(opened.back(), "0x0") << "its file is descriptor 0: " << run;
  const std::string exit = "sys_getppid -> " + exit_value(static_cast<int64_t>(*ppid));
  EXPECT_THAT(texts_of(syscall_lines_of(lines, "getppid")),
              ElementsAre("sys_getppid()", exit, "sys_getppid()", exit, "sys_getppid()", exit))
      << run;
}

TEST(SyscallDescriptors, AProgramThatClosesDescriptors0To1023IsTracedOn) {
  expect_traced_on_after_closing("");
}

// After close_range(0, ~0U) as well: the program's open still gets 0, though
// the census that rewriting a call site runs opens /proc files meanwhile
// (it once took descriptor 0 for a moment; agent/descriptor_gate.h).
TEST(SyscallDescriptors, AProgramThatClosesEveryDescriptorWithCloseRangeIsTracedOn) {
  expect_traced_on_after_closing("range");
}

}  // namespace
}  // namespace dprobe::integration
