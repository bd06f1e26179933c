// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Test support for the CLI: the data files beside these tests, runs of
// `check` and `list` with their streams captured, and the host's functions
// as the symbols layer sees them (the oracle for what the CLI prints).
//
//   CommandRun run = run_check_with({"p libc.so.6:malloc %di"});
//   EXPECT_EQ(run.status, 0);
//   EXPECT_EQ(run.out, "p:dprobes/p_malloc_0 libc.so.6:malloc arg1=%di:x64\n");
#ifndef DPROBE_TESTS_UNIT_CLI_CLI_TEST_SUPPORT_H_
#define DPROBE_TESTS_UNIT_CLI_CLI_TEST_SUPPORT_H_

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/command/check_command.h"
#include "cli/command/list_command.h"
#include "symbols/elf_file.h"
#include "symbols/lookup.h"
#include "symbols/symbol_table.h"

namespace dprobe::cli::test_support {

inline std::string data_dir() {
  return (std::filesystem::path(__FILE__).parent_path() / "data").string();
}

inline std::string data_path(std::string_view name) { return data_dir() + "/" + std::string(name); }

struct CommandRun {
  int status = -1;
  std::string out;
  std::string err;
};

inline CommandRun run_check_with(std::vector<std::string> expressions,
                                 std::vector<std::string> files = {}, std::string executable = {},
                                 bool show_format = false) {
  const CheckOptions options{.sources = {.expressions = std::move(expressions),
                                         .files = std::move(files),
                                         .executable = std::move(executable)},
                             .show_format = show_format};
  std::ostringstream out;
  std::ostringstream err;
  CommandRun run;
  run.status = run_check(options, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

inline CommandRun run_list_with(std::string pattern, std::string executable = {}) {
  std::ostringstream out;
  std::ostringstream err;
  CommandRun run;
  const ListOptions options{.executable = std::move(executable), .pattern = std::move(pattern)};
  run.status = run_list(options, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// How many error reports a stream holds.
inline size_t count_errors(std::string_view text) {
  size_t count = 0;
  for (size_t at = text.find("dprobe: error:"); at != std::string_view::npos;
       at = text.find("dprobe: error:", at + 1)) {
    ++count;
  }
  return count;
}

inline std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    lines.emplace_back(text.substr(0, newline));
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return lines;
}

// The error_log's first three lines for a definition without an origin.
inline std::string error_head(std::string_view message, std::string_view name,
                              std::string_view command, size_t column) {
  return "dprobe: error: " + std::string(message) + " (" + std::string(name) + ")\n" +
         "  Command: " + std::string(command) + "\n" + std::string(11 + column, ' ') + "^\n";
}

// An ELF file with its symbol table, straight from the symbols layer.
struct Symbols {
  std::optional<symbols::ElfFile> elf;
  std::optional<symbols::SymbolTable> table;
  bool ok() const { return elf.has_value(); }
};

inline Symbols load_symbols(const std::string& path) {
  Symbols s;
  auto elf = symbols::ElfFile::open(path);
  if (!elf) return s;
  s.elf.emplace(std::move(*elf));
  s.table.emplace(*s.elf);
  return s;
}

// `dprobe list`'s line for a function, built independently of list_command.cc.
// A list line as `dprobe list` begins it; an IFUNC's note ("[ifunc: calls
// go to ...]") depends on the machine, and is cut to "[ifunc]" by
// without_ifunc_detail() before a comparison.
inline std::string list_line(const symbols::FunctionSymbol& f) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "0x%016" PRIx64 " %8" PRIu64 " ", f.address, f.size);
  return buffer + f.name + (f.is_ifunc ? " [ifunc]" : "") + "\n";
}

inline std::string without_ifunc_detail(const std::string& listing) {
  std::string out;
  size_t from = 0;
  for (size_t at; (at = listing.find(" [ifunc: ", from)) != std::string::npos;) {
    const size_t end = listing.find(']', at);
    out += listing.substr(from, at - from) + " [ifunc]";
    from = end == std::string::npos ? listing.size() : end + 1;
  }
  return out + listing.substr(from);
}

}  // namespace dprobe::cli::test_support

#endif  // DPROBE_TESTS_UNIT_CLI_CLI_TEST_SUPPORT_H_
