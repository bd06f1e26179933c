// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every malformed message payload is an error: cut short at any byte, a
// trailing byte too many, counts no payload could hold. Payloads are
// decoded from memory that ends right before an inaccessible page, so any
// read past the end crashes the test instead of passing unnoticed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/messages.h"
#include "protocol/wire.h"
#include "support/address_space.h"
#include "trace/event.h"
#include "trace/event_analysis.h"
#include "trace/fetch.h"
#include "trace/hit/fetch_type.h"
#include "unit/protocol/message_samples.h"

namespace dprobe::protocol {
namespace {

using namespace test_support;
using ::testing::HasSubstr;
using trace::FetchInsn;
using trace::FetchOp;
using trace::TypeId;

// ---- Malformed payloads ---------------------------------------------------

template <typename Decode>
void expect_every_truncation_fails(const std::vector<std::byte>& bytes, Decode decode) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    const auto prefix = std::span(bytes).first(n);
    const Guarded guarded(prefix);
    auto decoded = decode(guarded.bytes());
    ASSERT_FALSE(decoded) << "decoded " << n << " of " << bytes.size() << " bytes";
    EXPECT_THAT(decoded.error().message, HasSubstr("malformed"));
  }
}

template <typename Decode>
void expect_trailing_byte_fails(std::vector<std::byte> bytes, Decode decode) {
  bytes.push_back(std::byte{0});
  const Guarded guarded(bytes);
  EXPECT_FALSE(decode(guarded.bytes()));
}

TEST(Messages, HoldThreadsRoundTripAndTruncatedFails) {
  const HoldThreads hold{{4242, 17, 0xffffffffu}};
  const std::vector<std::byte> bytes = encode(hold);
  auto decoded = decode_hold_threads(bytes);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->running, hold.running);
  for (size_t length = 0; length < bytes.size(); ++length) {
    EXPECT_FALSE(decode_hold_threads(std::span(bytes).first(length))) << length << " bytes";
  }
}

TEST(Messages, TruncatedHelloFailsAtEveryLength) {
  expect_every_truncation_fails(encode(rich_hello()), decode_hello);
  expect_trailing_byte_fails(encode(rich_hello()), decode_hello);
}

TEST(Messages, TruncatedProbesFailAtEveryLength) {
  expect_every_truncation_fails(encode(rich_probes()), decode_probes);
  expect_trailing_byte_fails(encode(rich_probes()), decode_probes);
}

TEST(Messages, TruncatedArmReportFailsAtEveryLength) {
  expect_every_truncation_fails(encode(rich_arm_report()), decode_arm_report);
  expect_trailing_byte_fails(encode(rich_arm_report()), decode_arm_report);
}

// Whatever a single byte becomes, decoding ends (in a value or an error)
// without reading outside the payload.
template <typename Decode>
void decode_every_corruption(const std::vector<std::byte>& bytes, Decode decode) {
  const Guarded guarded(bytes);
  auto* data = const_cast<std::byte*>(guarded.bytes().data());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (const uint8_t value : std::array<uint8_t, 5>{0x00, 0x01, 0x7f, 0x80, 0xff}) {
      data[i] = std::byte{value};
      (void)decode(guarded.bytes());
    }
    data[i] = bytes[i];
  }
}

TEST(Messages, CorruptedBytesNeverCrash) {
  decode_every_corruption(encode(rich_hello()), decode_hello);
  decode_every_corruption(encode(rich_probes()), decode_probes);
  decode_every_corruption(encode(rich_arm_report()), decode_arm_report);
  SUCCEED();
}

constexpr uint32_t kFourBillion = 4'000'000'000u;

// A count of four billion fails as malformed without being believed: under
// a cap of 64 MiB more address space, a decoder that reserved for it would
// throw (the test fails), where it only reads to the end of the bytes.
template <typename Decode>
void expect_fails_without_reserving(const WireWriter& w, Decode decode) {
  const Guarded guarded(w.bytes());
  const support::AddressSpaceCap cap(64u << 20);
  ASSERT_TRUE(cap.applied()) << "no cap on the address space";
  auto decoded = decode(guarded.bytes());
  EXPECT_FALSE(decoded);
}

void put_padding(WireWriter& w) {
  for (int i = 0; i < 64; ++i) w.u8(0);
}

TEST(Messages, HelloClaimingFourBillionObjectsFailsFast) {
  WireWriter w;
  w.u32(kProtocolVersion);
  w.u32(1);
  w.u32(kFourBillion);
  put_padding(w);
  expect_fails_without_reserving(w, decode_hello);
}

TEST(Messages, ProbesClaimingFourBillionProbesFailFast) {
  WireWriter w;
  w.u32(4096);
  w.u32(1);
  w.u32(kFourBillion);
  put_padding(w);
  expect_fails_without_reserving(w, decode_probes);
}

// One probe, its event's header written; the caller goes on with the args.
void put_probe_head(WireWriter& w) {
  w.u32(4096);
  w.u32(1);
  w.u32(1);  // one probe
  w.u64(0x401000);
  w.u64(0x401000);
  w.u64(16);
  w.boolean(false);
  w.u32(0);
  w.u16(0);
  w.str("g");
  w.str("e");
  w.u32(40);
}

TEST(Messages, EventClaimingFourBillionArgsFailsFast) {
  WireWriter w;
  put_probe_head(w);
  w.u32(kFourBillion);
  put_padding(w);
  expect_fails_without_reserving(w, decode_probes);
}

TEST(Messages, ArgClaimingFourBillionFetchOperationsFailsFast) {
  WireWriter w;
  put_probe_head(w);
  w.u32(1);  // one arg
  w.str("x");
  w.str("%di");
  w.str("x64");
  w.u8(static_cast<uint8_t>(TypeId::kX64));
  w.u32(0);
  w.u32(32);
  w.u32(kFourBillion);
  put_padding(w);
  expect_fails_without_reserving(w, decode_probes);
}

TEST(Messages, ArgWithAHugeStringFailsFast) {
  WireWriter w;
  put_probe_head(w);
  w.u32(1);
  w.u32(std::numeric_limits<uint32_t>::max());  // the name's length
  put_padding(w);
  expect_fails_without_reserving(w, decode_probes);
}

TEST(Messages, ArmReportClaimingFourBillionResultsFailsFast) {
  WireWriter w;
  w.u64(4096);
  w.u32(kFourBillion);
  put_padding(w);
  expect_fails_without_reserving(w, decode_arm_report);
}

TEST(Messages, CountExactlyFillingThePayloadIsAccepted) {
  // Seven smallest results: event id, status, empty message, no IFUNC
  // implementation.
  WireWriter w;
  w.u64(0);  // trace memory bytes
  w.u32(7);
  for (uint16_t i = 0; i < 7; ++i) {
    w.u16(i);
    w.u8(0);
    w.str("");
    w.u64(0);
  }
  w.u32(0);  // no probe states
  auto report = decode_arm_report(w.bytes());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->results.size(), 7u);
  // One more claimed than present: refused.
  WireWriter more;
  more.u64(0);
  more.u32(8);
  for (uint16_t i = 0; i < 7; ++i) {
    more.u16(i);
    more.u8(0);
    more.str("");
    more.u64(0);
  }
  more.u32(0);
  EXPECT_FALSE(decode_arm_report(more.bytes()));
}

}  // namespace
}  // namespace dprobe::protocol
