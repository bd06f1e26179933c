// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe run` as a command: its outputs (-o, --json, --profile, -f), several
// events on one address, the traced command's exit status passed through,
// and the commands it must refuse, each with a clear error and nothing run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string args_program() { return program("args_O2"); }
std::string status_program() { return program("status_O2"); }

// ---- Outputs ------------------------------------------------------------------

TEST(RunOutput, TraceGoesToTheOutputFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string trace_file = dir.file("trace.txt");
  const RunResult run =
      run_traced({"p:out/a2 args2 a=%di:s64 b=%si:s64"}, {args_program()}, {"-o", trace_file});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_EQ(run.out, "args: started\nargs: ok\n") << "only the program's output on stdout";
  EXPECT_EQ(run.err, "");
  const std::string text = read_file(trace_file);
  const auto lines = parse_trace(text);
  ASSERT_EQ(lines.size(), 1u) << text;
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line, nothing else: " << text;
  EXPECT_EQ(lines[0].event, "a2");
  EXPECT_THAT(lines[0].args, ElementsAre(TraceArg{"a", "1"}, TraceArg{"b", "2"}));
}

TEST(RunOutput, UnwritableOutputFileIsAnError) {
  const RunResult run =
      run_traced({"p:out/a2 args2"}, {args_program()}, {"-o", "/nonexistent-dir/trace.txt"});
  EXPECT_NE(run.status, 0) << run;
  EXPECT_THAT(run.err, HasSubstr("/nonexistent-dir/trace.txt")) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("args: started"))) << "the program ran: " << run;
}

// The kernel's trace line, field by field, with its widths.
TEST(RunOutput, TraceLineHasTheKernelsLayout) {
  const RunResult run = run_traced({"p:out/a1 args1 a=$arg1:s64"}, {args_program()});
  ASSERT_EQ(run.status, 0) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 1u) << run;
  std::string text;
  for (size_t start = 0; start < run.out.size();) {
    const size_t end = run.out.find('\n', start);
    const std::string line = run.out.substr(start, end - start);
    if (line.find(": a1: ") != std::string::npos) text = line;
    start = end == std::string::npos ? run.out.size() : end + 1;
  }
  // "%16s-%-7d [%03d] ..... %5lu.%06lu: "
  char head[64];
  std::snprintf(head, sizeof(head), "%16s-%-7llu [%03u] ..... ", lines[0].comm.c_str(),
                static_cast<unsigned long long>(lines[0].tid), lines[0].cpu);
  EXPECT_THAT(text, StartsWith(head)) << text;
  const std::string& ts = lines[0].timestamp;
  ASSERT_NE(ts.find('.'), std::string::npos);
  EXPECT_EQ(ts.size() - ts.find('.') - 1, 6u) << "microseconds, 6 digits: " << ts;
  const auto size = symbol_size(args_program(), "args1");
  ASSERT_TRUE(size);
  EXPECT_EQ(text.substr(text.find(": a1: ")), ": a1: (args1+0x0/" + hex(*size) + ") a=-1");
}

TEST(RunOutput, JsonLines) {
  const RunResult run = run_traced(
      {"p:json/rec take_rec u8=+0(%di):u8 s8=+1(%di):s8 ch=+18(%di):char arr=+36(%di):u32[2] "
       "str=+0(+56(%di)):string x=+4(%di):x32",
       "p:json/bad take_ptrs s=+0(%di):string"},
      {args_program()}, {"--json"});
  ASSERT_EQ(run.status, 0) << run;
  std::vector<std::string> json;
  for (size_t start = 0; start < run.out.size();) {
    const size_t end = run.out.find('\n', start);
    const std::string line = run.out.substr(start, end - start);
    if (line.starts_with("{")) json.push_back(line);
    start = end == std::string::npos ? run.out.size() : end + 1;
  }
  ASSERT_EQ(json.size(), 5u) << run;  // take_rec 3 times, take_ptrs twice
  EXPECT_TRUE(parse_trace(run.out).empty()) << "no text lines with --json";
  for (size_t i = 0; i < 3; ++i) {
    const std::string& line = json[i];
    EXPECT_THAT(line, HasSubstr("\"comm\":\"args_O2\"")) << line;
    EXPECT_THAT(line, HasSubstr("\"group\":\"json\",\"event\":\"rec\"")) << line;
    EXPECT_THAT(line, HasSubstr("\"sym\":\"take_rec+0x0/0x")) << line;
    EXPECT_THAT(line, HasSubstr("\"args\":{\"u8\":200,\"s8\":-5,\"ch\":\"Q\",\"arr\":[1,2],"
                                "\"str\":\"hello world\",\"x\":4000000000}}"))
        << line;
    EXPECT_TRUE(line.ends_with("}")) << line;
  }
  for (size_t i = 3; i < 5; ++i) {
    EXPECT_THAT(json[i], HasSubstr("\"event\":\"bad\"")) << json[i];
    EXPECT_THAT(json[i], HasSubstr("\"args\":{\"s\":null}}")) << json[i];
  }
}

