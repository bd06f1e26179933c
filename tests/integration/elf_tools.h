// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The machine's binutils as an independent view of a test program: symbol
// sizes from `nm -S`, instruction offsets from `objdump -d`. Each returns
// nothing when the tool is missing; the caller skips with that reason.
//
//   std::optional<uint64_t> size = symbol_size(program("args_O2"), "args8");
//   std::vector<DisassembledInsn> insns = disassemble(program("args_O2"), "args8");
#ifndef DPROBE_TESTS_INTEGRATION_ELF_TOOLS_H_
#define DPROBE_TESTS_INTEGRATION_ELF_TOOLS_H_

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {

// `name` looked up in $PATH, as a shell would; empty when not there.
inline std::string find_tool(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string candidate = std::string(dirs.substr(0, colon)) + "/" + std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
  }
  return {};
}

inline std::string hex(uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

// The st_size of a defined symbol, from `nm -S` (run once per file).
inline std::optional<uint64_t> symbol_size(const std::string& path, std::string_view symbol) {
  static std::map<std::string, std::map<std::string, uint64_t, std::less<>>> cache;
  auto file = cache.find(path);
  if (file == cache.end()) {
    std::map<std::string, uint64_t, std::less<>> sizes;
    const std::string nm = find_tool("nm");
    const RunResult run =
        nm.empty() ? RunResult{} : run_program({nm, "-S", "--defined-only", path});
    std::istringstream lines(run.status == 0 ? run.out : std::string());
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      std::string address, size, type, name;
      if (fields >> address >> size >> type >> name) {
        sizes.emplace(name, std::stoull(size, nullptr, 16));
      }
    }
    file = cache.emplace(path, std::move(sizes)).first;
  }
  const auto found = file->second.find(symbol);
  if (found == file->second.end()) return std::nullopt;
  return found->second;
}

struct DisassembledInsn {
  uint64_t offset;       // from the symbol's start
  std::string mnemonic;  // AT&T, as objdump prints it: "push", "call", "jne"
};

// The instructions of `symbol`, from `objdump -d --disassemble=SYMBOL`.
inline std::vector<DisassembledInsn> disassemble(const std::string& path, std::string_view symbol) {
  std::vector<DisassembledInsn> insns;
  const std::string objdump = find_tool("objdump");
  if (objdump.empty()) return insns;
  const RunResult run = run_program(
      {objdump, "-d", "--no-show-raw-insn", "--disassemble=" + std::string(symbol), path});
  if (run.status != 0) return insns;
  std::istringstream lines(run.out);
  std::string line;
  const std::string header = " <" + std::string(symbol) + ">:";
  std::optional<uint64_t> start;
  while (std::getline(lines, line)) {
    if (!start) {
      const size_t at = line.find(header);
      if (at != std::string::npos) start = std::stoull(line.substr(0, at), nullptr, 16);
      continue;
    }
    if (line.empty()) break;  // the end of the symbol's block
    // "    12f0:\tpush   %rbp"
    const size_t colon = line.find(":\t");
    if (colon == std::string::npos) continue;
    const uint64_t address = std::stoull(line.substr(0, colon), nullptr, 16);
    std::istringstream text(line.substr(colon + 2));
    std::string mnemonic;
    text >> mnemonic;
    if (mnemonic == "(bad)" || mnemonic.empty()) continue;
    insns.push_back({address - *start, mnemonic});
  }
  return insns;
}

}  // namespace dprobe::integration

#endif  // DPROBE_TESTS_INTEGRATION_ELF_TOOLS_H_
