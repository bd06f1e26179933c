// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// An error in a probe definition, located like the kernel's error_log: the
// command (its words joined by single spaces) and the column of the
// offending character, rendered with a caret under it.
//
//   ProbeError e{ErrorCode::BAD_REG_NAME, "p:grp/ev open fd=%zz", 19};
//   std::cerr << render_error(e);
//   // dprobe: error: Invalid register name (BAD_REG_NAME)
//   //   Command: p:grp/ev open fd=%zz
//   //                               ^
#ifndef DPROBE_LANG_PROBE_ERROR_H_
#define DPROBE_LANG_PROBE_ERROR_H_

#include <string>
#include <vector>

#include "lang/error_table.h"

namespace dprobe::lang {

struct ProbeError {
  ErrorCode code;
  std::string command;
  size_t column = 0;
  std::string detail;              // optional: what exactly was wrong
  std::vector<std::string> notes;  // optional: e.g. the candidates of a non-unique symbol
  std::string origin;              // optional: "FILE:LINE" of a definition file
};

// The error_log shape, ending in a newline, each line prefixed as given.
std::string render_error(const ProbeError& error, std::string_view program = "dprobe");

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_PROBE_ERROR_H_
