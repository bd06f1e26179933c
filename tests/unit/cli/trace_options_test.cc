// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The options every tracing subcommand shares: added with one call, the
// same on every subcommand, checked into settings or a clear error; and
// what the end of a trace says about what went untraced.
#include "cli/command/trace_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/output/progress.h"
#include "cli/process/child_watch.h"
#include "cli/session/trace_setup.h"
#include "support/patience.h"

namespace dprobe::cli {
namespace {

using ::testing::HasSubstr;

// Parses `args` (after the program name) with a `run`-like subcommand.
struct Parsed {
  CLI::App app{"test"};
  TraceFlags flags;
  std::vector<std::string> command;

  explicit Parsed(std::vector<std::string> args) {
    CLI::App* run = app.add_subcommand("run");
    add_trace_options(run, flags);
    run->add_option("command", command);
    args.insert(args.begin(), "run");
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
  }
};

std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) names.push_back(option->get_name());
  return names;
}

TEST(TraceOptions, EveryTracingSubcommandTakesTheSameWithOneCall) {
  CLI::App app{"test"};
  TraceFlags run_flags, attach_flags, record_flags;
  CLI::App* run = app.add_subcommand("run");
  CLI::App* attach = app.add_subcommand("attach");
  CLI::App* record = app.add_subcommand("record");
  add_trace_options(run, run_flags);
  add_trace_options(attach, attach_flags);
  add_trace_options(record, record_flags);
  EXPECT_EQ(option_names(*run), option_names(*attach));
  EXPECT_EQ(option_names(*run), option_names(*record));
  EXPECT_THAT(option_names(*run),
              ::testing::IsSupersetOf({"--event", "--file", "--output", "--json", "--profile",
                                       "--buffer-size", "--max-threads", "--disable",
                                       "--no-optimize", "--probes", "--follow"}));
}

TEST(TraceOptions, DefaultsAsDocumented) {
  Parsed parsed({"-e", "p libc.so.6:malloc", "--", "ls"});
  auto settings = trace_settings(parsed.flags);
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_EQ(settings->session.ring_bytes, 1u << 20);
  EXPECT_EQ(settings->session.max_threads, 256u);
  EXPECT_TRUE(settings->session.optimize);
  EXPECT_FALSE(settings->session.list_probes);
  EXPECT_FALSE(settings->follow);
  EXPECT_FALSE(settings->profile);
  EXPECT_EQ(settings->format, OutputFormat::kText);
  EXPECT_TRUE(settings->output.empty());
  EXPECT_EQ(parsed.command, std::vector<std::string>{"ls"});
}

TEST(TraceOptions, EveryOptionReachesTheSettings) {
  Parsed parsed({"-f",
                 "defs",
                 "-e",
                 "-:g/e",
                 "-o",
                 "out",
                 "--json",
                 "--profile",
                 "--buffer-size",
                 "4M",
                 "--max-threads",
                 "8",
                 "--disable",
                 "g/x",
                 "--no-optimize",
                 "--probes",
                 "--follow",
                 "--",
                 "prog",
                 "arg"});
  auto settings = trace_settings(parsed.flags);
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_EQ(settings->sources.files, std::vector<std::string>{"defs"});
  EXPECT_EQ(settings->sources.expressions, std::vector<std::string>{"-:g/e"});
  // The file first, then the removal: it removes what the file defined.
  EXPECT_EQ(settings->sources.order,
            (std::vector<SourceKind>{SourceKind::kFile, SourceKind::kExpression}));
  EXPECT_EQ(settings->output, "out");
  EXPECT_EQ(settings->format, OutputFormat::kJson);
  EXPECT_TRUE(settings->profile);
  EXPECT_EQ(settings->session.ring_bytes, 4u << 20);
  EXPECT_EQ(settings->session.max_threads, 8u);
  EXPECT_EQ(settings->disabled, std::vector<std::string>{"g/x"});
  EXPECT_FALSE(settings->session.optimize);
  EXPECT_TRUE(settings->session.list_probes);
  EXPECT_TRUE(settings->follow);
  EXPECT_EQ(parsed.command, (std::vector<std::string>{"prog", "arg"}));
}

