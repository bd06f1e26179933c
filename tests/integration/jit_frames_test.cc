// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// --stacktrace through JIT code, its frames named from the process's perf
// map: node --perf-basic-prof, whose hot JavaScript function calls
// fs.statSync (libuv's uv__statx, through the C library's syscall(2)), and
// the JVM with -XX:+DumpPerfMapAtExit under `record` and `report`, whose
// map exists only once the program has ended (java.io.File.exists(), which
// the JIT compiles early, calls stat64 from its native method). Each stack names the JIT
// function ("[JIT] tid PID", as perf) and goes on past it into the
// runtime's own frames: the unwinder goes through JIT frames by their
// frame pointers. Skipped where node or java is not installed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "integration/analysis_support.h"
#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"

namespace dprobe::integration {
namespace {

using analysis::parse_stacked;
using analysis::StackedLine;
using analysis::StackFrame;

constexpr std::string_view kJitObject = "[JIT] tid ";

// Where a JIT frame named `function` is in `stack`, and the first frame of
// `runtime` after it; -1 for either not found.
// The first JIT frame of `function`, and the first frame after it that is
// named: the runtime's own, or JIT code's again (a caller compiled too).
// The unwinder stepped through the JIT frame when there is one.
struct Found {
  int jit = -1;
  int named_after = -1;
};

Found find_frames(const std::vector<StackFrame>& stack, std::string_view function,
                  std::string_view runtime) {
  Found found;
  for (size_t i = 0; i < stack.size(); ++i) {
    const StackFrame& frame = stack[i];
    if (found.jit < 0 && frame.object.starts_with(kJitObject) &&
        frame.function.find(function) != std::string::npos) {
      found.jit = static_cast<int>(i);
    } else if (found.jit >= 0 &&
               (frame.object == runtime || frame.object.starts_with(kJitObject))) {
      found.named_after = static_cast<int>(i);
      return found;
    }
  }
  return found;
}

// The perf map a traced program left in /tmp, by the pid it printed
// ("pid 4242"): removed at the end of the test.
class LeftMap {
 public:
  explicit LeftMap(const std::string& out) {
    const size_t at = out.find("pid ");
    if (at == std::string::npos) return;
    const size_t end = out.find_first_not_of("0123456789", at + 4);
    pid_ = out.substr(at + 4, end - at - 4);
  }
  ~LeftMap() {
    if (!pid_.empty()) ::unlink(("/tmp/perf-" + pid_ + ".map").c_str());
  }
  LeftMap(const LeftMap&) = delete;
  LeftMap& operator=(const LeftMap&) = delete;
  // What a frame of its JIT code names as its object.
  std::string object() const { return std::string(kJitObject) + pid_; }

