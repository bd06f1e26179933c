// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A definition the test expects to parse, for x86_64: the test fails with
// the error drawn under the line when it does not.
//
//   const Definition def = test::parse_ok("p libc.so.6:malloc size=%di");
#ifndef DPROBE_TESTS_UNIT_LANG_PARSE_OK_H_
#define DPROBE_TESTS_UNIT_LANG_PARSE_OK_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "lang/definition.h"

namespace dprobe::lang::test {

inline Definition parse_ok(const std::string& line) {
  auto def = parse_definition(line, {arch::Isa::kX86_64});
  EXPECT_TRUE(def) << line << "\n" << (def ? "" : render_error(def.error()));
  return def ? std::move(*def) : Definition{};
}

}  // namespace dprobe::lang::test

#endif  // DPROBE_TESTS_UNIT_LANG_PARSE_OK_H_
