// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A probe on each x86_64 instruction class (tests/programs/insn_classes.c):
// emulated branches, instructions run out of line with and without
// RIP-relative operands, mid-function probes, the instruction-boundary
// refusal, refused instructions, and every instruction of compiled C.
// The program checks its own results: a wrong emulation shows in its exit
// status, a wrong hit count in the trace and the profile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kOk = "insn_classes: ok\n";
constexpr const char* kStarted = "insn_classes: started\n";

struct Site {
  std::string name;
  std::string symbol;
  uint64_t offset = 0;
  uint64_t hits = 0;
};

std::string exe(const std::string& level) { return program("insn_classes_" + level); }

// The program's own table (`insn_classes --table`), read once per build.
const std::map<std::string, Site>& sites(const std::string& level) {
  static std::map<std::string, std::map<std::string, Site>> tables;
  auto found = tables.find(level);
  if (found != tables.end()) return found->second;
  std::map<std::string, Site> table;
  const RunResult run = run_program({exe(level), "--table"});
  std::istringstream lines(run.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    Site site;
    if (fields >> site.name >> site.symbol >> site.offset >> site.hits) table[site.name] = site;
  }
  return tables.emplace(level, std::move(table)).first->second;
}

std::string target_of(const Site& site) {
  return site.offset == 0 ? site.symbol : site.symbol + "+" + std::to_string(site.offset);
}

std::vector<std::string> site_names() {
  std::vector<std::string> names = {
      "call_rel", "call_next", "jmp_rel32", "jmp_rel8", "loop",    "loope",    "loopne",
      "jrcxz",    "jecxz",     "ret_entry", "ret_mid",  "ret_imm", "call_reg", "call_r11",
      "call_mem", "call_sib",  "call_rip",  "jmp_reg",  "jmp_mem", "jmp_rip",  "jmp_table",
      "rip_load", "rip_lea",   "rip_store", "rip_imm",  "rip_cmp", "rip_sse",  "push",
      "pop",      "rsp_load",  "syscall",   "lea",      "imul",    "setl"};
  for (const char* cc : {"jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja", "js", "jns", "jp",
                         "jnp", "jl", "jge", "jle", "jg"}) {
    names.push_back(std::string(cc) + "8");
    names.push_back(std::string(cc) + "32");
  }
  return names;
}

// The (a, b) pairs insn_classes.c compares, in its order.
const std::vector<std::pair<long, long>> kPairs = {
    {1, 2}, {2, 1},       {3, 3},   {-1, 1}, {INT64_MIN, 1}, {INT64_MAX, -1},
    {0, 3}, {0x10, 0x0d}, {-5, -5}, {7, -9}, {0, 0x7f}};

TEST(InsnClassesProgram, RunsAndChecksItselfUntraced) {
  for (const char* level : {"O0", "O2"}) {
    const RunResult run = run_program({exe(level)});
    EXPECT_EQ(run.status, 0) << run;
    EXPECT_EQ(run.out, std::string(kStarted) + kOk) << run;
  }
}

TEST(InsnClassesProgram, TableListsEverySiteTheTestsProbe) {
  for (const char* level : {"O0", "O2"}) {
    std::vector<std::string> listed;
    for (const auto& [name, site] : sites(level)) listed.push_back(name);
    std::vector<std::string> expected = site_names();
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(listed, expected) << level;
  }
}

class InsnClass : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  std::string level() const { return std::get<0>(GetParam()); }
  const Site& site() const { return sites(level()).at(std::get<1>(GetParam())); }
};

// One probe on the instruction: the program still gets every result right,
// and each execution is exactly one hit, at the probed address.
TEST_P(InsnClass, ProbedInstructionRunsRightAndCountsEveryHit) {
  ASSERT_TRUE(sites(level()).contains(std::get<1>(GetParam())));
  const Site& s = site();
  const RunResult run = run_traced({"p:ic/" + s.name + " " + target_of(s) + " di=%di"},
                                   {exe(level())}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr(kOk)) << run;
  const auto lines = lines_of(parse_trace(run.out), s.name);
  EXPECT_EQ(lines.size(), s.hits) << run;
  const auto size = symbol_size(exe(level()), s.symbol);
  for (const TraceLine& line : lines) {
    if (size) {
      EXPECT_EQ(line.location, s.symbol + "+" + hex(s.offset) + "/" + hex(*size)) << line;
    } else {
      EXPECT_THAT(line.location, ::testing::StartsWith(s.symbol + "+" + hex(s.offset) + "/"));
    }
  }
  const auto row = profile_row(parse_profile(run.err), s.name);
  ASSERT_TRUE(row) << run;
  EXPECT_EQ(row->hits, s.hits);
  EXPECT_EQ(row->misses, 0u);
}

