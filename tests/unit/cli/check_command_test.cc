// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe check` through run_check: what it prints, byte for byte, for the
// ways definitions reach it (-e, -f, -x), and its exit status.
#include "cli/command/check_command.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli/plan/definitions.h"
#include "lang/limits.h"
#include "support/patience.h"
#include "unit/cli/cli_test_support.h"
#include "unit/symbols/fixture_build.h"

namespace dprobe::cli {
namespace {

using symbols::test_support::fixture;
using symbols::test_support::host_libc;
using symbols::test_support::kSqlite3;
using test_support::CommandRun;
using test_support::count_errors;
using test_support::data_path;
using test_support::run_check_with;
using test_support::split_lines;

TEST(CheckCommand, PrintsEachDefinitionNormalized) {
  const CommandRun run = run_check_with({
      "p libc.so.6:malloc %di",
      "p:grp/free  libc.so.6:free  ptr=%di:x64",
      "p libc.so.6:calloc n=%di:u64 size=%si:s32",
      "r libc.so.6:malloc",
  });
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.out,
            "p:dprobes/p_malloc_0 libc.so.6:malloc arg1=%di:x64\n"
            "p:grp/free libc.so.6:free ptr=%di:x64\n"
            "p:dprobes/p_calloc_0 libc.so.6:calloc n=%di:u64 size=%si:s32\n"
            "r:dprobes/r_malloc_0 libc.so.6:malloc\n");
}

TEST(CheckCommand, ReturnProbeKeepsMaxactive) {
  const CommandRun run = run_check_with({"r16:grp/r libc.so.6:malloc $retval"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "r16:grp/r libc.so.6:malloc arg1=$retval:x64\n");
}

TEST(CheckCommand, PercentReturnIsAReturnProbe) {
  const CommandRun run = run_check_with({"p libc.so.6:malloc%return ret=$retval:s64"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "r:dprobes/r_malloc_0 libc.so.6:malloc ret=$retval:s64\n");
}

TEST(CheckCommand, RemovalDropsAnEarlierDefinition) {
  const CommandRun run = run_check_with({
      "p libc.so.6:malloc %di",
      "p libc.so.6:free %di",
      "-:dprobes/p_malloc_0",
  });
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "p:dprobes/p_free_0 libc.so.6:free arg1=%di:x64\n");
}

TEST(CheckCommand, RemovalOfAGroupDropsAllItsEvents) {
  const CommandRun run = run_check_with({
      "p:a/one libc.so.6:malloc",
      "p:b/two libc.so.6:malloc",
      "p:a/three libc.so.6:free",
      "-:a/",
  });
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "p:b/two libc.so.6:malloc\n");
}

TEST(CheckCommand, ANameFreedByRemovalCanBeUsedAgain) {
  const CommandRun run = run_check_with({
      "p libc.so.6:malloc %di",
      "-:dprobes/p_malloc_0",
      "p libc.so.6:malloc %si",
  });
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "p:dprobes/p_malloc_0 libc.so.6:malloc arg1=%si:x64\n");
}

TEST(CheckCommand, DefinitionFileSkipsCommentsAndBlankLines) {
  const CommandRun run = run_check_with({}, {data_path("probes.txt")});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  // The file's first event is removed by its own later "-:" line; the
  // commented-out "#p libc.so.6:free" would have made the last line a
  // duplicate.
  EXPECT_EQ(run.out,
            "r:grp/malloc_ret libc.so.6:malloc ptr=$retval:x64\n"
            "p:dprobes/p_free_0 libc.so.6:free ptr=%di:x64\n");
}

TEST(CheckCommand, ExpressionsComeBeforeFiles) {
  const CommandRun run = run_check_with({"p:first/ev libc.so.6:malloc"}, {data_path("probes.txt")});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out,
            "p:first/ev libc.so.6:malloc\n"
            "r:grp/malloc_ret libc.so.6:malloc ptr=$retval:x64\n"
            "p:dprobes/p_free_0 libc.so.6:free ptr=%di:x64\n");
}

