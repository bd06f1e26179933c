// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/line_listing.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace dprobe::cli {
namespace {

TEST(LineListing, NumbersTheLinesWithCodeFromTheDeclarationAsPerfProbe) {
  const symbols::FunctionLines lines{"f", "/src/a.c", 2, {2, 3, 5}};
  const std::string source = "// head\nint f(void) {\n  a();\n  // none\n  return 0;\n}\n\nx\ny\n";
  EXPECT_EQ(format_line_listing(lines, source),
            "<f@/src/a.c:0>\n"
            "      0  int f(void) {\n"
            "      1    a();\n"
            "           // none\n"
            "      3    return 0;\n"
            "         }\n"
            "         \n"
            "         x\n");
}

TEST(LineListing, AMissingSourceFileIsNamed) {
  char dir[] = "/tmp/dprobe-listing-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string root = dir;
  const std::string source = root + "/gone.c";
  const std::string program = root + "/gone";
  {
    std::FILE* file = std::fopen(source.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("int gone(int x) {\n  return x + 1;\n}\nint main(void) { return gone(0); }\n", file);
    std::fclose(file);
  }
  if (std::system(("cc -g -O0 -o " + program + " " + source + " 2>/dev/null").c_str()) != 0) {
    std::filesystem::remove_all(root);
    GTEST_SKIP() << "no cc";
  }
  std::filesystem::remove(source);
  auto listing = line_listing(program, "gone", symbols::DebugInfoPaths{});
  std::filesystem::remove_all(root);
  ASSERT_FALSE(listing);
  EXPECT_EQ(listing.error().message, "source file " + source +
                                         " of gone not found (the debug information of " + program +
                                         " names it)");
}

}  // namespace
}  // namespace dprobe::cli
