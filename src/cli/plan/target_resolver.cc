// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/target_resolver.h"

#include <map>
#include <set>

#include "base/strings.h"
#include "cli/plan/object_targets.h"
#include "cli/plan/sdt_points.h"
#include "cli/plan/signature_args.h"
#include "cli/plan/variable_args.h"
#include "lang/limits.h"
#include "lang/naming.h"
#include "symbols/lookup.h"
#include "symbols/source_lines.h"

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
  return unexpected(lang::ProbeError{
      .code = code, .command = def.command, .column = column, .detail = std::move(detail)});
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
  // Finding a library by name opens the executable and every object it
  // needs: once per name, not once per definition (a wildcard over libc
  // gives thousands).
  const std::string& name = object.empty() ? executable_ : object;
  auto known = paths_.find(name);
  if (known == paths_.end()) {
    auto path = objects_.resolve(name);
    if (!path) return unexpected(path.error());
    known = paths_.emplace(name, std::move(*path)).first;
  }
  auto& slot = cache_[known->second];
  if (!slot) {
    auto elf = symbols::ElfFile::open(known->second);
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
  auto resolved = resolve_target(std::move(def));
  if (!resolved) return resolved;
  for (lang::Definition& each : *resolved) {
    if (auto done = resolve_variables_of(each); !done) return unexpected(done.error());
    if (auto done = apply_signature_of(each); !done) return unexpected(done.error());
  }
  return resolved;
}

Result<std::vector<lang::Definition>, lang::ProbeError> TargetResolver::resolve_target(
    lang::Definition def) {
  const core::ProbeTarget& target = def.spec.point.target;
  const bool needs_executable = target.object.empty() && target.kind != core::TargetKind::kAddress;
  if (needs_executable && executable_.empty()) {
    return error_at(ErrorCode::NO_EXECUTABLE, def, def.target_column);
  }
  if (def.sdt) {
    auto object = load(target.object);
    if (!object) return lookup_error(object.error(), def);
    return resolve_sdt_sites(std::move(def), **object);
  }
  if (def.source) return resolve_source(std::move(def));
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
  if (!symbol) {
    // A function with no symbol of its own (only ever inlined, as perf
    // probe finds it): its copies, from the DWARF.
    const bool plain = symbol.error().kind == LookupError::Kind::kSymbolNotFound &&
                       target.offset == 0 && is_c_identifier(target.symbol);
    const symbols::DebugInfo* info = plain ? debug_info(**object) : nullptr;
    if (info != nullptr && symbols::find_function_entries(*info, target.symbol)) {
      def.source = lang::SourcePlace{.function = target.symbol, .file = {}, .line = -1};
      return resolve_source(std::move(def));
    }
    auto failure = lookup_error(symbol.error(), def);
    // `p malloc` on a program whose malloc is its C library's.
    if (target.object.empty() && symbol.error().kind == LookupError::Kind::kSymbolNotFound) {
      if (const std::string library = library_defining(target.symbol); !library.empty()) {
        failure.error.notes.push_back(target.symbol + " is in " + library + ": write " + library +
                                      ":" + target.symbol);
      }
    }
    return failure;
  }
  return std::vector{std::move(def)};
}

std::string TargetResolver::library_defining(const std::string& symbol) {
  for (const auto& [name, path] : objects_.libraries()) {
    auto library = load(path);
    if (library && symbols::resolve_symbol((*library)->elf, (*library)->table, symbol, 0)) {
      return name;
    }
  }
  return {};
}

const symbols::DebugInfo* TargetResolver::debug_info(const LoadedObject& object) {
  if (!object.debug_tried) {
    object.debug_tried = true;
    auto info = symbols::DebugInfo::open(object.elf.path(), symbols::DebugInfoPaths::from_host());
    if (info) {
      object.debug.emplace(std::move(*info));
    } else {
      object.no_debug = info.error().message;
    }
  }
  return object.debug ? &*object.debug : nullptr;
}