// "  %-44s %15lu %15lu", one row per event in definition order.
TEST(RunOutput, ProfileHasTheKprobeProfileLayout) {
  const RunResult run = run_traced({"p:prof/rec take_rec", "p:prof/never callback",
                                    "p:prof/a_name_of_exactly_44_characters_long_xxxxxx take_ptrs"},
                                   {args_program()}, {"--profile"});
  ASSERT_EQ(run.status, 0) << run;
  char expected[512];
  std::snprintf(expected, sizeof(expected),
                "  %-44s %15lu %15lu\n  %-44s %15lu %15lu\n  %-44s %15lu %15lu\n", "rec", 3ul, 0ul,
                "never", 0ul, 0ul, "a_name_of_exactly_44_characters_long_xxxxxx", 2ul, 0ul);
  EXPECT_THAT(run.err, HasSubstr(expected)) << run;
  // stdout is the trace's and the program's: the profile is on stderr.
  EXPECT_TRUE(parse_profile(run.out).empty()) << run;
  const auto rows = parse_profile(run.err);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].event, "rec");
  EXPECT_EQ(rows[1].event, "never");
  EXPECT_EQ(rows[2].hits, 2u);
}

TEST(RunOutput, DefinitionsFromAFileWithComments) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  write_file(dir.file("defs"),
             "# probes for args\n"
             "p:file/a3 args3 a=%di:s64 c=%dx:s64  # the third argument\n"
             "\n"
             "p:file/mid take_mid u8=-8(%di):u8\n");
  const RunResult run =
      run_dprobe({"run", "-f", dir.file("defs"), "--profile", "--", args_program()});
  ASSERT_EQ(run.status, 0) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 2u) << run;
  EXPECT_THAT(lines_of(lines, "a3").at(0).args,
              ElementsAre(TraceArg{"a", "1"}, TraceArg{"c", "3"}));
  EXPECT_THAT(lines_of(lines, "mid").at(0).args, ElementsAre(TraceArg{"u8", "200"}));
}

// Several events on one address share one breakpoint; each gets its hit
// with its own arguments.
TEST(RunOutput, SeveralEventsOnOneAddress) {
  const RunResult run =
      run_traced({"p:one/first args2 a=%di:s64", "p:one/second args2 b=%si:s64",
                  "p:two/third args2 both=%di:s64 sp=%sp", "p:one/rec1 take_rec u8=+0(%di):u8",
                  "p:one/rec2 take_rec str=+0(+56(%di)):string"},
                 {args_program()}, {"--profile"});
  ASSERT_EQ(run.status, 0) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines_of(lines, "first").size(), 1u) << run;
  ASSERT_EQ(lines_of(lines, "second").size(), 1u) << run;
  ASSERT_EQ(lines_of(lines, "third").size(), 1u) << run;
  EXPECT_THAT(lines_of(lines, "first")[0].args, ElementsAre(TraceArg{"a", "1"}));
  EXPECT_THAT(lines_of(lines, "second")[0].args, ElementsAre(TraceArg{"b", "2"}));
  EXPECT_EQ(lines_of(lines, "third")[0].arg("both"), "1");
  EXPECT_EQ(lines_of(lines, "first")[0].location, lines_of(lines, "second")[0].location);
  ASSERT_EQ(lines_of(lines, "rec1").size(), 3u);
  ASSERT_EQ(lines_of(lines, "rec2").size(), 3u);
  for (const TraceLine& line : lines_of(lines, "rec2"))
    EXPECT_EQ(line.arg("str"), "\"hello world\"") << line;
  const auto rows = parse_profile(run.err);
  for (const char* event : {"first", "second", "third"}) {
    const auto row = profile_row(rows, event);
    ASSERT_TRUE(row) << event;
    EXPECT_EQ(row->hits, 1u) << event;
  }
}

