// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// DebugInfo and the source-line resolution on tests/programs/dwarf_lines.c,
// compiled here with `cc -g` at -O0 and -O2 (DWARF 5, and DWARF 4 with
// compressed sections), separate debug files made with objcopy. gdb is the
// oracle of the addresses where it is installed.
#include "symbols/debug_info.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "symbols/source_lines.h"

namespace dprobe::symbols {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kSource = std::string(DPROBE_SOURCE_DIR) + "/tests/programs/dwarf_lines.c";

// The line numbers of dwarf_lines.c the tests name.
constexpr int kVisitLine = 20;    // visit's declaration: visit:0
constexpr int kCommentLine = 22;  // no code
constexpr int kForLine = 23;      // the loop: two blocks (init; increment and test)
constexpr int kCallLine = 24;     // weight inlined

bool sh(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

std::string capture(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, got);
  ::pclose(pipe);
  return out;
}

struct Programs {
  bool ok = false;
  std::string root;
  std::string o0, o2, dwarf4z;  // with their own DWARF
  ~Programs() {
    std::error_code ec;
    if (!root.empty()) std::filesystem::remove_all(root, ec);
  }
};

const Programs& programs() {
  static Programs p;
  static const bool built = [] {
    char dir[] = "/tmp/dprobe-dwarf-XXXXXX";
    if (::mkdtemp(dir) == nullptr) return false;
    p.root = dir;
    p.o0 = p.root + "/dl_O0";
    p.o2 = p.root + "/dl_O2";
    p.dwarf4z = p.root + "/dl_dwarf4z";
    p.ok = sh("cc -O0 -g -o " + p.o0 + " " + kSource) &&
           sh("cc -O2 -g -o " + p.o2 + " " + kSource) &&
           sh("cc -O2 -gdwarf-4 -gz -o " + p.dwarf4z + " " + kSource);
    return p.ok;
  }();
  (void)built;
  return p;
}

#define REQUIRE_PROGRAMS()                                                   \
  do {                                                                       \
    if (!programs().ok) GTEST_SKIP() << "cc -g could not build " << kSource; \
  } while (0)

// A fresh directory under the programs' root.
std::string make_dir(const std::string& name) {
  const std::string dir = programs().root + "/" + name;
  std::filesystem::create_directories(dir);
  return dir;
}

DebugInfoPaths no_paths() { return DebugInfoPaths{}; }

std::vector<uint64_t> addresses(const std::vector<CodeAddress>& code) {
  std::vector<uint64_t> out;
  for (const CodeAddress& c : code) out.push_back(c.address);
  return out;
}

// gdb's line for an address: "Line 23 of \"...\" starts at ..." -> 23.
int gdb_line_at(const std::string& program, uint64_t address) {
  char expr[64];
  std::snprintf(expr, sizeof expr, "info line *0x%llx", static_cast<unsigned long long>(address));
  const std::string out = capture("gdb -nx -batch -ex '" + std::string(expr) + "' " + program);
  const size_t at = out.find("Line ");
  return at == std::string::npos ? -1 : std::atoi(out.c_str() + at + 5);
}

// gdb's breakpoint addresses for a location.
std::vector<uint64_t> gdb_breakpoints(const std::string& program, const std::string& where) {
  const std::string out =
      capture("gdb -nx -batch -ex 'break " + where + "' -ex 'info breakpoints' " + program);
  std::vector<uint64_t> found;
  for (size_t at = out.find("0x"); at != std::string::npos; at = out.find("0x", at + 2)) {
    found.push_back(std::strtoull(out.c_str() + at, nullptr, 16));
  }
  return found;
}

bool have_gdb() { return sh("command -v gdb"); }

TEST(DebugInfoCrc, IsTheCrc32DebuglinkUses) {
  EXPECT_EQ(debuglink_crc32("123456789"), 0xcbf43926u);
  EXPECT_EQ(debuglink_crc32("6789", debuglink_crc32("12345")), 0xcbf43926u);
}

TEST(DebugInfoCandidates, BuildIdThenDebuglinkInGdbsOrder) {
  DebugInfoPaths paths{{"/dbg"}, {"/cache"}};
  EXPECT_THAT(
      separate_debug_candidates("/usr/bin/app", "abcdef", "app.debug", paths),
      ElementsAre("/dbg/.build-id/ab/cdef.debug", "/cache/abcdef/debuginfo", "/usr/bin/app.debug",
                  "/usr/bin/.debug/app.debug", "/dbg/usr/bin/app.debug"));
  EXPECT_TRUE(separate_debug_candidates("/usr/bin/app", "", "", paths).empty());
}

TEST(DebugInfoOpen, OwnSections) {
  REQUIRE_PROGRAMS();
  for (const std::string& program : {programs().o0, programs().o2, programs().dwarf4z}) {
    auto info = DebugInfo::open(program, no_paths());
    ASSERT_TRUE(info) << info.error().message;
    EXPECT_EQ(info->debug_path(), program);
    EXPECT_FALSE(info->is_separate());
    EXPECT_EQ(info->build_id().size(), 40u);  // GCC's default sha1 build-id
    EXPECT_NE(info->dwarf(), nullptr);
  }
}

TEST(DebugInfoOpen, MissingFileAndNotElf) {
  auto missing = DebugInfo::open("/nonexistent/app", no_paths());
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("cannot open /nonexistent/app"));
  auto text = DebugInfo::open(kSource, no_paths());
  ASSERT_FALSE(text);
  EXPECT_THAT(text.error().message, HasSubstr("not an ELF file"));
}