namespace {

Result<std::vector<symbols::CodeAddress>> find_place(const symbols::DebugInfo& info,
                                                     const lang::SourcePlace& place) {
  if (place.function.empty()) return symbols::find_source_line(info, place.file, place.line);
  if (place.line < 0) return symbols::find_function_entries(info, place.function, place.file);
  return symbols::find_function_line(info, place.function, place.line, place.file);
}

}  // namespace

// One definition per block of code of the line (per copy of the function):
// named NAME, NAME_1, NAME_2 ... as perf probe names them.
Result<std::vector<lang::Definition>, lang::ProbeError> TargetResolver::resolve_source(
    lang::Definition def) {
  const lang::SourcePlace place = *def.source;
  auto loaded = load(def.spec.point.target.object);
  if (!loaded) return lookup_error(loaded.error(), def);
  const LoadedObject& object = **loaded;
  const symbols::DebugInfo* info = debug_info(object);
  if (info == nullptr)
    return error_at(ErrorCode::NO_DEBUG_INFO, def, def.target_column, object.no_debug);
  auto addresses = find_place(*info, place);
  if (!addresses) {
    return error_at(ErrorCode::NO_SOURCE_PLACE, def, def.symbol_column, addresses.error().message);
  }
  if (def.spec.point.is_return) {
    // A return probe needs a call: inlined copies have none.
    std::erase_if(*addresses, [](const symbols::CodeAddress& at) { return at.inlined; });
    if (addresses->empty()) {
      return error_at(ErrorCode::BAD_RETPROBE, def, def.symbol_column,
                      place.function + " is only inlined: it has no return to probe");
    }
  }
  std::vector<lang::Definition> out;
  const std::string base = def.spec.event.name;
  for (const symbols::CodeAddress& code : *addresses) {
    lang::Definition each = def;
    auto target = target_at(object, def.spec.point.target.object, code.address);
    if (!target) return error_at(ErrorCode::NOT_TEXT_ADDR, def, def.symbol_column);
    each.spec.point.target = std::move(*target);
    each.link_address = code.address;
    if (!out.empty()) each.spec.event.name = numbered_event_name(base, out.size());
    out.push_back(std::move(each));
  }
  return out;
}

namespace {

// A function's entry named with source variables goes past the prologue,
// where they are (perf probe and gdb do the same); an offset, a line or an
// inlined copy stays where it is.
void move_past_prologue(lang::Definition& def, const symbols::DebugInfo& info, uint64_t& address) {
  core::ProbeTarget& target = def.spec.point.target;
  const bool entry = def.source ? def.source->line < 0 : target.offset == 0;
  if (!entry || target.kind == core::TargetKind::kObjectAddress) return;
  const std::optional<uint64_t> body = symbols::after_prologue(info, address);
  if (!body) return;
  target.offset += static_cast<int64_t>(*body - address);
  address = *body;
}

}  // namespace

// The probe's link-time address, where its variables are looked up.
// The link-time address of `def`'s probe in `object`.
Result<uint64_t, lang::ProbeError> TargetResolver::link_address_of(const lang::Definition& def,
                                                                   const LoadedObject& object) {
  if (def.link_address != 0) return def.link_address;
  const core::ProbeTarget& target = def.spec.point.target;
  if (target.kind == core::TargetKind::kSymbol) {
    auto symbol = symbols::resolve_symbol(object.elf, object.table, target.symbol, target.offset);
    if (!symbol) return lookup_error(symbol.error(), def);
    return symbol->address;
  }
  if (target.kind == core::TargetKind::kFileOffset) {
    return object.elf.vaddr_of_file_offset(static_cast<uint64_t>(target.offset)).value_or(0);
  }
  return target.address;
}

