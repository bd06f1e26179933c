// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Echoed input: control characters shown as \xNN, the caret still under
// the byte the error points at.
#include "cli/output/terminal_text.h"

#include <gtest/gtest.h>

#include <string>

namespace dprobe::cli {
namespace {

TEST(TerminalText, ControlCharactersAreShownAsHex) {
  EXPECT_EQ(printable("plain text: ok"), "plain text: ok");
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable(std::string("nul\0tab\tdel\x7f", 12)), "nul\\x00tab\\x09del\\x7f");
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9") << "UTF-8 is text";
}

// The line of `text` that starts with `prefix`.
std::string line_of(const std::string& text, const std::string& prefix) {
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    if (line.starts_with(prefix)) return line;
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return "";
}

TEST(TerminalText, CaretStaysUnderTheSameByte) {
  lang::ProbeError error;
  error.code = lang::ErrorCode::BAD_PROBE_ADDR;
  error.command = "p:g/e \x1b]0;x\x07 nosuch";
  error.column = error.command.find("nosuch");
  error.origin = "defs\x1b.txt:1";
  const std::string text = render_error_safely(error);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  const std::string command = line_of(text, "  Command: ");
  const std::string caret = line_of(text, "          ");
  ASSERT_FALSE(command.empty()) << text;
  ASSERT_NE(caret.find('^'), std::string::npos) << text;
  EXPECT_EQ(command.substr(caret.find('^'), 6), "nosuch") << text;
  EXPECT_NE(text.find("defs\\x1b.txt:1"), std::string::npos) << text;
}

}  // namespace
}  // namespace dprobe::cli
