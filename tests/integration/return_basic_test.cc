// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Return probes on tests/programs/ret_basic.c, at -O0 and -O2: $retval of
// every kind of return (int, negative, long, pointer, NULL, a struct in
// rax:rdx), fetches through it, every register and the stack as they are
// right after the return, $arg1..$arg8 kept from entry, both spellings
// (`r`, `p ...%return`) and MAXACTIVE, the caller named in the location
// (checked against objdump), exact hit counts, and several return probes
// beside an entry probe on one function.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

constexpr size_t kCalls = 3;  // each function but ret_int (6) is called 3 times

class ReturnBasic : public ::testing::TestWithParam<const char*> {
 protected:
  std::string exe() const { return program(std::string("ret_basic_") + GetParam()); }

  // Runs ret_basic with `definitions` and --profile; the program checked
  // every value it got back and said so.
  RunResult run(const std::vector<std::string>& definitions) const {
    RunResult result = run_traced(definitions, {exe()}, {"--profile"});
    EXPECT_EQ(result.status, 0) << result;
    EXPECT_THAT(result.out, HasSubstr("ret_basic: ok\n")) << result;
    return result;
  }
};

// The offset, in `caller`, of the instruction after its call of `callee`
// (where `callee` returns to), from objdump; nothing if objdump is missing
// or the caller has no such call.
std::optional<uint64_t> return_offset(const std::string& path, const std::string& caller,
                                      const std::string& callee) {
  const std::string objdump = find_tool("objdump");
  if (objdump.empty()) return std::nullopt;
  const RunResult run =
      run_program({objdump, "-d", "--no-show-raw-insn", "--disassemble=" + caller, path});
  if (run.status != 0) return std::nullopt;
  std::istringstream lines(run.out);
  std::string line;
  std::optional<uint64_t> start;
  bool after_call = false;
  while (std::getline(lines, line)) {
    if (!start) {
      const size_t at = line.find(" <" + caller + ">:");
      if (at != std::string::npos) start = std::stoull(line.substr(0, at), nullptr, 16);
      continue;
    }
    const size_t colon = line.find(":\t");
    if (colon == std::string::npos) continue;
    const uint64_t address = std::stoull(line.substr(0, colon), nullptr, 16);
    if (after_call) return address - *start;
    after_call = line.find("call") != std::string::npos &&
                 line.find("<" + callee + ">") != std::string::npos;
  }
  return std::nullopt;
}

// "caller+0xOFF/0xSIZE <- callee", from objdump and nm.
std::optional<std::string> expected_location(const std::string& path, const std::string& caller,
                                             const std::string& callee) {
  const auto offset = return_offset(path, caller, callee);
  const auto size = symbol_size(path, caller);
  if (!offset || !size) return std::nullopt;
  return caller + "+" + hex(*offset) + "/" + hex(*size) + " <- " + callee;
}

TEST_P(ReturnBasic, IntegerReturnValuesSignedAndRaw) {
  const RunResult result = run({"r:b/neg ret_neg rv=$retval:s32 raw=$retval",
                                "r:b/long ret_long rv=$retval:s64 lo=$retval:u16",
                                "r:b/pair ret_pair lo=%ax:s64 hi=%dx:s64"});
  const auto lines = parse_trace(result.out);
  const auto neg = lines_of(lines, "neg");
  ASSERT_EQ(neg.size(), kCalls) << result;
  // ret_neg(0), ret_neg(100), ret_neg(200): -1, -101, -201; an int in rax,
  // the upper half zero (x64 shows the 32-bit pattern).
  EXPECT_THAT(neg[0].args, ElementsAre(TraceArg{"rv", "-1"}, TraceArg{"raw", "0xffffffff"}));
  EXPECT_THAT(neg[1].args, ElementsAre(TraceArg{"rv", "-101"}, TraceArg{"raw", "0xffffff9b"}));
  EXPECT_THAT(neg[2].args, ElementsAre(TraceArg{"rv", "-201"}, TraceArg{"raw", "0xffffff37"}));
  const auto longs = lines_of(lines, "long");
  ASSERT_EQ(longs.size(), kCalls) << result;
  for (size_t i = 0; i < kCalls; ++i) {
    const uint64_t value = (i + 5) * 1000003ull * 1000003ull;  // past 32 bits
    EXPECT_EQ(longs[i].arg("rv"), std::to_string(value)) << longs[i];
    EXPECT_EQ(longs[i].arg("lo"), std::to_string(value & 0xffff)) << longs[i];
  }
  const auto pairs = lines_of(lines, "pair");
  ASSERT_EQ(pairs.size(), kCalls) << result;
  for (size_t i = 0; i < kCalls; ++i) {
    const long x = static_cast<long>(i) + 20;
    EXPECT_THAT(pairs[i].args, ElementsAre(TraceArg{"lo", std::to_string(x + 1)},
                                           TraceArg{"hi", std::to_string(x * -2)}));
  }
}

