// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// ElfFile::functions(): the function symbols of .symtab and .dynsym merged
// into one list, since a stripped file has only .dynsym and an unstripped
// one repeats every exported function in both.
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <string_view>
#include <tuple>

#include "symbols/elf_file.h"

namespace dprobe::symbols {
namespace {

// Since binutils 2.35 ld writes versions into .symtab names as well
// ("memcpy@GLIBC_2.2.5"); the version is not part of the function's name.
std::string_view without_version(const char* name) {
  const std::string_view text(name);
  return text.substr(0, text.find('@'));
}

bool is_defined_function(const GElf_Sym& sym) {
  const unsigned type = GELF_ST_TYPE(sym.st_info);
  if (type != STT_FUNC && type != STT_GNU_IFUNC) return false;
  return sym.st_shndx != SHN_UNDEF && sym.st_value != 0;
}

// Variables at a fixed link-time address (thread-locals have none).
bool is_defined_variable(const GElf_Sym& sym) {
  if (GELF_ST_TYPE(sym.st_info) != STT_OBJECT) return false;
  return sym.st_shndx != SHN_UNDEF && sym.st_shndx != SHN_COMMON && sym.st_value != 0;
}

using SymbolFilter = bool (*)(const GElf_Sym&);

// .symtab spells a compatibility version with one '@', the default with two.
bool names_compat_version(std::string_view name) {
  const size_t at = name.find('@');
  return at != std::string_view::npos && name.substr(at, 2) != "@@";
}

// .dynsym's versions are in the parallel SHT_GNU_versym table: an entry with
// the hidden bit names a compatibility version.
Elf_Data* version_table(Elf* elf, const GElf_Shdr& symbols) {
  if (symbols.sh_type != SHT_DYNSYM) return nullptr;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) != nullptr && shdr.sh_type == SHT_GNU_versym) {
      return elf_getdata(scn, nullptr);
    }
  }
  return nullptr;
}

bool hidden_version(Elf_Data* versions, size_t index) {
  constexpr GElf_Versym kHidden = 0x8000;
  GElf_Versym version = 0;
  if (versions == nullptr || gelf_getversym(versions, static_cast<int>(index), &version) == nullptr)
    return false;
  return (version & kHidden) != 0;
}

void collect_symbols(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, SymbolFilter wanted,
                     std::vector<FunctionSymbol>& out) {
  Elf_Data* versions = version_table(elf, shdr);
  Elf_Data* data = elf_getdata(scn, nullptr);
  const size_t entry_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  if (data == nullptr || entry_size == 0) return;
  const size_t count = data->d_size / entry_size;
  for (size_t i = 1; i < count; ++i) {  // entry 0 is the reserved null symbol
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr || !wanted(sym)) {
      continue;
    }
    const char* raw = elf_strptr(elf, shdr.sh_link, sym.st_name);
    if (raw == nullptr || *raw == '\0') continue;
    out.push_back({std::string(without_version(raw)), sym.st_value, sym.st_size,
                   GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC,
                   GELF_ST_BIND(sym.st_info) != STB_LOCAL,
                   names_compat_version(raw) || hidden_version(versions, i)});
  }
}

// Sorts by (address, name) and folds repeats into one entry that keeps the
// strongest facts either table had: a size, ifunc-ness, global binding, a
// default version.
void merge_repeats(std::vector<FunctionSymbol>& functions) {
  const auto key = [](const FunctionSymbol& f) { return std::tie(f.address, f.name); };
  std::sort(functions.begin(), functions.end(),
            [&](const FunctionSymbol& a, const FunctionSymbol& b) { return key(a) < key(b); });
  std::vector<FunctionSymbol> merged;
  merged.reserve(functions.size());
  for (FunctionSymbol& f : functions) {
    if (!merged.empty() && key(merged.back()) == key(f)) {
      FunctionSymbol& kept = merged.back();
      kept.size = std::max(kept.size, f.size);
      kept.is_ifunc = kept.is_ifunc || f.is_ifunc;
      kept.is_global = kept.is_global || f.is_global;
      kept.is_compat_version = kept.is_compat_version && f.is_compat_version;
    } else {
      merged.push_back(std::move(f));
    }
  }
  functions = std::move(merged);
}

std::vector<FunctionSymbol> collect_all(Elf* elf, SymbolFilter wanted) {
  std::vector<FunctionSymbol> out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    if (shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM) {
      collect_symbols(elf, scn, shdr, wanted, out);
    }
  }
  merge_repeats(out);
  return out;
}

}  // namespace

std::vector<FunctionSymbol> ElfFile::functions() const {
  return collect_all(elf_, is_defined_function);
}

std::vector<FunctionSymbol> ElfFile::variables() const {
  return collect_all(elf_, is_defined_variable);
}

}  // namespace dprobe::symbols
