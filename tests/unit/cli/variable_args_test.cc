// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Source places and source variables through `dprobe check`, on
// tests/programs/dwarf_vars.c compiled here with `cc -g -O0` (and a copy
// without debug information): the plain kernel form each becomes, and every
// error of the debug information with its caret. The values themselves are
// checked against gdb (tests/oracle/dwarf_values.sh) and end to end
// (tests/integration/dwarf_vars_test.cc).
#include "cli/plan/variable_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/command/variable_listing.h"
#include "lang/error_table.h"
#include "symbols/dwarf_variables.h"
#include "unit/cli/cli_test_support.h"

namespace dprobe::cli {
namespace {

using test_support::CommandRun;
using test_support::error_head;
using test_support::run_check_with;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const std::string kSource = std::string(DPROBE_SOURCE_DIR) + "/tests/programs/dwarf_vars.c";

struct Programs {
  bool ok = false;
  std::string root, o0, o2, bare;
  ~Programs() {
    std::error_code ec;
    if (!root.empty()) std::filesystem::remove_all(root, ec);
  }
};

bool sh(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

const Programs& programs() {
  static Programs p;
  static const bool built = [] {
    char dir[] = "/tmp/dprobe-vars-XXXXXX";
    if (::mkdtemp(dir) == nullptr) return false;
    p.root = dir;
    p.o0 = p.root + "/dv_O0";
    p.o2 = p.root + "/dv_O2";
    p.bare = p.root + "/dv_bare";
    p.ok = sh("cc -O0 -g -fno-omit-frame-pointer -o " + p.o0 + " " + kSource) &&
           sh("cc -O2 -g -o " + p.o2 + " " + kSource) && sh("cc -O0 -o " + p.bare + " " + kSource);
    return p.ok;
  }();
  (void)built;
  return p;
}

class VariableArgs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!programs().ok) GTEST_SKIP() << "cc -g could not build " << kSource;
  }
};

// One definition checked against `program`: its report, or its plain form.
CommandRun check(const std::string& definition, const std::string& program) {
  return run_check_with({definition}, {}, program);
}

// The caret report's head for `definition` with the caret under `word`
// (its first occurrence after `after`).
std::string head_at(lang::ErrorCode code, const std::string& definition, const std::string& word,
                    size_t after = 0) {
  return error_head(lang::error_message(code), lang::error_name(code), definition,
                    definition.find(word, after));
}

TEST_F(VariableArgs, AFunctionsVariablesBecomeTheKernelsFetchArguments) {
  const CommandRun run = check("p:t/v visit it->id it->name depth", programs().o0);
  ASSERT_EQ(run.status, 0) << run.err;
  // Past the prologue, each at the frame's offsets the DWARF gives.
  EXPECT_THAT(run.out,
              MatchesRegex("p:t/v visit\\+[0-9]+ it_id=\\+0\\(-?[0-9]+\\(%(bp|sp)\\)\\):s32 "
                           "it_name=\\+0\\(\\+8\\(-?[0-9]+\\(%(bp|sp)\\)\\)\\):string "
                           "depth=-?[0-9]+\\(%(bp|sp)\\):s32\n"));
}

TEST_F(VariableArgs, TypesComeFromTheDwarf) {
  const CommandRun run =
      check("p:t/v visit it->flags it->level it->tag it->scores it->next it->pos.x", programs().o0);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(":b3@0/32 "));  // unsigned flags : 3
  EXPECT_THAT(run.out, HasSubstr(":b5@3/32 "));  // unsigned level : 5, after it
  EXPECT_THAT(run.out, MatchesRegex(".* it_tag=\\+[0-9]+\\([^ ]*\\):string .*"));  // char[8]
  EXPECT_THAT(run.out, HasSubstr(":s16[4] "));                                     // short[4]
  EXPECT_THAT(run.out, MatchesRegex(".* it_next=\\+[0-9]+\\([^ ]*\\):x64 .*"));    // a pointer
  EXPECT_THAT(run.out, HasSubstr("it_pos_x="));
}