TEST_P(ReturnBasic, PointersAndMemoryThroughTheReturnValue) {
  const RunResult result =
      run({"r:b/ptr ret_ptr id=+0($retval):s32 big=+8($retval):s64 name=+0(+16($retval)):string",
           "r:b/str ret_str s=+0($retval):string c=+0($retval):char",
           "r:b/null ret_null s=+0($retval):string p=$retval",
           "r:b/bump bump rv=$retval:s64 c=@ret_counter:s64"});
  const auto lines = parse_trace(result.out);
  const auto ptr = lines_of(lines, "ptr");
  ASSERT_EQ(ptr.size(), kCalls) << result;
  EXPECT_THAT(ptr[0].args, ElementsAre(TraceArg{"id", "7"}, TraceArg{"big", "-70000000000"},
                                       TraceArg{"name", "\"seven\""}));
  EXPECT_THAT(ptr[1].args, ElementsAre(TraceArg{"id", "8"}, TraceArg{"big", "80"},
                                       TraceArg{"name", "\"eight\""}));
  EXPECT_THAT(ptr[2].args, ElementsAre(TraceArg{"id", "9"}, TraceArg{"big", "90"},
                                       TraceArg{"name", "\"nine\""}));
  const auto str = lines_of(lines, "str");
  ASSERT_EQ(str.size(), kCalls) << result;
  EXPECT_THAT(str[0].args, ElementsAre(TraceArg{"s", "\"zero\""}, TraceArg{"c", "'z'"}));
  EXPECT_THAT(str[1].args, ElementsAre(TraceArg{"s", "\"one\""}, TraceArg{"c", "'o'"}));
  EXPECT_THAT(str[2].args, ElementsAre(TraceArg{"s", "\"two\""}, TraceArg{"c", "'t'"}));
  const auto null = lines_of(lines, "null");
  ASSERT_EQ(null.size(), kCalls) << result;
  for (const TraceLine& line : null) {
    EXPECT_THAT(line.args, ElementsAre(TraceArg{"s", "(fault)"}, TraceArg{"p", "0x0"})) << line;
  }
  // Memory is read at the return: the counter bump() changed, as changed.
  const auto bump = lines_of(lines, "bump");
  ASSERT_EQ(bump.size(), kCalls) << result;
  for (size_t i = 0; i < kCalls; ++i) {
    const std::string value = std::to_string(42 + i);
    EXPECT_THAT(bump[i].args, ElementsAre(TraceArg{"rv", value}, TraceArg{"c", value}));
  }
}

// The kernel refuses a string straight from a register; so does dprobe.
TEST_P(ReturnBasic, RetvalAsStringNeedsADereferenceAsInTheKernel) {
  const RunResult result = run_traced({"r:b/str ret_str s=$retval:string"}, {exe()});
  EXPECT_NE(result.status, 0) << result;
  EXPECT_THAT(result.err, HasSubstr("(BAD_STRING)")) << result;
  EXPECT_THAT(result.out, Not(HasSubstr("ret_basic: ok"))) << "nothing ran";
}

