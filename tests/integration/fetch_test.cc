// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Entry probes on tests/programs/args.c, built -O0 and -O2: every fetch
// form and every type of the language, each with the exact text the value
// must print as. The values are the ones args.c's main passes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
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

class Fetch : public ::testing::TestWithParam<const char*> {
 protected:
  std::string name() const { return std::string("args_") + GetParam(); }
  std::string exe() const { return program(name()); }

  // Runs args with `definitions`; the program must run as it does untraced.
  std::vector<TraceLine> trace(const std::vector<std::string>& definitions) {
    const RunResult run = run_traced(definitions, {exe()});
    EXPECT_EQ(run.status, 0) << run;
    EXPECT_THAT(run.out, HasSubstr("args: ok\n")) << run;
    EXPECT_THAT(run.err, Not(HasSubstr("lost"))) << run;
    std::vector<TraceLine> lines = parse_trace(run.out);
    for (const TraceLine& line : lines) {
      EXPECT_EQ(line.comm, name()) << line;
      EXPECT_NE(line.tid, 0u) << line;
      EXPECT_EQ(line.tid, lines.front().tid) << "one thread only: " << line;
    }
    return lines;
  }

  // "SYM+0x0/0xSIZE", with the size nm gives (or any size without nm).
  std::string entry(const std::string& symbol) const {
    const auto size = symbol_size(exe(), symbol);
    return symbol + "+0x0/" + (size ? hex(*size) : std::string("0x"));
  }

  void expect_entry(const TraceLine& line, const std::string& symbol) const {
    EXPECT_THAT(line.location, StartsWith(symbol + "+0x0/0x")) << line;
    if (symbol_size(exe(), symbol)) EXPECT_EQ(line.location, entry(symbol)) << line;
  }
};

TEST_P(Fetch, EightIntegerArgumentsByAbiRegisterAndStack) {
  const auto lines = trace({
      "p:fetch/a8 args8 a1=$arg1 a2=$arg2 a3=$arg3 a4=$arg4 a5=$arg5 a6=$arg6 a7=$arg7 "
      "a8=$arg8",
      "p:fetch/r8 args8 di=%di si=%si:u64 dx=%dx:s64 cx=%cx:u32 r8=%r8:u16 r9=%r9:u8 "
      "s1=$stack1:s64 s2=$stack2 a7=$arg7:s64 a7x=$arg7:x32",
  });
  const auto a8 = lines_of(lines, "a8");
  ASSERT_EQ(a8.size(), 1u);
  expect_entry(a8[0], "args8");
  EXPECT_THAT(
      a8[0].args,
      ElementsAre(TraceArg{"a1", "0xb"}, TraceArg{"a2", "0x16"}, TraceArg{"a3", "0x21"},
                  TraceArg{"a4", "0x2c"}, TraceArg{"a5", "0x37"}, TraceArg{"a6", "0x42"},
                  TraceArg{"a7", "0xffffffffffffffb3"}, TraceArg{"a8", "0x1234567890abcdef"}));
  const auto r8 = lines_of(lines, "r8");
  ASSERT_EQ(r8.size(), 1u);
  EXPECT_THAT(r8[0].args,
              ElementsAre(TraceArg{"di", "0xb"}, TraceArg{"si", "22"}, TraceArg{"dx", "33"},
                          TraceArg{"cx", "44"}, TraceArg{"r8", "55"}, TraceArg{"r9", "66"},
                          TraceArg{"s1", "-77"}, TraceArg{"s2", "0x1234567890abcdef"},
                          TraceArg{"a7", "-77"}, TraceArg{"a7x", "0xffffffb3"}));
}

TEST_P(Fetch, EveryArityGetsItsArguments) {
  const auto lines = trace({
      "p:fetch/a1 args1 a=$arg1:s64",
      "p:fetch/a2 args2 a=$arg1:s64 b=$arg2:s64",
      "p:fetch/a3 args3 a=$arg1:s64 b=$arg2:s64 c=$arg3:s64",
      "p:fetch/a4 args4 a=$arg1:s64 d=$arg4:s64",
      "p:fetch/a5 args5 a=$arg1:s64 e=$arg5:s64",
      "p:fetch/a6 args6 a=$arg1:s64 f=$arg6:s64",
      "p:fetch/a7 args7 f=$arg6:s64 g=$arg7:s64 s=$stack1:s64",
  });
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_THAT(lines_of(lines, "a1").at(0).args, ElementsAre(TraceArg{"a", "-1"}));
  EXPECT_THAT(lines_of(lines, "a2").at(0).args,
              ElementsAre(TraceArg{"a", "1"}, TraceArg{"b", "2"}));
  EXPECT_THAT(lines_of(lines, "a3").at(0).args,
              ElementsAre(TraceArg{"a", "1"}, TraceArg{"b", "2"}, TraceArg{"c", "3"}));
  EXPECT_THAT(lines_of(lines, "a4").at(0).args,
              ElementsAre(TraceArg{"a", "1"}, TraceArg{"d", "4"}));
  EXPECT_THAT(lines_of(lines, "a5").at(0).args,
              ElementsAre(TraceArg{"a", "1"}, TraceArg{"e", "5"}));
  EXPECT_THAT(lines_of(lines, "a6").at(0).args,
              ElementsAre(TraceArg{"a", "1"}, TraceArg{"f", "6"}));
  EXPECT_THAT(lines_of(lines, "a7").at(0).args,
              ElementsAre(TraceArg{"f", "66"}, TraceArg{"g", "77"}, TraceArg{"s", "77"}));
  for (const char* symbol : {"args1", "args2", "args3", "args4", "args5", "args6", "args7"}) {
    const auto of = lines_of(lines, std::string("a") + symbol[4]);
    ASSERT_EQ(of.size(), 1u) << symbol;
    expect_entry(of[0], symbol);
  }
}

