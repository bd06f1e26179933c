// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/probe_plan.h"

#include <sys/stat.h>

#include <optional>

#include "base/strings.h"
#include "symbols/lookup.h"

namespace dprobe::cli {
namespace {

using lang::ErrorCode;

lang::ProbeError error_at(ErrorCode code, const lang::DefinitionSite& site, size_t column,
                          std::string detail = {}) {
  return {.code = code,
          .command = site.command,
          .column = column,
          .detail = std::move(detail),
          .notes = {},
          .origin = site.origin};
}

struct Placement {
  uint64_t address;
  uint64_t function_address;
  uint64_t function_size;
  bool ifunc = false;  // the address is an IFUNC's resolver (see ProbeRequest)
};

// An IFUNC's name means the implementation its resolver picks at run time,
// so an offset from it names nothing: the resolver's own code has a
// spelling of its own.
std::string ifunc_offset_note(const symbols::ResolvedSymbol& symbol, const symbols::ElfFile& elf) {
  return symbol.sym.name + " is an IFUNC: its name probes the implementation chosen at run time; " +
         "probe inside its resolver as " + elf.path() + ":" + hex(symbol.file_offset);
}

// Where `vaddr` of a placed object runs, and the function around it.
Placement place(const PlacedObject& object, uint64_t vaddr) {
  const uint64_t bias = object.loaded->bias;
  const auto function = object.file->table.symbolize(vaddr);
  if (!function) {
    return {.address = bias + vaddr, .function_address = bias + vaddr, .function_size = 0};
  }
  return {.address = bias + vaddr,
          .function_address = bias + function->function->address,
          .function_size = function->function->size};
}

class Planner {
 public:
  Planner(const ProcessObjects& objects, TargetResolver& resolver)
      : objects_(objects), resolver_(resolver) {}

  // nullopt: the target's object is not mapped yet (the probe is pending).
  Result<std::optional<protocol::ProbeRequest>, lang::ProbeError> plan(
      const trace::ProbeSpec& spec, const lang::DefinitionSite& site) {
    auto placement = place_target(spec.point.target, site);
    if (!placement) {
      if (placement.error().code == ErrorCode::OBJ_NOT_LOADED) {
        return std::optional<protocol::ProbeRequest>{};
      }
      return unexpected(placement.error());
    }
    // A return probe hijacks the return address where the function starts.
    if (spec.point.is_return && placement->first.address != placement->first.function_address) {
      return unexpected(error_at(ErrorCode::BAD_RETPROBE, site, site.symbol_column,
                                 "the address is not the start of its function"));
    }
    protocol::ProbeRequest request;
    request.address = placement->first.address;
    request.function_address = placement->first.function_address;
    request.function_size = placement->first.function_size;
    request.ifunc = placement->first.ifunc;
    if (spec.point.sdt_semaphore != 0) {
      request.semaphore = placement->second.loaded->bias + spec.point.sdt_semaphore;
    }
    request.spec = spec;
    for (size_t i = 0; i < request.spec.event.args.size(); ++i) {
      const size_t column = i < site.arg_columns.size() ? site.arg_columns[i] : 0;
      auto resolved = resolve_fetch(request.spec.event.args[i], placement->second, site, column);
      if (!resolved) return unexpected(resolved.error());
    }
    return std::optional(std::move(request));
  }

 private:
  using Placed = std::pair<Placement, PlacedObject>;

  Result<PlacedObject, lang::ProbeError> object_named(const std::string& name,
                                                      const lang::DefinitionSite& site) {
    auto file = resolver_.load(name);
    if (!file) return unexpected(error_at(ErrorCode::FILE_NOT_FOUND, site, site.target_column));
    auto placed = objects_.find(**file);
    if (!placed) {
      return unexpected(error_at(ErrorCode::OBJ_NOT_LOADED, site, site.target_column,
                                 (*file)->elf.path() + " is not mapped in the process"));
    }
    return *placed;
  }

  Result<Placed, lang::ProbeError> place_target(const core::ProbeTarget& target,
                                                const lang::DefinitionSite& site) {
    if (target.kind == core::TargetKind::kAddress) {
      auto placed = objects_.containing(target.address);
      if (!placed) return unexpected(error_at(ErrorCode::NOT_TEXT_ADDR, site, site.symbol_column));
      return Placed{place(*placed, target.address - placed->loaded->bias), *placed};
    }
    auto object = object_named(target.object, site);
    if (!object) return unexpected(object.error());
    const symbols::ElfFile& elf = object->file->elf;
    switch (target.kind) {
      case core::TargetKind::kSymbol: {
        auto symbol =
            symbols::resolve_symbol(elf, object->file->table, target.symbol, target.offset);
        if (!symbol) return unexpected(error_at(ErrorCode::NO_SYMBOL, site, site.symbol_column));
        if (symbol->sym.is_ifunc && target.offset != 0) {
          return unexpected(error_at(ErrorCode::BAD_SYMBOL_OFFS, site, site.symbol_column,
                                     ifunc_offset_note(*symbol, elf)));
        }
        const uint64_t bias = object->loaded->bias;
        const Placement placement{.address = bias + symbol->address,
                                  .function_address = bias + symbol->sym.address,
                                  .function_size = symbol->sym.size,
                                  .ifunc = symbol->sym.is_ifunc};
        return Placed{placement, *object};
      }
      case core::TargetKind::kObjectAddress:
        return Placed{place(*object, target.address), *object};
      case core::TargetKind::kFileOffset: {
        const auto vaddr = elf.vaddr_of_file_offset(static_cast<uint64_t>(target.offset));
        if (!vaddr) return unexpected(error_at(ErrorCode::NOT_TEXT_ADDR, site, site.symbol_column));
        return Placed{place(*object, *vaddr), *object};
      }
      case core::TargetKind::kAddress:
      case core::TargetKind::kSyscall:
        break;
    }
    return unexpected(error_at(ErrorCode::BAD_PROBE_ADDR, site, site.target_column));
  }

