// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A source variable in a fetch argument, as perf probe and the kernel's BTF
// arguments write it: VAR, then any chain of ->MEMBER, .MEMBER and [N]
// (the type: base/variable_path.h). Only the syntax is here; what it names
// is found in the DWARF once the probe's address is known
// (cli/plan/variable_args.h).
//
//   auto path = parse_variable_path("it->name", 30);
//   path->name == "it"; path->steps[0] == {kArrow, "name", 0, 34}
#ifndef DPROBE_LANG_VARIABLE_PATH_H_
#define DPROBE_LANG_VARIABLE_PATH_H_

#include <string>
#include <string_view>

#include "base/variable_path.h"
#include "lang/parse_fault.h"

namespace dprobe::lang {

// The type is base's, shared with the symbols layer that follows it.
using dprobe::PathStep;
using dprobe::VariablePath;

// Whether a fetch expression names a source variable (starts as a C
// identifier does), rather than a register, a $-variable or memory.
bool is_variable_path(std::string_view expr);

Parsed<VariablePath> parse_variable_path(std::string_view expr, size_t column);

// The argument name a variable path gets when none is written: its words
// joined by '_' ("it->name" -> "it_name", "v[2].x" -> "v_2_x").
std::string variable_path_arg_name(std::string_view expr);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_VARIABLE_PATH_H_