// dir/app stripped of its DWARF, dir/app.debug (or elsewhere) holding it.
struct Split {
  std::string app;
  std::string debug;
};

Split split(const std::string& dir, const std::string& program, bool debuglink) {
  Split s{dir + "/app", dir + "/app.debug"};
  EXPECT_TRUE(sh("objcopy --only-keep-debug " + program + " " + s.debug));
  if (debuglink) {
    EXPECT_TRUE(sh("cd " + dir + " && objcopy --strip-debug --add-gnu-debuglink=app.debug " +
                   program + " " + s.app));
  } else {
    EXPECT_TRUE(sh("objcopy --strip-debug " + program + " " + s.app));
  }
  return s;
}

TEST(DebugInfoOpen, StrippedWithoutDebugFileSaysWhereItLooked) {
  REQUIRE_PROGRAMS();
  const std::string dir = make_dir("nodebug");
  const Split s = split(dir, programs().o0, true);
  std::filesystem::remove(s.debug);
  DebugInfoPaths paths{{dir + "/root"}, {}};
  auto info = DebugInfo::open(s.app, paths);
  ASSERT_FALSE(info);
  EXPECT_THAT(info.error().message,
              HasSubstr("no debug information for " + s.app + ": looked in its own sections, " +
                        dir + "/root/.build-id/"));
  EXPECT_THAT(info.error().message, HasSubstr(dir + "/app.debug, " + dir + "/.debug/app.debug, " +
                                              dir + "/root" + dir + "/app.debug"));
}

TEST(DebugInfoOpen, DebuglinkNextToTheObject) {
  REQUIRE_PROGRAMS();
  const std::string dir = make_dir("link_next");
  const Split s = split(dir, programs().o0, true);
  auto info = DebugInfo::open(s.app, no_paths());
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->debug_path(), s.debug);
  EXPECT_TRUE(info->is_separate());
  auto line = find_source_line(*info, "dwarf_lines.c", kForLine);
  ASSERT_TRUE(line) << line.error().message;
  auto own = DebugInfo::open(programs().o0, no_paths());
  ASSERT_TRUE(own);
  EXPECT_EQ(addresses(*line), addresses(*find_source_line(*own, "dwarf_lines.c", kForLine)));
}