TEST(CheckCommand, UnreadableDefinitionFileIsAnError) {
  const CommandRun run = run_check_with({"p libc.so.6:malloc"}, {"/nonexistent/dprobe/probes.txt"});
  EXPECT_EQ(run.status, kExitBadDefinition);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "dprobe: error: cannot read definitions: /nonexistent/dprobe/probes.txt: "
            "No such file or directory\n");
}

// The oracle for a wildcard: the functions the symbols layer finds for the
// glob, each name once, that resolve as a probe; `line` makes each one's
// expected output.
template <typename Line>
std::string expected_expansion(const test_support::Symbols& object, std::string_view glob,
                               Line line) {
  std::string expected;
  std::set<std::string> names;
  for (const symbols::FunctionSymbol* f : object.table->match(glob)) {
    if (!names.insert(f->name).second) continue;
    if (!symbols::resolve_symbol(*object.elf, *object.table, f->name, 0)) continue;
    expected += line(f->name);
  }
  return expected;
}

TEST(CheckCommand, WildcardExpandsToOneLinePerFunction) {
  const test_support::Symbols libc = test_support::load_symbols(host_libc());
  ASSERT_TRUE(libc.ok());
  ASSERT_FALSE(libc.table->find("strcmp").empty());
  // str*cmp are IFUNCs in glibc: their resolvers are what gets probed.
  const std::string expected = expected_expansion(libc, "str*cmp", [](const std::string& name) {
    return "p:dprobes/p_" + name + "_0 libc.so.6:" + name + " s1=%di:x64\n";
  });
  ASSERT_NE(expected.find("p:dprobes/p_strcmp_0 libc.so.6:strcmp s1=%di:x64\n"), std::string::npos);

  const CommandRun run = run_check_with({"p libc.so.6:str*cmp s1=%di"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.out, expected);
}

TEST(CheckCommand, WildcardReturnProbesAndRemovalOfOneExpansion) {
  const test_support::Symbols libc = test_support::load_symbols(host_libc());
  ASSERT_TRUE(libc.ok());
  const std::string expected = expected_expansion(libc, "strn*cmp", [](const std::string& name) {
    return name == "strncmp" ? "" : "r:dprobes/r_" + name + "_0 libc.so.6:" + name + "\n";
  });
  ASSERT_NE(expected, "");

  const CommandRun run = run_check_with({"r libc.so.6:strn*cmp", "-:dprobes/r_strncmp_0"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, expected);
}

TEST(CheckCommand, WildcardSkipsWhatCannotBeProbed) {
  ASSERT_TRUE(fixture().ok) << fixture().error;
  // call_* matches call_a and call_b; data_func* matches only data_function,
  // which is not in executable code.
  const CommandRun run = run_check_with({"p " + fixture().lib + ":call_*"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "p:dprobes/p_call_a_0 " + fixture().lib + ":call_a\n" +
                         "p:dprobes/p_call_b_0 " + fixture().lib + ":call_b\n");
  const CommandRun data = run_check_with({"p " + fixture().lib + ":data_func*"});
  EXPECT_EQ(data.status, kExitBadDefinition);
  EXPECT_TRUE(
      data.err.starts_with("dprobe: error: No function matches the pattern (NO_SYMBOL_MATCH)\n"))
      << data.err;
}

TEST(CheckCommand, FormatPrintsTheEventLayout) {
  const CommandRun run =
      run_check_with({"p:grp/ev libc.so.6:malloc size=%di:u64 s=+0(%si):string"}, {}, {}, true);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out,
            "p:grp/ev libc.so.6:malloc size=%di:u64 s=+0(%si):string\n"
            "name: ev\n"
            "ID: 1\n"
            "format:\n"
            "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
            "\tfield:unsigned short common_size;\toffset:2;\tsize:2;\tsigned:0;\n"
            "\tfield:unsigned int common_cpu;\toffset:4;\tsize:4;\tsigned:0;\n"
            "\tfield:int common_pid;\toffset:8;\tsize:4;\tsigned:1;\n"
            "\tfield:int common_tid;\toffset:12;\tsize:4;\tsigned:1;\n"
            "\tfield:unsigned long long common_ts;\toffset:16;\tsize:8;\tsigned:0;\n"
            "\n"
            "\tfield:unsigned long __probe_ip;\toffset:24;\tsize:8;\tsigned:0;\n"
            "\tfield:u64 size;\toffset:32;\tsize:8;\tsigned:0;\n"
            "\tfield:__data_loc char[] s;\toffset:40;\tsize:4;\tsigned:1;\n"
            "\n"
            "print fmt: \"(%lx) size=%Lu s=\\\"%s\\\"\", REC->__probe_ip, REC->size, "
            "__get_str(s)\n"
            "\n");
}

TEST(CheckCommand, WithoutFormatThereIsNoLayout) {
  const CommandRun run = run_check_with({"p:grp/ev libc.so.6:malloc size=%di:u64"});
  EXPECT_EQ(run.out, "p:grp/ev libc.so.6:malloc size=%di:u64\n");
}

TEST(CheckCommand, LibraryResolvedThroughTheExecutablesNeeded) {
  if (access(kSqlite3, X_OK) != 0) GTEST_SKIP() << kSqlite3 << " is not installed";
  const CommandRun run = run_check_with({"p libsqlite3.so.0:sqlite3_step stmt=%di"}, {}, kSqlite3);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.out, "p:dprobes/p_sqlite3_step_0 libsqlite3.so.0:sqlite3_step stmt=%di:x64\n");
}

TEST(CheckCommand, LibraryFoundOnlyThroughTheExecutablesRunpath) {
  ASSERT_TRUE(fixture().ok) << fixture().error;
  // libfix.so.1 is in no system directory: only app's DT_RUNPATH finds it.
  const CommandRun with_x = run_check_with({"p libfix.so.1:call_a x=%di:s32"}, {}, fixture().app);
  EXPECT_EQ(with_x.status, 0) << with_x.err;
  EXPECT_EQ(with_x.out, "p:dprobes/p_call_a_0 libfix.so.1:call_a x=%di:s32\n");

  const CommandRun without_x = run_check_with({"p libfix.so.1:call_a x=%di:s32"});
  EXPECT_EQ(without_x.status, kExitBadDefinition);
  EXPECT_EQ(without_x.out, "");
  EXPECT_TRUE(
      without_x.err.starts_with("dprobe: error: Failed to find the given file (FILE_NOT_FOUND)\n"))
      << without_x.err;
}

TEST(CheckCommand, SymbolWithoutObjectIsLookedUpInTheExecutable) {
  ASSERT_TRUE(fixture().ok) << fixture().error;
  const CommandRun run = run_check_with({"p main argc=%di:s32"}, {}, fixture().app);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "p:dprobes/p_main_0 main argc=%di:s32\n");
}

