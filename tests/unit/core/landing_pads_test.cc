// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// landing_pads() on hand-assembled tables: every pointer encoding the
// parser supports, whatever the compiler happens to choose.
#include "core/landing_pads.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "unit/core/eh_image.h"

namespace dprobe::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The encodings of one image: the .eh_frame_hdr's, the CIEs' 'R' (FDE
// pointers) and 'L' (LSDA pointer), the LSDA's LPStart, TType, call sites.
struct Encodings {
  std::string name;
  uint8_t eh_frame_ptr = dw_eh_pe::kPcrel | dw_eh_pe::kSdata4;
  uint8_t table = dw_eh_pe::kDatarel | dw_eh_pe::kSdata4;
  uint8_t fde = dw_eh_pe::kPcrel | dw_eh_pe::kSdata4;
  uint8_t lsda = dw_eh_pe::kPcrel | dw_eh_pe::kSdata4;
  uint8_t lpstart = dw_eh_pe::kOmit;
  uint8_t ttype = dw_eh_pe::kIndirect | dw_eh_pe::kPcrel | dw_eh_pe::kSdata4;
  uint8_t call_site = dw_eh_pe::kUleb128;
  uint8_t cie_version = 1;
  bool extended_length = false;
  std::string augmentation = "zPLR";
};

// The image's functions (text offsets), each with its own FDE:
//   with_pads    [0x000, 0x040)  LSDA: pads at LPStart+0x20 and +0x30
//   no_lsda      [0x040, 0x060)  'L' CIE, LSDA pointer stored as 0
//   no_l         [0x080, 0x0b0)  "zR" CIE: no LSDA at all
//   no_pads      [0x100, 0x140)  LSDA whose call sites have no pad
constexpr uint64_t kWithPads = 0x000;
constexpr uint64_t kNoLsda = 0x040;
constexpr uint64_t kNoL = 0x080;
constexpr uint64_t kNoPads = 0x100;
constexpr uint64_t kLpStartOffset = 0x200;  // LPStart when stated: past the function

class Tables {
 public:
  explicit Tables(const Encodings& encodings) : e_(encodings) { build(); }

  uint64_t hdr() const { return image_.address(EhImage::kHdr); }
  uint64_t text(uint64_t offset) const { return image_.address(EhImage::kText) + offset; }
  uint64_t lpstart() const {
    return text(kWithPads) + (e_.lpstart == dw_eh_pe::kOmit ? 0 : kLpStartOffset);
  }
  uint64_t cie() const { return image_.address(EhImage::kEhFrame); }
  EhImage& image() { return image_; }

  std::vector<uint64_t> pads(uint64_t begin, uint64_t end) const {
    auto pads = landing_pads(UnwindTables{.eh_frame_hdr = hdr()}, text(begin), text(end));
    EXPECT_TRUE(pads) << e_.name << ": " << pads.error();
    return pads ? *pads : std::vector<uint64_t>{};
  }

 private:
  struct Entry {
    size_t length_field;
    size_t content;
  };

  void build() {
    const uint64_t lsda_with_pads = lsda(image_.address(EhImage::kLsda), {0x20, 0, 0x30, 0x20});
    const uint64_t lsda_no_pads = lsda(image_.address(EhImage::kLsda + 0x100), {0, 0});
    image_.seek(EhImage::kEhFrame);
    const uint64_t cie_l = cie(e_.augmentation);
    const uint64_t cie_r = cie("zR");
    fdes_.push_back(fde(cie_l, kWithPads, 0x40, lsda_with_pads));
    fdes_.push_back(fde(cie_l, kNoLsda, 0x20, 0));
    fdes_.push_back(fde(cie_r, kNoL, 0x30, 0));
    fdes_.push_back(fde(cie_l, kNoPads, 0x40, lsda_no_pads));
    image_.put(uint32_t{0});  // the .eh_frame terminator
    header({kWithPads, kNoLsda, kNoL, kNoPads});
  }

  // version, encodings, eh_frame_ptr, fde_count, then the sorted table.
  void header(const std::vector<uint64_t>& functions) {
    image_.seek(EhImage::kHdr);
    image_.u8(1);
    image_.u8(e_.eh_frame_ptr);
    image_.u8(dw_eh_pe::kUdata4);
    image_.u8(e_.table);
    image_.pointer(e_.eh_frame_ptr, image_.address(EhImage::kEhFrame));
    image_.value(dw_eh_pe::kUdata4, functions.size());
    for (size_t i = 0; i < functions.size(); ++i) {
      image_.pointer(e_.table, text(functions[i]));
      image_.pointer(e_.table, fdes_[i]);
    }
  }

  Entry begin_entry() {
    if (e_.extended_length) image_.put(uint32_t{0xffffffff});
    const size_t length_field = image_.offset();
    if (e_.extended_length) {
      image_.put(uint64_t{0});
    } else {
      image_.put(uint32_t{0});
    }
    return {length_field, image_.offset()};
  }
  void end_entry(const Entry& entry) {
    const size_t end = image_.offset();
    const uint64_t length = end - entry.content;
    image_.seek(entry.length_field);
    if (e_.extended_length) {
      image_.put(length);
    } else {
      image_.put(static_cast<uint32_t>(length));
    }
    image_.seek(end);
  }

  uint64_t cie(const std::string& augmentation) {
    const uint64_t start = image_.here();
    const Entry entry = begin_entry();
    image_.put(uint32_t{0});  // CIE id
    image_.u8(e_.cie_version);
    image_.text(augmentation);
    image_.uleb(1);   // code alignment factor
    image_.sleb(-8);  // data alignment factor
    if (e_.cie_version == 1) {
      image_.u8(16);  // return address: rip
    } else {
      image_.uleb(16);
    }
    augmentation_data(augmentation);
    // DW_CFA_def_cfa rsp+8; DW_CFA_offset rip at cfa-8
    constexpr uint8_t kInitialInstructions[] = {0x0c, 0x07, 0x08, 0x90, 0x01};
    for (const uint8_t insn : kInitialInstructions) image_.u8(insn);
    end_entry(entry);
    return start;
  }

  void augmentation_data(const std::string& augmentation) {
    const size_t length_at = image_.offset();
    image_.u8(0);  // the length, a one-byte uleb128 patched below
    for (const char letter : augmentation.substr(1)) {
      if (letter == 'P') {
        constexpr uint8_t kPersonality = 0x9b;  // indirect pcrel sdata4, as GCC writes it
        image_.u8(kPersonality);
        image_.pointer(kPersonality, image_.slot(0x1234));
      } else if (letter == 'L') {
        image_.u8(e_.lsda);
      } else if (letter == 'R') {
        image_.u8(e_.fde);
      }
    }
    image_.patch(length_at, static_cast<uint8_t>(image_.offset() - length_at - 1));
  }

  uint64_t fde(uint64_t cie, uint64_t function, uint64_t size, uint64_t lsda) {
    const uint64_t start = image_.here();
    const Entry entry = begin_entry();
    image_.put(static_cast<uint32_t>(image_.here() - cie));  // back to the CIE
    image_.pointer(e_.fde, text(function));
    image_.value(e_.fde, size);
    const size_t length_at = image_.offset();
    image_.u8(0);              // augmentation data length, patched below
    if (cie == this->cie()) {  // the 'L' CIE: the FDE has an LSDA field
      const bool indirect = (e_.lsda & dw_eh_pe::kIndirect) != 0;
      if (lsda == 0) {
        stored_zero(e_.lsda);
      } else {
        image_.pointer(e_.lsda, indirect ? image_.slot(lsda) : lsda, text(function));
      }
    }
    image_.patch(length_at, static_cast<uint8_t>(image_.offset() - length_at - 1));
    image_.u8(0x41);  // DW_CFA_advance_loc 1
    image_.u8(0x0e);  // DW_CFA_def_cfa_offset 16
    image_.u8(0x10);
    end_entry(entry);
    return start;
  }

  // "No pointer": a zero as stored, in the slot an aligned pointer takes.
  void stored_zero(uint8_t encoding) {
    if ((encoding & dw_eh_pe::kApplicationMask) == dw_eh_pe::kAligned) {
      image_.pointer(encoding, 0);
    } else {
      image_.value(encoding, 0);
    }
  }

  // An LSDA whose call sites have these landing pads (0: none).
  uint64_t lsda(uint64_t at, const std::vector<uint8_t>& landing_pads) {
    image_.seek(at - image_.address(0));
    image_.u8(e_.lpstart);
    if (e_.lpstart != dw_eh_pe::kOmit) {
      image_.pointer(e_.lpstart, text(kWithPads) + kLpStartOffset, text(kWithPads));
    }
    image_.u8(e_.ttype);
    if (e_.ttype != dw_eh_pe::kOmit) image_.uleb(0x10);  // to a type table never read
    image_.u8(e_.call_site);
    const uint64_t field = fixed_size(e_.call_site) == 0 ? 1 : fixed_size(e_.call_site);
    image_.uleb(landing_pads.size() * (3 * field + 1));
    uint8_t start = 0;
    for (const uint8_t pad : landing_pads) {
      image_.value(e_.call_site, start);  // call-site start
      image_.value(e_.call_site, 8);      // call-site length
      image_.value(e_.call_site, pad);    // landing pad
      image_.uleb(pad == 0 ? 0 : 1);      // action
      start = static_cast<uint8_t>(start + 8);
    }
    return at;
  }

  Encodings e_;
  EhImage image_;
  std::vector<uint64_t> fdes_;
};

class LandingPadsEncodings : public ::testing::TestWithParam<Encodings> {};

TEST_P(LandingPadsEncodings, PadsOfTheFunctionsCoveringTheRange) {
  const Tables tables(GetParam());
  const uint64_t first = tables.lpstart() + 0x20;
  const uint64_t second = tables.lpstart() + 0x30;
  EXPECT_THAT(tables.pads(kWithPads, kWithPads + 1), ElementsAre(first, second))
      << "sorted, each once";
  EXPECT_THAT(tables.pads(kWithPads + 0x3f, kNoLsda + 5), ElementsAre(first, second))
      << "a range across two functions";
  EXPECT_THAT(tables.pads(0, 0x1000), ElementsAre(first, second));
  auto from_before = landing_pads({tables.hdr()}, tables.text(0) - 0x10, tables.text(1));
  ASSERT_TRUE(from_before) << from_before.error();
  EXPECT_THAT(*from_before, ElementsAre(first, second)) << "a range that starts before the FDE";
  EXPECT_THAT(tables.pads(kNoLsda, kNoPads + 1), IsEmpty()) << "three FDEs, no pads";
  EXPECT_THAT(tables.pads(kWithPads + 4, kWithPads + 4), IsEmpty()) << "an empty range";
  EXPECT_THAT(tables.pads(kNoLsda, kNoLsda + 0x20), IsEmpty()) << "LSDA pointer stored as 0";
  EXPECT_THAT(tables.pads(kNoL + 0x10, kNoL + 0x15), IsEmpty()) << "a CIE without 'L'";
  EXPECT_THAT(tables.pads(kNoL + 0x30, kNoPads), IsEmpty()) << "between two FDEs";
  EXPECT_THAT(tables.pads(kNoPads + 0x3b, kNoPads + 0x40), IsEmpty()) << "call sites, no pads";
  EXPECT_THAT(tables.pads(kNoPads + 0x40, kNoPads + 0x100), IsEmpty()) << "after every FDE";
  auto before = landing_pads({tables.hdr()}, tables.text(0) - 0x100, tables.text(0));
  ASSERT_TRUE(before) << before.error();
  EXPECT_THAT(*before, IsEmpty()) << "before every FDE";
}

using namespace dw_eh_pe;  // NOLINT(google-build-using-namespace): the encodings read better

INSTANTIATE_TEST_SUITE_P(
    Hand, LandingPadsEncodings,
    ::testing::Values(
        // GCC's and clang's own choices on x86_64.
        Encodings{.name = "gcc"},
        Encodings{.name = "udata4_call_sites", .call_site = kUdata4, .augmentation = "zPLRS"},
        // Absolute pointers everywhere, 64-bit lengths, a version 3 CIE.
        Encodings{.name = "absolute",
                  .eh_frame_ptr = kAbsptr,
                  .table = kUdata8,
                  .fde = kAbsptr,
                  .lsda = kUdata8,
                  .lpstart = kAbsptr,
                  .ttype = kOmit,
                  .call_site = kUdata8,
                  .cie_version = 3,
                  .extended_length = true},
        Encodings{.name = "wide",
                  .eh_frame_ptr = kDatarel | kSdata4,
                  .table = kDatarel | kSdata8,
                  .fde = kPcrel | kSdata8,
                  .lsda = kIndirect | kPcrel | kSdata4,
                  .lpstart = kPcrel | kSdata4,
                  .call_site = kSdata4,
                  .cie_version = 3},
        Encodings{.name = "leb128",
                  .eh_frame_ptr = kSdata8,
                  .table = kPcrel | kSdata4,
                  .fde = kPcrel | kUleb128,
                  .lsda = kPcrel | kSleb128,
                  .lpstart = kFuncrel | kUdata4,
                  .ttype = kAbsptr,
                  .call_site = kSleb128},
        Encodings{.name = "small",
                  .table = kDatarel | kUdata2,
                  .fde = kPcrel | kSdata2,
                  .lsda = kAligned,
                  .lpstart = kFuncrel | kSdata2,
                  .call_site = kUdata2,
                  .extended_length = true},
        Encodings{.name = "funcrel_lsda",
                  .table = kDatarel | kUdata4,
                  .fde = kPcrel | kUdata2,
                  .lsda = kFuncrel | kSdata4,
                  .call_site = kSdata2}),
    [](const ::testing::TestParamInfo<Encodings>& info) { return info.param.name; });

std::string error_of(const Encodings& encodings, void (*corrupt)(Tables&)) {
  Tables tables(encodings);
  corrupt(tables);
  auto pads = landing_pads({tables.hdr()}, tables.text(0), tables.text(0x1000));
  return pads ? "no error" : pads.error();
}

void nothing(Tables&) {}

TEST(LandingPads, UnreadableTablesAreErrorsNotCrashes) {
  alignas(8) static const uint8_t zeros[64] = {};
  auto zero = landing_pads({reinterpret_cast<uintptr_t>(zeros)}, 0x1000, 0x1005);
  ASSERT_FALSE(zero);
  EXPECT_THAT(zero.error(), HasSubstr("version 0"));
  EXPECT_FALSE(landing_pads({0}, 0x1000, 0x1005)) << "no eh_frame_hdr";

  const Encodings gcc{.name = "gcc"};
  EXPECT_THAT(error_of(gcc, [](Tables& t) { t.image().patch(0, 2); }), HasSubstr("version 2"));
  EXPECT_THAT(error_of(gcc, [](Tables& t) { t.image().patch(3, kOmit); }),
              HasSubstr("without a search table"));
  EXPECT_THAT(error_of(gcc, [](Tables& t) { t.image().patch(3, kTextrel | kSdata4); }),
              HasSubstr("search table encoding"));
  EXPECT_THAT(error_of(gcc, [](Tables& t) { t.image().patch(1, 0x0d); }),
              HasSubstr("eh_frame_ptr"));
  // fde_count (udata4 at offset 8) past any real object
  EXPECT_THAT(error_of(gcc,
                       [](Tables& t) {
                         t.image().seek(8);
                         t.image().put(uint32_t{0x7fffffff});
                       }),
              HasSubstr("fde_count"));
  // The first table entry's FDE (datarel sdata4 at offset 16) made the CIE.
  EXPECT_THAT(error_of(gcc,
                       [](Tables& t) {
                         t.image().seek(16);
                         t.image().pointer(kDatarel | kSdata4, t.cie());
                       }),
              HasSubstr("FDE pointer to a CIE"));
  EXPECT_EQ(error_of(gcc, nothing), "no error");
}

TEST(LandingPads, UnsupportedEncodingsAreErrors) {
  EXPECT_THAT(error_of({.name = "textrel", .fde = kTextrel | kSdata4}, nothing),
              HasSubstr("pc_begin"));
  EXPECT_THAT(error_of({.name = "datarel_lsda", .lsda = kDatarel | kSdata4}, nothing),
              HasSubstr("datarel"));
  EXPECT_THAT(error_of({.name = "pcrel_calls", .call_site = kPcrel | kUleb128}, nothing),
              HasSubstr("call-site encoding"));
  EXPECT_THAT(error_of({.name = "format5", .call_site = 0x05}, nothing),
              HasSubstr("call-site encoding"));
  EXPECT_THAT(error_of({.name = "letter", .augmentation = "zPLRX"}, nothing),
              HasSubstr("augmentation \"zPLRX\""));
  EXPECT_THAT(error_of({.name = "eh", .augmentation = "eh"}, nothing),
              HasSubstr("augmentation \"eh\""));
  EXPECT_THAT(error_of({.name = "v2", .cie_version = 2}, nothing), HasSubstr("CIE version 2"));
}

}  // namespace
}  // namespace dprobe::core