 private:
  std::string pid_;
};

// The JIT frame's name and offset as a trace line shows them, for a message.
std::string stack_text(const std::vector<StackFrame>& stack) {
  std::string text;
  for (const StackFrame& frame : stack) text += " => " + frame.text + "\n";
  return text;
}

constexpr std::string_view kNodeScript = R"(const fs = require('fs');
function hotStat(path, n) {
  let total = 0;
  for (let i = 0; i < n; i++) total += fs.statSync(path).size & 1;
  return total;
}
let sum = 0;
for (let round = 0; round < 60; round++) sum += hotStat(process.argv[2], 100);
console.log('jit: ok', sum, 'pid', process.pid);
)";

TEST(JitFrames, NodeFramesAreNamedFromItsPerfMap) {
  const std::string node = find_tool("node");
  if (node.empty()) GTEST_SKIP() << "node is not installed (scripts/install-deps.sh: nodejs)";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  write_file(dir.file("hot.js"), kNodeScript);
  // uv__statx calls syscall(SYS_statx, ...): 332 on x86_64. node 20's
  // --perf-basic-prof also writes V8's log, in the working directory
  // unless told where.
  const RunResult run =
      run_traced({"p:jit/sys libc.so.6:syscall nr=%di:u64"},
                 {node, "--perf-basic-prof", "--always-sparkplug", "--no-logfile-per-isolate",
                  "--logfile=" + dir.file("v8.log"), dir.file("hot.js"), dir.path()},
                 {"--filter", "jit/sys:nr == 332", "--stacktrace", "jit/sys"});
  const LeftMap map(run.out);
  ASSERT_EQ(run.status, 0) << run.err;
  ASSERT_THAT(run.out, ::testing::HasSubstr("jit: ok")) << run.err;
  const std::vector<StackedLine> lines = parse_stacked(run.out);
  ASSERT_GE(lines.size(), 6000u);  // every call, and node's own before it
  // --always-sparkplug: V8 compiles hotStat at its first call, before it
  // calls statSync (left to itself, it compiles it on another thread after
  // some calls, sooner or later as the machine is busy), so every one of
  // the script's 6000 stacks goes through its code ("JS:^hotStat
  // FILE:2:17", "JS:*hotStat ..." once optimized; node 18 said
  // "LazyCompile:*hotStat").
  size_t through_jit = 0;
  const std::vector<StackFrame>* example = nullptr;
  for (const StackedLine& line : lines) {
    const Found found = find_frames(line.stack, "hotStat", "node");
    if (found.jit < 0) continue;
    example = &line.stack;
    const StackFrame& jit = line.stack[static_cast<size_t>(found.jit)];
    EXPECT_EQ(jit.object, map.object());
    EXPECT_LT(jit.offset, 0x10000u) << stack_text(line.stack);
    EXPECT_GE(found.named_after, 0) << "the stack ends at the JIT frame:\n"
                                    << stack_text(line.stack);
    ++through_jit;
  }
  EXPECT_GE(through_jit, 6000u) << (example != nullptr ? stack_text(*example)
                                                       : std::string("no stack names hotStat"));
}

// node --perf-prof writes a jitdump (jit-PID.dump, in its working
// directory) instead of the text map: its frames are named from that. Node
// writes the dump through a buffer, so a line printed as the hit comes may
// precede the records that name it; a recording names them at its end,
// every one.
TEST(JitFrames, NodeFramesAreNamedFromItsJitdump) {
  const std::string node = find_tool("node");
  if (node.empty()) GTEST_SKIP() << "node is not installed (scripts/install-deps.sh: nodejs)";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  write_file(dir.file("hot.js"), kNodeScript);
  const std::string trace = dir.file("trace.dat");
  const RunResult record = run_dprobe(
      {"record", "-o", trace, "--buffer-size", "8M", "-e", "p:jit/sys libc.so.6:syscall nr=%di:u64",
       "--filter", "jit/sys:nr == 332", "--stacktrace", "jit/sys", "--", "/bin/sh", "-c",
       "cd " + dir.path() + " && exec " + node +
           " --perf-prof --always-sparkplug --no-logfile-per-isolate --logfile=v8.log hot.js " +
           dir.path()});
  ASSERT_EQ(record.status, 0) << record.err;
  ASSERT_THAT(record.out, ::testing::HasSubstr("jit: ok")) << record.err;
  const RunResult report = run_dprobe({"report", trace});
  ASSERT_EQ(report.status, 0) << report.err;
  const std::vector<StackedLine> lines = parse_stacked(report.out);
  ASSERT_GE(lines.size(), 6000u) << record.err;
  size_t through_jit = 0;
  for (const StackedLine& line : lines) {
    const Found found = find_frames(line.stack, "hotStat", "node");
    if (found.jit < 0) continue;
    EXPECT_GE(found.named_after, 0) << stack_text(line.stack);
    ++through_jit;
  }
  EXPECT_GE(through_jit, 6000u) << "the script's calls, each through hotStat's code";
}

constexpr std::string_view kJavaSource = R"(import java.io.File;
public class Hot {
  static int hotExists(File f, int n) {
    int c = 0;
    for (int i = 0; i < n; i++) if (f.exists()) c++;
    return c;
  }
  public static void main(String[] args) {
    File f = new File(args[0]);
    long total = 0;
    for (int round = 0; round < 60; round++) total += hotExists(f, 500);
    System.out.println("jit: ok " + total + " pid " + ProcessHandle.current().pid());
    try {
      Thread.sleep(300);  // every record is written before the map is
    } catch (InterruptedException e) {
    }
  }
}
)";

// The JVM writes its map as it exits (DumpPerfMapAtExit), here well after
// its last hit: `record` names the frames then, into the file, and
// `report` shows them. HotSpot's
// compiled code keeps a frame pointer only with -XX:+PreserveFramePointer;
// -BackgroundCompilation compiles File.exists as its calls reach the
// threshold, not later on another thread as the machine allows.
TEST(JitFrames, JvmFramesAreNamedInTheReportOfARecording) {
  const std::string java = find_tool("java");
  // A JDK: java runs Hot.java from its source with the JDK's compiler.
  if (java.empty() || find_tool("javac").empty()) {
    GTEST_SKIP() << "no JDK installed (scripts/install-deps.sh: default-jdk-headless)";
  }
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  write_file(dir.file("Hot.java"), kJavaSource);
  const std::string target = dir.file("target");
  write_file(target, "x");
  const std::string trace = dir.file("trace.dat");
  const RunResult record = run_dprobe(
      {"record", "-o", trace, "--buffer-size", "8M", "-e",
       "p:jit/stat libc.so.6:stat64 path=+0(%di):string", "--filter",
       "jit/stat:path == \"" + target + "\"", "--stacktrace", "jit/stat", "--", java,
       "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit", "-XX:-BackgroundCompilation",
       "-XX:+PreserveFramePointer", dir.file("Hot.java"), target});
  const LeftMap map(record.out);
  ASSERT_EQ(record.status, 0) << record.err;
  ASSERT_THAT(record.out, ::testing::HasSubstr("jit: ok 30000")) << record.err;
  const RunResult report = run_dprobe({"report", trace});
  ASSERT_EQ(report.status, 0) << report.err;
  const std::vector<StackedLine> lines = parse_stacked(report.out);
  ASSERT_GE(lines.size(), 1000u) << record.err;  // some may be lost to a full ring
  size_t through_jit = 0;
  const std::vector<StackFrame>* example = nullptr;
  for (const StackedLine& line : lines) {
    const Found found = find_frames(line.stack, "java.io.File.exists()", "libjvm.so");
    if (found.jit < 0) continue;
    example = &line.stack;
    EXPECT_EQ(line.stack[static_cast<size_t>(found.jit)].object, map.object());
    EXPECT_GE(found.named_after, 0) << "the stack ends in JIT code:\n" << stack_text(line.stack);
    ++through_jit;
  }
  EXPECT_GE(through_jit, lines.size() / 2)
      << (example != nullptr ? stack_text(*example) : std::string("no stack names File.exists"))
      << (lines.empty() ? std::string() : stack_text(lines.back().stack));
}

}  // namespace
}  // namespace dprobe::integration