TEST(CheckCommand, AddressesPrintInSixteenHexDigits) {
  ASSERT_TRUE(fixture().ok) << fixture().error;
  const test_support::Symbols lib = test_support::load_symbols(fixture().lib);
  ASSERT_TRUE(lib.ok());
  const symbols::FunctionSymbol& call_a = lib.table->find("call_a")[0];
  const auto offset = lib.elf->file_offset_of(call_a.address);
  ASSERT_TRUE(offset.has_value());
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%016" PRIx64, *offset);
  char short_hex[32];
  std::snprintf(short_hex, sizeof short_hex, "0x%" PRIx64, *offset);

  const CommandRun run = run_check_with({"p:grp/byoff " + fixture().lib + ":" + short_hex});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "p:grp/byoff " + fixture().lib + ":" + hex + "\n");
}

TEST(CheckCommand, NoDefinitionsIsFine) {
  const CommandRun run = run_check_with({});
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "");
}

TEST(CheckCommand, ABadDefinitionExitsTwoAndPrintsNothing) {
  const CommandRun run = run_check_with({"p libc.so.6:malloc", "p:grp/ev libc.so.6:open fd=%zz"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "dprobe: error: Invalid register name (BAD_REG_NAME)\n"
            "  Command: p:grp/ev libc.so.6:open fd=%zz\n"
            "                                      ^\n");
}

TEST(CheckCommand, EveryBadDefinitionIsReported) {
  const CommandRun run = run_check_with({
      "p:grp/ev libc.so.6:open fd=%zz",        // parse error
      "p libc.so.6:malloc",                    // good
      "p libc.so.6:no_such_function_in_libc",  // resolve error
      "p libc.so.6:malloc",                    // set error: the same probe again
      "p libnope.so.9:foo",                    // object error
      "-:grp/nothing",                         // nothing to remove
      "p libc.so.6:free",                      // good
  });
  EXPECT_EQ(run.status, kExitBadDefinition);
  EXPECT_EQ(run.out, "");
  ASSERT_EQ(count_errors(run.err), 5u) << run.err;
  std::vector<std::string> heads;
  for (const std::string& line : split_lines(run.err)) {
    if (line.starts_with("dprobe: error: ")) heads.push_back(line);
  }
  EXPECT_EQ(heads, (std::vector<std::string>{
                       "dprobe: error: Invalid register name (BAD_REG_NAME)",
                       "dprobe: error: The symbol is not found (NO_SYMBOL)",
                       "dprobe: error: There is already the exact same probe event (SAME_PROBE)",
                       "dprobe: error: Failed to find the given file (FILE_NOT_FOUND)",
                       "dprobe: error: No event matches the name to remove (NO_SUCH_EVENT)",
                   }));
}

// Wildcard expansion names each event by the default rule, adding _1, _2 ...
// where two names would be equal. Names cut to the 63-character limit must
// still end up distinct, and the expansion must end. Run in a child process
// with an alarm, so that a hang fails this test instead of the whole suite.
TEST(CheckCommandDeathTest, WildcardOverNamesEqualAfterTheLengthCutEnds) {
  char dir_template[] = "/tmp/dprobe-cli-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string lib = dir + "/liblong.so";
  const std::string compile =
      "cc -O0 -shared -fPIC -o " + lib + " " + data_path("long_names.c") + " 2>&1";
  ASSERT_EQ(std::system(compile.c_str()), 0) << compile;

  const auto alarm_seconds =
      static_cast<unsigned>(std::chrono::ceil<std::chrono::seconds>(support::patience()).count());
  EXPECT_EXIT(
      {
        alarm(alarm_seconds);
        const CommandRun run = run_check_with({"p " + lib + ":a_function_whose_name_*"});
        const std::vector<std::string> lines = split_lines(run.out);
        std::set<std::string> events;
        for (const std::string& line : lines) {
          const size_t slash = line.find('/');
          events.insert(line.substr(slash + 1, line.find(' ') - slash - 1));
        }
        bool ok = run.status == 0 && lines.size() == 2 && events.size() == 2;
        for (const std::string& event : events) ok = ok && event.size() <= lang::kMaxEventNameLen;
        if (!ok)
          std::fprintf(stderr, "status %d\n%s%s", run.status, run.out.c_str(), run.err.c_str());
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");

  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace dprobe::cli

namespace dprobe::cli {
namespace {

// Each site of an SDT point is a probe of its own, its $argN the fetches
// of the operands gcc chose there (fixtures/sdt.c): registers, a
// pc-relative variable, a constant; typed by the operand unless typed.
TEST(CheckCommand, SdtPointsBecomeTheirSitesWithTheirOperands) {
  const auto& fx = fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  const std::string sdt = fx.sdt;
  const CommandRun run = run_check_with({
      "p " + sdt + ":%sdt_fix:r*",
      "p " + sdt + ":%sdt_fix:global",
      "p:c/k " + sdt + ":%sdt_fix:constant k=$arg1 kx=$arg1:x16",
      "p " + sdt + ":%sdt_fix:guarded $arg* low=+0($arg1):u8",
  });
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.out, "p:sdt_fix/regs " + sdt + ":fix_points arg1=%di:s32 arg2=%si:s64\n" +
                         "p:sdt_fix/global " + sdt + ":fix_points+1 arg1=@" + sdt +
                         ":fix_counter:s64\n" + "p:c/k " + sdt +
                         ":fix_points+2 k=\\42:s32 kx=\\42:x16\n" + "p:sdt_fix/guarded " + sdt +
                         ":fix_points+13 arg1=%di:s32 low=+0(%di):u8\n");
}

}  // namespace
}  // namespace dprobe::cli