TEST(DebugInfoOpen, DebuglinkInDotDebugAndUnderTheRoot) {
  REQUIRE_PROGRAMS();
  const std::string dir = make_dir("link_dot");
  const Split s = split(dir, programs().o2, true);
  std::filesystem::create_directory(dir + "/.debug");
  std::filesystem::rename(s.debug, dir + "/.debug/app.debug");
  auto info = DebugInfo::open(s.app, no_paths());
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->debug_path(), dir + "/.debug/app.debug");

  const std::string root = make_dir("link_root_dbg");
  std::filesystem::create_directories(root + dir);
  std::filesystem::rename(dir + "/.debug/app.debug", root + dir + "/app.debug");
  DebugInfoPaths paths{{root}, {}};
  auto rooted = DebugInfo::open(s.app, paths);
  ASSERT_TRUE(rooted) << rooted.error().message;
  EXPECT_EQ(rooted->debug_path(), root + dir + "/app.debug");
}

TEST(DebugInfoOpen, BuildIdUnderTheDebugRoot) {
  REQUIRE_PROGRAMS();
  const std::string dir = make_dir("buildid");
  const Split s = split(dir, programs().o2, false);
  auto own = DebugInfo::open(programs().o2, no_paths());
  ASSERT_TRUE(own);
  const std::string id = own->build_id();
  const std::string place = dir + "/root/.build-id/" + id.substr(0, 2);
  std::filesystem::create_directories(place);
  std::filesystem::rename(s.debug, place + "/" + id.substr(2) + ".debug");
  EXPECT_FALSE(DebugInfo::open(s.app, no_paths()));
  DebugInfoPaths paths{{dir + "/root"}, {}};
  auto info = DebugInfo::open(s.app, paths);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->debug_path(), place + "/" + id.substr(2) + ".debug");
  EXPECT_EQ(info->build_id(), id);
  EXPECT_TRUE(find_function_entries(*info, "visit"));
}

TEST(DebugInfoOpen, DebuginfodCache) {
  REQUIRE_PROGRAMS();
  const std::string dir = make_dir("debuginfod");
  const Split s = split(dir, programs().o0, false);
  auto own = DebugInfo::open(programs().o0, no_paths());
  ASSERT_TRUE(own);
  std::filesystem::create_directories(dir + "/cache/" + own->build_id());
  std::filesystem::rename(s.debug, dir + "/cache/" + own->build_id() + "/debuginfo");
  DebugInfoPaths paths{{}, {dir + "/cache"}};
  auto info = DebugInfo::open(s.app, paths);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->debug_path(), dir + "/cache/" + own->build_id() + "/debuginfo");

  // from_host() reads $DEBUGINFOD_CACHE_PATH.
  const char* saved = std::getenv("DEBUGINFOD_CACHE_PATH");
  const std::string restore = saved != nullptr ? saved : "";
  ::setenv("DEBUGINFOD_CACHE_PATH", (dir + "/cache").c_str(), 1);
  const DebugInfoPaths host = DebugInfoPaths::from_host();
  if (saved != nullptr) {
    ::setenv("DEBUGINFOD_CACHE_PATH", restore.c_str(), 1);
  } else {
    ::unsetenv("DEBUGINFOD_CACHE_PATH");
  }
  EXPECT_THAT(host.debug_roots, ElementsAre("/usr/lib/debug"));
  EXPECT_THAT(host.debuginfod_caches, ElementsAre(dir + "/cache"));
}

TEST(DebugInfoOpen, ADebugFileOfAnotherBuildIsNotTaken) {
  REQUIRE_PROGRAMS();
  const std::string dir = make_dir("mismatch");
  const Split s = split(dir, programs().o0, true);
  ASSERT_TRUE(sh("objcopy --only-keep-debug " + programs().o2 + " " + s.debug));
  auto info = DebugInfo::open(s.app, no_paths());
  ASSERT_FALSE(info);
  EXPECT_THAT(info.error().message, HasSubstr("no debug information for"));
}

