// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/dwarf_locations.h"

#include <dwarf.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

namespace dprobe::symbols {
namespace {

using ErrorKind = VariableError::Kind;

Unexpected<VariableError> error(ErrorKind kind, int step, std::string detail) {
  return unexpected(VariableError{kind, step, std::move(detail), {}});
}

std::string op_name(unsigned atom) {
  const char* name = nullptr;
  switch (atom) {
    case DW_OP_piece:
      name = "DW_OP_piece (a variable in pieces)";
      break;
    case DW_OP_entry_value:
    case DW_OP_GNU_entry_value:
      name = "DW_OP_entry_value (the value it had at the call)";
      break;
    case DW_OP_implicit_pointer:
    case DW_OP_GNU_implicit_pointer:
      name = "DW_OP_implicit_pointer (a pointer to an optimized-out object)";
      break;
    case DW_OP_stack_value:
      name = "DW_OP_stack_value (a computed value)";
      break;
    default:
      break;
  }
  if (name != nullptr) return name;
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "DW_OP 0x%x", atom);
  return buffer;
}

// The canonical frame address at pc, as register + offset, from the
// object's call frame information (.eh_frame, else .debug_frame).
std::optional<Place> cfa_at(const DebugInfo& info, uint64_t pc) {
  for (Dwarf_CFI* cfi : {dwarf_getcfi_elf(info.object_elf()), dwarf_getcfi(info.dwarf())}) {
    if (cfi == nullptr) continue;
    Dwarf_Frame* frame = nullptr;
    if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0) continue;
    Dwarf_Op* ops = nullptr;
    size_t count = 0;
    std::optional<Place> cfa;
    if (dwarf_frame_cfa(frame, &ops, &count) == 0 && count == 1) {
      const unsigned atom = ops[0].atom;
      if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
        cfa = Place{VariableFetch::Base::kRegister,
                    static_cast<unsigned>(atom - DW_OP_breg0),
                    0,
                    0,
                    false,
                    static_cast<int64_t>(ops[0].number)};
      } else if (atom == DW_OP_bregx) {
        cfa = Place{
            VariableFetch::Base::kRegister,      static_cast<unsigned>(ops[0].number), 0, 0, false,
            static_cast<int64_t>(ops[0].number2)};
      }
    }
    std::free(frame);
    if (cfa) return cfa;
  }
  return std::nullopt;
}

// The function's frame base at pc, as a register + offset (an address).
Result<Place, VariableError> frame_base(const DebugInfo& info, Dwarf_Die& function, uint64_t pc) {
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(&function, DW_AT_frame_base, &attr) == nullptr) {
    return error(ErrorKind::kUnsupported, -1, "its function has no frame base");
  }
  const std::vector<Dwarf_Op> ops = expression_at(attr, pc);
  if (ops.size() == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
    auto cfa = cfa_at(info, pc);
    if (!cfa) return error(ErrorKind::kUnsupported, -1, "no call frame information at the address");
    return *cfa;
  }
  if (ops.size() == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
    return Place{VariableFetch::Base::kRegister,
                 static_cast<unsigned>(ops[0].atom - DW_OP_breg0),
                 0,
                 0,
                 false,
                 static_cast<int64_t>(ops[0].number)};
  }
  if (ops.size() == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
    return Place{VariableFetch::Base::kRegister,
                 static_cast<unsigned>(ops[0].atom - DW_OP_reg0),
                 0,
                 0,
                 false,
                 0};
  }
  return error(ErrorKind::kUnsupported, -1, "its function's frame base is not a register");
}

