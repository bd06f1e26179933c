// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Probes on a library the program loads later (tests/programs/dl_host.c
// and plugins/dl_plugin.c): pending until the library is loaded, armed
// before its constructors run, disarmed before dlclose unmaps it, and
// armed again on every load, with every call counted and nothing left
// behind in the program's memory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kPluginDir = DPROBE_PROGRAMS_DIR;
const std::string kPluginPath = kPluginDir + "/libdprobe_test_plugin.so";
const std::string kByName = "p:g/f libdprobe_test_plugin.so:plugin_func x=%di:s64";
const std::string kByPath = "p:g/f " + kPluginPath + ":plugin_func x=%di:s64";

// `dprobe ARGS...` with the plugin's directory on LD_LIBRARY_PATH, so that
// the library can be named by its file name, as the loader would find it.
RunResult run_with_library_path(const std::vector<std::string>& args) {
  std::vector<std::string> argv{find_tool("env"), "LD_LIBRARY_PATH=" + kPluginDir, DPROBE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

// Every line is the probe of plugin_func in dl_host, and x goes through
// `per_cycle` again and again, `cycles` times.
void expect_cycles(const std::vector<TraceLine>& lines, const std::vector<std::string>& per_cycle,
                   size_t cycles) {
  ASSERT_EQ(lines.size(), per_cycle.size() * cycles);
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_EQ(lines[i].event, "f") << "line " << i << ": " << lines[i];
    ASSERT_EQ(lines[i].comm, "dl_host_O2") << "line " << i << ": " << lines[i];
    ASSERT_TRUE(lines[i].location.starts_with("plugin_func+0x0/"))
        << "line " << i << ": " << lines[i];
    ASSERT_EQ(lines[i].arg("x"), per_cycle[i % per_cycle.size()])
        << "line " << i << ": " << lines[i];
  }
}

uint64_t hits_of(const std::string& out, const std::string& event) {
  const auto row = profile_row(parse_profile(out), event);
  return row ? row->hits : ~uint64_t{0};
}

TEST(PendingProbes, ArmedOnEveryLoadOfALibraryNamedByFileName) {
  const RunResult run = run_with_library_path(
      {"run", "--profile", "-e", kByName, "--", program("dl_host_O2"), kPluginDir, "50"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, HasSubstr("dprobe: pending: g/f: libdprobe_test_plugin.so is not loaded "
                                 "yet; armed when it is\n"))
      << run;
  EXPECT_THAT(run.out, HasSubstr("dl_host: done 50\n")) << run;
  expect_cycles(parse_trace(run.out), {"1", "2"}, 50);
  EXPECT_EQ(hits_of(run.err, "f"), 100u) << run;
}

TEST(PendingProbes, ArmedOnEveryLoadOfALibraryNamedByPath) {
  const RunResult run =
      run_traced({kByPath}, {program("dl_host_O2"), kPluginDir, "50"}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, HasSubstr("dprobe: pending: g/f: " + kPluginPath)) << run;
  expect_cycles(parse_trace(run.out), {"1", "2"}, 50);
  EXPECT_EQ(hits_of(run.err, "f"), 100u) << run;
}

// A probe that waits for its library next to one armed from the start:
// both count exactly, and the pending one does not delay the other.
TEST(PendingProbes, PendingAndStartupProbesTogether) {
  const RunResult run = run_traced({kByPath, "p:g/dlopen libc.so.6:dlopen flags=%si:x32"},
                                   {program("dl_host_O2"), kPluginDir, "20"}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  // Each cycle: dlopen(RTLD_NOW), plugin_func(1), plugin_func(2), and
  // after dlclose dlopen(RTLD_NOW | RTLD_NOLOAD) finding nothing.
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 80u) << run;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::vector<std::pair<std::string, std::string>> cycle{
        {"dlopen", "0x2"}, {"f", "1"}, {"f", "2"}, {"dlopen", "0x6"}};
    const auto& [event, value] = cycle[i % 4];
    ASSERT_EQ(lines[i].event, event) << "line " << i << ": " << lines[i];
    ASSERT_EQ(lines[i].args.at(0).value, value) << "line " << i << ": " << lines[i];
  }
  EXPECT_EQ(hits_of(run.err, "dlopen"), 40u) << run;
  EXPECT_EQ(hits_of(run.err, "f"), 40u) << run;
}

// The library's constructor runs inside dlopen, before it returns: the
// probe is armed before that, and stays armed through the destructor,
// which dlclose runs before it unmaps the library.
TEST(PendingProbes, CallsInTheLibrarysConstructorAndDestructorAreTraced) {
  const RunResult run =
      run_traced({kByPath}, {program("dl_host_O2"), kPluginDir, "20", "ctor"}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("dl_host: done 20\n")) << run;
  expect_cycles(parse_trace(run.out), {"-1", "1", "2", "-2"}, 20);
  EXPECT_EQ(hits_of(run.err, "f"), 80u) << run;
}

// 10,000 loads and unloads: every call counted, the program exits 0, and
// re-arming leaves nothing behind in its memory (VmRSS after cycle 1000
// and after the last one, as dl_host prints them).
TEST(PendingProbes, TenThousandLoadsExactCountsAndNoGrowth) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string trace = dir.file("trace");
  const RunResult run = run_traced({kByPath}, {program("dl_host_O2"), kPluginDir, "10000"},
                                   {"--profile", "-o", trace});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("dl_host: done 10000\n")) << run;
  EXPECT_EQ(hits_of(run.err, "f"), 20000u) << run;
  const auto lines = parse_trace(read_file(trace));
  expect_cycles(lines, {"1", "2"}, 10000);
  const auto rss_1000 = last_number_after(run.out, "dl_host: rss 1000 ");
  const auto rss_last = last_number_after(run.out, "dl_host: rss 10000 ");
  ASSERT_TRUE(rss_1000 && rss_last) << run;
  EXPECT_LT(*rss_last, *rss_1000 + 4096)
      << "VmRSS grew from " << *rss_1000 << " KiB to " << *rss_last << " KiB in 9000 cycles";
}

