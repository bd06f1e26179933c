// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target for the definition parser. Besides "no crash, no
// sanitizer report" it checks two properties on every input:
//   - an error's caret lies within the command (or one past it, as the
//     kernel's for a missing word), or as far past it as a dereference's
//     prefix shifts the kernel's (lang/fetch_expr.h);
//   - a definition that parses prints a normalized form that parses again
//     to the same normalized form (unless spelling out the default type
//     pushed an argument past the kernel's 63-character limit).
// The same input is also compiled as an event filter and parsed as a hist
// trigger: an error's caret lies within the text, and a filter that
// compiles is a program the agent would accept.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lang/definition.h"
#include "lang/event_filter.h"
#include "lang/format_definition.h"
#include "lang/hist_trigger.h"
#include "trace/record_fields.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

// The fields of a return event with a number, a signed and a string argument.
const std::vector<dprobe::trace::RecordField>& sample_fields() {
  static const auto fields = [] {
    auto def = dprobe::lang::parse_definition(
        "r:g/e libc.so.6:malloc size=$arg1:u64 fd=%si:s32 name=+0(%di):string");
    check(def.has_value());
    return dprobe::trace::record_fields(def->spec.event);
  }();
  return fields;
}

void fuzz_analysis(std::string_view text) {
  auto filter = dprobe::lang::compile_filter(text, sample_fields());
  if (filter) {
    check(filter->empty() || dprobe::trace::filter_program_valid(*filter));
  } else {
    check(filter.error().column <= text.size() + 1);
  }
  auto hist = dprobe::lang::parse_hist_trigger(text, sample_fields());
  if (!hist) check(hist.error().column <= text.size() + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  fuzz_analysis(line);
  auto def = dprobe::lang::parse_definition(line);
  if (!def) {
    // The kernel points the errors of a store, bitfield or array after a
    // dereference past the outermost '+OFFS(' (lang/fetch_expr.h:
    // deref_prefix_columns), as far right again as that prefix is long.
    check(def.error().column <= 2 * def.error().command.size() + 1);
    check(!dprobe::lang::render_error(def.error()).empty());
    return 0;
  }
  if (def->kind != dprobe::lang::Definition::Kind::kAdd || def->wildcard) return 0;
  const std::string normalized = dprobe::lang::format_definition(def->spec);
  auto again = dprobe::lang::parse_definition(normalized);
  if (!again && again.error().code == dprobe::lang::ErrorCode::ARG_TOO_LONG) return 0;
  check(again.has_value());
  check(dprobe::lang::format_definition(again->spec) == normalized);
  check(again->spec.event.fixed_size == def->spec.event.fixed_size);
  return 0;
}
