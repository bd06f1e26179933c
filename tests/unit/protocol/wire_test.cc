// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The channel's binary encoding: little-endian integers and length-prefixed
// strings that read back as written, and a reader that refuses whatever is
// missing or claims more than the message holds.
#include "protocol/wire.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/address_space.h"

namespace dprobe::protocol {
namespace {

std::vector<uint8_t> as_u8(const std::vector<std::byte>& bytes) {
  std::vector<uint8_t> out;
  for (std::byte b : bytes) out.push_back(static_cast<uint8_t>(b));
  return out;
}

TEST(Wire, IntegersAreLittleEndian) {
  WireWriter w;
  w.u8(0xab);
  w.u16(0x0102);
  w.u32(0x03040506);
  w.u64(0x0708090a0b0c0d0e);
  w.i64(-2);
  w.boolean(true);
  w.boolean(false);
  const std::vector<uint8_t> expected = {0xab,                                            // u8
                                         0x02, 0x01,                                      // u16
                                         0x06, 0x05, 0x04, 0x03,                          // u32
                                         0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08, 0x07,  // u64
                                         0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // i64 -2
                                         0x01, 0x00};  // booleans
  EXPECT_EQ(as_u8(w.bytes()), expected);
}

TEST(Wire, StringsAreLengthPrefixed) {
  WireWriter w;
  w.str("ab");
  w.str("");
  EXPECT_EQ(as_u8(w.bytes()), (std::vector<uint8_t>{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0}));
}

TEST(Wire, EverythingReadsBackAsWritten) {
  const std::string with_nul("a\0b\nc", 5);
  const std::string big(1 << 20, 'x');
  const uint8_t raw[] = {9, 8, 7};
  WireWriter w;
  w.u8(255);
  w.u16(65535);
  w.u32(std::numeric_limits<uint32_t>::max());
  w.u64(std::numeric_limits<uint64_t>::max());
  w.i64(std::numeric_limits<int64_t>::min());
  w.boolean(true);
  w.str(with_nul);
  w.str("");
  w.str(big);
  w.raw(raw, sizeof(raw));
  const std::vector<std::byte> bytes = w.take();

  WireReader r(bytes);
  EXPECT_EQ(r.u8(), 255);
  EXPECT_EQ(r.u16(), 65535);
  EXPECT_EQ(r.u32(), std::numeric_limits<uint32_t>::max());
  EXPECT_EQ(r.u64(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(r.i64(), std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(r.boolean());
  EXPECT_EQ(r.str(), with_nul);
  EXPECT_EQ(r.str(), "");
  EXPECT_EQ(r.str(), big);
  uint8_t back[3] = {};
  EXPECT_TRUE(r.raw(back, sizeof(back)));
  EXPECT_EQ(back[0], 9);
  EXPECT_EQ(back[2], 7);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.at_end());
}

TEST(Wire, AnyNonZeroByteIsTrue) {
  const std::byte bytes[] = {std::byte{0}, std::byte{2}, std::byte{0xff}};
  WireReader r(bytes);
  EXPECT_FALSE(r.boolean());
  EXPECT_TRUE(r.boolean());
  EXPECT_TRUE(r.boolean());
  EXPECT_TRUE(r.ok());
}

TEST(Wire, ReadingPastTheEndFailsAndStaysFailed) {
  const std::byte bytes[] = {std::byte{1}, std::byte{2}, std::byte{3}};
  WireReader r(bytes);
  EXPECT_EQ(r.u32(), 0u);  // 3 bytes left: not enough, and none consumed
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.at_end());
  // Once failed, even a read that would fit gives nothing.
  EXPECT_EQ(r.u8(), 0);
  EXPECT_EQ(r.str(), "");
  EXPECT_FALSE(r.ok());
}

TEST(Wire, EmptyInput) {
  WireReader r(std::span<const std::byte>{});
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(r.u8(), 0);
  EXPECT_FALSE(r.ok());
}

TEST(Wire, StringLongerThanWhatIsLeftFails) {
  WireWriter w;
  w.u32(6);
  w.raw("abcde", 5);  // one byte short
  WireReader r(w.bytes());
  EXPECT_EQ(r.str(), "");
  EXPECT_FALSE(r.ok());
}

// Under a cap of 64 MiB more address space: a reader that reserved the
// four gigabytes the length claims would throw.
TEST(Wire, HugeStringLengthFailsWithoutAllocating) {
  WireWriter w;
  w.u32(std::numeric_limits<uint32_t>::max());
  w.raw("abc", 3);
  WireReader r(w.bytes());
  const support::AddressSpaceCap cap(64u << 20);
  ASSERT_TRUE(cap.applied()) << "no cap on the address space";
  EXPECT_EQ(r.str(), "");
  EXPECT_FALSE(r.ok());
}

TEST(Wire, TruncatedStringAtEveryLength) {
  WireWriter w;
  w.str("hello, world");
  const std::vector<std::byte> bytes = w.take();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const auto prefix = std::span(bytes).first(n);
    WireReader r(prefix);
    EXPECT_EQ(r.str(), "") << n;
    EXPECT_FALSE(r.ok()) << n;
  }
}

TEST(Wire, CountIsRefusedWhenTheMessageCannotHoldIt) {
  WireWriter w;
  w.u32(3);
  w.raw("123456789012", 12);  // room for 3 items of 4 bytes, not of 5
  {
    WireReader r(w.bytes());
    EXPECT_EQ(r.count(4), 3u);
    EXPECT_TRUE(r.ok());
  }
  {
    WireReader r(w.bytes());
    EXPECT_EQ(r.count(5), 0u);
    EXPECT_FALSE(r.ok());
  }
}

TEST(Wire, FourBillionItemsFailFast) {
  WireWriter w;
  w.u32(4'000'000'000u);
  w.raw("some bytes", 10);
  WireReader r(w.bytes());
  EXPECT_EQ(r.count(1), 0u);
  EXPECT_FALSE(r.ok());
}

TEST(Wire, CountOfAFailedReaderIsZero) {
  const std::byte bytes[] = {std::byte{5}, std::byte{0}};
  WireReader r(bytes);
  EXPECT_EQ(r.count(1), 0u);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace dprobe::protocol
