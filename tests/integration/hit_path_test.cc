// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The hit path (base/hit_path.h): every function an optimized hit, a
// return hit or a rewritten system call site may run carries
// DPROBE_HIT_PATH, which puts it in the section `dprobe_hit`. An optimized
// probe's trampoline saves the general registers and flags, never the
// x87/SSE/AVX state (x86_64) or the FP/SIMD/SVE state (arm64): the probed
// function's floating-point and vector arguments live there. So nothing in
// that section may touch that state, nor call the C library's memcpy or
// memset (which use it; the agent has its own), nor call or jump out of
// the section: whatever it calls runs on the hit path too, and must carry
// the marker. The agents as built (this host's, and the arm64 cross
// build's when there is one) are disassembled and their section is read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

// Where a hit enters the agent's C++ code with the general registers alone
// saved: an optimized probe's trampoline calls dprobe_optimized_hit, the
// return trampoline (which saves the return value's registers itself)
// dprobe_return_hit, and a rewritten system call site's trampoline the
// other two. (A breakpoint's hit comes in a signal frame, which holds the
// whole state.)
constexpr std::array kEntryPoints = {
    "dprobe_optimized_hit",
    "dprobe_return_hit",
    "dprobe_syscall_enter",
    "dprobe_syscall_exit",
};

std::string agent_library() {
  std::string binary = DPROBE_BINARY;
  return binary.substr(0, binary.rfind('/')) + "/libdprobe_agent.so";
}