TEST_F(VariableArgs, GlobalsAreNamedByTheirSymbols) {
  const CommandRun run =
      check("p:t/g visit visits greeting table table[2] list_head->name", programs().o0);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(" visits=@visits:s32 greeting=@greeting:string "
                                 "table=@table:s64[3] table_2=@table+16:s64 "
                                 "list_head_name=+0(+8(@list_head)):string\n"));
}

TEST_F(VariableArgs, AVariableListGivesOneArgumentEach) {
  const CommandRun params = check("p:t/p sum $params", programs().o0);
  ASSERT_EQ(params.status, 0) << params.err;
  EXPECT_THAT(params.out, MatchesRegex("p:t/p sum\\+[0-9]+ values=[^ ]*:x64 count=[^ ]*:s32\n"));
  const CommandRun vars = check("p:t/l dwarf_vars.c:58 $vars", programs().o0);
  ASSERT_EQ(vars.status, 0) << vars.err;
  EXPECT_THAT(vars.out, HasSubstr(" values="));
  EXPECT_THAT(vars.out, HasSubstr(" total="));
  EXPECT_THAT(vars.out, HasSubstr(" i="));
}

TEST_F(VariableArgs, ALineWithSeveralBlocksGetsAProbeEach) {
  // The loop's line: its initialization, and its test and increment.
  const CommandRun run = check("p:t/f sum:2 i", programs().o0);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out,
              MatchesRegex("p:t/f sum\\+[0-9]+ i=[^\n]*\np:t/f_1 sum\\+[0-9]+ i=[^\n]*\n"));
}

TEST_F(VariableArgs, AFunctionOnlyInlinedIsFoundInTheDwarf) {
  const CommandRun run = check("p:t/w weigh n->id", programs().o0);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, MatchesRegex("p:t/w visit\\+[0-9]+ n_id=[^\n]*\n"));
}

TEST_F(VariableArgs, WrittenTypesOverrideTheDwarfs) {
  const CommandRun run = check("p:t/v visit id=it->id:x32 first=it->tag[0]:u8", programs().o0);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, MatchesRegex(".* id=[^ ]*:x32 first=[^ ]*:u8\n"));
}

struct ErrorCase {
  const char* definition;
  const char* word;  // the caret's word
  lang::ErrorCode code;
  const char* detail;  // a part of what follows the caret
};

const ErrorCase kErrorCases[] = {
    {"p:t/e visit nosuch", "nosuch", lang::ErrorCode::NO_BTFARG, "it, depth, score"},
    {"p:t/e visit it->nosuch", "nosuch", lang::ErrorCode::NO_BTF_FIELD,
     "struct node has no member 'nosuch'"},
    {"p:t/e visit depth->x", "x", lang::ErrorCode::NO_PTR_STRCT, "int is not a pointer"},
    {"p:t/e visit it.id", "id", lang::ErrorCode::BAD_MEMBER_OP, "reached with '->'"},
    {"p:t/e visit it->pos", "it->pos", lang::ErrorCode::NOSUP_DAT_ARG, "struct point"},
    {"p:t/e visit depth:string", "depth", lang::ErrorCode::BAD_TYPE4STR, "not a pointer"},
    {"p:t/e visit it->scores[9]", "9", lang::ErrorCode::VAR_UNSUPPORTED, "past the 4 elements"},
    {"p:t/e dwarf_vars.c:9999", "dwarf_vars.c", lang::ErrorCode::NO_SOURCE_PLACE, "has no code"},
    {"p:t/e nosuch.c:3", "nosuch.c", lang::ErrorCode::NO_SOURCE_PLACE, "no source file nosuch.c"},
    {"p:t/e visit:1000", "visit", lang::ErrorCode::NO_SOURCE_PLACE, "has no code in visit"},
    {"p:t/e nosuch@dwarf_vars.c", "nosuch", lang::ErrorCode::NO_SOURCE_PLACE, "no function"},
};

class VariableErrors : public ::testing::TestWithParam<ErrorCase> {
 protected:
  void SetUp() override {
    if (!programs().ok) GTEST_SKIP() << "cc -g could not build " << kSource;
  }
};