TEST(DebugInfoOpen, WithoutBuildIdTheDebuglinkCrcDecides) {
  REQUIRE_PROGRAMS();
  const std::string dir = make_dir("crc");
  const std::string program = dir + "/built";
  ASSERT_TRUE(sh("cc -O0 -g -Wl,--build-id=none -o " + program + " " + kSource));
  const Split s = split(dir, program, true);
  auto info = DebugInfo::open(s.app, no_paths());
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_TRUE(info->build_id().empty());
  EXPECT_EQ(info->debug_path(), s.debug);
  // The same name, other bytes: the CRC no longer matches.
  ASSERT_TRUE(sh("cc -O2 -g -Wl,--build-id=none -o " + program + " " + kSource));
  ASSERT_TRUE(sh("objcopy --only-keep-debug " + program + " " + s.debug));
  EXPECT_FALSE(DebugInfo::open(s.app, no_paths()));
}

class Lines : public ::testing::TestWithParam<const char*> {
 protected:
  std::string program() const {
    const std::string level = GetParam();
    return level == "O0" ? programs().o0 : level == "O2" ? programs().o2 : programs().dwarf4z;
  }
};

TEST_P(Lines, ALineOfTheLoopHasOneAddressPerBlockEachOnThatLineForGdb) {
  REQUIRE_PROGRAMS();
  auto info = DebugInfo::open(program(), no_paths());
  ASSERT_TRUE(info) << info.error().message;
  auto line = find_source_line(*info, "dwarf_lines.c", kForLine);
  ASSERT_TRUE(line) << line.error().message;
  // The loop's initialization, and its increment and test: two blocks.
  ASSERT_EQ(line->size(), 2u);
  for (const CodeAddress& code : *line) {
    EXPECT_EQ(code.line, kForLine);
    EXPECT_EQ(code.file, kSource);
    EXPECT_FALSE(code.inlined);
  }
  if (!have_gdb()) GTEST_SKIP() << "no gdb to compare with";
  // gdb's breakpoint on the line is one of them; gdb maps each back to it.
  const std::vector<uint64_t> gdb = gdb_breakpoints(program(), "dwarf_lines.c:23");
  ASSERT_FALSE(gdb.empty());
  EXPECT_THAT(addresses(*line), ::testing::Contains(gdb.front()));
  for (const CodeAddress& code : *line) EXPECT_EQ(gdb_line_at(program(), code.address), kForLine);
}

TEST_P(Lines, FunctionRelativeLineIsTheAbsoluteLine) {
  REQUIRE_PROGRAMS();
  auto info = DebugInfo::open(program(), no_paths());
  ASSERT_TRUE(info);
  auto relative = find_function_line(*info, "visit", kForLine - kVisitLine);
  ASSERT_TRUE(relative) << relative.error().message;
  EXPECT_EQ(addresses(*relative), addresses(*find_source_line(*info, "dwarf_lines.c", kForLine)));
  auto at_file =
      find_function_line(*info, "visit", kForLine - kVisitLine, "programs/dwarf_lines.c");
  ASSERT_TRUE(at_file) << at_file.error().message;
  EXPECT_EQ(addresses(*at_file), addresses(*relative));
}

TEST_P(Lines, ALineWithoutCodeNamesTheNearestLines) {
  REQUIRE_PROGRAMS();
  auto info = DebugInfo::open(program(), no_paths());
  ASSERT_TRUE(info);
  auto line = find_source_line(*info, "dwarf_lines.c", kCommentLine);
  ASSERT_FALSE(line);
  EXPECT_EQ(line.error().message,
            "line 22 of " + kSource + " has no code (the nearest lines with code are 21 and 23)");
  auto relative = find_function_line(*info, "visit", kCommentLine - kVisitLine);
  ASSERT_FALSE(relative);
  EXPECT_THAT(relative.error().message,
              HasSubstr("visit:2 (line 22 of " + kSource + ") has no code in visit"));
  EXPECT_THAT(relative.error().message, HasSubstr("visit:3)"));
}