std::string disassembly(const std::string& objdump, const std::string& path) {
  std::string text;
  FILE* pipe =
      ::popen((objdump + " -d -C --no-show-raw-insn " + path + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) text.append(buffer, n);
  ::pclose(pipe);
  return text;
}

struct Instruction {
  std::string function;
  uint64_t address = 0;
  std::string text;
};

// The section's instructions and its functions, from objdump's listing.
struct HitSection {
  std::vector<Instruction> code;
  std::set<std::string> functions;
  uint64_t begin = ~0ull;
  uint64_t end = 0;

  bool holds(uint64_t address) const { return address >= begin && address < end; }
  bool has_function(const std::string& name) const {
    for (const std::string& function : functions) {
      if (function == name || function.rfind(name + "(", 0) == 0 ||
          function.find("::" + name + "(") != std::string::npos) {
        return true;
      }
    }
    return false;
  }
};

HitSection hit_section(const std::string& listing) {
  const std::regex section(R"(^Disassembly of section (\S+):$)");
  const std::regex header(R"(^[0-9a-f]+ <(.*)>:$)");
  const std::regex instruction(R"(^\s*([0-9a-f]+):\s*(.*)$)");
  HitSection found;
  bool inside = false;
  std::string function;
  size_t begin = 0;
  while (begin < listing.size()) {
    const size_t end = std::min(listing.find('\n', begin), listing.size());
    const std::string line = listing.substr(begin, end - begin);
    begin = end + 1;
    std::smatch match;
    if (std::regex_match(line, match, section)) {
      inside = match[1] == "dprobe_hit";
    } else if (!inside) {
      continue;
    } else if (std::regex_match(line, match, header)) {
      function = match[1];
      found.functions.insert(function);
    } else if (std::regex_match(line, match, instruction)) {
      const uint64_t address = std::stoull(match[1], nullptr, 16);
      found.code.push_back({function, address, match[2]});
      found.begin = std::min(found.begin, address);
      found.end = std::max(found.end, address + 1);
    }
  }
  // The last instruction's bytes: a branch may not target them, none does.
  return found;
}

// Instructions of the section that match `forbidden`.
std::vector<std::string> touching(const HitSection& hit, const std::regex& forbidden) {
  std::vector<std::string> lines;
  for (const Instruction& insn : hit.code) {
    if (std::regex_search(insn.text, forbidden)) lines.push_back(insn.function + ": " + insn.text);
  }
  return lines;
}

// Direct calls and jumps whose target is outside the section, and calls
// through the GOT (an external function, whatever its name).
std::vector<std::string> leaving(const HitSection& hit, const std::regex& branch,
                                 const std::regex& through_got) {
  std::vector<std::string> lines;
  for (const Instruction& insn : hit.code) {
    std::smatch match;
    const bool out = std::regex_search(insn.text, match, branch) &&
                     !hit.holds(std::stoull(match[1], nullptr, 16));
    if (out || std::regex_search(insn.text, through_got)) {
      lines.push_back(insn.function + ": " + insn.text);
    }
  }
  return lines;
}

void expect_entry_points(const HitSection& hit) {
  for (const char* entry : kEntryPoints) {
    EXPECT_TRUE(hit.has_function(entry)) << entry << " is not in the section dprobe_hit";
  }
}

// What an ISA's listing says: FP/SIMD state, a direct branch (its target
// captured), a call through the GOT.
struct IsaPatterns {
  std::regex fp_state;
  std::regex branch;
  std::regex through_got;
};

const IsaPatterns kX86_64{
    std::regex(R"(%[xyz]mm|%st|%mm[0-7]|%k[0-7]|xsave|fxsave|fxrstor|xrstor|mxcsr|emms)"),
    std::regex(R"(^(?:bnd |notrack )?(?:call|jmp|j[a-z]+)\s+([0-9a-f]+) <)"),
    std::regex(R"(^(?:call|jmp)\s+\*0x[0-9a-f]+\(%rip\))"),
};

// q, v, d, s, h, b, z, p registers as operands, FPSR, FPCR; arm64 calls
// through the GOT by register, which a disassembly cannot follow.
const IsaPatterns kArm64{
    std::regex(
        R"([\s,\[{][qvdshbzp]([0-9]|[12][0-9]|3[01])(\.[0-9a-z]+)?(\[[0-9]+\])?(/[zm])?(,|\]|\}|$)|fpsr|fpcr)"),
    std::regex(R"(^(?:bl|b|b\.[a-z]+|cbn?z|tbn?z)\s+(?:[^,]+,\s*)*([0-9a-f]+) <)"),
    std::regex(R"($^)"),
};

// Every rule of the section, on an agent's listing.
void expect_hit_path_rules(const std::string& listing, const IsaPatterns& isa,
                           const std::string& agent) {
  const HitSection hit = hit_section(listing);
  ASSERT_FALSE(hit.code.empty()) << "no section dprobe_hit in " << agent;
  expect_entry_points(hit);
  EXPECT_THAT(touching(hit, isa.fp_state), ::testing::IsEmpty());
  EXPECT_THAT(leaving(hit, isa.branch, isa.through_got), ::testing::IsEmpty());
}

#if defined(__x86_64__)
TEST(HitPath, TouchesNoVectorOrX87StateAndNeverLeavesItsSection) {
  const std::string listing = disassembly("objdump", agent_library());
  if (listing.empty()) GTEST_SKIP() << "needs objdump";
  expect_hit_path_rules(listing, kX86_64, agent_library());
}

// The checks see what they look for.
TEST(HitPath, ThePatternsFindWhatTheyForbid) {
  HitSection hit;
  hit.begin = 0x1000;
  hit.end = 0x2000;
  hit.code = {{"f", 0x1000, "call   3000 <memcpy@plt>"},
              {"f", 0x1005, "jne    1800 <f+0x800>"},
              {"f", 0x100b, "call   *0x2fe2(%rip)        # 3ff8 <malloc@GLIBC_2.2.5>"},
              {"f", 0x1011, "movaps %xmm0,-0x10(%rsp)"}};
  EXPECT_THAT(leaving(hit, kX86_64.branch, kX86_64.through_got),
              ::testing::ElementsAre("f: call   3000 <memcpy@plt>",
                                     "f: call   *0x2fe2(%rip)        # 3ff8 <malloc@GLIBC_2.2.5>"));
  EXPECT_THAT(touching(hit, kX86_64.fp_state),
              ::testing::ElementsAre("f: movaps %xmm0,-0x10(%rsp)"));
}
#endif

TEST(HitPath, Arm64AgentTouchesNoFpSimdStateAndNeverLeavesItsSection) {
  const std::string agent = DPROBE_ARM64_AGENT;
  if (std::FILE* f = std::fopen(agent.c_str(), "rb")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "no arm64 cross build at " << agent;
  }
  const std::string listing = disassembly("aarch64-linux-gnu-objdump", agent);
  if (listing.empty()) GTEST_SKIP() << "needs aarch64-linux-gnu-objdump";
  expect_hit_path_rules(listing, kArm64, agent);
  // The pattern does see vector registers: the rest of the agent has some.
  EXPECT_NE(listing.find("\tstp\tq"), std::string::npos);
  EXPECT_TRUE(std::regex_search(std::string("\tstp\tq0, q1, [sp, #32]"), kArm64.fp_state));
}

}  // namespace
}  // namespace dprobe::integration
