// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/target_resolver.h"

#include <set>

#include "lang/limits.h"
#include "lang/naming.h"
#include "symbols/lookup.h"

namespace dprobe::cli {
namespace {

using lang::ErrorCode;
using symbols::LookupError;

ErrorCode error_code_for(LookupError::Kind kind) {
  switch (kind) {
    case LookupError::Kind::kFileNotFound:
    case LookupError::Kind::kObjectNotFound:
      return ErrorCode::FILE_NOT_FOUND;
    case LookupError::Kind::kNotRegularFile:
      return ErrorCode::NO_REGULAR_FILE;
    case LookupError::Kind::kNotElf:
      return ErrorCode::NOT_ELF_FILE;
    case LookupError::Kind::kSymbolNotFound:
      return ErrorCode::NO_SYMBOL;
    case LookupError::Kind::kNotUnique:
      return ErrorCode::NON_UNIQ_SYMBOL;
    case LookupError::Kind::kOffsetPastEnd:
      return ErrorCode::BAD_SYMBOL_OFFS;
    case LookupError::Kind::kNotExecutable:
      return ErrorCode::NOT_TEXT_ADDR;
  }
  return ErrorCode::BAD_PROBE_ADDR;
}

bool is_object_error(LookupError::Kind kind) {
  return kind == LookupError::Kind::kFileNotFound || kind == LookupError::Kind::kObjectNotFound ||
         kind == LookupError::Kind::kNotRegularFile || kind == LookupError::Kind::kNotElf;
}

Unexpected<lang::ProbeError> error_at(ErrorCode code, const lang::Definition& def, size_t column,
                                      std::string detail = {}) {
  return unexpected(lang::ProbeError{code, def.command, column, std::move(detail), {}, {}});
}

// Object errors point at OBJ, symbol errors at SYM.
Unexpected<lang::ProbeError> lookup_error(const LookupError& error, const lang::Definition& def) {
  const size_t column = is_object_error(error.kind) ? def.target_column : def.symbol_column;
  auto failure = error_at(error_code_for(error.kind), def, column, error.detail);
  failure.error.notes = error.candidates;
  return failure;
}

}  // namespace

TargetResolver::TargetResolver(std::string executable)
    : executable_(executable), objects_(std::move(executable)) {}

Result<const LoadedObject*, LookupError> TargetResolver::load(const std::string& object) {
  auto path = objects_.resolve(object.empty() ? executable_ : object);
  if (!path) return unexpected(path.error());
  auto& slot = cache_[*path];
  if (!slot) {
    auto elf = symbols::ElfFile::open(*path);
    if (!elf) return unexpected(elf.error());
    symbols::SymbolTable table(*elf);
    std::vector<symbols::FunctionSymbol> variables = elf->variables();
    slot = std::make_unique<LoadedObject>(
        LoadedObject{std::move(*elf), std::move(table), std::move(variables)});
  }
  return slot.get();
}

Result<std::vector<lang::Definition>, lang::ProbeError> TargetResolver::resolve(
    lang::Definition def) {
  if (def.kind == lang::Definition::Kind::kRemove) return std::vector{std::move(def)};
  const core::ProbeTarget& target = def.spec.point.target;
  const bool needs_executable = target.object.empty() && target.kind != core::TargetKind::kAddress;
  if (needs_executable && executable_.empty()) {
    return error_at(ErrorCode::NO_EXECUTABLE, def, def.target_column);
  }
  if (target.kind == core::TargetKind::kSymbol) return resolve_symbol(std::move(def));
  if (auto checked = check_address(def); !checked) return unexpected(checked.error());
  return std::vector{std::move(def)};
}

Result<std::vector<lang::Definition>, lang::ProbeError> TargetResolver::resolve_symbol(
    lang::Definition def) {
  const core::ProbeTarget& target = def.spec.point.target;
  auto object = load(target.object);
  if (!object) return lookup_error(object.error(), def);
  if (def.wildcard) return expand_wildcard(std::move(def), **object);
  auto symbol =
      symbols::resolve_symbol((*object)->elf, (*object)->table, target.symbol, target.offset);
  if (!symbol) return lookup_error(symbol.error(), def);
  return std::vector{std::move(def)};
}

// One definition per matching function that can hold the offset; names are
// made by the default rule, with _1, _2 ... where two would collide.
Result<std::vector<lang::Definition>, lang::ProbeError> TargetResolver::expand_wildcard(
    lang::Definition def, const LoadedObject& object) {
  const core::ProbeTarget& target = def.spec.point.target;
  std::vector<lang::Definition> expanded;
  std::set<std::string> names;
  std::set<std::string> seen_functions;
  for (const symbols::FunctionSymbol* function : object.table.match(target.symbol)) {
    if (!seen_functions.insert(function->name).second) continue;
    if (!symbols::resolve_symbol(object.elf, object.table, function->name, target.offset)) continue;
    lang::Definition each = def;
    each.wildcard = false;
    each.expanded = true;
    each.spec.point.target.symbol = function->name;
    // C++ functions are named by their source name (p_method_int_0).
    core::ProbePoint named = each.spec.point;
    if (!function->demangled.empty()) named.target.symbol = function->demangled;
    const std::string base = lang::default_event_name(named);
    std::string name = base;
    for (int n = 1; !names.insert(name).second; ++n) {
      // Cut the base, not the suffix: names equal after the length cut
      // must still come out different.
      const std::string suffix = "_" + std::to_string(n);
      name = base.substr(0, lang::kMaxEventNameLen - suffix.size()) + suffix;
    }
    each.spec.event.name = std::move(name);
    expanded.push_back(std::move(each));
  }
  if (expanded.empty()) return error_at(ErrorCode::NO_SYMBOL_MATCH, def, def.symbol_column);
  return expanded;
}

Result<void, lang::ProbeError> TargetResolver::check_address(const lang::Definition& def) {
  const core::ProbeTarget& target = def.spec.point.target;
  if (target.kind == core::TargetKind::kAddress) return {};
  auto object = load(target.object);
  if (!object) return lookup_error(object.error(), def);
  const symbols::ElfFile& elf = (*object)->elf;
  if (target.kind == core::TargetKind::kFileOffset) {
    const auto vaddr = elf.vaddr_of_file_offset(static_cast<uint64_t>(target.offset));
    if (!vaddr || !elf.is_executable_vaddr(*vaddr)) {
      return error_at(ErrorCode::NOT_TEXT_ADDR, def, def.symbol_column);
    }
    return {};
  }
  if (!elf.is_executable_vaddr(target.address)) {
    return error_at(ErrorCode::NOT_TEXT_ADDR, def, def.symbol_column);
  }
  return {};
}

}  // namespace dprobe::cli
