// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// --format strace's pieces against what strace 6.1 prints for the same
// values: its string escapes and -s cut, flag sets, errno names and
// messages, and each common call's arguments and result.
#include "cli/output/strace_values.h"

#include <gtest/gtest.h>

#include <string>

#include "cli/output/strace_arguments.h"
#include "cli/output/strace_tables.h"

namespace dprobe::cli::strace {
namespace {

using namespace std::string_literals;

TEST(StraceValues, QuotesAsStraceEscapes) {
  EXPECT_EQ(quote_string("a\tb\nc\"d\\e", 32), R"("a\tb\nc\"d\\e")");
  EXPECT_EQ(quote_string("\v\f\r", 32), R"("\v\f\r")");
  // strace's read of an ELF header: octal as short as reads back.
  EXPECT_EQ(quote_string("\177ELF\2\1\1\3\0\0"s, 32), R"("\177ELF\2\1\1\3\0\0")");
  // A digit after the byte takes the three-digit form.
  EXPECT_EQ(quote_string("\0"s
                         "1",
                         32),
            R"("\0001")");
  EXPECT_EQ(quote_string("\033[0m", 32), R"("\33[0m")");
  EXPECT_EQ(quote_string("\xff", 32), R"("\377")");
  EXPECT_EQ(quote_string("", 32), R"("")");
}

TEST(StraceValues, CutsAtTheLimitWithDotsAfterTheQuote) {
  const std::string text = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"";
  EXPECT_EQ(quote_string(text, 32), R"("PRETTY_NAME=\"Debian GNU/Linux 12"...)");
  EXPECT_EQ(quote_string("exactly", 7), R"("exactly")");
  EXPECT_EQ(quote_string("exactly!", 7), R"("exactly"...)");
  EXPECT_EQ(quote_string("abc", 0), R"(""...)");
}

TEST(StraceValues, FlagsByNameAndWhatNoNameCoversInHex) {
  EXPECT_EQ(flags_text(4 | 1, kProtFlags), "PROT_READ|PROT_EXEC");
  EXPECT_EQ(flags_text(0, kProtFlags), "PROT_NONE");
  EXPECT_EQ(flags_text(0, kAtFlags), "0");
  EXPECT_EQ(flags_text(0x1000 | 0x10000000, kAtFlags), "AT_EMPTY_PATH|0x10000000");
  // O_SYNC covers O_DSYNC's bit: one name, not both.
  EXPECT_EQ(flags_text(04010000, kOpenFlags), "O_SYNC");
  EXPECT_EQ(flags_text(010000, kOpenFlags), "O_DSYNC");
  EXPECT_EQ(flags_text(4 | 2, kAccessModes), "R_OK|W_OK");
  EXPECT_EQ(flags_text(0, kAccessModes), "F_OK");
}

TEST(StraceValues, ErrnoNamesWithTheirMessages) {
  EXPECT_EQ(errno_text(2), "ENOENT (No such file or directory)");
  EXPECT_EQ(errno_text(13), "EACCES (Permission denied)");
  EXPECT_EQ(errno_text(11), "EAGAIN (Resource temporarily unavailable)");
  EXPECT_EQ(errno_text(512), "ERESTARTSYS (To be restarted if SA_RESTART is set)");
  EXPECT_EQ(errno_text(516), "ERESTART_RESTARTBLOCK (Interrupted by signal)");
}

TEST(StraceValues, SignalsPointersAndModes) {
  EXPECT_EQ(signal_name(17), "SIGCHLD");
  EXPECT_EQ(signal_name(32), "SIGRTMIN");
  EXPECT_EQ(signal_name(34), "SIGRT_2");
  EXPECT_EQ(signal_name(99), "99");
  EXPECT_EQ(pointer_text(0), "NULL");
  EXPECT_EQ(pointer_text(0x7ffc1000), "0x7ffc1000");
  EXPECT_EQ(octal_text(0644), "0644");
  EXPECT_EQ(octal_text(022), "022");
  EXPECT_EQ(octal_text(0), "000");
}

}  // namespace
}  // namespace dprobe::cli::strace
