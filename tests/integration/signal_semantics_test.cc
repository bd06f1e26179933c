// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The traced program's signal semantics are the kernel's, exactly
// (tests/programs/sig_semantics.c, one disposition or flag per mode): each
// mode runs untraced, then under dprobe
//   - with an entry probe on every function of libc (the agent's signal
//     path must not run into probes on the functions it would call), and
//   - with a probe on the program's probed(), which every handler calls,
//     fetching through a bad pointer (a breakpoint and a faulting read
//     inside the program's handlers, whatever they block),
// and the program's output, exit status and death signal must be the same.
//
// The fate is read as RunResult::status, 128 + signal for a death by a
// signal: dprobe run either dies by the program's signal (re-raised on
// itself) or exits 128 + signal, and both read the same here. The trace
// goes to a file of its own (-o), so stdout is the program's alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;

struct Mode {
  const char* name;
  int status;          // untraced: exit status, or 128 + the signal it dies by
  const char* output;  // a line the untraced run prints
};

void PrintTo(const Mode& mode, std::ostream* os) { *os << mode.name; }

constexpr int kKilledBy = 128;

const Mode kModes[] = {
    {"ign-kill-segv", 0, "survived kill 1\n"},
    {"ign-raise-trap", 0, "survived raise 1\n"},
    {"dfl-raise-segv", kKilledBy + SIGSEGV, "raising 11\n"},
    {"dfl-raise-bus", kKilledBy + SIGBUS, "raising 7\n"},
    {"dfl-raise-trap", kKilledBy + SIGTRAP, "raising 5\n"},
    {"dfl-kill-segv", kKilledBy + SIGSEGV, "killing\n"},
    {"ign-fault", kKilledBy + SIGSEGV, "storing\n"},
    {"blocked-fault", kKilledBy + SIGSEGV, "storing\n"},
    {"resethand", kKilledBy + SIGSEGV, "after 0: handler is SIG_DFL\nstoring 1\n"},
    {"sa-mask", 0, "in handler: usr1 1 segv 1 usr2 0\nafter: usr1 0 segv 0\n"},
    {"nodefer", 0, "enter 2 (depth 2, segv blocked 0)\nleave 2\nleave 1\n"},
    {"defer", 0, "leave 1\nenter 2 (depth 1, segv blocked 1)\nleave 2\n"},
    {"onstack", 0, "overflow caught, on the alternate stack 1\n"},
    {"thread-onstack", 0, "overflow caught, on the alternate stack 1\n"},
    {"siginfo", 0, "codes -6 1 0 "},
    {"restart", 0, "read 1 - byte x, handled 1\n"},
    {"norestart", 0, "read -1 EINTR byte -, handled 1\n"},
    {"pthread-kill", 0, "handled 1\n"},
    {"wait-trap", 0, "pending 1\nsigtimedwait 5 code 0 pid-ok 1\npending after 0, blocked 1\n"},
    {"unblock-delivers", 0, "raised: handled 0 pending 1\nunblocked: handled 1, was blocked 1\n"},
    {"sigwait-segv", 0, "sigwait 11\n"},
};

// The overflows caught on a signal stack, once more with every system call
// traced: the dispatch makes the program's calls in its SIGSYS handler,
// whose return would undo a sigaltstack made there.
const Mode kStackModes[] = {
    {"onstack", 0, "overflow caught, on the alternate stack 1\n"},
    {"thread-onstack", 0, "overflow caught, on the alternate stack 1\n"},
};

// Who sees what: the probes of each traced configuration.
enum class Probes { kEveryLibcFunction, kProgramFunction, kSystemCalls };

const char* probes_text(Probes probes) {
  switch (probes) {
    case Probes::kEveryLibcFunction:
      return "p libc.so.6:*";
    case Probes::kProgramFunction:
      return "p probed";
    case Probes::kSystemCalls:
      return "raw_syscalls:sys_enter";
  }
  return "?";
}

void PrintTo(Probes probes, std::ostream* os) { *os << probes_text(probes); }

class SignalSemantics : public ::testing::TestWithParam<std::tuple<const char*, Mode, Probes>> {
 protected:
  std::string exe() const { return program(std::string("sig_semantics_") + level()); }
  const char* level() const { return std::get<0>(GetParam()); }
  const Mode& mode() const { return std::get<1>(GetParam()); }
  Probes probes() const { return std::get<2>(GetParam()); }

