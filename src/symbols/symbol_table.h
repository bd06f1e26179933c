// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Lookups over the functions of one ELF file: by exact name, by glob, and
// from an address back to "function+offset" (for the `symbol` fetch type
// and the "(sym+0x10/0x40)" of a trace line).
//
//   SymbolTable table(elf);
//   std::span<const FunctionSymbol> hits = table.find("helper");  // may be several
//   for (const FunctionSymbol* f : table.match("str*cmp")) ...
//   if (auto where = table.symbolize(vaddr)) print(where->function->name, where->offset);
//   table.lookup("ns::Klass::method(int)");  // by C++ source name as well
//
// C++ names are demangled once, here: every FunctionSymbol of the table
// carries its source name in `demangled` next to the linker's `name`.
#ifndef DPROBE_SYMBOLS_SYMBOL_TABLE_H_
#define DPROBE_SYMBOLS_SYMBOL_TABLE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "symbols/elf_file.h"

namespace dprobe::symbols {

struct SymbolizedAddress {
  const FunctionSymbol* function;  // points into the SymbolTable
  uint64_t offset;                 // vaddr - function->address
};

class SymbolTable {
 public:
  explicit SymbolTable(const ElfFile& elf);
  explicit SymbolTable(std::vector<FunctionSymbol> functions);

  // Every function with exactly this name, ordered by address; several when
  // static functions of different translation units share a name.
  std::span<const FunctionSymbol> find(std::string_view name) const;
  // Functions by C++ source name: "ns::f(int)" names one overload (the
  // parameter list as the demangler prints it, spaces aside), "ns::f" every
  // overload. A template function may be named with or without its return
  // type. Outlined parts ("[clone .cold]") and thunks are not found here.
  std::vector<const FunctionSymbol*> find_source(std::string_view name) const;
  // find() by the linker's name, else find_source(); sorted by address.
  std::vector<const FunctionSymbol*> lookup(std::string_view name) const;
  // Functions whose name matches a '*'/'?' glob, one per (name, address),
  // sorted by name then address. A C++ function matches by its linker name,
  // its demangled name, or that name without the return type ("ns::*").
  std::vector<const FunctionSymbol*> match(std::string_view glob) const;
  // The function containing vaddr (a size-0 symbol contains only its own
  // address). Among several, the innermost wins, then a global name over a
  // local alias, then the name with fewer leading underscores.
  std::optional<SymbolizedAddress> symbolize(uint64_t vaddr) const;

  // All functions, sorted by address then name.
  std::span<const FunctionSymbol> functions() const { return by_address_; }

 private:
  std::vector<FunctionSymbol> by_address_;
  std::vector<FunctionSymbol> by_name_;
  // max_end_[i]: the largest address + size among by_address_[0..i]; it
  // bounds how far back symbolize() must look for an enclosing function.
  std::vector<uint64_t> max_end_;
  // (cxx_match_key of the source name, index in by_name_), sorted: with the
  // parameter list, and without it.
  std::vector<std::pair<std::string, size_t>> by_signature_;
  std::vector<std::pair<std::string, size_t>> by_qualified_;
  std::vector<size_t> demangled_;  // indices in by_name_ of C++ functions
};

// Of two names at one address, whether `a` is the one to show and to name
// an event by: a global name over a local one, the default version over a
// compatibility one, fewer leading underscores, then the first by name.
bool is_better_alias(const FunctionSymbol& a, const FunctionSymbol& b);

// The source name of a mangled symbol: C++ (`ns::f(int)`) by the C++
// runtime's demangler, Rust (`calls::fib`, legacy names without their
// hash, and v0 names) by libiberty's; empty for a name neither takes.
std::string demangle_name(const std::string& mangled);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_SYMBOL_TABLE_H_