// ret_leaf sets each caller-saved register, its caller each callee-saved
// one: the return probe sees them all as they are after ret_leaf's `ret`,
// with %sp the caller's (printed by the program), $stack0 the word the
// caller pushed, %ip the return address in the caller.
TEST_P(ReturnBasic, EveryRegisterAndTheStackAsAfterTheReturn) {
  const RunResult result =
      run({"r:b/leaf ret_leaf ax=%ax cx=%cx dx=%dx si=%si di=%di r8=%r8 r9=%r9 r10=%r10 r11=%r11 "
           "bx=%bx bp=%bp r12=%r12 r13=%r13 r14=%r14 r15=%r15 sp=%sp s0=$stack0 ip=%ip:symbol"});
  const auto lines = lines_of(parse_trace(result.out), "leaf");
  ASSERT_EQ(lines.size(), kCalls) << result;
  std::vector<std::string> saved_sp;
  std::istringstream out(result.out);
  for (std::string line; std::getline(out, line);) {
    if (line.starts_with("saved_sp=")) saved_sp.push_back(line.substr(9));
  }
  ASSERT_EQ(saved_sp.size(), kCalls) << result;
  const auto location = expected_location(exe(), "call_with_saved", "ret_leaf");
  if (!location) GTEST_SKIP() << "no objdump or nm to check the location against";
  for (size_t i = 0; i < kCalls; ++i) {
    EXPECT_EQ(lines[i].location, *location) << lines[i];
    EXPECT_THAT(
        lines[i].args,
        ElementsAre(TraceArg{"ax", "0x9999"}, TraceArg{"cx", "0x1111"}, TraceArg{"dx", "0x2222"},
                    TraceArg{"si", "0x3333"}, TraceArg{"di", "0x4444"}, TraceArg{"r8", "0x5555"},
                    TraceArg{"r9", "0x6666"}, TraceArg{"r10", "0x7777"}, TraceArg{"r11", "0x8888"},
                    TraceArg{"bx", "0xb0b0"}, TraceArg{"bp", "0xb9b9"}, TraceArg{"r12", "0xc0c0"},
                    TraceArg{"r13", "0xd0d0"}, TraceArg{"r14", "0xe0e0"}, TraceArg{"r15", "0xf0f0"},
                    TraceArg{"sp", saved_sp[i]}, TraceArg{"s0", "0x5a5a5a"},
                    TraceArg{"ip", location->substr(0, location->find(' '))}))
        << lines[i];
  }
}

// args8 calls another function (new argument registers) and writes over
// its stack-passed 7th and 8th arguments before it returns.
TEST_P(ReturnBasic, ArgumentsOneToEightAreTheValuesAtEntry) {
  const RunResult result =
      run({"r:b/args8 args8 a1=$arg1:s64 a2=$arg2:s64 a3=$arg3:s64 "
           "a4=$arg4:s64 a5=$arg5:s64 a6=$arg6:s64 a7=$arg7:s64 "
           "a8=$arg8:s64 rv=$retval:s64"});
  const auto lines = lines_of(parse_trace(result.out), "args8");
  ASSERT_EQ(lines.size(), kCalls) << result;
  for (size_t i = 0; i < kCalls; ++i) {
    const long base = 10 * static_cast<long>(i + 1);
    std::vector<TraceArg> expected;
    for (long n = 1; n <= 8; ++n) {
      expected.push_back({"a" + std::to_string(n), std::to_string(base + n)});
    }
    expected.push_back({"rv", std::to_string(8 * base + 36 + 2000)});
    EXPECT_EQ(lines[i].args, expected) << lines[i];
  }
}

// Two callers of ret_int take turns: each line names its own, at the
// instruction after its call, as objdump sees it.
TEST_P(ReturnBasic, TheLocationNamesTheRealCaller) {
  const RunResult result = run({"r:b/int ret_int rv=$retval:s32 x=$arg1:s32"});
  const auto lines = lines_of(parse_trace(result.out), "int");
  ASSERT_EQ(lines.size(), 2 * kCalls) << result;
  const auto one = expected_location(exe(), "caller_one", "ret_int");
  const auto two = expected_location(exe(), "caller_two", "ret_int");
  if (!one || !two) GTEST_SKIP() << "no objdump or nm to check the location against";
  for (size_t i = 0; i < kCalls; ++i) {
    const TraceLine& first = lines[2 * i];
    const TraceLine& second = lines[2 * i + 1];
    EXPECT_EQ(first.location, *one) << first;
    EXPECT_EQ(second.location, *two) << second;
    const int x1 = static_cast<int>(i);
    const int x2 = static_cast<int>(i) + 10;
    EXPECT_THAT(first.args, ElementsAre(TraceArg{"rv", std::to_string(x1 * 3)},
                                        TraceArg{"x", std::to_string(x1)}));
    EXPECT_THAT(second.args, ElementsAre(TraceArg{"rv", std::to_string(x2 * 3)},
                                         TraceArg{"x", std::to_string(x2)}));
  }
}