std::string site_test_name(
    const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Sites, InsnClass,
                         ::testing::Combine(::testing::Values(std::string("O0"), std::string("O2")),
                                            ::testing::ValuesIn(site_names())),
                         site_test_name);

class InsnClasses : public ::testing::TestWithParam<const char*> {
 protected:
  std::string level() const { return GetParam(); }
};

// Every site at once: 66 breakpoints in one program.
TEST_P(InsnClasses, AllSitesAtOnce) {
  std::vector<std::string> definitions;
  for (const auto& [name, s] : sites(level())) {
    definitions.push_back("p:ic/" + name + " " + target_of(s));
  }
  ASSERT_EQ(definitions.size(), site_names().size());
  const RunResult run = run_traced(definitions, {exe(level())}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr(kOk)) << run;
  const auto lines = parse_trace(run.out);
  const auto rows = parse_profile(run.err);
  for (const auto& [name, s] : sites(level())) {
    EXPECT_EQ(lines_of(lines, name).size(), s.hits) << name;
    const auto row = profile_row(rows, name);
    ASSERT_TRUE(row) << name;
    EXPECT_EQ(row->hits, s.hits) << name;
  }
}

// Mid-function probes see the function's registers: at the jcc, right
// after `cmp %rsi,%rdi`, the arguments and the flags the cmp set.
TEST_P(InsnClasses, MidFunctionProbeSeesRegistersAndFlags) {
  const Site& je8 = sites(level()).at("je8");
  const Site& jl32 = sites(level()).at("jl32");
  ASSERT_GT(je8.offset, 0u);
  const RunResult run = run_traced({"p:ic/je8 " + target_of(je8) + " a=%di:s64 b=%si:s64 f=%flags",
                                    "p:ic/jl32 " + target_of(jl32) + " a=%di:s64 b=%si:s64"},
                                   {exe(level())});
  EXPECT_EQ(run.status, 0) << run;
  const auto lines = parse_trace(run.out);
  const auto je = lines_of(lines, "je8");
  const auto jl = lines_of(lines, "jl32");
  ASSERT_EQ(je.size(), kPairs.size()) << run;
  ASSERT_EQ(jl.size(), kPairs.size()) << run;
  for (size_t i = 0; i < kPairs.size(); ++i) {
    EXPECT_EQ(je[i].arg("a"), std::to_string(kPairs[i].first)) << je[i];
    EXPECT_EQ(je[i].arg("b"), std::to_string(kPairs[i].second)) << je[i];
    EXPECT_EQ(jl[i].arg("a"), std::to_string(kPairs[i].first)) << jl[i];
    EXPECT_EQ(jl[i].arg("b"), std::to_string(kPairs[i].second)) << jl[i];
    const uint64_t flags = std::stoull(je[i].arg("f"), nullptr, 16);
    EXPECT_EQ((flags & 0x40) != 0, kPairs[i].first == kPairs[i].second) << "ZF: " << je[i];
  }
}

// f_arith starts with a 4-byte lea: +1 is inside it.
TEST_P(InsnClasses, InsideAnInstructionIsRefusedWithAListing) {
  const std::string command = "p:ic/inside f_arith+1";
  const RunResult run = run_traced({command, "p:ic/fine f_call_rel"}, {exe(level())});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err,
              HasSubstr("dprobe: error: Probe point is not an instruction boundary "
                        "(BAD_INSN_BNDRY)\n"
                        "  Command: " +
                        command + "\n" + std::string(11 + command.find("f_arith"), ' ') + "^\n"))
      << run;
  EXPECT_THAT(run.err, HasSubstr("EILSEQ")) << run;
  EXPECT_THAT(run.err, HasSubstr("lea rax, [rdi+rsi*1]")) << run;
  EXPECT_THAT(run.err, HasSubstr("<- probe at +0x1")) << run;
  EXPECT_THAT(run.err, HasSubstr("imul")) << run;
  EXPECT_TRUE(parse_trace(run.out).empty()) << run;
  EXPECT_THAT(run.out, Not(HasSubstr(kStarted))) << "the program ran: " << run;
}