// Reads a location expression of the shapes compilers give variables.
Result<Place, VariableError> place_of(const DebugInfo& info, Dwarf_Attribute& attr,
                                      const std::vector<Dwarf_Op>& ops, Dwarf_Die& function,
                                      uint64_t pc) {
  using Base = VariableFetch::Base;
  const unsigned atom = ops[0].atom;
  const auto number = static_cast<int64_t>(ops[0].number);
  if (ops.size() == 2 && ops[1].atom == DW_OP_stack_value) {
    if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
      return Place{Base::kRegister, static_cast<unsigned>(atom - DW_OP_breg0), 0, 0, false, 0,
                   number};
    }
    if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
      return Place{Base::kConstant, 0, 0, static_cast<int64_t>(atom - DW_OP_lit0), false, 0};
    }
    if (atom == DW_OP_constu || atom == DW_OP_consts ||
        (atom >= DW_OP_const1u && atom <= DW_OP_const8s)) {
      return Place{Base::kConstant, 0, 0, number, false, 0};
    }
  }
  if (ops.size() == 2 && (atom == DW_OP_entry_value || atom == DW_OP_GNU_entry_value) &&
      ops[1].atom == DW_OP_stack_value) {
    // The value a register had on entry: at the entry itself, the register.
    Dwarf_Addr low = 0;
    Dwarf_Attribute inner;
    Dwarf_Op* inner_ops = nullptr;
    size_t inner_count = 0;
    if (dwarf_lowpc(&function, &low) == 0 && low == pc &&
        dwarf_getlocation_attr(&attr, &ops[0], &inner) == 0 &&
        dwarf_getlocation(&inner, &inner_ops, &inner_count) == 0 && inner_count == 1 &&
        inner_ops[0].atom >= DW_OP_reg0 && inner_ops[0].atom <= DW_OP_reg31) {
      return Place{Base::kRegister, static_cast<unsigned>(inner_ops[0].atom - DW_OP_reg0)};
    }
  }
  if (ops.size() != 1) {
    for (const Dwarf_Op& op : ops) {
      if (op.atom == DW_OP_piece || op.atom == DW_OP_entry_value ||
          op.atom == DW_OP_GNU_entry_value || op.atom == DW_OP_implicit_pointer ||
          op.atom == DW_OP_GNU_implicit_pointer || op.atom == DW_OP_stack_value) {
        return error(ErrorKind::kUnsupported, -1, "its location here is " + op_name(op.atom));
      }
    }
    return error(
        ErrorKind::kUnsupported, -1,
        "its location here is an expression of " + std::to_string(ops.size()) + " operations");
  }
  if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31)
    return Place{Base::kRegister, static_cast<unsigned>(atom - DW_OP_reg0)};
  if (atom == DW_OP_regx) return Place{Base::kRegister, static_cast<unsigned>(ops[0].number)};
  if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
    return Place{Base::kRegister, static_cast<unsigned>(atom - DW_OP_breg0), 0, 0, true, number};
  }
  if (atom == DW_OP_bregx) {
    return Place{Base::kRegister,
                 static_cast<unsigned>(ops[0].number),
                 0,
                 0,
                 true,
                 static_cast<int64_t>(ops[0].number2)};
  }
  if (atom == DW_OP_addr) return Place{Base::kAddress, 0, ops[0].number, 0, true, 0};
  if (atom == DW_OP_addrx || atom == DW_OP_GNU_addr_index) {
    // DWARF 5: an index into .debug_addr.
    Dwarf_Attribute indexed;
    Dwarf_Addr address = 0;
    if (dwarf_getlocation_attr(&attr, &ops[0], &indexed) != 0 ||
        dwarf_formaddr(&indexed, &address) != 0) {
      return error(ErrorKind::kUnsupported, -1, "its address (DW_OP_addrx) is not readable");
    }
    return Place{Base::kAddress, 0, address, 0, true, 0};
  }
  if (atom == DW_OP_fbreg) {
    auto base = frame_base(info, function, pc);
    if (!base) return unexpected(base.error());
    if (base->in_memory) {
      return error(ErrorKind::kUnsupported, -1, "its frame base is in memory");
    }
    return Place{Base::kRegister, base->reg, 0, 0, true, base->at + number};
  }
  return error(ErrorKind::kUnsupported, -1, "its location here is " + op_name(atom));
}

}  // namespace

// The expression of `attr` that holds at pc: one of a location list's, or
// the single one. Empty: none holds there.
std::vector<Dwarf_Op> expression_at(Dwarf_Attribute& attr, uint64_t pc) {
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  if (dwarf_getlocation_addr(&attr, pc, &ops, &count, 1) != 1) return {};
  return std::vector<Dwarf_Op>(ops, ops + count);
}

Result<Place, VariableError> locate(const DebugInfo& info, Dwarf_Die& variable, Dwarf_Die& function,
                                    uint64_t pc, const std::string& name) {
  Dwarf_Attribute attr;
  if (dwarf_attr(&variable, DW_AT_location, &attr) != nullptr) {
    const std::vector<Dwarf_Op> ops = expression_at(attr, pc);
    if (!ops.empty()) return place_of(info, attr, ops, function, pc);
  } else if (dwarf_attr(&variable, DW_AT_const_value, &attr) != nullptr) {
    Dwarf_Sword value = 0;
    if (dwarf_formsdata(&attr, &value) == 0) {
      return Place{VariableFetch::Base::kConstant, 0, 0, value, false, 0};
    }
  }
  return error(ErrorKind::kOptimizedOut, -1,
               "Failed to find the location of the '" + name +
                   "' variable at this address. Perhaps it has been optimized out.");
}

}  // namespace dprobe::symbols
