// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/dwarf_variables.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <set>

#include "symbols/dwarf_locations.h"
#include "symbols/dwarf_types.h"

namespace dprobe::symbols {
namespace {

using Kind = ValueShape::Kind;
using ErrorKind = VariableError::Kind;

Unexpected<VariableError> error(ErrorKind kind, int step, std::string detail) {
  return unexpected(VariableError{kind, step, std::move(detail), {}});
}

// The scopes around `pc`. `dies`: innermost first, ending with the function
// or inlined copy that holds pc. `outer`: the out-of-line function's own
// scopes around pc, innermost first (an inlined copy's variables are looked
// up there next, as gdb shows them).
struct Scopes {
  Dwarf_Die cu;
  std::vector<Dwarf_Die> dies;
  std::vector<Dwarf_Die> outer;
  Dwarf_Die subprogram;  // the out-of-line function: its frame is the copies' too
};

// The compilation unit whose code holds pc. Its ranges, not
// .debug_aranges: compilers no longer emit that by default.
bool unit_at(Dwarf* dwarf, uint64_t pc, Dwarf_Die& unit) {
  Dwarf_Off offset = 0;
  Dwarf_Off next = 0;
  size_t header_size = 0;
  while (dwarf_nextcu(dwarf, offset, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
    if (dwarf_offdie(dwarf, offset + header_size, &unit) != nullptr && dwarf_haspc(&unit, pc) > 0) {
      return true;
    }
    offset = next;
  }
  return false;
}

bool is_code_scope(int tag) {
  return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
         tag == DW_TAG_lexical_block;
}

bool is_container(int tag) {
  return tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
         tag == DW_TAG_union_type || tag == DW_TAG_module;
}

// Appends the scopes holding pc under `parent`, outermost first. Our own
// walk, not dwarf_getscopes: that one neither looks into namespaces (C++
// functions are there) nor leads from an inlined copy to the function it
// is inlined into.
bool scope_chain(Dwarf_Die& parent, uint64_t pc, std::vector<Dwarf_Die>& chain) {
  Dwarf_Die child;
  if (dwarf_child(&parent, &child) != 0) return false;
  do {
    const int tag = dwarf_tag(&child);
    if (is_code_scope(tag)) {
      if (dwarf_haspc(&child, pc) > 0) {
        chain.push_back(child);
        scope_chain(child, pc, chain);
        return true;
      }
    } else if (is_container(tag) && scope_chain(child, pc, chain)) {
      return true;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

std::optional<Scopes> scopes_at(Dwarf* dwarf, uint64_t pc) {
  Scopes out;
  if (dwarf == nullptr || !unit_at(dwarf, pc, out.cu)) return std::nullopt;
  std::vector<Dwarf_Die> chain;
  scope_chain(out.cu, pc, chain);
  if (chain.empty() || dwarf_tag(&chain.front()) != DW_TAG_subprogram) return std::nullopt;
  out.subprogram = chain.front();
  // The innermost function (an inlined copy, or the function itself).
  size_t function = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    if (dwarf_tag(&chain[i]) != DW_TAG_lexical_block) function = i;
  }
  for (size_t i = chain.size(); i > function; --i) out.dies.push_back(chain[i - 1]);
  if (function > 0) {
    // The function's own blocks around the first inlined copy.
    size_t own = 0;
    while (own + 1 < chain.size() && dwarf_tag(&chain[own + 1]) == DW_TAG_lexical_block) ++own;
    for (size_t i = own + 1; i > 0; --i) out.outer.push_back(chain[i - 1]);
  }
  return out;
}

bool is_variable(int tag) { return tag == DW_TAG_variable || tag == DW_TAG_formal_parameter; }

// Calls visit(die) for each variable directly in `scope` (not in nested
// blocks), in DWARF order.
template <typename Visit>
void for_each_variable(Dwarf_Die& scope, Visit visit) {
  Dwarf_Die child;
  if (dwarf_child(&scope, &child) != 0) return;
  do {
    if (is_variable(dwarf_tag(&child)) && dwarf_diename(&child) != nullptr) visit(child);
  } while (dwarf_siblingof(&child, &child) == 0);
}

// A file-level variable defined here (not an extern declaration).
bool is_global_definition(Dwarf_Die& die) {
  return dwarf_tag(&die) == DW_TAG_variable && !dwarf_hasattr(&die, DW_AT_declaration) &&
         (dwarf_hasattr(&die, DW_AT_location) || dwarf_hasattr(&die, DW_AT_const_value));
}

std::optional<Dwarf_Die> find_in(std::vector<Dwarf_Die>& scopes, std::string_view name) {
  for (Dwarf_Die& scope : scopes) {
    std::optional<Dwarf_Die> found;
    for_each_variable(scope, [&](Dwarf_Die& die) {
      if (!found && name == dwarf_diename(&die)) found = die;
    });
    if (found) return found;
  }
  return std::nullopt;
}

// The scopes a name is looked up in, innermost first: an inlined copy's,
// then the function's it is inlined into.
std::vector<Dwarf_Die> lookup_scopes(const Scopes& scopes) {
  std::vector<Dwarf_Die> all = scopes.dies;
  all.insert(all.end(), scopes.outer.begin(), scopes.outer.end());
  return all;
}

std::optional<Dwarf_Die> find_in_scopes(Scopes& scopes, std::string_view name) {
  std::vector<Dwarf_Die> all = lookup_scopes(scopes);
  if (auto found = find_in(all, name)) return found;
  std::optional<Dwarf_Die> global;
  for_each_variable(scopes.cu, [&](Dwarf_Die& die) {
    if (!global && name == dwarf_diename(&die) && is_global_definition(die)) global = die;
  });
  return global;
}

// The value, materialized: a pointer in memory is loaded, so that the
// value is the pointer itself.
bool load_value(VariableFetch& fetch) {
  if (fetch.base == VariableFetch::Base::kConstant && fetch.loads.empty() && !fetch.in_memory) {
    return false;  // a constant pointer: nothing to read through
  }
  if (fetch.in_memory) fetch.loads.push_back(fetch.at);
  fetch.in_memory = true;
  fetch.at = fetch.plus;  // a computed pointer: the load adds what it adds
  fetch.plus = 0;
  return true;
}

struct Walk {
  VariableFetch fetch;
  std::optional<Dwarf_Die> type;
};

Result<void, VariableError> follow_member(Walk& walk, const PathStep& step, int index,
                                          bool through_pointer) {
  std::optional<Dwarf_Die> record = peeled(walk.type);
  if (through_pointer) record = peeled(type_of(&*record));
  if (!record || !is_record(dwarf_tag(&*record))) {
    return error(ErrorKind::kNotPointer, index,
                 type_name(walk.type) + " is not a pointer to a struct, union or class");
  }
  auto member = find_member(*record, step.member);
  if (!member) {
    return error(ErrorKind::kNoMember, index,
                 type_name(record) + " has no member '" + step.member + "'");
  }
  if (through_pointer && !load_value(walk.fetch)) {
    return error(ErrorKind::kUnsupported, index, "the pointer is a constant");
  }
  if (!walk.fetch.in_memory) {
    return error(ErrorKind::kUnsupported, index,
                 "the " + type_name(walk.type) + " is in a register here, not in memory");
  }
  walk.fetch.at += static_cast<int64_t>(member->offset);
  walk.type = type_of(&member->die);
  walk.fetch.shape = describe_type(walk.type);
  walk.fetch.shape.bit_size = member->bit_size;
  walk.fetch.shape.bit_offset = member->bit_offset;
  return {};
}

Result<void, VariableError> follow_index(Walk& walk, const PathStep& step, int index) {
  std::optional<Dwarf_Die> bare = peeled(walk.type);
  const int tag = bare ? dwarf_tag(&*bare) : 0;
  std::optional<Dwarf_Die> element;
  if (tag == DW_TAG_array_type) {
    Dwarf_Die array = *bare;
    const ArrayInfo info = array_info(array);
    if (info.count != 0 && (step.index < 0 || static_cast<uint64_t>(step.index) >= info.count)) {
      return error(ErrorKind::kUnsupported, index,
                   "index " + std::to_string(step.index) + " is past the " +
                       std::to_string(info.count) + " elements of " + type_name(walk.type));
    }
    if (!walk.fetch.in_memory) {
      return error(ErrorKind::kUnsupported, index, "the array is in a register here");
    }
    element = info.element;
  } else if (tag == DW_TAG_pointer_type) {
    element = type_of(&*bare);
    if (!load_value(walk.fetch)) {
      return error(ErrorKind::kUnsupported, index, "the pointer is a constant");
    }
  } else {
    return error(ErrorKind::kNotPointer, index,
                 type_name(walk.type) + " is neither an array nor a pointer");
  }
  const uint64_t size = type_size(element);
  if (size == 0) {
    return error(ErrorKind::kUnsupported, index,
                 "the elements of " + type_name(walk.type) + " have no size");
  }
  walk.fetch.at += step.index * static_cast<int64_t>(size);
  walk.type = element;
  walk.fetch.shape = describe_type(walk.type);
  return {};
}

// A C++ reference is the object it refers to: followed at once, as gdb
// prints `int& n` as the int.
Result<void, VariableError> through_references(Walk& walk, int index) {
  for (int depth = 0; depth < 8; ++depth) {
    std::optional<Dwarf_Die> bare = peeled(walk.type);
    const int tag = bare ? dwarf_tag(&*bare) : 0;
    if (tag != DW_TAG_reference_type && tag != DW_TAG_rvalue_reference_type) return {};
    if (!load_value(walk.fetch))
      return error(ErrorKind::kUnsupported, index, "a constant reference");
    walk.type = type_of(&*bare);
    walk.fetch.shape = describe_type(walk.type);
  }
  return error(ErrorKind::kUnsupported, index, "references to references");
}

Result<void, VariableError> follow(Walk& walk, const PathStep& step, int index) {
  std::optional<Dwarf_Die> bare = peeled(walk.type);
  const int tag = bare ? dwarf_tag(&*bare) : 0;
  const bool pointer = tag == DW_TAG_pointer_type;
  switch (step.kind) {
    case PathStep::kArrow:
      if (!pointer && is_record(tag)) {
        return error(ErrorKind::kNeedArrow, index,
                     type_name(walk.type) + " is not a pointer: its members are reached with '.'");
      }
      return follow_member(walk, step, index, /*through_pointer=*/true);
    case PathStep::kDot:
      if (pointer) {
        return error(ErrorKind::kNeedArrow, index,
                     type_name(walk.type) + " is a pointer: its members are reached with '->'");
      }
      return follow_member(walk, step, index, /*through_pointer=*/false);
    case PathStep::kIndex:
      return follow_index(walk, step, index);
  }
  return {};
}

std::vector<std::string> names_in_scope(const Scopes& scopes) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (Dwarf_Die& scope : lookup_scopes(scopes)) {
    for_each_variable(scope, [&](Dwarf_Die& die) {
      if (seen.insert(dwarf_diename(&die)).second) names.push_back(dwarf_diename(&die));
    });
  }
  return names;
}

}  // namespace

Result<VariableFetch, VariableError> find_variable(const DebugInfo& info, uint64_t address,
                                                   const VariablePath& path) {
  auto scopes = scopes_at(info.dwarf(), address);
  if (!scopes) {
    return error(ErrorKind::kNoScope, -1, "no function in the debug information holds the address");
  }
  auto variable = find_in_scopes(*scopes, path.name);
  if (!variable) {
    VariableError failure{ErrorKind::kNotFound, -1, "no variable '" + path.name + "' in scope here",
                          names_in_scope(*scopes)};
    return unexpected(std::move(failure));
  }
  auto place = locate(info, *variable, scopes->subprogram, address, path.name);
  if (!place) return unexpected(place.error());
  Walk walk;
  walk.fetch.base = place->base;
  walk.fetch.dwarf_reg = place->reg;
  walk.fetch.address = place->address;
  walk.fetch.constant = place->constant;
  walk.fetch.in_memory = place->in_memory;
  walk.fetch.at = place->at;
  walk.fetch.plus = place->plus;
  walk.type = type_of(&*variable);
  walk.fetch.shape = describe_type(walk.type);
  if (auto referred = through_references(walk, -1); !referred) {
    return unexpected(referred.error());
  }
  for (size_t i = 0; i < path.steps.size(); ++i) {
    const int index = static_cast<int>(i);
    if (auto followed = follow(walk, path.steps[i], index); !followed) {
      return unexpected(followed.error());
    }
    if (auto referred = through_references(walk, index); !referred) {
      return unexpected(referred.error());
    }
  }
  return walk.fetch;
}

Result<std::vector<ScopeVariable>> variables_at(const DebugInfo& info, uint64_t address) {
  auto scopes = scopes_at(info.dwarf(), address);
  if (!scopes) return fail("no function in the debug information holds the address");
  std::vector<ScopeVariable> out;
  std::set<std::string> seen;
  auto note = [&](Dwarf_Die& die, bool global) {
    const std::string name = dwarf_diename(&die);
    if (!seen.insert(name).second) return;  // shadowed by an inner one
    ScopeVariable variable{name, type_name(type_of(&die)),
                           dwarf_tag(&die) == DW_TAG_formal_parameter, false, global};
    Dwarf_Attribute attr;
    if (dwarf_attr(&die, DW_AT_location, &attr) != nullptr) {
      variable.available = !expression_at(attr, address).empty();
    } else {
      variable.available = dwarf_hasattr(&die, DW_AT_const_value);
    }
    out.push_back(std::move(variable));
  };
  for (Dwarf_Die& scope : lookup_scopes(*scopes)) {
    for_each_variable(scope, [&](Dwarf_Die& die) { note(die, false); });
  }
  for_each_variable(scopes->cu, [&](Dwarf_Die& die) {
    if (is_global_definition(die)) note(die, true);
  });
  return out;
}

std::optional<FunctionSignature> function_signature(const DebugInfo& info, uint64_t address) {
  auto scopes = scopes_at(info.dwarf(), address);
  if (!scopes) return std::nullopt;
  Dwarf_Die& function = scopes->subprogram;
  FunctionSignature signature;
  signature.returns = describe_type(type_of(&function));
  Dwarf_Die child;
  if (dwarf_child(&function, &child) == 0) {
    do {
      if (dwarf_tag(&child) == DW_TAG_formal_parameter) {
        signature.parameters.push_back(describe_type(type_of(&child)));
      } else if (dwarf_tag(&child) == DW_TAG_unspecified_parameters) {
        signature.variadic = true;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  return signature;
}

namespace {

// Whether a location attribute is a location list (DWARF 4's
// sec_offset, DWARF 5's loclistx) rather than one expression.
bool is_location_list(Dwarf_Die& die) {
  Dwarf_Attribute attr;
  if (dwarf_attr(&die, DW_AT_location, &attr) == nullptr) return false;
  const unsigned form = dwarf_whatform(&attr);
  return form == DW_FORM_sec_offset || form == DW_FORM_loclistx;
}

bool any_location_list(Dwarf_Die& scope) {
  Dwarf_Die child;
  if (dwarf_child(&scope, &child) != 0) return false;
  do {
    const int tag = dwarf_tag(&child);
    if (is_variable(tag) && is_location_list(child)) return true;
    if (is_code_scope(tag) && any_location_list(child)) return true;
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

// GCC's optimized code tracks its variables through the prologue in
// location lists: valid from the first instruction on, as gdb trusts them
// (its "locations_valid"). Other code only describes the frame as it is
// once built.
bool locations_valid_at_entry(Dwarf_Die& unit, Dwarf_Die& function) {
  Dwarf_Attribute attr;
  const char* producer = dwarf_formstring(dwarf_attr(&unit, DW_AT_producer, &attr));
  return producer != nullptr && std::string_view(producer).starts_with("GNU ") &&
         any_location_list(function);
}

}  // namespace

std::optional<uint64_t> after_prologue(const DebugInfo& info, uint64_t entry) {
  auto scopes = scopes_at(info.dwarf(), entry);
  if (!scopes) return std::nullopt;
  Dwarf_Die& function = scopes->dies.back();
  Dwarf_Addr low = 0;
  if (dwarf_tag(&function) != DW_TAG_subprogram || dwarf_lowpc(&function, &low) != 0 ||
      low != entry || locations_valid_at_entry(scopes->cu, function)) {
    return std::nullopt;
  }
  Dwarf_Lines* lines = nullptr;
  size_t count = 0;
  if (dwarf_getsrclines(&scopes->cu, &lines, &count) != 0) return std::nullopt;
  std::optional<uint64_t> marked;
  std::optional<uint64_t> next_line;
  int entry_line = -1;
  for (size_t i = 0; i < count; ++i) {
    Dwarf_Line* row = dwarf_onesrcline(lines, i);
    Dwarf_Addr address = 0;
    int line = 0;
    bool stmt = false;
    bool prologue_end = false;
    if (dwarf_lineaddr(row, &address) != 0 || dwarf_lineno(row, &line) != 0 ||
        dwarf_linebeginstatement(row, &stmt) != 0 || dwarf_haspc(&function, address) <= 0) {
      continue;
    }
    dwarf_lineprologueend(row, &prologue_end);
    if (address == entry && entry_line < 0) entry_line = line;
    if (address <= entry) continue;
    if (prologue_end && (!marked || address < *marked)) marked = address;
    if (stmt && line != 0 && entry_line >= 0 && line != entry_line &&
        (!next_line || address < *next_line)) {
      next_line = address;
    }
  }
  return marked ? marked : next_line;
}

}  // namespace dprobe::symbols
