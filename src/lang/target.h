// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The probe point word: [OBJ:]SYM[+|-OFFS], 0xADDR, OBJ:0xADDR or
// PATH:0xOFFSET, each optionally followed by %return.
//
// SYM may be a C++ name as the demangler prints it: a word holding "::" or
// '(' is one ("ns::Klass::method(int)", "libfoo.so:ns::f(int)+4"). Its
// object ends at the last ':' before the first "::" or '('; its offset is a
// trailing +N or -N that reads as a number, so "operator-" keeps its '-'.
//
//   auto t = parse_target("libc.so.6:malloc+4", /*column=*/9);
//   t->target.symbol;  // "malloc", t->target.offset == 4
#ifndef DPROBE_LANG_TARGET_H_
#define DPROBE_LANG_TARGET_H_

#include <string_view>

#include "core/probe_point.h"
#include "lang/parse_fault.h"

namespace dprobe::lang {

struct ParsedTarget {
  core::ProbeTarget target;
  bool has_return_suffix = false;
  size_t symbol_column = 0;  // where SYM (or the address) starts
};

Parsed<ParsedTarget> parse_target(std::string_view word, size_t column);

// Where the ':' ending OBJ in "[OBJ:]SYM" is, npos when there is no object.
size_t object_separator(std::string_view word);

// An object named by path is a file; otherwise a soname or basename.
inline bool is_path(std::string_view object) { return object.find('/') != std::string_view::npos; }

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_TARGET_H_