TEST_P(Lines, InlinedFunctionEntriesAreEveryInstance) {
  REQUIRE_PROGRAMS();
  auto info = DebugInfo::open(program(), no_paths());
  ASSERT_TRUE(info);
  auto entries = find_function_entries(*info, "weight", "dwarf_lines.c");
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_FALSE(entries->empty());
  for (const CodeAddress& code : *entries) EXPECT_TRUE(code.inlined);
  auto visit = find_function_entries(*info, "visit");
  ASSERT_TRUE(visit);
  ASSERT_EQ(visit->size(), 1u);
  EXPECT_FALSE(visit->front().inlined);
  // The inlined body's line inside visit is marked inlined.
  auto body = find_source_line(*info, "dwarf_lines.c", 16);
  ASSERT_TRUE(body) << body.error().message;
  for (const CodeAddress& code : *body) EXPECT_TRUE(code.inlined);
  if (!have_gdb()) GTEST_SKIP() << "no gdb to compare with";
  std::vector<uint64_t> gdb = gdb_breakpoints(program(), "weight");
  std::sort(gdb.begin(), gdb.end());
  gdb.erase(std::unique(gdb.begin(), gdb.end()), gdb.end());
  EXPECT_EQ(addresses(*entries), gdb);
  EXPECT_EQ(gdb_breakpoints(program(), "*visit").front(), visit->front().address);
}

TEST_P(Lines, FunctionLinesAsPerfProbeListsThem) {
  REQUIRE_PROGRAMS();
  auto info = DebugInfo::open(program(), no_paths());
  ASSERT_TRUE(info);
  auto lines = function_lines(*info, "visit");
  ASSERT_TRUE(lines) << lines.error().message;
  EXPECT_EQ(lines->file, kSource);
  EXPECT_EQ(lines->decl_line, kVisitLine);
  // perf probe 6.1 -L visit: at -O2 line 21 shares visit's entry, and the
  // closing brace has no is_stmt row of its own.
  if (std::string(GetParam()) == "O0") {
    EXPECT_THAT(lines->lines, ElementsAre(20, 21, 23, kCallLine, 25, 27, 28));
  } else {
    EXPECT_THAT(lines->lines, ElementsAre(20, 23, kCallLine, 25, 27));
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, Lines, ::testing::Values("O0", "O2", "dwarf4z"));

TEST(SourceLines, FilesMatchByBasenameOrPathSuffix) {
  EXPECT_TRUE(source_file_matches("/a/b/prog.c", "prog.c"));
  EXPECT_TRUE(source_file_matches("/a/b/prog.c", "b/prog.c"));
  EXPECT_TRUE(source_file_matches("/a/b/prog.c", "/a/b/prog.c"));
  EXPECT_FALSE(source_file_matches("/a/b/prog.c", "rog.c"));
  EXPECT_FALSE(source_file_matches("/a/b/prog.c", ""));
  EXPECT_FALSE(source_file_matches("/a/b/prog.c", "c/prog.c"));
}

TEST(SourceLines, UnknownFileAndFunction) {
  REQUIRE_PROGRAMS();
  auto info = DebugInfo::open(programs().o0, no_paths());
  ASSERT_TRUE(info);
  auto file = find_source_line(*info, "ograms/dwarf_lines.c", kForLine);
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().message,
            "no source file ograms/dwarf_lines.c in the debug information of " + programs().o0);
  auto function = find_function_entries(*info, "no_such_function");
  ASSERT_FALSE(function);
  EXPECT_EQ(function.error().message,
            "no function no_such_function in the debug information of " + programs().o0);
  auto elsewhere = function_lines(*info, "visit", "other.c");
  ASSERT_FALSE(elsewhere);
  EXPECT_THAT(elsewhere.error().message, HasSubstr("visit is defined in other files"));
}

}  // namespace
}  // namespace dprobe::symbols
