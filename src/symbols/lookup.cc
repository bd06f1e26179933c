// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/lookup.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <utility>
#include <vector>

#include "base/strings.h"

namespace dprobe::symbols {
namespace {

using Kind = LookupError::Kind;

Unexpected<LookupError> error(Kind kind, std::string detail) {
  return unexpected(LookupError{kind, std::move(detail), {}});
}

// Several names at one address are one function; one name at two addresses
// (static functions of different files) is a choice the user must make.
bool has_one_address(const std::vector<const FunctionSymbol*>& matches) {
  for (const FunctionSymbol* f : matches) {
    if (f->address != matches.front()->address) return false;
  }
  return true;
}

// Each candidate with the spelling that names it alone: PATH:0xOFFSET, as
// uprobe_events takes it.
Unexpected<LookupError> not_unique(const ElfFile& elf, std::string_view name,
                                   const std::vector<const FunctionSymbol*>& matches) {
  LookupError err{Kind::kNotUnique,
                  std::string(name) + " has " + std::to_string(matches.size()) + " definitions",
                  {}};
  for (const FunctionSymbol* f : matches) {
    std::string line = candidate_line(*f);
    if (const auto offset = elf.file_offset_of(f->address)) {
      line += ": probe it as " + elf.path() + ":" + hex(*offset);
    }
    err.candidates.push_back(std::move(line));
  }
  return unexpected(std::move(err));
}

// One name at two addresses, one of them a compatibility version
// (memcpy@GLIBC_2.2.5 beside memcpy@@GLIBC_2.14): the name means the
// default version, the one a link made today binds to.
void drop_compat_versions(std::vector<const FunctionSymbol*>& matches) {
  const bool some_default =
      std::any_of(matches.begin(), matches.end(),
                  [](const FunctionSymbol* f) { return !f->is_compat_version; });
  if (some_default)
    std::erase_if(matches, [](const FunctionSymbol* f) { return f->is_compat_version; });
}

// Names of the object a name written with a slip may have meant: its case
// changed, or a character or two wrong (at most a quarter of it), the
// closest first, three at most.
std::vector<std::string> similar_names(const SymbolTable& table, std::string_view name) {
  const size_t limit = std::clamp<size_t>(name.size() / 4, 1, 3);
  std::vector<std::pair<size_t, std::string>> near;
  for (const FunctionSymbol& f : table.functions()) {
    const std::string_view shown = f.display_name();
    const size_t distance =
        std::min(edit_distance(name, f.name, limit),
                 shown == f.name ? limit + 1 : edit_distance(name, shown, limit));
    const bool same_but_case =
        std::equal(name.begin(), name.end(), f.name.begin(), f.name.end(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        });
    if (distance <= limit || same_but_case) near.emplace_back(same_but_case ? 0 : distance, shown);
  }
  std::sort(near.begin(), near.end());
  std::vector<std::string> out;
  for (const auto& [distance, shown] : near) {
    if (std::find(out.begin(), out.end(), shown) == out.end()) out.push_back(shown);
    if (out.size() == 3) break;
  }
  return out;
}

Unexpected<LookupError> not_found(const ElfFile& elf, const SymbolTable& table,
                                  std::string_view name) {
  LookupError err{Kind::kSymbolNotFound, std::string(name) + " in " + elf.path(), {}};
  const std::vector<std::string> near = similar_names(table, name);
  if (!near.empty()) {
    std::string line = "did you mean ";
    for (size_t i = 0; i < near.size(); ++i) line += (i == 0 ? "" : ", ") + near[i];
    err.candidates.push_back(line + "?");
  }
  return unexpected(std::move(err));
}

}  // namespace

std::string candidate_line(const FunctionSymbol& function) {
  std::string line =
      function.name + "@" + hex(function.address) + " (size " + hex(function.size) + ")";
  if (!function.demangled.empty()) line = function.demangled + " [" + line + "]";
  return line;
}

Result<ResolvedSymbol, LookupError> resolve_symbol(const ElfFile& elf, const SymbolTable& table,
                                                   std::string_view name, int64_t offset) {
  std::vector<const FunctionSymbol*> matches = table.lookup(name);
  if (matches.empty()) return not_found(elf, table, name);
  if (!has_one_address(matches)) drop_compat_versions(matches);
  if (!has_one_address(matches)) return not_unique(elf, name, matches);
  const FunctionSymbol& sym = *matches.front();
  const auto unsigned_offset = static_cast<uint64_t>(offset);
  if (offset < 0 || (sym.size > 0 && unsigned_offset >= sym.size)) {
    return error(Kind::kOffsetPastEnd, std::string(name) + (offset < 0 ? "" : "+") +
                                           std::to_string(offset) + " (size " +
                                           std::to_string(sym.size) + ")");
  }
  const uint64_t address = sym.address + unsigned_offset;
  const std::optional<uint64_t> file_offset = elf.file_offset_of(address);
  if (!elf.is_executable_vaddr(address) || !file_offset) {
    return error(Kind::kNotExecutable, std::string(name) + " at " + hex(address));
  }
  return ResolvedSymbol{sym, address, *file_offset};
}

}  // namespace dprobe::symbols
