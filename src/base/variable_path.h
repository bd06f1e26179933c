// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A source variable and a path through its type, as perf probe and the
// kernel's BTF arguments write it: VAR, then any chain of ->MEMBER,
// .MEMBER and [N]. One type for the two layers that meet over it: the
// language parses it from a fetch argument (lang/variable_path.h), the
// symbols layer follows it through the DWARF (symbols/dwarf_variables.h).
// Here, in base, because those two layers may not include each other.
//
//   VariablePath path{"it", {{PathStep::kArrow, "name", 0, 4}}};   // it->name
#ifndef DPROBE_BASE_VARIABLE_PATH_H_
#define DPROBE_BASE_VARIABLE_PATH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dprobe {

struct PathStep {
  enum Kind : uint8_t { kArrow, kDot, kIndex };
  Kind kind;
  std::string member;  // kArrow, kDot
  int64_t index = 0;   // kIndex
  // Where the member's name, or the index, stands in the text it was
  // parsed from (for an error's caret); 0 when it was not parsed.
  size_t column = 0;
};

struct VariablePath {
  std::string name;
  std::vector<PathStep> steps;
};

}  // namespace dprobe

#endif  // DPROBE_BASE_VARIABLE_PATH_H_
