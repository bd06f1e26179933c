// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Programs the machine has, with every system call traced (`dprobe run
// --follow -e 'syscalls:*'`): each behaves exactly as it does untraced,
// the same stdout and exit status, and on stderr only dprobe's one line
// on the dynamic loader's calls before the agent started (counted, not
// events); its calls are in the trace. bash with subshells and a
// pipeline, python3 with threads, perl with files and a child, git, an xz
// round trip, sqlite3 with a database file. Each is skipped, with the
// reason, where the machine lacks it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"
#include "integration/syscall_lines.h"

namespace dprobe::integration {
namespace {

using ::testing::Contains;
using ::testing::IsSupersetOf;

struct Traced {
  RunResult untraced;
  RunResult traced;
  std::vector<SyscallLine> lines;
};

// The command made by `command_in` (given a directory of its own) run
// untraced, then traced: compared on stdout, status and stderr.
Traced run_both(const std::function<std::vector<std::string>(const TempDir&)>& command_in) {
  Traced both;
  TempDir untraced_dir;
  TempDir traced_dir;
  TempDir trace_dir;
  both.untraced = run_program(command_in(untraced_dir));
  both.traced = run_traced({"syscalls:*"}, command_in(traced_dir),
                           {"--follow", "-o", trace_dir.file("trace")});
  both.lines = parse_syscall_trace(read_file(trace_dir.file("trace")));
  EXPECT_EQ(both.traced.status, both.untraced.status) << both.traced;
  EXPECT_EQ(both.traced.out, both.untraced.out) << both.traced;
  // dprobe's one line: the dynamic loader's calls before the agent, which
  // are counted but are not events, said at the end.
  static const std::regex kStartupNote(
      "dprobe: not in the trace: [1-9][0-9]* of the traced system calls, made by the dynamic "
      "loader before the agent started \\(--summary counts them\\)\n$");
  std::smatch note;
  EXPECT_TRUE(std::regex_search(both.traced.err, note, kStartupNote)) << both.traced;
  const std::string program_err =
      note.empty() ? both.traced.err
                   : both.traced.err.substr(0, static_cast<size_t>(note.position(0)));
  EXPECT_EQ(program_err, both.untraced.err) << both.traced;
  return both;
}

std::set<std::string> comms_of(const std::vector<SyscallLine>& lines) {
  std::set<std::string> comms;
  for (const SyscallLine& line : lines) comms.insert(line.comm);
  return comms;
}

// Subshells (forks that exec nothing), a loop, a pipe into a builtin.
TEST(SyscallRealPrograms, BashSubshells) {
  const std::string bash = find_tool("bash");
  if (bash.empty()) GTEST_SKIP() << "no bash in PATH";
  const Traced run = run_both([&](const TempDir&) {
    return std::vector<std::string>{
        bash, "-c",
        "x=$(echo a); for i in 1 2 3; do x=\"$x$i\"; done; echo \"$x\" | read -r y; "
        "echo \"${x}b\"; exit 3"};
  });
  EXPECT_EQ(run.untraced.out, "a123b\n");
  EXPECT_EQ(run.traced.status, 3);
  EXPECT_GE(lines_per_tid(run.lines).size(), 3u) << "bash and its subshells";
}

// A pipeline of programs bash forks and execs. (A question of the
// census, pending as a child execed, once killed the new program with
// SIGSEGV: no question is asked around an exec now.)
TEST(SyscallRealPrograms, BashPipeline) {
  const std::string bash = find_tool("bash");
  if (bash.empty()) GTEST_SKIP() << "no bash in PATH";
  const Traced run = run_both([&](const TempDir&) {
    return std::vector<std::string>{
        bash, "-c",
        "printf 'b\\na\\nc\\n' | sort | tr a-z A-Z | head -2; echo \"${PIPESTATUS[@]}\"; exit 3"};
  });
  EXPECT_EQ(run.untraced.out, "A\nB\n0 0 0 0\n");
  EXPECT_EQ(run.traced.status, 3);
  EXPECT_THAT(comms_of(run.lines), IsSupersetOf({"bash", "sort", "tr", "head"}));
}

TEST(SyscallRealPrograms, Python3Threads) {
  // The interpreter itself, not a version manager's shim in front of it.
  std::string python = "/usr/bin/python3";
  if (::access(python.c_str(), X_OK) != 0) python = find_tool("python3");
  if (python.empty()) GTEST_SKIP() << "no python3 (scripts/install-deps.sh installs it)";
  const Traced run = run_both([&](const TempDir&) {
    return std::vector<std::string>{python, "-c",
                                    "import threading\n"
                                    "results = []\n"
                                    "def work(i): results.append(sum(range(i * 10000)))\n"
                                    "threads = [threading.Thread(target=work, args=(i,)) "
                                    "for i in range(8)]\n"
                                    "for t in threads: t.start()\n"
                                    "for t in threads: t.join()\n"
                                    "print(sorted(results))\n"};
  });
  EXPECT_EQ(run.untraced.status, 0) << run.untraced;
  EXPECT_GE(lines_per_tid(run.lines).size(), 9u) << "main and its 8 threads";
}

TEST(SyscallRealPrograms, PerlFilesAndAChild) {
  const std::string perl = find_tool("perl");
  if (perl.empty()) GTEST_SKIP() << "no perl in PATH";
  const Traced run = run_both([&](const TempDir& dir) {
    std::string text;
    for (int i = 0; i < 1000; ++i) text += "line " + std::to_string(i) + "\n";
    write_file(dir.file("input"), text);
    return std::vector<std::string>{
        perl, "-e",
        "open(my $f, '<', $ARGV[0]) or die; my @l = <$f>; print scalar(@l), \"\\n\";"
        "print((open(my $g, '<', '/nonexistent/dprobe') ? 'opened' : \"missing: $!\"), \"\\n\");"
        "my $pid = fork(); if ($pid == 0) { exit 7 } waitpid($pid, 0); print 'child ', $? >> 8, "
        "\"\\n\";",
        dir.file("input")};
  });
  EXPECT_EQ(run.untraced.out, "1000\nmissing: No such file or directory\nchild 7\n");
  EXPECT_THAT(texts_of(run.lines), Contains("sys_openat -> 0xfffffffffffffffe"));
  EXPECT_GE(lines_per_tid(run.lines).size(), 2u) << "perl and its child, followed";
}

TEST(SyscallRealPrograms, GitVersion) {
  const std::string git = find_tool("git");
  if (git.empty()) GTEST_SKIP() << "no git in PATH";
  const Traced run = run_both([&](const TempDir&) {
    return std::vector<std::string>{git, "--version"};
  });
  EXPECT_THAT(run.untraced.out, ::testing::StartsWith("git version "));
  EXPECT_FALSE(run.lines.empty());
}

// xz compresses under tracing to the same bytes as untraced, and xz -dc,
// traced too, gives the input back.
TEST(SyscallRealPrograms, XzRoundTrip) {
  const std::string xz = find_tool("xz");
  if (xz.empty()) GTEST_SKIP() << "no xz in PATH (scripts/install-deps.sh installs it)";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i) + " of the dprobe test\n";
  write_file(dir.file("input"), text);
  const Traced compressed = run_both([&](const TempDir&) {
    return std::vector<std::string>{xz, "-c", dir.file("input")};
  });
  ASSERT_EQ(compressed.traced.status, 0) << compressed.traced;
  write_file(dir.file("input.xz"), compressed.traced.out);
  const Traced decompressed = run_both([&](const TempDir&) {
    return std::vector<std::string>{xz, "-dc", dir.file("input.xz")};
  });
  EXPECT_TRUE(decompressed.traced.out == text) << "xz -dc gives back the input";
}

TEST(SyscallRealPrograms, Sqlite3DatabaseFile) {
  const std::string sqlite3 = find_tool("sqlite3");
  if (sqlite3.empty()) GTEST_SKIP() << "no sqlite3 in PATH (scripts/install-deps.sh installs it)";
  const Traced run = run_both([&](const TempDir& dir) {
    return std::vector<std::string>{sqlite3, dir.file("test.db"),
                                    "create table t(x); insert into t values (1), (2), (39);"
                                    "select sum(x) from t; select count(*) from t;"};
  });
  EXPECT_EQ(run.untraced.out, "42\n3\n");
  EXPECT_THAT(comms_of(run.lines), Contains("sqlite3"));
}

}  // namespace
}  // namespace dprobe::integration
