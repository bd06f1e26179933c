// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/symbol_table.h"

#include <algorithm>
#include <tuple>

#include "base/strings.h"

namespace dprobe::symbols {
namespace {

bool by_address_then_name(const FunctionSymbol& a, const FunctionSymbol& b) {
  return std::tie(a.address, a.name) < std::tie(b.address, b.name);
}

bool by_name_then_address(const FunctionSymbol& a, const FunctionSymbol& b) {
  return std::tie(a.name, a.address) < std::tie(b.name, b.address);
}

// Clang 14 cannot use libstdc++'s std::ranges::subrange, so the searches
// below take classic comparators that compare a symbol with a key.
struct NameLess {
  bool operator()(const FunctionSymbol& f, std::string_view name) const { return f.name < name; }
  bool operator()(std::string_view name, const FunctionSymbol& f) const { return name < f.name; }
};

bool contains(const FunctionSymbol& f, uint64_t vaddr) {
  if (f.size == 0) return vaddr == f.address;
  return vaddr >= f.address && vaddr - f.address < f.size;
}

size_t leading_underscores(std::string_view name) {
  const size_t n = name.find_first_not_of('_');
  return n == std::string_view::npos ? name.size() : n;
}

// True when `a` names the spot better than `b`, as perf's choose_best_symbol:
// __libc_malloc and malloc share an address, and users wrote "malloc".
bool better_name(const FunctionSymbol& a, const FunctionSymbol& b) {
  if (a.address != b.address) return a.address > b.address;
  if (a.is_global != b.is_global) return a.is_global;
  const size_t ua = leading_underscores(a.name);
  const size_t ub = leading_underscores(b.name);
  if (ua != ub) return ua < ub;
  return a.name < b.name;
}

// The literal text before the first wildcard: every match starts with it.
std::string_view literal_prefix(std::string_view glob) {
  return glob.substr(0, glob.find_first_of("*?"));
}

}  // namespace

SymbolTable::SymbolTable(const ElfFile& elf) : SymbolTable(elf.functions()) {}

SymbolTable::SymbolTable(std::vector<FunctionSymbol> functions)
    : by_address_(std::move(functions)) {
  std::sort(by_address_.begin(), by_address_.end(), by_address_then_name);
  by_name_ = by_address_;
  std::sort(by_name_.begin(), by_name_.end(), by_name_then_address);
  max_end_.reserve(by_address_.size());
  uint64_t end = 0;
  for (const FunctionSymbol& f : by_address_) {
    end = std::max(end, f.address + std::max<uint64_t>(f.size, 1));
    max_end_.push_back(end);
  }
}

std::span<const FunctionSymbol> SymbolTable::find(std::string_view name) const {
  const auto [first, last] = std::equal_range(by_name_.begin(), by_name_.end(), name, NameLess{});
  return {first, last};
}

std::vector<const FunctionSymbol*> SymbolTable::match(std::string_view glob) const {
  const std::string_view prefix = literal_prefix(glob);
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), prefix, NameLess{});
  std::vector<const FunctionSymbol*> out;
  for (; it != by_name_.end() && std::string_view(it->name).starts_with(prefix); ++it) {
    if (glob_match(glob, it->name)) out.push_back(&*it);
  }
  return out;
}

std::optional<SymbolizedAddress> SymbolTable::symbolize(uint64_t vaddr) const {
  const auto after =
      std::upper_bound(by_address_.begin(), by_address_.end(), vaddr,
                       [](uint64_t v, const FunctionSymbol& f) { return v < f.address; });
  const FunctionSymbol* best = nullptr;
  for (auto i = static_cast<size_t>(after - by_address_.begin()); i-- > 0;) {
    const FunctionSymbol& f = by_address_[i];
    if (f.address != vaddr && max_end_[i] <= vaddr) break;  // nothing earlier reaches vaddr
    if (contains(f, vaddr) && (best == nullptr || better_name(f, *best))) best = &f;
  }
  if (best == nullptr) return std::nullopt;
  return SymbolizedAddress{best, vaddr - best->address};
}

}  // namespace dprobe::symbols
