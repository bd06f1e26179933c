// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// JSON string escaping for the JSON-lines output. Traced strings are raw
// bytes, so anything that is not valid UTF-8 is escaped byte by byte as
// \u00XX (read as Latin-1), which keeps every line valid JSON and loses no
// byte.
//
//   std::string out;
//   append_json_string(out, "a\"b\n");  // out == R"("a\"b\u000a")"
#ifndef DPROBE_TRACE_JSON_H_
#define DPROBE_TRACE_JSON_H_

#include <string>
#include <string_view>

namespace dprobe::trace {

// Appends `text` as a JSON string literal, quotes included.
void append_json_string(std::string& out, std::string_view text);

// Appends the escaped contents without quotes, for a literal built from
// several parts (a symbol name followed by its offset).
void append_json_escaped(std::string& out, std::string_view text);

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_JSON_H_
