// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// User input echoed back in a message (a bad definition, a file name, an
// event name) goes to a terminal: a control character in it must show as
// text, never act (an escape sequence could retitle the window, hide the
// rest of the line or move the cursor). Each one is written \xNN, and a
// caret under the definition stays under the byte it points at.
//
//   errors << render_error_safely(error);   // instead of lang::render_error
//   errors << "no such event: " << printable(name) << "\n";
#ifndef DPROBE_CLI_OUTPUT_TERMINAL_TEXT_H_
#define DPROBE_CLI_OUTPUT_TERMINAL_TEXT_H_

#include <string>
#include <string_view>

#include "lang/probe_error.h"

namespace dprobe::cli {

// `text` with every control character (C0 and DEL) as \xNN.
std::string printable(std::string_view text);

// lang::render_error, with the command, origin, detail and notes printable
// and the caret column moved to match.
std::string render_error_safely(const lang::ProbeError& error);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_TERMINAL_TEXT_H_
