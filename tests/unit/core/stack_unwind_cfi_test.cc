// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The stack unwinder on hand-assembled tables, for the CFI a compiler
// rarely writes: PLT expressions, signal frames, the return stub's rules,
// augmentations, register rules, rows past the pc; the cache of rules on
// them; headers without a search table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "arch/runtime/safe_memory.h"
#include "core/hit/stack_unwind.h"
#include "core/hit/unwind_objects.h"
#include "unit/core/eh_image.h"
#include "unit/core/unwind_test_fixture.h"

namespace dprobe::core {
namespace {

uint64_t address_of(const void* p) { return reinterpret_cast<uint64_t>(p); }

// An .eh_frame_hdr and .eh_frame in memory. Text addresses are numbers in
// the image's text region: looked up, never run or read.
class CfiImage {
 public:
  static constexpr uint8_t kPcrelSdata4 = 0x1b;
  static constexpr uint8_t kDatarelSdata4 = 0x3b;

  uint64_t text(uint64_t offset) const { return image_.address(EhImage::kText) + offset; }

  // A CIE: code alignment 1, data alignment -8, return address column 16,
  // FDE pointers pcrel sdata4 ("zR", "zRS"; "zPLR" has a personality
  // routine and LSDAs, as C++ code's), then `initial`. Version 3 writes
  // the return address column as ULEB128.
  uint64_t cie(std::string_view augmentation, const std::vector<uint8_t>& initial,
               uint8_t version = 1) {
    const size_t at = begin_entry();
    image_.put<uint32_t>(0);  // CIE id
    image_.u8(version);
    image_.text(augmentation);
    image_.uleb(1);
    image_.sleb(-8);
    image_.uleb(16);  // one byte either way
    if (augmentation == "zPLR") {
      image_.uleb(7);
      image_.u8(0x9b);  // personality: indirect pcrel sdata4
      image_.put<uint32_t>(0x1234);
      image_.u8(kPcrelSdata4);  // the LSDA's encoding
      image_.u8(kPcrelSdata4);
    } else if (!augmentation.empty() && augmentation[0] == 'z') {
      image_.uleb(1);
      image_.u8(kPcrelSdata4);
    }
    for (uint8_t byte : initial) image_.u8(byte);
    end_entry(at);
    return image_.address(at);
  }

  // An FDE of `cie` covering text [begin, begin + size); its address.
  // `lsda`: its CIE is "zPLR", and the FDE points to an LSDA.
  uint64_t fde(uint64_t cie, uint64_t begin, uint64_t size, const std::vector<uint8_t>& program,
               bool lsda = false) {
    const size_t at = begin_entry();
    image_.put<uint32_t>(static_cast<uint32_t>(image_.here() - cie));
    image_.pointer(kPcrelSdata4, text(begin));
    image_.put<uint32_t>(static_cast<uint32_t>(size));
    image_.uleb(lsda ? 4 : 0);
    if (lsda) image_.put<uint32_t>(0x100);
    for (uint8_t byte : program) image_.u8(byte);
    end_entry(at);
    fdes_.push_back({text(begin), image_.address(at)});
    return image_.address(at);
  }

  // Writes the header and its search table.
  UnwindObject object() {
    image_.seek(eh_frame_);
    image_.put<uint32_t>(0);  // the terminator
    std::sort(fdes_.begin(), fdes_.end());
    image_.seek(EhImage::kHdr);
    for (uint8_t byte : {uint8_t{1}, kPcrelSdata4, uint8_t{0x03}, kDatarelSdata4}) image_.u8(byte);
    image_.pointer(kPcrelSdata4, image_.address(EhImage::kEhFrame));
    image_.put<uint32_t>(static_cast<uint32_t>(fdes_.size()));
    for (const auto& [pc, fde] : fdes_) {
      image_.pointer(kDatarelSdata4, pc);
      image_.pointer(kDatarelSdata4, fde);
    }
    auto object =
        describe_object(text(0), text(0x1000), image_.address(EhImage::kHdr), safe_unwind_memory());
    EXPECT_TRUE(object.has_value());
    return object.value_or(UnwindObject{});
  }

  EhImage& image() { return image_; }

 private:
  size_t begin_entry() {
    image_.seek(eh_frame_);
    image_.put<uint32_t>(0);  // the length, once known
    return eh_frame_;
  }
  void end_entry(size_t at) {
    eh_frame_ = image_.offset();
    image_.seek(at);
    image_.put<uint32_t>(static_cast<uint32_t>(eh_frame_ - at - 4));
  }