// A library that is neither loaded nor where the loader would find it is
// a typo until shown otherwise: an error, not a probe pending forever.
TEST(PendingProbes, ALibraryTheLoaderCannotFindIsAnErrorNotPending) {
  const RunResult run = run_traced({kByName}, {program("dl_host_O2"), kPluginDir, "1"});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, HasSubstr("Failed to find the given file (FILE_NOT_FOUND)")) << run;
  EXPECT_THAT(run.err, HasSubstr("'libdprobe_test_plugin.so' is not in")) << run;
  EXPECT_THAT(run.err, Not(HasSubstr("pending"))) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("dl_host:"))) << "nothing ran";
}

// A library named by its path is read before it is loaded: a symbol it
// does not have is refused at once, with the caret, and nothing runs.
TEST(PendingProbes, AProbeOnASymbolTheLibraryLacksIsRefusedBeforeTheProgramRuns) {
  const RunResult run = run_traced({"p:g/nope " + kPluginPath + ":no_such_function", kByPath},
                                   {program("dl_host_O2"), kPluginDir, "3"});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, HasSubstr("dprobe: error: The symbol is not found (NO_SYMBOL)")) << run;
  EXPECT_THAT(run.err, HasSubstr("no_such_function in " + kPluginPath)) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("dl_host:"))) << "nothing ran";
}

// An IFUNC of a library loaded late: the loader says so before it relocates
// the library, when its resolver cannot run. The probe is refused with that
// reason, and the program runs as untraced.
TEST(PendingProbes, AnIfuncOfALateLibraryIsRefusedWithTheReason) {
  // floor is an IFUNC in x86_64's libm (SSE4.1 or not), an instruction on
  // arm64's.
  const RunResult listed = run_dprobe({"list", "libm.so.6:floor"});
  if (listed.status != 0 || listed.out.find(" floor [ifunc") == std::string::npos) {
    GTEST_SKIP() << "libm.so.6:floor is no IFUNC here: " << listed.out << listed.err;
  }
  const RunResult run =
      run_traced({"p:m/floor libm.so.6:floor"}, {program("ifunc_late_O2")}, {"-o", "/dev/null"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("ifunc_late: 4950\n")) << run;
  EXPECT_THAT(run.err, HasSubstr("an IFUNC of an object the loader has just mapped")) << run;
}

}  // namespace
}  // namespace dprobe::integration
