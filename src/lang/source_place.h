// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Probe points named by source, as perf probe names them; the DWARF turns
// them into addresses (cli/plan/target_resolver.cc):
//
//   [OBJ:]FUNC:RLN        line RLN of FUNC, counted from its first line (0)
//   [OBJ:]SRC:ALN         line ALN of the source file SRC (by basename, or
//                         by a path suffix: "lib/prog.c:42")
//   [OBJ:]FUNC@SRC[:RLN]  FUNC of that file (static functions that share a
//                         name), at its entry or at a line
//
// A word is one of these when it ends in ":N" (N decimal) after a C
// identifier or a source file's name, or holds '@' after FUNC; anything
// else is an ordinary target ("libc.so.6:0x1234", "app:0x10" as before).
// Only FUNC@SRC may take %return.
//
//   auto place = parse_source_place("prog.c:42", 9);  // file "prog.c", line 42
#ifndef DPROBE_LANG_SOURCE_PLACE_H_
#define DPROBE_LANG_SOURCE_PLACE_H_

#include <optional>
#include <string>
#include <string_view>

#include "lang/parse_fault.h"

namespace dprobe::lang {

struct SourcePlace {
  std::string function;  // FUNC; empty for SRC:ALN
  std::string file;      // SRC; empty for FUNC:RLN
  int line = -1;         // RLN when function is set, else ALN; -1: FUNC's entry
};

struct ParsedPlace {
  std::string object;  // OBJ, empty for the executable
  SourcePlace place;
  bool has_return_suffix = false;
  size_t place_column = 0;  // where FUNC or SRC starts
};

// nullopt when the word is not a source place at all.
std::optional<Parsed<ParsedPlace>> parse_source_place(std::string_view word, size_t column);

// Whether a path names a source file by its suffix (".c", ".cc", ".h" ...).
bool is_source_file_name(std::string_view name);

// "prog.c:42", "visit:3", "visit@prog.c:3", as written (for messages).
std::string format_source_place(const SourcePlace& place);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_SOURCE_PLACE_H_
