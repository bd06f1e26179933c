// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Input the CLI must refuse with one clear error, never an exception, a
// hang or memory without bound: numbers, definition files, #! scripts;
// and the lost-events message that names the limit that was hit.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "cli/plan/definition_file.h"
#include "cli/process/executable.h"
#include "cli/session/trace_loop.h"
#include "cli/session/tracer.h"
#include "support/files.h"

namespace dprobe::cli {
namespace {

TEST(NumberOptions, BufferSize) {
  EXPECT_EQ(parse_buffer_size("4M"), uint64_t{4} << 20);
  EXPECT_EQ(parse_buffer_size("1000"), 4096u);
  EXPECT_EQ(parse_buffer_size("1G"), uint64_t{1} << 30);
  for (const char* bad : {"", "0", "2G", "1025M", "99999999999999999999", "18446744073709551617K",
                          "-1", "1.5M", "M", " 4M", "0x10"}) {
    EXPECT_FALSE(parse_buffer_size(bad)) << "[" << bad << "]";
  }
}

TEST(NumberOptions, MaxThreads) {
  EXPECT_EQ(parse_max_threads("1"), 1u);
  EXPECT_EQ(parse_max_threads("32768"), 32768u);
  for (const char* bad : {"", "0", "32769", "99999999999999999999", "-1", "4294967297"}) {
    EXPECT_FALSE(parse_max_threads(bad)) << bad;
  }
}

TEST(NumberOptions, Seconds) {
  EXPECT_EQ(parse_seconds("10"), 10.0);
  EXPECT_EQ(parse_seconds("0.5"), 0.5);
  EXPECT_EQ(parse_seconds("500ms"), 0.5);
  EXPECT_EQ(parse_seconds("2s"), 2.0);
  EXPECT_EQ(parse_seconds("1.5m"), 90.0);
  EXPECT_EQ(parse_seconds("1h"), 3600.0);
  for (const char* bad :
       {"",     "0", "0.0",         "-1", "nan", "NAN", "inf", "-inf", "1e999", "1e3",
        "1..2", ".", "99999999999", "s",  "ms",  "2x",  "2 s", "0s",   "9000h", "2sm"}) {
    EXPECT_FALSE(parse_seconds(bad)) << bad;
  }
}

TEST(DefinitionFile, EndlessFileIsAnErrorNotMemoryWithoutBound) {
  auto lines = read_definition_lines("/dev/zero", 1 << 20);
  ASSERT_FALSE(lines);
  EXPECT_NE(lines.error().message.find("/dev/zero: more than 1048576 bytes"), std::string::npos)
      << lines.error().message;
}

TEST(DefinitionFile, LinesCommentsAndOrigins) {
  char name[] = "/tmp/dprobe-defs-XXXXXX";
  const int fd = ::mkstemp(name);
  ASSERT_GE(fd, 0);
  const std::string text = "# a comment\n\np:g/a f  # why\n  r:g/b f\n";
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
  auto lines = read_definition_lines(name);
  ::unlink(name);
  ASSERT_TRUE(lines) << lines.error().message;
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0].text, "p:g/a f");
  EXPECT_EQ((*lines)[0].origin, std::string(name) + ":3");
  EXPECT_EQ((*lines)[1].text, "r:g/b f");
  EXPECT_FALSE(read_definition_lines("/nonexistent/defs"));
}

class Script : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(temp_.ok()); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0755);
    return path;
  }
  support::TempDir temp_;
  const std::string dir_ = temp_.path();
};

TEST_F(Script, InterpreterAsTheKernelRunsIt) {
  const std::string script = write("s.sh", "#!  /bin/sh   -e -x  \necho hi\n");
  auto target = resolve_interpreter(script, {script, "a", "b"});
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->executable, "/bin/sh");
  EXPECT_EQ(target->argv, (std::vector<std::string>{"/bin/sh", "-e -x", script, "a", "b"}));
}

TEST_F(Script, ElfIsItself) {
  auto target = resolve_interpreter("/bin/sh", {"sh", "-c", "true"});
  ASSERT_TRUE(target);
  EXPECT_EQ(target->executable, "/bin/sh");
  EXPECT_EQ(target->argv, (std::vector<std::string>{"sh", "-c", "true"}));
}

TEST_F(Script, InterpreterOfAnInterpreterAndLoops) {
  const std::string inner = write("inner", "#!/bin/sh\n");
  const std::string outer = write("outer", "#!" + inner + "\n");
  auto target = resolve_interpreter(outer, {outer});
  ASSERT_TRUE(target);
  EXPECT_EQ(target->argv, (std::vector<std::string>{"/bin/sh", inner, outer}));
  const std::string loop = write("loop", "#!" + dir_ + "/loop\n");
  EXPECT_FALSE(resolve_interpreter(loop, {loop}));
  const std::string empty = write("empty", "#!   \n");
  EXPECT_FALSE(resolve_interpreter(empty, {empty}));
}

TEST(LostEvents, NamesTheLimitThatWasHit) {
  EXPECT_EQ(lost_events_message({}, 1 << 20, 256), "");
  const std::string full = lost_events_message({5, 0}, 1 << 20, 256);
  EXPECT_NE(full.find("--buffer-size"), std::string::npos) << full;
  EXPECT_EQ(full.find("--max-threads"), std::string::npos) << full;
  const std::string slots = lost_events_message({0, 7}, 1 << 20, 256);
  EXPECT_NE(slots.find("7 events lost"), std::string::npos) << slots;
  EXPECT_NE(slots.find("256 threads"), std::string::npos) << slots;
  EXPECT_NE(slots.find("--max-threads"), std::string::npos) << slots;
  EXPECT_EQ(slots.find("--buffer-size"), std::string::npos) << slots;
}

}  // namespace
}  // namespace dprobe::cli