  // @SYM and @+OFFS become plain addresses: the agent knows no symbols.
  Result<void, lang::ProbeError> resolve_fetch(trace::EventArg& arg, const PlacedObject& probed,
                                               const lang::DefinitionSite& site, size_t column) {
    for (trace::FetchInsn& insn : arg.code) {
      if (insn.op == trace::FetchOp::kFileOffset) {
        const auto vaddr = probed.file->elf.vaddr_of_file_offset(static_cast<uint64_t>(insn.imm));
        if (!vaddr) return unexpected(error_at(ErrorCode::BAD_FILE_OFFS, site, column));
        insn = {
            trace::FetchOp::kImm, 0, 0, 0, 0, static_cast<int64_t>(probed.loaded->bias + *vaddr)};
      } else if (insn.op == trace::FetchOp::kSymbolAddr) {
        if (insn.param >= arg.symbols.size()) {
          return unexpected(error_at(ErrorCode::BAD_MEM_ADDR, site, column));
        }
        auto address = symbol_address(arg.symbols[insn.param], site, column);
        if (!address) return unexpected(address.error());
        insn = {trace::FetchOp::kImm, 0, 0, 0, 0, static_cast<int64_t>(*address) + insn.imm};
      }
    }
    arg.symbols.clear();
    return {};
  }

  Result<uint64_t, lang::ProbeError> symbol_address(const trace::SymbolRef& ref,
                                                    const lang::DefinitionSite& site,
                                                    size_t column) {
    auto object = object_named(ref.object, site);
    if (!object) {
      lang::ProbeError error = object.error();
      error.column = column;
      return unexpected(error);
    }
    // File-local variables share names (two files' `static int calls`,
    // both `calls.0` for the assembler): one of them would be a guess.
    std::optional<uint64_t> found;
    for (const symbols::FunctionSymbol& variable : object->file->variables) {
      if (variable.name != ref.symbol) continue;
      if (found && *found != variable.address) {
        return unexpected(
            error_at(ErrorCode::NON_UNIQ_SYMBOL, site, column,
                     ref.symbol + " names more than one variable in " + object->file->elf.path()));
      }
      found = variable.address;
    }
    if (found) return object->loaded->bias + *found;
    const auto functions = object->file->table.find(ref.symbol);
    if (!functions.empty()) return object->loaded->bias + functions.front().address;
    return unexpected(error_at(ErrorCode::NO_SYMBOL, site, column,
                               ref.symbol + " in " + object->file->elf.path()));
  }

  const ProcessObjects& objects_;
  TargetResolver& resolver_;
};

}  // namespace

namespace {

// Whether the definition's object is one of `only` (just loaded).
bool targets_one_of(const core::ProbeTarget& target, TargetResolver& resolver,
                    const std::vector<protocol::LoadedObject>& only) {
  if (target.kind == core::TargetKind::kAddress) return false;
  auto file = resolver.load(target.object);
  if (!file) return false;
  struct stat st {};
  if (::stat((*file)->elf.path().c_str(), &st) != 0) return false;
  for (const protocol::LoadedObject& object : only) {
    if (object.dev == st.st_dev && object.ino == st.st_ino) return true;
  }
  return false;
}

}  // namespace

Result<Plan, std::vector<lang::ProbeError>> plan_probes(
    const lang::DefinitionSet& set, const ProcessObjects& objects, TargetResolver& resolver,
    const std::vector<protocol::LoadedObject>* only) {
  Planner planner(objects, resolver);
  Plan plan;
  std::vector<lang::ProbeError> errors;
  for (size_t i = 0; i < set.specs().size(); ++i) {
    const trace::ProbeSpec& spec = set.specs()[i];
    if (trace::is_syscall_source(spec.event.source)) continue;  // no address to plan
    if (only != nullptr && !targets_one_of(spec.point.target, resolver, *only)) continue;
    auto request = planner.plan(spec, set.sites()[i]);
    if (!request) {
      errors.push_back(std::move(request.error()));
    } else if (*request) {
      plan.requests.push_back(std::move(**request));
    } else {
      plan.pending.push_back(i);
    }
  }
  if (!errors.empty()) return unexpected(std::move(errors));
  return plan;
}

}  // namespace dprobe::cli
