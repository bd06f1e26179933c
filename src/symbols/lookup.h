// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Turns the SYM+OFFS of a probe definition into a probe address: the
// function must exist, be unique, contain the offset and lie in executable
// code. Errors carry what the CLI needs to explain the refusal.
//
//   auto where = resolve_symbol(elf, table, "malloc", 4);
//   if (!where) { print(describe(where.error().kind), where.error().candidates); }
//   else arm(where->address, where->file_offset);
#ifndef DPROBE_SYMBOLS_LOOKUP_H_
#define DPROBE_SYMBOLS_LOOKUP_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "symbols/elf_file.h"
#include "symbols/lookup_error.h"
#include "symbols/symbol_table.h"

namespace dprobe::symbols {

struct ResolvedSymbol {
  FunctionSymbol sym;
  uint64_t address;      // sym.address + offset, link-time virtual address
  uint64_t file_offset;  // where that byte lies in the file (for uprobe-style PATH:0xOFFS)
};

// Offsets past a size-0 symbol's start are accepted: its extent is unknown,
// so only the executable-segment check guards them.
Result<ResolvedSymbol, LookupError> resolve_symbol(const ElfFile& elf, const SymbolTable& table,
                                                   std::string_view name, int64_t offset);

// "name@0x1234 (size 0x20)": how a kNotUnique candidate is listed; a C++
// function as "ns::f(int) [_ZN2ns1fEi@0x1234 (size 0x20)]".
std::string candidate_line(const FunctionSymbol& function);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_LOOKUP_H_
