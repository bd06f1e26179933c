// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Source variables in fetch arguments (it->name, depth, $params, $vars),
// turned into the kernel's fetch arguments at the probe's address, as
// perf probe turns them into the uprobe_events line it writes: the DWARF
// says where each is there (symbols/dwarf_variables.h), and that is
// written as registers, dereferences and offsets, then compiled as if the
// user had written it:
//
//   name=it->name   ->   name=+0(+8(%di)):string
//   depth           ->   depth=-20(%bp):s32
//
//   VariableScope scope{&info, "", &object.variables, "", 0x1149, arch::host_isa()};
//   if (auto done = resolve_variables(def, scope); !done) report(done.error());
#ifndef DPROBE_CLI_PLAN_VARIABLE_ARGS_H_
#define DPROBE_CLI_PLAN_VARIABLE_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "arch/isa.h"
#include "base/result.h"
#include "lang/definition.h"
#include "symbols/debug_info.h"
#include "symbols/dwarf_variables.h"
#include "symbols/elf_file.h"

namespace dprobe::cli {

struct VariableScope {
  const symbols::DebugInfo* info = nullptr;                       // null: the object has none,
  std::string no_info;                                            // and why
  const std::vector<symbols::FunctionSymbol>* globals = nullptr;  // for @SYM
  std::string object;    // the definition's OBJ ("" for the executable)
  uint64_t address = 0;  // the probe's link-time address
  arch::Isa isa = arch::host_isa();
};

bool has_variable_args(const lang::Definition& def);

Result<void, lang::ProbeError> resolve_variables(lang::Definition& def, const VariableScope& scope);

// The fetch argument text of a value the DWARF located, typed `type` (the
// DWARF's own type when empty); an error text when it cannot be written.
Result<std::string> variable_fetch_text(const symbols::VariableFetch& fetch,
                                        const std::string& type, const VariableScope& scope);

// The type a value of `shape` is fetched as by default ("s32", "string",
// "u8[16]", "b3@2/8"); empty when it has none to fetch as.
std::string default_fetch_type(const symbols::ValueShape& shape);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_VARIABLE_ARGS_H_