// At a function's entry the stack pointer points at the return address.
TEST_P(Fetch, StackPointerAndReturnAddress) {
  const auto lines =
      trace({"p:fetch/sp args8 sp=$stack rsp=%sp ret=$stack0:symbol "
             "retx=$stack0 deref=+0(%sp):x64 ip=%ip"});
  ASSERT_EQ(lines.size(), 1u);
  const TraceLine& line = lines[0];
  EXPECT_THAT(line.arg("sp"), StartsWith("0x7ff")) << line;
  EXPECT_EQ(line.arg("sp"), line.arg("rsp")) << line;
  EXPECT_THAT(line.arg("ret"), StartsWith("main+0x")) << line;
  EXPECT_EQ(line.arg("retx"), line.arg("deref")) << line;
  EXPECT_NE(line.arg("ip"), "0x0") << line;
}

TEST_P(Fetch, RecordOfEveryScalarType) {
  const auto lines = trace({
      "p:fetch/ints take_rec u8=+0(%di):u8 s8=+1(%di):s8 u16=+2(%di):u16 u32=+4(%di):u32 "
      "u64=+8(%di):u64 s16=+16(%di):s16 s32=+20(%di):s32 s64=+24(%di):s64",
      "p:fetch/hex take_rec x8=+0(%di):x8 x16=+2(%di):x16 x32=+4(%di):x32 x64=+8(%di):x64 "
      "s8x=+1(%di):x8 u8s=+0(%di):s8 u16s=+2(%di):s16",
      "p:fetch/bits take_rec lo=+32(%di):b3@0/32 mid=+32(%di):b5@3/32 hi=+32(%di):b12@8/32 "
      "byte=+33(%di):b4@0/8 all=+32(%di):x32",
      "p:fetch/chars take_rec ch=+18(%di):char b=+64(%di):char[6] str=+0(+56(%di)):string "
      "buf=+64(%di):string ustr=+0(+56(%di)):ustring",
  });
  ASSERT_EQ(lines.size(), 12u);  // take_rec runs 3 times
  for (const TraceLine& line : lines) expect_entry(line, "take_rec");
  for (const TraceLine& line : lines_of(lines, "ints")) {
    EXPECT_THAT(line.args,
                ElementsAre(TraceArg{"u8", "200"}, TraceArg{"s8", "-5"}, TraceArg{"u16", "60000"},
                            TraceArg{"u32", "4000000000"}, TraceArg{"u64", "18000000000000000000"},
                            TraceArg{"s16", "-30000"}, TraceArg{"s32", "-2000000000"},
                            TraceArg{"s64", "-9000000000000000000"}));
  }
  for (const TraceLine& line : lines_of(lines, "hex")) {
    EXPECT_THAT(
        line.args,
        ElementsAre(TraceArg{"x8", "0xc8"}, TraceArg{"x16", "0xea60"},
                    TraceArg{"x32", "0xee6b2800"}, TraceArg{"x64", "0xf9ccd8a1c5080000"},
                    TraceArg{"s8x", "0xfb"}, TraceArg{"u8s", "-56"}, TraceArg{"u16s", "-5536"}));
  }
  // lo = 5, mid = 19, hi = 2748 (0xabc): 0xabc << 8 | 19 << 3 | 5 = 0xabc9d.
  for (const TraceLine& line : lines_of(lines, "bits")) {
    EXPECT_THAT(line.args,
                ElementsAre(TraceArg{"lo", "5"}, TraceArg{"mid", "19"}, TraceArg{"hi", "2748"},
                            TraceArg{"byte", "12"}, TraceArg{"all", "0xabc9d"}));
  }
  for (const TraceLine& line : lines_of(lines, "chars")) {
    EXPECT_THAT(line.args,
                ElementsAre(TraceArg{"ch", "'Q'"}, TraceArg{"b", "{'b','u','f','f','e','r'}"},
                            TraceArg{"str", "\"hello world\""}, TraceArg{"buf", "\"buffer\""},
                            TraceArg{"ustr", "\"hello world\""}));
  }
}

