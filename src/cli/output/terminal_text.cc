// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/terminal_text.h"

#include <algorithm>

namespace dprobe::cli {
namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

}  // namespace

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (!is_control(c)) {
      out.push_back(ch);
      continue;
    }
    out += "\\x";
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
  return out;
}

std::string render_error_safely(const lang::ProbeError& error) {
  lang::ProbeError shown = error;
  const size_t column = std::min(error.column, error.command.size());
  shown.column =
      printable(std::string_view(error.command).substr(0, column)).size() + (error.column - column);
  shown.command = printable(error.command);
  shown.origin = printable(error.origin);
  shown.detail = printable(error.detail);
  for (std::string& note : shown.notes) note = printable(note);
  return lang::render_error(shown);
}

}  // namespace dprobe::cli