  static std::vector<std::string> definitions(Probes probes) {
    if (probes == Probes::kEveryLibcFunction) return {"p libc.so.6:*"};
    if (probes == Probes::kSystemCalls) return {"raw_syscalls:sys_enter"};
    return {"p:sem/probed probed s=+0(%di):string i=%si:s64"};
  }
};

TEST_P(SignalSemantics, FateAndOutputAsUntraced) {
  const RunResult untraced = run_program({exe(), mode().name});
  ASSERT_TRUE(untraced.started && !untraced.timed_out) << untraced;
  // The program does what its mode says when nothing traces it.
  ASSERT_EQ(untraced.status, mode().status) << untraced;
  ASSERT_THAT(untraced.out, HasSubstr(mode().output)) << untraced;

  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const RunResult traced =
      run_traced(definitions(probes()), {exe(), mode().name}, {"-o", dir.file("trace")});
  EXPECT_FALSE(traced.timed_out) << traced;
  EXPECT_EQ(traced.out, untraced.out) << traced;
  EXPECT_EQ(traced.status, untraced.status) << traced;
}

std::string name_of(const ::testing::TestParamInfo<SignalSemantics::ParamType>& info) {
  const Probes probes = std::get<2>(info.param);
  const char* suffix = probes == Probes::kEveryLibcFunction ? "_libc"
                       : probes == Probes::kSystemCalls     ? "_syscalls"
                                                            : "_probed";
  std::string name =
      std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param).name + suffix;
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Modes, SignalSemantics,
    ::testing::Combine(::testing::Values("O0", "O2"), ::testing::ValuesIn(kModes),
                       ::testing::Values(Probes::kEveryLibcFunction, Probes::kProgramFunction)),
    name_of);
INSTANTIATE_TEST_SUITE_P(ModesSyscalls, SignalSemantics,
                         ::testing::Combine(::testing::Values("O0", "O2"),
                                            ::testing::ValuesIn(kStackModes),
                                            ::testing::Values(Probes::kSystemCalls)),
                         name_of);

// The probe on probed() fires inside the handlers too: every call is traced
// or counted, none is lost to the program's signal handling.
TEST(SignalSemanticsProbes, HitsInsideHandlersAreTraced) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string trace = dir.file("trace");
  const RunResult traced = run_traced({"p:sem/probed probed s=+0(%di):string i=%si:s64"},
                                      {program("sig_semantics_O2"), "defer"}, {"-o", trace});
  ASSERT_EQ(traced.status, 0) << traced;
  const auto lines = lines_of(parse_trace(read_file(trace)), "probed");
  ASSERT_EQ(lines.size(), 2u) << read_file(trace);
  EXPECT_EQ(lines[0].arg("i"), "31");
  EXPECT_EQ(lines[1].arg("i"), "32");
  for (const TraceLine& line : lines) EXPECT_EQ(line.arg("s"), "(fault)") << line;
}

// A SIGTRAP handler installed with the raw rt_sigaction system call (Go,
// cgo) takes the place of the agent's breakpoint handler behind its back.
// The program must keep seeing only its own traps. Disabled: no in-process
// fix exists (the kernel tells nobody of a sigaction, and a seccomp filter
// would need no_new_privs and outlive the session); the breakpoint goes to
// the program's handler, which returns past the trap byte into the middle
// of the displaced instruction.
TEST(SignalSemanticsRaw, DISABLED_RawSigactionTrapHandlerSeesOnlyTheProgramsTraps) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string exe = program("sig_semantics_O2");
  const RunResult untraced = run_program({exe, "raw-sigaction-trap"});
  ASSERT_EQ(untraced.status, 0) << untraced;
  ASSERT_THAT(untraced.out, HasSubstr("raw handler saw 2 traps\n"));
  const RunResult traced = run_traced({"p:sem/probed probed i=%si:s64"},
                                      {exe, "raw-sigaction-trap"}, {"-o", dir.file("trace")});
  EXPECT_EQ(traced.out, untraced.out) << traced;
  EXPECT_EQ(traced.status, untraced.status) << traced;
}

}  // namespace
}  // namespace dprobe::integration