TEST_P(Fetch, ArraysOfNumbersAndOfStrings) {
  const auto lines = trace({
      "p:fetch/arr take_rec u=+36(%di):u32[4] x=+36(%di):x32[4] s=+36(%di):s32[4] "
      "one=+36(%di):u32[1] b=+40(%di):u8[4] w=+36(%di):x64[2]",
      "p:fetch/names take_rec names=+0(+80(%di)):string[3] first=+0(+0(+80(%di))):string "
      "second=+0(+8(+80(%di))):string",
  });
  ASSERT_EQ(lines.size(), 6u);
  for (const TraceLine& line : lines_of(lines, "arr")) {
    EXPECT_THAT(
        line.args,
        ElementsAre(TraceArg{"u", "{1,2,3,3735928559}"}, TraceArg{"x", "{0x1,0x2,0x3,0xdeadbeef}"},
                    TraceArg{"s", "{1,2,3,-559038737}"}, TraceArg{"one", "{1}"},
                    TraceArg{"b", "{2,0,0,0}"}, TraceArg{"w", "{0x200000001,0xdeadbeef00000003}"}));
  }
  for (const TraceLine& line : lines_of(lines, "names")) {
    EXPECT_THAT(line.args,
                ElementsAre(TraceArg{"names", "{\"alpha\",\"beta\",\"gamma\"}"},
                            TraceArg{"first", "\"alpha\""}, TraceArg{"second", "\"beta\""}));
  }
}

// A pointer into the middle of the record: -OFFS reaches back to its start.
TEST_P(Fetch, NegativeOffsets) {
  const auto lines =
      trace({"p:fetch/mid take_mid u8=-8(%di):u8 s8=-7(%di):s8 "
             "u16=-6(%di):u16 here=+0(%di):u64 s16=+8(%di):s16 "
             "str=+0(+48(%di)):string"});
  ASSERT_EQ(lines.size(), 1u);
  expect_entry(lines[0], "take_mid");
  EXPECT_THAT(lines[0].args,
              ElementsAre(TraceArg{"u8", "200"}, TraceArg{"s8", "-5"}, TraceArg{"u16", "60000"},
                          TraceArg{"here", "18000000000000000000"}, TraceArg{"s16", "-30000"},
                          TraceArg{"str", "\"hello world\""}));
}

// A function pointer prints as sym+off/size, as the kernel's %pS.
TEST_P(Fetch, SymbolTypes) {
  const auto lines = trace({
      "p:fetch/fn take_fn f=%di:symbol fs=%di:symstr fx=%di",
      "p:fetch/member take_rec f=+88(%di):symbol",
  });
  const auto fn = lines_of(lines, "fn");
  ASSERT_EQ(fn.size(), 1u);
  const std::string callback = entry("callback");
  EXPECT_THAT(fn[0].arg("f"), StartsWith("callback+0x0/0x"));
  EXPECT_EQ(fn[0].arg("f"), callback);
  EXPECT_EQ(fn[0].arg("fs"), "\"" + callback + "\"");
  EXPECT_THAT(fn[0].arg("fx"), StartsWith("0x"));
  const auto member = lines_of(lines, "member");
  ASSERT_EQ(member.size(), 3u);
  for (const TraceLine& line : member) EXPECT_EQ(line.arg("f"), callback) << line;
}

TEST_P(Fetch, CommImmediatesAndGlobalVariables) {
  const auto lines = trace({
      "p:fetch/misc take_fn comm=$comm imm=\\42 neg=\\-3:s32 hex=\\0x10:u8 str=\\\"imm\" "
      "num=@global_counter:s64 numx=@global_counter:x32 name=@global_name:string "
      "c=@global_name:char ptr=+0(@global_ptr):string",
  });
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0].args,
              ElementsAre(TraceArg{"comm", "\"" + name() + "\""}, TraceArg{"imm", "0x2a"},
                          TraceArg{"neg", "-3"}, TraceArg{"hex", "16"}, TraceArg{"str", "\"imm\""},
                          TraceArg{"num", "123456789"}, TraceArg{"numx", "0x75bcd15"},
                          TraceArg{"name", "\"global-name\""}, TraceArg{"c", "'g'"},
                          TraceArg{"ptr", "\"pointed-to\""}));
}