  EhImage image_;
  size_t eh_frame_ = EhImage::kEhFrame;
  std::vector<std::pair<uint64_t, uint64_t>> fdes_;
};

// DW_CFA_* and DW_OP_* bytes the tables below use.
constexpr uint8_t kDefCfa = 0x0c, kDefCfaExpression = 0x0f, kExpression = 0x10, kValOffset = 0x14,
                  kUndefined = 0x07, kRegister = 0x09, kRememberState = 0x0a, kGnuArgsSize = 0x2e,
                  kGnuWindowSave = 0x2d, kAdvanceLoc = 0x40, kOffsetRip = 0x80 | 16;
constexpr uint8_t kRsp = 7, kRbx = 3, kR12 = 12, kRip = 16;
// CFA = rsp + 8; the return address at CFA - 8.
const std::vector<uint8_t> kCallFrame = {kDefCfa, kRsp, 8, kOffsetRip, 1};

class SyntheticUnwindTest : public StackUnwindTest {
 protected:
  std::vector<uint64_t> unwind_image(const arch::SavedRegs& regs) {
    auto objects = std::make_unique<UnwindObjects>();
    EXPECT_TRUE(objects->add(image_.object()));
    uint64_t pcs[16];
    const uint32_t n = unwind_stack(regs, *objects, pcs, 16, nullptr);
    return {pcs, pcs + n};
  }
  arch::SavedRegs regs_at(uint64_t pc) {
    arch::SavedRegs regs{};
    regs.slot[arch::kIpSlot] = pc;
    regs.slot[arch::x86_64::kSp] = address_of(stack_);
    return regs;
  }
  uint64_t stack_at(int index) { return address_of(&stack_[index]); }

  CfiImage image_;
  uint64_t stack_[16] = {};
};

// A PLT entry's CFA: rsp + 8, and 8 more past the push in the entry's
// second half (the expression ld writes for .plt).
TEST_F(SyntheticUnwindTest, PltCfaExpression) {
  const uint64_t cie = image_.cie("zR", {});
  image_.fde(cie, 0, 0x40,
             {kDefCfaExpression, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
              kOffsetRip, 1});
  stack_[0] = 0xaaaa;
  stack_[1] = 0xbbbb;
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x15))),
            (std::vector<uint64_t>{image_.text(0x15), 0xaaaa}));
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x1c))),
            (std::vector<uint64_t>{image_.text(0x1c), 0xbbbb}));
}

TEST_F(SyntheticUnwindTest, UndefinedReturnAddressIsTheOutermostFrame) {
  image_.fde(image_.cie("zR", kCallFrame), 0, 0x10, {kUndefined, kRip});
  stack_[0] = image_.text(1);
  EXPECT_EQ(unwind_image(regs_at(image_.text(4))), std::vector<uint64_t>{image_.text(4)});
}

// The return stub's own rules (arch/x86_64/runtime/return_stubs_x86_64.cc):
// the return address from a fixed slot, the caller's rsp given as CFA - 8.
TEST_F(SyntheticUnwindTest, ReturnStubRules) {
  uint64_t saved_return_address = image_.text(0x201);
  std::vector<uint8_t> stub = {kExpression, kRip, 9, 0x03};
  for (int i = 0; i < 8; ++i) {
    stub.push_back(static_cast<uint8_t>(address_of(&saved_return_address) >> (8 * i)));
  }
  image_.fde(image_.cie("zR", {kDefCfa, kRsp, 8, kValOffset, kRsp, 1}), 0x100, 0x10, stub);
  // The caller: CFA = rsp + 16, so its return address is at the caller's
  // rsp + 8: stack_[1] if rsp = CFA - 8 was followed, stack_[2] if not.
  image_.fde(image_.cie("zR", {kDefCfa, kRsp, 16, kOffsetRip, 1}), 0x200, 0x10, {});
  stack_[1] = 0xcafe;
  stack_[2] = 0xbad;
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x101))),
            (std::vector<uint64_t>{image_.text(0x101), image_.text(0x201), 0xcafe}));
}