Result<void, lang::ProbeError> TargetResolver::resolve_variables_of(lang::Definition& def) {
  if (!has_variable_args(def)) return {};
  const core::ProbeTarget& target = def.spec.point.target;
  if (target.kind == core::TargetKind::kAddress) {
    return error_at(ErrorCode::NO_DEBUG_INFO, def, def.target_column,
                    "a process address names no object to read the debug information of");
  }
  auto loaded = load(target.object);
  if (!loaded) return lookup_error(loaded.error(), def);
  const LoadedObject& object = **loaded;
  auto address = link_address_of(def, object);
  if (!address) return unexpected(address.error());
  VariableScope scope;
  scope.info = debug_info(object);
  if (scope.info != nullptr && !def.spec.point.is_return)
    move_past_prologue(def, *scope.info, *address);
  scope.no_info = object.no_debug;
  scope.globals = &object.variables;
  scope.object = target.kind == core::TargetKind::kFileOffset ? object.elf.path() : target.object;
  scope.address = *address;
  def.link_address = *address;
  return resolve_variables(def, scope);
}

// $retval and $argN by the DWARF's signature (signature_args.h), at a
// function's entry or return: where no DWARF is, as the kernel reads them.
Result<void, lang::ProbeError> TargetResolver::apply_signature_of(lang::Definition& def) {
  const core::ProbeTarget& target = def.spec.point.target;
  const bool at_entry = target.kind == core::TargetKind::kSymbol && target.offset == 0;
  if (!at_entry || def.source || !has_signature_args(def)) return {};
  auto loaded = load(target.object);
  if (!loaded) return {};
  const symbols::DebugInfo* info = debug_info(**loaded);
  if (info == nullptr) return {};
  auto address = link_address_of(def, **loaded);
  if (!address) return {};
  const auto signature = symbols::function_signature(*info, *address);
  if (!signature) return {};
  return apply_signature(def, *signature, target.symbol);
}

namespace {

// Aliases (free, cfree, __libc_free) are one function: a wildcard probes
// it once, under the name is_better_alias picks, or every call would be
// counted once per name.
std::vector<const symbols::FunctionSymbol*> one_name_per_address(
    const std::vector<const symbols::FunctionSymbol*>& matches) {
  std::map<uint64_t, const symbols::FunctionSymbol*> best;
  for (const symbols::FunctionSymbol* function : matches) {
    auto [it, added] = best.emplace(function->address, function);
    if (!added && symbols::is_better_alias(*function, *it->second)) it->second = function;
  }
  std::vector<const symbols::FunctionSymbol*> kept;
  for (const symbols::FunctionSymbol* function : matches) {
    if (best.at(function->address) == function) kept.push_back(function);
  }
  return kept;
}

// How a wildcard's match is probed (target_at's spelling of the address);
// nullopt where the offset does not fit in the function.
std::optional<core::ProbeTarget> alias_target(const LoadedObject& object,
                                              const symbols::FunctionSymbol& function,
                                              const core::ProbeTarget& pattern) {
  const auto offset = static_cast<uint64_t>(pattern.offset);
  if (pattern.offset < 0 || (function.size > 0 && offset >= function.size)) return std::nullopt;
  const uint64_t address = function.address + offset;
  if (!object.elf.is_executable_vaddr(address)) return std::nullopt;
  return target_at(object, pattern.object, address);
}

}  // namespace

// One definition per matching function that can hold the offset, one per
// address; names are made by the default rule, with _1, _2 ... where two
// would collide.
Result<std::vector<lang::Definition>, lang::ProbeError> TargetResolver::expand_wildcard(
    lang::Definition def, const LoadedObject& object) {
  const core::ProbeTarget& target = def.spec.point.target;
  std::vector<lang::Definition> expanded;
  std::set<std::string> names;
  for (const symbols::FunctionSymbol* function :
       one_name_per_address(object.table.match(target.symbol))) {
    auto place = alias_target(object, *function, target);
    if (!place) continue;
    lang::Definition each = def;
    each.wildcard = false;
    each.expanded = true;
    each.spec.point.target = std::move(*place);
    // Named after the function whatever the spelling; C++ functions by
    // their source name (p_method_int_0).
    core::ProbePoint named = def.spec.point;
    named.target.symbol = function->demangled.empty() ? function->name : function->demangled;
    const std::string base = lang::default_event_name(named);
    std::string name = base;
    for (size_t n = 1; !names.insert(name).second; ++n) name = numbered_event_name(base, n);
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