TEST_P(ReturnBasic, ExactHitCountsAndNoMisses) {
  const RunResult result =
      run({"r:b/int ret_int", "r:b/neg ret_neg", "r:b/ptr ret_ptr", "r:b/leaf ret_leaf",
           "r:b/args8 args8 $arg8", "r:b/clobber clobber"});
  const auto rows = parse_profile(result.err);
  const std::vector<std::pair<std::string, uint64_t>> expected = {
      {"int", 2 * kCalls}, {"neg", kCalls},   {"ptr", kCalls},
      {"leaf", kCalls},    {"args8", kCalls}, {"clobber", kCalls}};
  const auto lines = parse_trace(result.out);
  for (const auto& [event, hits] : expected) {
    const auto row = profile_row(rows, event);
    ASSERT_TRUE(row) << event << "\n" << result;
    EXPECT_EQ(row->hits, hits) << event;
    EXPECT_EQ(row->misses, 0u) << event;
    EXPECT_EQ(lines_of(lines, event).size(), hits) << event;
  }
}

// A return instance names up to four of its events itself and finds more
// through its probe: six return events (and an entry event among them) on
// one function each get every call, with the values of that call.
TEST_P(ReturnBasic, SixReturnEventsOnOneFunctionEachTraceEveryCall) {
  std::vector<std::string> definitions;
  for (int n = 1; n <= 6; ++n) {
    definitions.push_back("r:b/int" + std::to_string(n) + " ret_int rv=$retval:s32 x=$arg1:s32");
    if (n == 2) definitions.push_back("p:b/in ret_int x=%di:s32");
  }
  const RunResult result = run(definitions);
  const auto lines = parse_trace(result.out);
  ASSERT_EQ(lines_of(lines, "in").size(), 2 * kCalls) << result;
  for (int n = 1; n <= 6; ++n) {
    const auto of = lines_of(lines, "int" + std::to_string(n));
    ASSERT_EQ(of.size(), 2 * kCalls) << "int" << n << "\n" << result;
    for (size_t i = 0; i < of.size(); ++i) {
      const int x = static_cast<int>(i / 2) + (i % 2 == 0 ? 0 : 10);  // caller_one, caller_two
      EXPECT_THAT(of[i].args, ElementsAre(TraceArg{"rv", std::to_string(x * 3)},
                                          TraceArg{"x", std::to_string(x)}))
          << of[i];
    }
  }
}

// `p SYM%return` and `rN:` are return probes as `r:` is: the same lines
// (but for the thread id, which is another process's).
TEST_P(ReturnBasic, PercentReturnAndMaxactiveSpellingsTraceTheSame) {
  const std::string args = " rv=$retval:s32 x=$arg1:s32";
  const RunResult plain = run({"r:b/int ret_int" + args});
  const RunResult percent = run({"p:b/int ret_int%return" + args});
  const RunResult maxactive = run({"r16:b/int ret_int" + args});
  const auto expected = parse_trace(plain.out);
  ASSERT_EQ(expected.size(), 2 * kCalls) << plain;
  for (const RunResult* other : {&percent, &maxactive}) {
    const auto lines = parse_trace(other->out);
    ASSERT_EQ(lines.size(), expected.size()) << *other;
    for (size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(lines[i].event, expected[i].event);
      EXPECT_EQ(lines[i].location, expected[i].location);
      EXPECT_EQ(lines[i].args, expected[i].args);
      EXPECT_NE(lines[i].location.find(" <- ret_int"), std::string::npos) << lines[i];
    }
  }
}

// The kernel's default names: r_<sym>_0 for both spellings.
TEST_P(ReturnBasic, DefaultEventNamesOfBothSpellings) {
  const RunResult result = run({"r ret_int", "p ret_neg%return"});
  const auto lines = parse_trace(result.out);
  EXPECT_EQ(lines_of(lines, "r_ret_int_0").size(), 2 * kCalls) << result;
  EXPECT_EQ(lines_of(lines, "r_ret_neg_0").size(), kCalls) << result;
}