// After a signal frame the pc is where the signal struck: looked up as it
// is, not as a return address (pc - 1 falls in a gap here).
TEST_F(SyntheticUnwindTest, SignalFramePcIsExact) {
  image_.fde(image_.cie("zRS", kCallFrame), 0x400, 0x10, {});
  image_.fde(image_.cie("zR", kCallFrame), 0x500, 0x10, {});
  stack_[0] = image_.text(0x500);
  stack_[1] = 0xfeed;
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x401))),
            (std::vector<uint64_t>{image_.text(0x401), image_.text(0x500), 0xfeed}));
}

TEST_F(SyntheticUnwindTest, ReturnAddressLooksUpTheCallNotTheNextFunction) {
  image_.fde(image_.cie("zR", kCallFrame), 0x500, 0x10, {});
  image_.fde(image_.cie("zR", {kDefCfa, kRsp, 16, kOffsetRip, 1}), 0x510, 0x10, {});
  // A call at the end of the first function (a noreturn call's): its
  // return address is the next function's first byte.
  stack_[0] = image_.text(0x510);
  stack_[1] = 0x1111;  // the first function's caller, CFA = rsp + 8
  stack_[2] = 0x2222;  // what the next function's rules would read
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x501))),
            (std::vector<uint64_t>{image_.text(0x501), image_.text(0x510), 0x1111}));
}

TEST_F(SyntheticUnwindTest, CfaThatDoesNotMoveUpStops) {
  // A frame that says its caller is itself, on the same stack.
  image_.fde(image_.cie("zR", {kDefCfa, kRsp, 8, kValOffset, kRsp, 1, kOffsetRip, 1}), 0x600, 0x10,
             {});
  stack_[0] = image_.text(0x601);
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x601))),
            (std::vector<uint64_t>{image_.text(0x601), image_.text(0x601)}));
}

// The CFA defined by rbx, whose value for that frame is in r12.
TEST_F(SyntheticUnwindTest, RegisterRulesCarryToTheCaller) {
  image_.fde(image_.cie("zR", kCallFrame), 0x700, 0x10, {kRegister, kRbx, kR12});
  image_.fde(image_.cie("zR", {kDefCfa, kRbx, 16, kOffsetRip, 1}), 0x800, 0x10, {});
  stack_[0] = image_.text(0x801);
  stack_[5] = 0x5eed;
  arch::SavedRegs regs = regs_at(image_.text(0x701));
  regs.slot[arch::x86_64::kR12] = stack_at(4);
  regs.slot[arch::x86_64::kBx] = 0x10;  // nothing there
  EXPECT_EQ(unwind_image(regs),
            (std::vector<uint64_t>{image_.text(0x701), image_.text(0x801), 0x5eed}));
}

// Rows past the pc are not run: an operation the unwinder does not know
// stops it only where it applies; so does too deep a remember_state.
TEST_F(SyntheticUnwindTest, OnlyRowsUpToThePcAreRun) {
  const uint64_t cie = image_.cie("zR", kCallFrame);
  image_.fde(cie, 0x900, 0x40, {kGnuArgsSize, 16, kAdvanceLoc | 0x10, kGnuWindowSave});
  image_.fde(cie, 0x940, 0x40,
             {kAdvanceLoc | 0x10, kRememberState, kRememberState, kRememberState, kRememberState,
              kRememberState});
  stack_[0] = 0x7777;
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x90f))).size(), 2u);
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x910))).size(), 1u);
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x94f))).size(), 2u);
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x950))).size(), 1u);
}

// What C++ code's CIEs carry (a personality routine, LSDAs), a version 3
// CIE, the signed and value forms of the rules.
TEST_F(SyntheticUnwindTest, AugmentationsAndSignedFormsAreRead) {
  constexpr uint8_t kDefCfaSf = 0x12, kOffsetExtendedSf = 0x11;
  // CFA = rbx + -2 * -8, rbx's caller value at CFA + 3 * -8, the return
  // address at CFA - 8.
  const std::vector<uint8_t> program = {kDefCfaSf, kRbx, 0x7e,       kOffsetExtendedSf,
                                        kRbx,      3,    kOffsetRip, 1};
  image_.fde(image_.cie("zPLR", {}), 0, 0x10, program, true);
  image_.fde(image_.cie("zR", {}, 3), 0x10, 0x10, program);
  stack_[2] = 0x4444;
  for (uint64_t pc : {image_.text(1), image_.text(0x11)}) {
    arch::SavedRegs regs = regs_at(pc);
    regs.slot[arch::x86_64::kBx] = stack_at(1);  // CFA = &stack_[3]
    EXPECT_EQ(unwind_image(regs), (std::vector<uint64_t>{pc, 0x4444}));
  }
}