// --disable GRP/EVENT or EVENT: that event records nothing; the others at
// the same address do.
TEST(RunOutput, DisabledEventsRecordNothing) {
  const RunResult run =
      run_traced({"p:dis/a args2 a=%di:s64", "p:dis/b args2 b=%si:s64", "p:other/c take_rec"},
                 {args_program()}, {"--disable", "dis/a", "--disable", "c", "--profile"});
  ASSERT_EQ(run.status, 0) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 1u) << run;
  EXPECT_EQ(lines[0].event, "b");
  EXPECT_EQ(lines[0].arg("b"), "2");
  const auto rows = parse_profile(run.err);
  ASSERT_EQ(rows.size(), 3u) << run;
  EXPECT_EQ(profile_row(rows, "a")->hits, 0u);
  EXPECT_EQ(profile_row(rows, "b")->hits, 1u);
  EXPECT_EQ(profile_row(rows, "c")->hits, 0u);
}

TEST(RunOutput, DisablingAnUnknownEventIsAnError) {
  const RunResult run = run_traced({"p:dis/a args2"}, {args_program()}, {"--disable", "dis/nope"});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, HasSubstr("dis/nope")) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("args: started"))) << "the program ran: " << run;
}

// ---- Exit status ------------------------------------------------------------------

struct Ending {
  std::vector<std::string> args;
  int status;
};

class ExitStatus : public ::testing::TestWithParam<Ending> {};

// The command's exit status, or 128 + the signal that killed it, after the
// trace of everything it did before.
TEST_P(ExitStatus, IsTheCommands) {
  std::vector<std::string> command{status_program()};
  command.insert(command.end(), GetParam().args.begin(), GetParam().args.end());
  const RunResult run = run_traced({"p:end/marker marker code=%di:s32"}, command, {"--profile"});
  EXPECT_EQ(run.status, GetParam().status) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 1u) << run;
  const std::string code = GetParam().args.size() > 1 ? GetParam().args[1] : "0";
  EXPECT_EQ(lines[0].arg("code"), code);
  const auto row = profile_row(parse_profile(run.err), "marker");
  ASSERT_TRUE(row) << run;
  EXPECT_EQ(row->hits, 1u);
  // The same ending without dprobe.
  const RunResult untraced = run_program(command);
  EXPECT_EQ(untraced.status, GetParam().status) << untraced;
}

INSTANTIATE_TEST_SUITE_P(
    Endings, ExitStatus,
    ::testing::Values(Ending{{"exit", "0"}, 0}, Ending{{"exit", "3"}, 3},
                      Ending{{"exit", "255"}, 255}, Ending{{"abort"}, 128 + SIGABRT},
                      Ending{{"segv"}, 128 + SIGSEGV}, Ending{{"trap"}, 128 + SIGTRAP},
                      Ending{{"int3"}, 128 + SIGTRAP}, Ending{{"kill", "15"}, 128 + SIGTERM},
                      Ending{{"kill", "9"}, 128 + SIGKILL}, Ending{{"kill", "10"}, 128 + SIGUSR1}),
    [](const auto& info) {
      std::string name;
      for (const std::string& arg : info.param.args) name += (name.empty() ? "" : "_") + arg;
      return name;
    });

// ---- Refusals -----------------------------------------------------------------------

// The refusals that leave the program unrun: non-zero, one clear error.
void expect_refused(const RunResult& run, const std::string& message,
                    const std::string& normal_output) {
  EXPECT_NE(run.status, 0) << run;
  EXPECT_THAT(run.err, HasSubstr(message)) << run;
  EXPECT_TRUE(parse_trace(run.out).empty()) << run;
  EXPECT_THAT(run.out, Not(HasSubstr(normal_output))) << "the program ran: " << run;
}

TEST(RunRefuses, UnknownSymbol) {
  const std::string command = "p:bad/x no_such_function";
  const RunResult run = run_traced({"p:ok/a2 args2", command}, {args_program()});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err,
              HasSubstr("dprobe: error: The symbol is not found (NO_SYMBOL)\n"
                        "  Command: " +
                        command + "\n" + std::string(11 + command.find("no_such"), ' ') + "^\n"))
      << run;
  expect_refused(run, "no_such_function", "args: started");
}

// A function of the program's C library named as the program's: the
// kernel's error, then where the function is.
TEST(RunRefuses, ALibrarysFunctionNamedAsTheProgramsSaysWhereItIs) {
  const RunResult run = run_traced({"p:bad/m malloc"}, {args_program()});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, HasSubstr("(NO_SYMBOL)")) << run;
  EXPECT_THAT(run.err, HasSubstr("malloc is in libc.so.6: write libc.so.6:malloc")) << run;
}

// strace's habit: run -p PID is attach's.
TEST(RunRefuses, APidPointsToAttach) {
  const RunResult run = run_dprobe({"run", "-p", "1"});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, HasSubstr("to trace a running process: dprobe attach -p PID")) << run;
}

