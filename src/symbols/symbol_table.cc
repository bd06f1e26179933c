// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/symbol_table.h"

#include <cxxabi.h>
#include <demangle.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <tuple>

#include "base/cxx_names.h"
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

// True when `a` names the spot better than `b`: the innermost function, then
// the better of two aliases.
bool better_name(const FunctionSymbol& a, const FunctionSymbol& b) {
  if (a.address != b.address) return a.address > b.address;
  return is_better_alias(a, b);
}

// The literal text before the first wildcard: every match starts with it.
std::string_view literal_prefix(std::string_view glob) {
  return glob.substr(0, glob.find_first_of("*?"));
}

// A Rust function's path (`calls::fib`, `<T as Trait>::f`), by libiberty's
// demangler: v0 names (_R...) and the legacy ones, which are C++ names
// ending in a hash (`..17h<16 hex digits>E`) that rustc adds and no
// source names: it goes, as rustc-demangle's alternate form drops it.
std::string demangle_rust(const std::string& name) {
  char* text = cplus_demangle(name.c_str(), DMGL_RUST);
  std::string out = text != nullptr ? text : "";
  std::free(text);  // NOLINT: libiberty's buffer comes from malloc
  return out;
}

}  // namespace

std::string demangle_name(const std::string& name) {
  if (name.starts_with("_R") || name.starts_with("_ZN")) {
    if (std::string rust = demangle_rust(name); !rust.empty()) return rust;
  }
  if (!name.starts_with("_Z")) return {};
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && text != nullptr ? text : "";
  std::free(text);  // NOLINT: __cxa_demangle's buffer comes from malloc
  return out;
}

namespace {

// Functions a C++ name finds: not thunks, guard variables or transaction
// clones ("_ZT", "_ZG"), nor the outlined parts of another function.
bool is_named_function(const FunctionSymbol& f) {
  if (f.demangled.empty() || f.name.starts_with("_ZT") || f.name.starts_with("_ZG")) return false;
  return f.demangled.find(" [clone ") == std::string::npos;
}

using KeyIndex = std::vector<std::pair<std::string, size_t>>;

std::vector<size_t> indices_with_key(const KeyIndex& index, const std::string& key) {
  const auto first =
      std::lower_bound(index.begin(), index.end(), key,
                       [](const auto& entry, const std::string& k) { return entry.first < k; });
  std::vector<size_t> out;
  for (auto it = first; it != index.end() && it->first == key; ++it) out.push_back(it->second);
  return out;
}

bool matches_source(std::string_view glob, const FunctionSymbol& f) {
  if (glob_match(glob, f.demangled)) return true;
  const CxxName parts = split_cxx_name(f.demangled);
  if (parts.qualified.empty()) return false;
  // "ns::f(int) const" without a return type: from the name to the end.
  const std::string_view tail = parts.params.empty() ? parts.qualified : parts.params;
  const std::string_view signature(
      parts.qualified.data(),
      static_cast<size_t>(tail.data() + tail.size() - parts.qualified.data()));
  return glob_match(glob, signature);
}

}  // namespace

// As perf's choose_best_symbol: __libc_malloc and malloc share an address,
// and users wrote "malloc"; cfree is free's compatibility alias.
bool is_better_alias(const FunctionSymbol& a, const FunctionSymbol& b) {
  if (a.is_global != b.is_global) return a.is_global;
  if (a.is_compat_version != b.is_compat_version) return !a.is_compat_version;
  const size_t ua = leading_underscores(a.name);
  const size_t ub = leading_underscores(b.name);
  if (ua != ub) return ua < ub;
  return a.name < b.name;
}

SymbolTable::SymbolTable(const ElfFile& elf) : SymbolTable(elf.functions()) {}

SymbolTable::SymbolTable(std::vector<FunctionSymbol> functions)
    : by_address_(std::move(functions)) {
  std::sort(by_address_.begin(), by_address_.end(), by_address_then_name);
  for (FunctionSymbol& f : by_address_) f.demangled = demangle_name(f.name);
  by_name_ = by_address_;
  std::sort(by_name_.begin(), by_name_.end(), by_name_then_address);
  for (size_t i = 0; i < by_name_.size(); ++i) {
    const FunctionSymbol& f = by_name_[i];
    if (f.demangled.empty()) continue;
    demangled_.push_back(i);
    if (!is_named_function(f)) continue;
    const CxxName parts = split_cxx_name(f.demangled);
    if (parts.qualified.empty()) continue;
    by_qualified_.emplace_back(cxx_match_key(parts.qualified), i);
    if (!parts.params.empty()) {
      by_signature_.emplace_back(cxx_match_key(parts.qualified) + cxx_match_key(parts.params), i);
    }
  }
  std::sort(by_qualified_.begin(), by_qualified_.end());
  std::sort(by_signature_.begin(), by_signature_.end());
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

std::vector<const FunctionSymbol*> SymbolTable::find_source(std::string_view name) const {
  const CxxName parts = split_cxx_name(name);
  if (parts.qualified.empty()) return {};
  const std::string key = cxx_match_key(parts.qualified);
  const std::vector<size_t> hits =
      parts.params.empty() ? indices_with_key(by_qualified_, key)
                           : indices_with_key(by_signature_, key + cxx_match_key(parts.params));
  std::vector<const FunctionSymbol*> out;
  for (const size_t i : hits) out.push_back(&by_name_[i]);
  std::sort(out.begin(), out.end(), [](const FunctionSymbol* a, const FunctionSymbol* b) {
    return by_address_then_name(*a, *b);
  });
  return out;
}

std::vector<const FunctionSymbol*> SymbolTable::lookup(std::string_view name) const {
  std::vector<const FunctionSymbol*> out;
  for (const FunctionSymbol& f : find(name)) out.push_back(&f);
  if (out.empty()) return find_source(name);
  return out;
}

std::vector<const FunctionSymbol*> SymbolTable::match(std::string_view glob) const {
  const std::string_view prefix = literal_prefix(glob);
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), prefix, NameLess{});
  std::vector<const FunctionSymbol*> out;
  for (; it != by_name_.end() && std::string_view(it->name).starts_with(prefix); ++it) {
    if (glob_match(glob, it->name)) out.push_back(&*it);
  }
  // C++ functions by source name; by_name_ order is kept by merging indices.
  std::vector<const FunctionSymbol*> source;
  for (const size_t i : demangled_) {
    const FunctionSymbol& f = by_name_[i];
    if (!glob_match(glob, f.name) && matches_source(glob, f)) source.push_back(&f);
  }
  if (source.empty()) return out;
  std::vector<const FunctionSymbol*> merged;
  merged.reserve(out.size() + source.size());
  std::merge(out.begin(), out.end(), source.begin(), source.end(), std::back_inserter(merged));
  return merged;
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