TEST_P(VariableErrors, SayWhatAndWhereWithTheCaret) {
  const ErrorCase& c = GetParam();
  const std::string definition = c.definition;
  const CommandRun run = check(definition, programs().o0);
  EXPECT_EQ(run.status, 2);
  // The caret's word after the probe point (visit names both).
  const size_t after = definition.find(' ', definition.find(' ') + 1);
  const size_t at = definition.find(c.word, c.code == lang::ErrorCode::NO_SOURCE_PLACE ? 0 : after);
  EXPECT_EQ(run.err.substr(0, run.err.find('^') + 2),
            error_head(lang::error_message(c.code), lang::error_name(c.code), definition, at))
      << run.err;
  EXPECT_THAT(run.err, HasSubstr(c.detail));
}

INSTANTIATE_TEST_SUITE_P(Table, VariableErrors, ::testing::ValuesIn(kErrorCases),
                         [](const auto& info) {
                           return std::string(lang::error_name(info.param.code)) + "_" +
                                  std::to_string(info.index);
                         });

TEST_F(VariableArgs, AnObjectWithoutDebugInformationSaysWhereItLooked) {
  const std::string definition = "p:t/e visit depth";
  const CommandRun run = check(definition, programs().bare);
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err.substr(0, run.err.find('^') + 2),
            head_at(lang::ErrorCode::NO_DEBUG_INFO, definition, "depth"));
  EXPECT_THAT(run.err, HasSubstr("no debug information for " + programs().bare));
  const std::string line = "p:t/e dwarf_vars.c:50";
  const CommandRun by_line = check(line, programs().bare);
  EXPECT_EQ(by_line.err.substr(0, by_line.err.find('^') + 2),
            head_at(lang::ErrorCode::NO_DEBUG_INFO, line, "dwarf_vars.c"));
}

// A separate debug file (found by .gnu_debuglink beside the stripped
// object) gives the same fetches: its frame information is the object's
// own .eh_frame, which the debug file keeps only an empty copy of.
TEST_F(VariableArgs, ASeparateDebugFileGivesTheSameFetches) {
  const std::string dir = programs().root + "/separate";
  std::filesystem::create_directories(dir);
  const std::string app = dir + "/app";
  ASSERT_TRUE(sh("cp " + programs().o0 + " " + app));
  ASSERT_TRUE(sh("cd " + dir + " && objcopy --only-keep-debug app app.debug"));
  ASSERT_TRUE(sh("cd " + dir + " && objcopy --strip-debug --add-gnu-debuglink=app.debug app"));
  const std::string definition = "p:t/v visit it->id it->name depth";
  const CommandRun own = check(definition, programs().o0);
  const CommandRun separate = check(definition, app);
  ASSERT_EQ(own.status, 0) << own.err;
  ASSERT_EQ(separate.status, 0) << separate.err;
  EXPECT_EQ(separate.out, own.out);
  const CommandRun line = check("p:t/l dwarf_vars.c:58 i total", app);
  EXPECT_EQ(line.out, check("p:t/l dwarf_vars.c:58 i total", programs().o0).out) << line.err;
}

// The same found by build-id, in a debuginfod client's cache: the stripped
// object names no file, only its build-id does.
TEST_F(VariableArgs, ADebugFileFoundByBuildIdGivesTheSameFetches) {
  const std::string dir = programs().root + "/by_build_id";
  std::filesystem::create_directories(dir + "/cache");
  const std::string app = dir + "/app";
  ASSERT_TRUE(sh("cp " + programs().o0 + " " + app));
  const std::string id_note = dir + "/id";
  // In a group: sh() sends the command's own output to /dev/null.
  ASSERT_TRUE(sh("{ readelf -n " + app + " | sed -n 's/.*Build ID: //p' > " + id_note + "; }"));
  std::ifstream in(id_note);
  std::string id;
  ASSERT_TRUE(std::getline(in, id) && !id.empty()) << "no build-id in " << app;
  std::filesystem::create_directories(dir + "/cache/" + id);
  ASSERT_TRUE(sh("objcopy --only-keep-debug " + app + " " + dir + "/cache/" + id + "/debuginfo"));
  ASSERT_TRUE(sh("objcopy --strip-debug " + app));
  const std::string definition = "p:t/v visit it->id it->name depth";
  const char* before = std::getenv("DEBUGINFOD_CACHE_PATH");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("DEBUGINFOD_CACHE_PATH", (dir + "/cache").c_str(), 1);
  const CommandRun found = check(definition, app);
  if (before != nullptr) {
    ::setenv("DEBUGINFOD_CACHE_PATH", saved.c_str(), 1);
  } else {
    ::unsetenv("DEBUGINFOD_CACHE_PATH");
  }
  ASSERT_EQ(found.status, 0) << found.err;
  EXPECT_EQ(found.out, check(definition, programs().o0).out);
  // Without the cache, nothing names the debug file.
  const CommandRun missing = check(definition, app);
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.err, HasSubstr("(NO_DEBUG_INFO)"));
}