// bpftrace's habit: the C library by its name alone.
TEST(RunOutput, ALibraryByItsNameAlone) {
  const RunResult run = run_traced({"p:lib/m libc:malloc"}, {args_program()}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  const auto row = profile_row(parse_profile(run.err), "m");
  ASSERT_TRUE(row) << run;
}

TEST(RunRefuses, UnknownSymbolInALibrary) {
  const RunResult run = run_traced({"p:bad/x libc.so.6:no_such_function"}, {args_program()});
  EXPECT_EQ(run.status, 2) << run;
  expect_refused(run, "(NO_SYMBOL)", "args: started");
}

TEST(RunRefuses, UnknownObject) {
  const RunResult run = run_traced({"p:bad/x libnosuchlib.so.7:foo"}, {args_program()});
  EXPECT_EQ(run.status, 2) << run;
  expect_refused(run, "(FILE_NOT_FOUND)", "args: started");
  EXPECT_THAT(run.err, HasSubstr("libnosuchlib.so.7")) << run;
}

TEST(RunRefuses, OffsetOutsideTheSymbol) {
  const RunResult run = run_traced({"p:bad/x args1+100000"}, {args_program()});
  EXPECT_EQ(run.status, 2) << run;
  expect_refused(run, "(BAD_SYMBOL_OFFS)", "args: started");
}

TEST(RunRefuses, CommandNotFound) {
  const RunResult absolute = run_traced({"p:x/y main"}, {"/nonexistent/no-such-command"});
  EXPECT_NE(absolute.status, 0) << absolute;
  EXPECT_THAT(absolute.err, HasSubstr("/nonexistent/no-such-command: command not found"));
  const RunResult in_path = run_traced({"p:x/y main"}, {"no-such-command-dprobe-test"});
  EXPECT_NE(in_path.status, 0) << in_path;
  EXPECT_THAT(in_path.err, HasSubstr("no-such-command-dprobe-test: command not found"));
}

TEST(RunRefuses, NotExecutable) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string copy = dir.file("args_copy");
  std::filesystem::copy_file(args_program(), copy);
  ASSERT_EQ(::chmod(copy.c_str(), 0644), 0);
  const RunResult run = run_traced({"p:x/y args1"}, {copy});
  expect_refused(run, copy, "args: started");
}

TEST(RunRefuses, SetUidProgram) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string copy = dir.file("args_setuid");
  std::filesystem::copy_file(args_program(), copy);
  ASSERT_EQ(::chmod(copy.c_str(), 04755), 0);
  struct stat st {};
  ASSERT_EQ(::stat(copy.c_str(), &st), 0);
  if ((st.st_mode & S_ISUID) == 0) GTEST_SKIP() << "the set-uid bit did not stick on " << copy;
  const RunResult run = run_traced({"p:x/y args1"}, {copy});
  expect_refused(run, "set-uid", "args: started");
}

TEST(RunRefuses, SetGidProgram) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string copy = dir.file("args_setgid");
  std::filesystem::copy_file(args_program(), copy);
  ASSERT_EQ(::chmod(copy.c_str(), 02755), 0);
  struct stat st {};
  ASSERT_EQ(::stat(copy.c_str(), &st), 0);
  if ((st.st_mode & S_ISGID) == 0) GTEST_SKIP() << "the set-gid bit did not stick on " << copy;
  const RunResult run = run_traced({"p:x/y args1"}, {copy});
  expect_refused(run, "set-gid", "args: started");
}

// A static program never loads the agent: dprobe must say so, and not run
// the program untraced as if it were.
TEST(RunRefuses, StaticProgram) {
  const std::string cc = find_tool("cc");
  if (cc.empty()) GTEST_SKIP() << "no cc to build a static program";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string source = std::string(DPROBE_SOURCE_DIR) + "/tests/programs/status.c";
  const std::string binary = dir.file("status_static");
  const RunResult built = run_program({cc, "-static", "-O1", "-o", binary, source});
  if (built.status != 0) {
    GTEST_SKIP() << "cc -static failed (no static libc archive?): " << built.err;
  }
  ASSERT_EQ(run_program({binary, "exit", "0"}).out, "status: exit 0\n");
  const RunResult run = run_traced({"p:x/y marker"}, {binary, "exit", "0"});
  EXPECT_NE(run.status, 0) << run;
  EXPECT_THAT(run.err, HasSubstr("static")) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("status: exit 0"))) << "the program ran untraced: " << run;
}

}  // namespace
}  // namespace dprobe::integration
