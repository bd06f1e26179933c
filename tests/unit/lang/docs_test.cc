// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The language reference (docs/language.md) lists every error code with its
// message: adding a code without documenting it fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "lang/error_table.h"

namespace dprobe::lang {
namespace {

TEST(LanguageDocs, ListEveryErrorWithItsMessage) {
  std::ifstream in(std::string(DPROBE_SOURCE_DIR) + "/docs/language.md");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  for (size_t i = 0; i < static_cast<size_t>(ErrorCode::kCount); ++i) {
    const auto code = static_cast<ErrorCode>(i);
    const std::string row =
        "| `" + std::string(error_name(code)) + "` | " + std::string(error_message(code)) + " |";
    EXPECT_NE(doc.find(row), std::string::npos) << "docs/language.md lacks: " << row;
  }
}

}  // namespace
}  // namespace dprobe::lang
