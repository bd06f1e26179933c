// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Checks a parsed definition against the ELF objects it names, before any
// process exists: the object is found the way the dynamic loader would find
// it for the executable, the symbol exists, is unique and holds the offset,
// and a wildcard expands to one definition per matching function. A point
// named by source (FUNC:RLN, SRC:ALN, FUNC@SRC) becomes one definition per
// block of code the DWARF gives it, and source variables in the arguments
// become the fetches they are at each one's address.
//
//   TargetResolver resolver("/usr/bin/sqlite3");
//   auto defs = resolver.resolve(std::move(def));  // one, or many for "str*"
#ifndef DPROBE_CLI_PLAN_TARGET_RESOLVER_H_
#define DPROBE_CLI_PLAN_TARGET_RESOLVER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "lang/definition.h"
#include "symbols/debug_info.h"
#include "symbols/elf_file.h"
#include "symbols/object_resolver.h"
#include "symbols/symbol_table.h"

namespace dprobe::cli {

// An ELF file opened once, with its symbol table.
struct LoadedObject {
  symbols::ElfFile elf;
  symbols::SymbolTable table;
  std::vector<symbols::FunctionSymbol> variables;  // for @SYM fetches
  // Its DWARF, opened the first time a source place or variable needs it
  // (a cache: mutable).
  mutable std::optional<symbols::DebugInfo> debug = {};
  mutable std::string no_debug = {};  // why there is none
  mutable bool debug_tried = false;
};

class TargetResolver {
 public:
  explicit TargetResolver(std::string executable);

  Result<std::vector<lang::Definition>, lang::ProbeError> resolve(lang::Definition def);

  // The object a definition's OBJ names (the executable when empty).
  Result<const LoadedObject*, symbols::LookupError> load(const std::string& object);

 private:
  Result<std::vector<lang::Definition>, lang::ProbeError> resolve_target(lang::Definition def);
  Result<std::vector<lang::Definition>, lang::ProbeError> resolve_symbol(lang::Definition def);
  Result<std::vector<lang::Definition>, lang::ProbeError> resolve_source(lang::Definition def);
  Result<void, lang::ProbeError> resolve_variables_of(lang::Definition& def);
  Result<void, lang::ProbeError> apply_signature_of(lang::Definition& def);
  Result<uint64_t, lang::ProbeError> link_address_of(const lang::Definition& def,
                                                     const LoadedObject& object);
  static const symbols::DebugInfo* debug_info(const LoadedObject& object);
  // The soname of the first library of the executable's closure that
  // defines `symbol`, "" if none does.
  std::string library_defining(const std::string& symbol);
  Result<std::vector<lang::Definition>, lang::ProbeError> expand_wildcard(
      lang::Definition def, const LoadedObject& object);
  Result<void, lang::ProbeError> check_address(const lang::Definition& def);

  std::string executable_;
  symbols::ObjectResolver objects_;
  std::map<std::string, std::string> paths_;  // object as named -> its file
  std::map<std::string, std::unique_ptr<LoadedObject>> cache_;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_TARGET_RESOLVER_H_
