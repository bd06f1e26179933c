// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/eh_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace dprobe::core {
namespace {

using Bytes = std::vector<uint8_t>;

uint64_t address_of(const Bytes& bytes) { return reinterpret_cast<uintptr_t>(bytes.data()); }

uint64_t uleb(const Bytes& bytes) {
  EhReader reader(address_of(bytes));
  auto value = reader.uleb128();
  EXPECT_TRUE(value) << value.error();
  EXPECT_EQ(reader.at(), address_of(bytes) + bytes.size()) << "every byte read";
  return value ? *value : 0;
}

int64_t sleb(const Bytes& bytes) {
  EhReader reader(address_of(bytes));
  auto value = reader.sleb128();
  EXPECT_TRUE(value) << value.error();
  EXPECT_EQ(reader.at(), address_of(bytes) + bytes.size()) << "every byte read";
  return value ? *value : 0;
}

TEST(EhReader, Leb128AsTheDwarfStandardsExamples) {
  EXPECT_EQ(uleb({0x02}), 2u);
  EXPECT_EQ(uleb({0x7f}), 127u);
  EXPECT_EQ(uleb({0x80, 0x01}), 128u);
  EXPECT_EQ(uleb({0x81, 0x01}), 129u);
  EXPECT_EQ(uleb({0xb9, 0x64}), 12857u);
  EXPECT_EQ(uleb({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), UINT64_MAX);
  EXPECT_EQ(sleb({0x02}), 2);
  EXPECT_EQ(sleb({0x7e}), -2);
  EXPECT_EQ(sleb({0xff, 0x00}), 127);
  EXPECT_EQ(sleb({0x81, 0x7f}), -127);
  EXPECT_EQ(sleb({0x80, 0x01}), 128);
  EXPECT_EQ(sleb({0x80, 0x7f}), -128);
  EXPECT_EQ(sleb({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}), INT64_MIN);
}

TEST(EhReader, AnEndlessLeb128IsAnError) {
  const Bytes endless(11, 0x80);
  EhReader unsigned_reader(address_of(endless));
  EXPECT_FALSE(unsigned_reader.uleb128());
  EhReader signed_reader(address_of(endless));
  EXPECT_FALSE(signed_reader.sleb128());
}

TEST(EhReader, PointerFormatsAndBases) {
  // f0 ff ff ff   sdata4 -16
  const Bytes minus16 = {0xf0, 0xff, 0xff, 0xff};
  const uint64_t field = address_of(minus16);
  EXPECT_EQ(*EhReader(field).pointer(dw_eh_pe::kSdata4, {}), static_cast<uint64_t>(-16));
  EXPECT_EQ(*EhReader(field).pointer(dw_eh_pe::kUdata4, {}), 0xfffffff0u);
  EXPECT_EQ(*EhReader(field).pointer(dw_eh_pe::kPcrel | dw_eh_pe::kSdata4, {}), field - 16);
  EXPECT_EQ(*EhReader(field).pointer(dw_eh_pe::kDatarel | dw_eh_pe::kSdata2, {.data = 0x1000}),
            0x1000u - 16);
  EXPECT_EQ(*EhReader(field).pointer(dw_eh_pe::kFuncrel | dw_eh_pe::kSdata4, {.func = 0x2000}),
            0x2000u - 16);
  EXPECT_EQ(*EhReader(field).value(dw_eh_pe::kPcrel | dw_eh_pe::kUdata2), 0xfff0u)
      << "value() reads the format only";
}

TEST(EhReader, AStoredZeroIsNoPointerWhateverTheBase) {
  const Bytes zero = {0, 0, 0, 0};
  EXPECT_EQ(*EhReader(address_of(zero)).pointer(dw_eh_pe::kPcrel | dw_eh_pe::kSdata4, {}), 0u);
}

TEST(EhReader, IndirectReadsThroughTheSlot) {
  static const uint64_t slot = 0x1234567890;
  const uint64_t data_base = reinterpret_cast<uintptr_t>(&slot) - 8;
  // 08 00 00 00   sdata4 8: the slot, 8 bytes past the data base
  const Bytes field = {0x08, 0x00, 0x00, 0x00};
  const uint8_t encoding = dw_eh_pe::kIndirect | dw_eh_pe::kDatarel | dw_eh_pe::kSdata4;
  EXPECT_EQ(*EhReader(address_of(field)).pointer(encoding, {.data = data_base}), slot);
}

TEST(EhReader, AlignedSkipsToTheNextPointerSlot) {
  alignas(8) const uint8_t bytes[16] = {0xaa, 0, 0, 0, 0, 0, 0, 0, 0x78, 0x56, 0x34, 0x12};
  EhReader reader(reinterpret_cast<uintptr_t>(&bytes[1]));
  EXPECT_EQ(*reader.pointer(dw_eh_pe::kAligned, {}), 0x12345678u);
  EXPECT_EQ(reader.at(), reinterpret_cast<uintptr_t>(&bytes[16]));
}

TEST(EhReader, UnknownBasesAndFormatsAreErrors) {
  const Bytes one = {1, 0, 0, 0, 0, 0, 0, 0};
  const uint64_t field = address_of(one);
  EXPECT_FALSE(EhReader(field).pointer(dw_eh_pe::kTextrel | dw_eh_pe::kUdata4, {}));
  EXPECT_FALSE(EhReader(field).pointer(dw_eh_pe::kDatarel | dw_eh_pe::kUdata4, {}))
      << "datarel where no data base is known";
  EXPECT_FALSE(EhReader(field).pointer(dw_eh_pe::kFuncrel | dw_eh_pe::kUdata4, {}));
  EXPECT_FALSE(EhReader(field).pointer(0x60 | dw_eh_pe::kUdata4, {}));
  EXPECT_FALSE(EhReader(field).pointer(0x05, {})) << "format 5 does not exist";
  EXPECT_FALSE(EhReader(field).pointer(dw_eh_pe::kOmit, {}));
  EXPECT_FALSE(known_format(0x0d));
  EXPECT_FALSE(known_format(dw_eh_pe::kOmit));
  EXPECT_TRUE(known_format(dw_eh_pe::kPcrel | dw_eh_pe::kSdata4));
}

}  // namespace
}  // namespace dprobe::core