TEST(TraceOptions, BadNumbersAreErrorsThatNameTheOption) {
  auto size = trace_settings(Parsed({"--buffer-size", "2G", "--", "ls"}).flags);
  ASSERT_FALSE(size);
  EXPECT_EQ(size.error().message, "bad --buffer-size: 2G (a size such as 512K, 4M, at most 1G)");
  auto threads = trace_settings(Parsed({"--max-threads", "0\x1b", "--", "ls"}).flags);
  ASSERT_FALSE(threads);
  EXPECT_EQ(threads.error().message, "bad --max-threads: 0\\x1b (a number from 1 to 32768)");
}

TEST(Untraced, ChildrenMessage) {
  EXPECT_EQ(untraced_children_message({}), "");
  EXPECT_EQ(untraced_children_message({1, {"sqlite3"}}),
            "dprobe: 1 child process ran untraced (sqlite3); --follow traces it\n");
  EXPECT_EQ(
      untraced_children_message({5, {"sh", "sqlite3", "ls", "cat"}}),
      "dprobe: 5 child processes ran untraced (sh, sqlite3, ls, ...); --follow traces them\n");
  EXPECT_EQ(untraced_children_message({1, {"a\nb"}}),
            "dprobe: 1 child process ran untraced (a\\x0ab); --follow traces it\n");
}

TEST(Untraced, PendingMessage) {
  EXPECT_EQ(stayed_pending_message({}, true), "");
  EXPECT_EQ(stayed_pending_message({{"sqlite/prepare", "libsqlite3.so.0"},
                                    {"z/inflate", "libz.so.1"},
                                    {"sqlite/step", "libsqlite3.so.0"}},
                                   false),
            "dprobe: 3 probes stayed pending: libsqlite3.so.0 never loaded (sqlite/prepare, "
            "sqlite/step); libz.so.1 never loaded (z/inflate)\n");
  EXPECT_EQ(stayed_pending_message({{"sqlite/step", "libsqlite3.so.0"}}, true),
            "dprobe: 1 probe stayed pending: libsqlite3.so.0 never loaded (sqlite/step); a child "
            "process may have loaded it: --follow traces children\n");
}

TEST(Untraced, ChildWatchSeesAForkedChildAndItsProgram) {
  ChildWatch watch(::getpid());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::execl("/bin/true", "true", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  // The poll of /proc (without the capability for process events) needs
  // the child to live through a poll: this test asks no more than a count.
  const UntracedChildren seen = watch.stop();
  if (seen.count == 0) GTEST_SKIP() << "neither process events nor a slow enough child";
  EXPECT_EQ(seen.count, 1u);
}

// Without the capability for process events: /proc, polled, sees a child
// that lives through a poll, by the name of the program it execs.
TEST(Untraced, ChildWatchPollingProc) {
  ChildWatch watch(::getpid(), /*process_events=*/false);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::execl("/bin/sleep", "sleep", "0.2", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const UntracedChildren seen = watch.stop();
  EXPECT_EQ(seen.count, 1u);
  EXPECT_EQ(seen.names, std::vector<std::string>{"sleep"});
}

TEST(Progress, NothingWithoutATerminal) {
  std::ostringstream errors;
  {
    Progress progress(errors, false);
    progress.start("arming 3 probes");
    progress.stream() << "dprobe: a message\n";
    progress.stop();
  }
  EXPECT_EQ(errors.str(), "dprobe: a message\n");
}

TEST(Progress, ShownAfterASecondAndErasedBeforeAMessage) {
  std::ostringstream errors;
  Progress progress(errors, true);
  progress.start("arming 3 probes");
  progress.stream() << "early\n";
  // Past the delay by a margin that grows with how busy this machine is.
  std::this_thread::sleep_for(Progress::kDelay + support::patience() / 20);
  progress.stream() << "late\n";
  progress.stop();
  const std::string text = errors.str();
  EXPECT_EQ(text.rfind("early\n", 0), 0u) << text;
  EXPECT_THAT(text, ::testing::ContainsRegex("\r\x1b\\[Kdprobe: arming 3 probes\\.\\.\\. [1-9]"));
  // The line is erased before the message, and at the end.
  EXPECT_THAT(text, HasSubstr(" s\r\x1b[Klate\n"));
}

}  // namespace
}  // namespace dprobe::cli