// Two return probes and an entry probe on ret_int: per call, the entry
// line first, then both return lines, before the next call's entry.
TEST_P(ReturnBasic, SeveralReturnProbesBesideAnEntryProbeAllFireInOrder) {
  const RunResult result = run({"p:b/in ret_int x=%di:s32", "r:b/out1 ret_int rv=$retval:s32",
                                "r8:b/out2 ret_int x=$arg1:s32 rv=$retval:s32",
                                "p:b/out3 ret_int%return rv=$retval:x32"});
  const auto lines = parse_trace(result.out);
  ASSERT_EQ(lines.size(), 4 * 2 * kCalls) << result;
  for (size_t call = 0; call < 2 * kCalls; ++call) {
    const int x = static_cast<int>(call / 2) + (call % 2 == 0 ? 0 : 10);
    const std::string rv = std::to_string(3 * x);
    const TraceLine& in = lines[4 * call];
    EXPECT_EQ(in.event, "in") << in;
    EXPECT_THAT(in.args, ElementsAre(TraceArg{"x", std::to_string(x)})) << in;
    std::vector<std::string> returns;
    for (size_t k = 1; k < 4; ++k) {
      const TraceLine& line = lines[4 * call + k];
      returns.push_back(line.event);
      if (line.event == "out1") EXPECT_THAT(line.args, ElementsAre(TraceArg{"rv", rv})) << line;
      if (line.event == "out2") {
        EXPECT_THAT(line.args, ElementsAre(TraceArg{"x", std::to_string(x)}, TraceArg{"rv", rv}))
            << line;
      }
      if (line.event == "out3") {
        EXPECT_THAT(line.args, ElementsAre(TraceArg{"rv", hex(3 * static_cast<uint64_t>(x))}))
            << line;
      }
      EXPECT_EQ(line.location, lines[4 * (call % 2) + 1].location) << "one caller per parity";
    }
    EXPECT_THAT(returns, UnorderedElementsAre("out1", "out2", "out3")) << "call " << call;
  }
  const auto rows = parse_profile(result.err);
  for (const char* event : {"in", "out1", "out2", "out3"}) {
    const auto row = profile_row(rows, event);
    ASSERT_TRUE(row) << event;
    EXPECT_EQ(row->hits, 2 * kCalls) << event;
    EXPECT_EQ(row->misses, 0u) << event;
  }
}

// tail_outer jumps to tail_inner: tail_inner's return address is already
// tail_outer's return stub. Both return to call_tail, and both lines name
// it, as the kernel's uretprobes name the real caller of a chained return.
TEST_P(ReturnBasic, TailCalledFunctionNamesTheRealCaller) {
  const RunResult result = run({"r:b/outer tail_outer rv=$retval:s32 x=$arg1:s32",
                                "r:b/inner tail_inner rv=$retval:s32 x=$arg1:s32"});
  const auto lines = parse_trace(result.out);
  ASSERT_EQ(lines.size(), 2 * kCalls) << result;
  const auto caller = return_offset(exe(), "call_tail", "tail_outer");
  const auto size = symbol_size(exe(), "call_tail");
  if (!caller || !size) GTEST_SKIP() << "no objdump or nm to check the location against";
  const std::string at = "call_tail+" + hex(*caller) + "/" + hex(*size);
  for (size_t i = 0; i < kCalls; ++i) {
    const std::string rv = std::to_string(3 * (i + 1));
    const TraceLine& inner = lines[2 * i];
    const TraceLine& outer = lines[2 * i + 1];
    EXPECT_EQ(inner.event, "inner") << inner;
    EXPECT_EQ(inner.location, at + " <- tail_inner") << inner;
    EXPECT_THAT(inner.args, ElementsAre(TraceArg{"rv", rv}, TraceArg{"x", std::to_string(i + 1)}));
    EXPECT_EQ(outer.event, "outer") << outer;
    EXPECT_EQ(outer.location, at + " <- tail_outer") << outer;
    EXPECT_THAT(outer.args, ElementsAre(TraceArg{"rv", rv}, TraceArg{"x", std::to_string(i)}));
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, ReturnBasic, ::testing::Values("O0", "O2"));

// The program's entry point is jumped to by the kernel, with argc where a
// return address would be: a return probe there is refused with the
// reason, and a wildcard leaves it out in its summary line; the program
// runs with its arguments intact.
TEST(ReturnEntryPoints, StartIsRefusedAndAWildcardSkipsIt) {
  const std::string exe = program("args_O2");
  const RunResult alone = run_traced({"r:x/s _start"}, {exe, "a", "b"});
  EXPECT_NE(alone.status, 0) << alone;
  EXPECT_THAT(alone.err, HasSubstr("(BLACKLISTED)")) << alone;
  EXPECT_THAT(alone.err, HasSubstr("an entry point: the kernel jumps to it")) << alone;

  const RunResult every = run_traced({"r " + exe + ":*"}, {exe, "a", "b"}, {"-o", "/dev/null"});
  EXPECT_EQ(every.status, 0) << every;
  EXPECT_THAT(every.out, HasSubstr("args: ok")) << every;
  EXPECT_THAT(every.err, HasSubstr("functions not probed")) << every;
  EXPECT_THAT(every.err, HasSubstr("(BLACKLISTED): _start")) << every;
}

}  // namespace
}  // namespace dprobe::integration