// Small signed arguments, read from the low part of their registers.
TEST_P(Fetch, SmallSignedArguments) {
  const auto lines =
      trace({"p:fetch/small take_small a=%di:s8 b=%si:s16 c=%dx:s32 d=%cx:u8 "
             "ax=$arg1:x8 dx=$arg4:s8"});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0].args,
              ElementsAre(TraceArg{"a", "-7"}, TraceArg{"b", "-300"}, TraceArg{"c", "-100000"},
                          TraceArg{"d", "250"}, TraceArg{"ax", "0xf9"}, TraceArg{"dx", "-6"}));
}

// take_ptrs(NULL, NULL), then take_ptrs((void*)1, (void*)1): strings print
// (fault), numbers 0, and the program goes on as if nothing was probed.
TEST_P(Fetch, NullAndBadPointersFault) {
  const auto lines = trace({
      "p:fetch/bad take_ptrs s=+0(%di):string v=+0(%si):u32 x=+8(%si):x64 "
      "nested=+0(+56(%si)):string arr=+36(%si):u32[2] bits=+32(%si):b3@0/32 "
      "sym=+88(%si):symbol deep=+0(+0(+0(%di))):s64 p=%di",
  });
  ASSERT_EQ(lines.size(), 2u);
  const char* const pointers[] = {"0x0", "0x1"};
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_THAT(
        lines[i].args,
        ElementsAre(TraceArg{"s", "(fault)"}, TraceArg{"v", "0"}, TraceArg{"x", "0x0"},
                    TraceArg{"nested", "(fault)"}, TraceArg{"arr", "{0,0}"}, TraceArg{"bits", "0"},
                    TraceArg{"sym", "0x0"}, TraceArg{"deep", "0"}, TraceArg{"p", pointers[i]}))
        << lines[i];
  }
}

// A string is cut at the kernel's MAX_STRING_SIZE (4096 with its NUL):
// 4999 characters print as their first 4095; 4095 print whole.
TEST_P(Fetch, LongStringsAreCutAtMaxStringSize) {
  const auto lines = trace({"p:fetch/str take_str s=+0(%di):string first=+0(%di):char"});
  ASSERT_EQ(lines.size(), 3u);
  std::string alphabet;
  for (size_t i = 0; i < 4095; ++i) alphabet.push_back(static_cast<char>('a' + i % 26));
  EXPECT_EQ(lines[0].arg("s"), "\"" + alphabet + "\"");
  EXPECT_EQ(lines[0].arg("first"), "'a'");
  EXPECT_EQ(lines[1].arg("s"), "\"\"");
  EXPECT_EQ(lines[2].arg("s"), "\"" + std::string(4095, 'x') + "\"");
}

// The same probe, run twice, gives the same trace but for times and cpus.
TEST_P(Fetch, TwoRunsGiveTheSameEvents) {
  const std::vector<std::string> definitions{
      "p:fetch/rec take_rec u8=+0(%di):u8 str=+0(+56(%di)):string arr=+36(%di):u32[4]",
      "p:fetch/a2 args2 a=%di b=%si"};
  const auto first = trace(definitions);
  const auto second = trace(definitions);
  ASSERT_EQ(first.size(), 4u);
  ASSERT_EQ(second.size(), first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    TraceLine a = first[i];
    TraceLine b = second[i];
    b.tid = a.tid;  // another process
    EXPECT_TRUE(a.same_event(b)) << a << "\n" << b;
  }
}

// cs, ss and orig_ax are not saved by an optimized probe's trampoline (the
// hit fills them, arch::fill_fixed_slots): they read the same as at a
// breakpoint, where the kernel's signal frame gives them, and as the kernel's
// own uprobe has them (the 64-bit user segments, no system call).
TEST_P(Fetch, SegmentsAndOrigAxReadTheSameOptimizedOrNot) {
  const std::string definition = "p:fetch/seg args2 cs=%cs ss=%ss orig=%orig_ax:s64 a=%di";
  const std::vector<TraceLine> optimized = trace({definition});
  const RunResult run = run_traced({definition}, {exe()}, {"--no-optimize"});
  ASSERT_EQ(run.status, 0) << run;
  const std::vector<TraceLine> breakpoint = parse_trace(run.out);
  ASSERT_EQ(optimized.size(), 1u);
  ASSERT_EQ(breakpoint.size(), 1u) << run;
  for (const TraceLine* line : {&optimized[0], &breakpoint[0]}) {
    EXPECT_EQ(line->arg("cs"), "0x33") << *line;
    EXPECT_EQ(line->arg("ss"), "0x2b") << *line;
    EXPECT_EQ(line->arg("orig"), "-1") << *line;
  }
  EXPECT_EQ(optimized[0].arg("a"), breakpoint[0].arg("a"));
}

INSTANTIATE_TEST_SUITE_P(Optimization, Fetch, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
