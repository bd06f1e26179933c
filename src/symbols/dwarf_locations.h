// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Where a variable's DWARF location puts it at a code address, for
// dwarf_variables.cc: the expression that holds there (location lists
// honoured), read as the shapes compilers give variables (a register, a
// register plus an offset, an address, a constant, the frame base plus an
// offset), the frame base found through the call frame information.
// Internal to the symbols layer: it speaks libdw.
#ifndef DPROBE_SYMBOLS_DWARF_LOCATIONS_H_
#define DPROBE_SYMBOLS_DWARF_LOCATIONS_H_

#include <elfutils/libdw.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "symbols/debug_info.h"
#include "symbols/dwarf_variables.h"

namespace dprobe::symbols {

// The expression of `attr` that holds at pc: one of a location list's, or
// the single one. Empty: none holds there.
std::vector<Dwarf_Op> expression_at(Dwarf_Attribute& attr, uint64_t pc);

// Where a location expression puts the object (or its value).
struct Place {
  VariableFetch::Base base = VariableFetch::Base::kRegister;
  unsigned reg = 0;
  uint64_t address = 0;
  int64_t constant = 0;
  bool in_memory = false;
  int64_t at = 0;
  int64_t plus = 0;  // a computed value: the register's plus this
};

// Where `variable` (of `function`) is at pc; kOptimizedOut when its
// location says nothing there. `name` is for the error.
Result<Place, VariableError> locate(const DebugInfo& info, Dwarf_Die& variable, Dwarf_Die& function,
                                    uint64_t pc, const std::string& name);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_DWARF_LOCATIONS_H_