TEST_F(VariableArgs, VariablesAtAReturnAreRefused) {
  const std::string definition = "r:t/e visit depth";
  const CommandRun run = check(definition, programs().o0);
  EXPECT_EQ(run.err.substr(0, run.err.find('^') + 2),
            head_at(lang::ErrorCode::VAR_ON_RETPROBE, definition, "depth"));
}

// A variable in scope with no location at the address (optimized out):
// found wherever -O2 left one, and refused by name with perf probe's words.
TEST_F(VariableArgs, AnOptimizedOutVariableIsNamed) {
  auto info = symbols::DebugInfo::open(programs().o2, symbols::DebugInfoPaths{});
  ASSERT_TRUE(info) << info.error().message;
  for (const char* function : {"visit", "sum", "main"}) {
    const std::string definition = std::string("p:t/e ") + function + " ";
    const CommandRun listing = run_check_with({definition + "$vars"}, {}, programs().o2);
    ASSERT_EQ(listing.status, 0) << listing.err;
    for (const char* name : {"score", "total", "i", "it", "depth", "count", "values", "argc"}) {
      if (listing.out.find(std::string(" ") + name + "=") != std::string::npos) continue;
      const CommandRun run = check(definition + name, programs().o2);
      if (run.err.find("(VAR_OPTIMIZED)") == std::string::npos) continue;
      EXPECT_EQ(
          run.err.substr(0, run.err.find('^') + 2),
          head_at(lang::ErrorCode::VAR_OPTIMIZED, definition + name, name, definition.size()));
      EXPECT_THAT(run.err, HasSubstr("Failed to find the location of the '" + std::string(name) +
                                     "' variable at this address. Perhaps it has been optimized "
                                     "out."));
      return;
    }
  }
  GTEST_SKIP() << "this compiler left no variable optimized out at these functions' entries";
}

}  // namespace
}  // namespace dprobe::cli

namespace dprobe::cli {
namespace {

CommandRun list_variables(const std::string& place, const std::string& program) {
  std::ostringstream out;
  std::ostringstream err;
  CommandRun run;
  run.status =
      run_list_variables(ListOptions{.executable = program, .variables_place = place}, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

TEST_F(VariableArgs, ListingShowsEachAddressWithItsVariablesAndTypes) {
  const CommandRun run = list_variables("visit", programs().o0);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, MatchesRegex("Available variables at visit\n"
                                    "\t@<visit\\+[0-9]+>\n"
                                    "(\t\t[^\n]*\n)*"
                                    "\t\tstruct node \\*\tit\n"
                                    "\t\tint\tdepth\n"
                                    "\t\tint\tscore\n"));
  const CommandRun loop = list_variables("sum:2", programs().o0);
  ASSERT_EQ(loop.status, 0) << loop.err;
  EXPECT_THAT(loop.out, MatchesRegex("Available variables at sum:2\n"
                                     "(\t@<sum\\+[0-9]+>\n"
                                     "\t\tint\ti\n"  // the loop's block first
                                     "\t\tconst long( int)? \\*\tvalues\n"
                                     "\t\tint\tcount\n"
                                     "\t\tlong( int)?\ttotal\n)+"));
}

TEST_F(VariableArgs, ListingAnUnknownPlaceIsAnError) {
  const CommandRun run = list_variables("dwarf_vars.c:9999", programs().o0);
  EXPECT_EQ(run.status, 2);
  EXPECT_THAT(run.err, HasSubstr("(NO_SOURCE_PLACE)"));
}

}  // namespace
}  // namespace dprobe::cli