// The caller's stack pointer as a value expression: rbx + 40.
TEST_F(SyntheticUnwindTest, ValueExpressionRule) {
  constexpr uint8_t kValExpression = 0x16, kBreg3 = 0x73;
  image_.fde(image_.cie("zR", kCallFrame), 0x20, 0x10, {kValExpression, kRsp, 2, kBreg3, 40});
  stack_[0] = image_.text(0x21);  // called from itself, its caller's rsp &stack_[5]
  stack_[1] = 0x1111;             // where a caller's rsp = CFA would lead
  stack_[5] = 0x5555;
  arch::SavedRegs regs = regs_at(image_.text(0x21));
  regs.slot[arch::x86_64::kBx] = stack_at(0);
  EXPECT_EQ(unwind_image(regs),
            (std::vector<uint64_t>{image_.text(0x21), image_.text(0x21), 0x5555}));
}

TEST_F(SyntheticUnwindTest, PcInAGapBetweenFdesStops) {
  const uint64_t cie = image_.cie("zR", kCallFrame);
  image_.fde(cie, 0x100, 0x10, {});
  image_.fde(cie, 0x200, 0x10, {});
  stack_[0] = 0x7777;
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x180))).size(), 1u);
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x80))).size(), 1u);
  EXPECT_EQ(unwind_image(regs_at(image_.text(0x20f))).size(), 2u);
}

TEST_F(SyntheticUnwindTest, CachedRulesLastUntilTheTableChanges) {
  const uint64_t cie = image_.cie("zR", kCallFrame);
  const uint64_t fde = image_.fde(cie, 0, 0x10, {0x0e, 16});  // DW_CFA_def_cfa_offset 16
  stack_[0] = 0x1111;
  stack_[1] = 0x2222;
  auto objects = std::make_unique<UnwindObjects>();
  const UnwindObject object = image_.object();
  ASSERT_TRUE(objects->add(object));
  auto cache = std::make_unique<UnwindCache>();
  auto unwind_cached = [&] {
    uint64_t pcs[4];
    const uint32_t n = unwind_stack(regs_at(image_.text(1)), *objects, pcs, 4, nullptr,
                                    safe_unwind_memory(), cache.get());
    return std::vector<uint64_t>(pcs, pcs + n);
  };
  EXPECT_EQ(unwind_cached(), (std::vector<uint64_t>{image_.text(1), 0x2222}));
  // DW_CFA_def_cfa_offset 8 now: the cache still has offset 16.
  image_.image().seek(static_cast<size_t>(fde + 18 - image_.image().address(0)));
  image_.image().u8(8);
  EXPECT_EQ(unwind_cached(), (std::vector<uint64_t>{image_.text(1), 0x2222}));
  ASSERT_TRUE(objects->remove(object.text_begin));
  ASSERT_TRUE(objects->add(object));
  EXPECT_EQ(unwind_cached(), (std::vector<uint64_t>{image_.text(1), 0x1111}));
}

TEST_F(StackUnwindTest, HeadersWithoutASearchTableAreRefused) {
  CfiImage image;
  const uint64_t fde = image.fde(image.cie("zR", kCallFrame), 0, 0x10, {});
  const UnwindObject good = image.object();
  const uint64_t hdr = good.eh_frame_hdr;
  EXPECT_EQ(find_fde(good, image.text(0), safe_unwind_memory()), fde);
  EXPECT_EQ(find_fde(good, image.text(0x400), safe_unwind_memory()), fde);  // past its end
  EXPECT_EQ(find_fde(good, image.text(0) - 1, safe_unwind_memory()), 0u);
  image.image().seek(EhImage::kHdr + 3);
  image.image().u8(0x1b);  // a table of pcrel entries: not what linkers write
  EXPECT_FALSE(describe_object(0, 1, hdr, safe_unwind_memory()).has_value());
  image.image().seek(EhImage::kHdr);
  image.image().u8(2);  // another version
  EXPECT_FALSE(describe_object(0, 1, hdr, safe_unwind_memory()).has_value());
  EXPECT_FALSE(describe_object(0, 1, 0x10, safe_unwind_memory()).has_value());  // unmapped
}

}  // namespace
}  // namespace dprobe::core