// int3 and ud2 are refused; the good probe next to them is not armed and
// the program does not run.
TEST_P(InsnClasses, RefusedInstructionsArmNothing) {
  for (const auto& [symbol, what] :
       std::map<std::string, std::string>{{"f_int3", "int3"}, {"f_ud2", "ud2"}}) {
    const std::string command = "p:ic/refused " + symbol;
    const RunResult run = run_traced({"p:ic/fine f_call_rel", command}, {exe(level())});
    EXPECT_EQ(run.status, 2) << run;
    EXPECT_THAT(run.err, HasSubstr("(BAD_INSN)\n  Command: " + command + "\n" +
                                   std::string(11 + command.find(symbol), ' ') + "^\n"))
        << run;
    EXPECT_THAT(run.err, HasSubstr(what + ": ")) << run;
    EXPECT_TRUE(parse_trace(run.out).empty()) << run;
    EXPECT_THAT(run.out, Not(HasSubstr(kStarted))) << "the program ran: " << run;
  }
}

INSTANTIATE_TEST_SUITE_P(Optimization, InsnClasses, ::testing::Values("O0", "O2"));

// ---- Every instruction of compiled C ------------------------------------------

class EveryInstruction : public ::testing::TestWithParam<const char*> {};

// args.c's functions, and how many times main calls each.
const std::map<std::string, uint64_t> kArgsCalls = {
    {"callback", 0},  {"args1", 1},      {"args2", 1},    {"args3", 1},
    {"args4", 1},     {"args5", 1},      {"args6", 1},    {"args7", 1},
    {"args8", 1},     {"take_rec", 3},   {"take_mid", 1}, {"take_fn", 1},
    {"take_ptrs", 2}, {"take_small", 1}, {"take_str", 3}, {"main", 1}};

bool straight_line(const std::vector<DisassembledInsn>& insns) {
  for (size_t i = 0; i < insns.size(); ++i) {
    const std::string& m = insns[i].mnemonic;
    if (m[0] == 'j' || m.starts_with("loop") || (m.starts_with("ret") && i + 1 != insns.size()))
      return false;
  }
  return true;
}

// A probe on every instruction of every function args.c defines (from
// objdump), all at once, through a definitions file: the program runs as
// untraced, and straight-line functions count one hit per call on each
// instruction.
TEST_P(EveryInstruction, OfEveryFunctionOfArgs) {
  const std::string path = program(std::string("args_") + GetParam());
  if (find_tool("objdump").empty()) GTEST_SKIP() << "no objdump to find instruction boundaries";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string definitions;
  std::map<std::string, std::vector<DisassembledInsn>> functions;
  for (const auto& [symbol, calls] : kArgsCalls) {
    functions[symbol] = disassemble(path, symbol);
    ASSERT_FALSE(functions[symbol].empty()) << symbol;
    for (const DisassembledInsn& insn : functions[symbol]) {
      definitions += "p:every/" + symbol + "_" + std::to_string(insn.offset) + " " + symbol + "+" +
                     std::to_string(insn.offset) + " sp=%sp\n";
    }
  }
  write_file(dir.file("defs"), definitions);
  const RunResult run =
      run_dprobe({"run", "-f", dir.file("defs"), "--profile", "-o", dir.file("trace"), "--", path});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("args: ok\n")) << run;
  const auto rows = parse_profile(run.err);
  for (const auto& [symbol, insns] : functions) {
    const uint64_t calls = kArgsCalls.at(symbol);
    for (const DisassembledInsn& insn : insns) {
      const std::string event = symbol + "_" + std::to_string(insn.offset);
      const auto row = profile_row(rows, event);
      ASSERT_TRUE(row) << event << "\n" << run;
      if (insn.offset == 0 || straight_line(insns)) {
        EXPECT_EQ(row->hits, calls) << event << " " << insn.mnemonic;
      }
      EXPECT_EQ(row->misses, 0u) << event;
    }
  }
}

// An offset inside one of the compiler's multi-byte instructions.
TEST_P(EveryInstruction, InsideACompiledInstructionIsRefused) {
  const std::string path = program(std::string("args_") + GetParam());
  if (find_tool("objdump").empty()) GTEST_SKIP() << "no objdump to find instruction boundaries";
  const auto insns = disassemble(path, "take_rec");
  uint64_t inside = 0;
  for (size_t i = 0; i + 1 < insns.size() && inside == 0; ++i) {
    if (insns[i + 1].offset - insns[i].offset > 1) inside = insns[i].offset + 1;
  }
  ASSERT_NE(inside, 0u);
  const RunResult run = run_traced({"p:every/inside take_rec+" + std::to_string(inside)}, {path});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, HasSubstr("(BAD_INSN_BNDRY)")) << run;
  EXPECT_THAT(run.err, HasSubstr("<- probe at +0x1")) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("args: started"))) << "the program ran: " << run;
}

INSTANTIATE_TEST_SUITE_P(Optimization, EveryInstruction, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
