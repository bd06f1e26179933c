// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/cfa_program.h"

#include "base/hit_path.h"
#include "core/hit/word_copy.h"

namespace dprobe::core::unwinding {
namespace {

// CFA instructions run by one program (a CIE's, an FDE's): more than the
// largest functions need before their last row, and a bound on garbage.
constexpr uint32_t kMaxCfaOps = 2048;

namespace cfa {
constexpr uint8_t kNop = 0x00, kSetLoc = 0x01, kAdvanceLoc1 = 0x02, kAdvanceLoc2 = 0x03,
                  kAdvanceLoc4 = 0x04, kOffsetExtended = 0x05, kRestoreExtended = 0x06,
                  kUndefined = 0x07, kSameValue = 0x08, kRegister = 0x09, kRememberState = 0x0a,
                  kRestoreState = 0x0b, kDefCfa = 0x0c, kDefCfaRegister = 0x0d,
                  kDefCfaOffset = 0x0e, kDefCfaExpression = 0x0f, kExpression = 0x10,
                  kOffsetExtendedSf = 0x11, kDefCfaSf = 0x12, kDefCfaOffsetSf = 0x13,
                  kValOffset = 0x14, kValOffsetSf = 0x15, kValExpression = 0x16,
                  kGnuArgsSize = 0x2e, kGnuNegativeOffsetExtended = 0x2f;
// The primary operations: the high two bits, the operand in the low six.
constexpr uint8_t kAdvanceLoc = 1, kOffset = 2, kRestore = 3;
}  // namespace cfa

}  // namespace

DPROBE_HIT_PATH bool CfaProgram::run(ByteCache& bytes, uint64_t begin, uint64_t end, uint64_t loc,
                                     uint64_t target, Row& row) noexcept {
  Cursor c(bytes, begin, end);
  loc_ = loc;
  while (c.ok() && !c.done() && loc_ <= target) {
    if (ops_ == kMaxCfaOps || !op(c, row)) return false;
    ++ops_;
  }
  return c.ok();
}

DPROBE_HIT_PATH bool CfaProgram::op(Cursor& c, Row& row) noexcept {
  const uint8_t code = c.u8();
  const uint8_t low = code & 0x3f;
  switch (code >> 6) {
    case cfa::kAdvanceLoc:
      loc_ += low * cie_.code_align;
      return true;
    case cfa::kOffset:
      set(row, low, Rule::kAtOffset, factored(c.uleb()));
      return true;
    case cfa::kRestore:
      restore(row, low);
      return true;
    default:
      break;
  }
  switch (code) {
    case cfa::kNop:
      return true;
    case cfa::kGnuArgsSize:  // what a call pushed: for landing pads only
      c.uleb();
      return true;
    case cfa::kSetLoc:
    case cfa::kAdvanceLoc1:
    case cfa::kAdvanceLoc2:
    case cfa::kAdvanceLoc4:
      return location_op(code, c);
    case cfa::kDefCfa:
    case cfa::kDefCfaSf:
    case cfa::kDefCfaRegister:
    case cfa::kDefCfaOffset:
    case cfa::kDefCfaOffsetSf:
    case cfa::kDefCfaExpression:
      return cfa_op(code, c, row);
    case cfa::kRememberState:
    case cfa::kRestoreState:
      return state_op(code, row);
    case cfa::kOffsetExtended:
    case cfa::kRestoreExtended:
    case cfa::kUndefined:
    case cfa::kSameValue:
    case cfa::kRegister:
    case cfa::kExpression:
    case cfa::kOffsetExtendedSf:
    case cfa::kValOffset:
    case cfa::kValOffsetSf:
    case cfa::kValExpression:
    case cfa::kGnuNegativeOffsetExtended:
      return register_op(code, c, row);
    default:
      return false;  // a vendor's operation: its operands cannot be stepped over
  }
}

DPROBE_HIT_PATH bool CfaProgram::location_op(uint8_t code, Cursor& c) {
  switch (code) {
    case cfa::kSetLoc:
      loc_ = c.pointer(cie_.fde_encoding);
      return true;
    case cfa::kAdvanceLoc1:
      loc_ += c.fixed(1) * cie_.code_align;
      return true;
    case cfa::kAdvanceLoc2:
      loc_ += c.fixed(2) * cie_.code_align;
      return true;
    case cfa::kAdvanceLoc4:
      loc_ += c.fixed(4) * cie_.code_align;
      return true;
    default:
      return false;
  }
}

DPROBE_HIT_PATH bool CfaProgram::register_op(uint8_t code, Cursor& c, Row& row) {
  const uint64_t column = c.uleb();
  switch (code) {
    case cfa::kRestoreExtended:
      restore(row, column);
      return true;
    case cfa::kUndefined:
      set(row, column, Rule::kUndefined, 0);
      return true;
    case cfa::kSameValue:
      set(row, column, Rule::kSame, 0);
      return true;
    case cfa::kOffsetExtended:
      set(row, column, Rule::kAtOffset, factored(c.uleb()));
      return true;
    case cfa::kOffsetExtendedSf:
      set(row, column, Rule::kAtOffset, factored(static_cast<uint64_t>(c.sleb())));
      return true;
    case cfa::kGnuNegativeOffsetExtended:
      set(row, column, Rule::kAtOffset, -factored(c.uleb()));
      return true;
    case cfa::kValOffset:
      set(row, column, Rule::kValOffset, factored(c.uleb()));
      return true;
    case cfa::kValOffsetSf:
      set(row, column, Rule::kValOffset, factored(static_cast<uint64_t>(c.sleb())));
      return true;
    case cfa::kRegister:
      set(row, column, Rule::kInRegister, static_cast<int64_t>(c.uleb()));
      return true;
    case cfa::kExpression:
      set(row, column, Rule::kAtExpression, block(c));
      return true;
    case cfa::kValExpression:
      set(row, column, Rule::kValExpression, block(c));
      return true;
    default:
      return false;
  }
}

DPROBE_HIT_PATH bool CfaProgram::cfa_op(uint8_t code, Cursor& c, Row& row) {
  switch (code) {
    case cfa::kDefCfa:
    case cfa::kDefCfaSf:
      row.cfa_is_expression = false;
      row.cfa_register = c.uleb();
      row.cfa_offset = code == cfa::kDefCfa ? static_cast<int64_t>(c.uleb())
                                            : factored(static_cast<uint64_t>(c.sleb()));
      return true;
    case cfa::kDefCfaRegister:
      row.cfa_is_expression = false;
      row.cfa_register = c.uleb();
      return true;
    case cfa::kDefCfaOffset:
      row.cfa_offset = static_cast<int64_t>(c.uleb());
      return true;
    case cfa::kDefCfaOffsetSf:
      row.cfa_offset = factored(static_cast<uint64_t>(c.sleb()));
      return true;
    case cfa::kDefCfaExpression:
      row.cfa_is_expression = true;
      row.cfa_expression = static_cast<uint64_t>(block(c));
      return true;
    default:
      return false;
  }
}

// The CFA rule is part of the state remembered: GCC's epilogues in the
// middle of a function count on it.
DPROBE_HIT_PATH bool CfaProgram::state_op(uint8_t code, Row& row) {
  if (code == cfa::kRememberState) {
    if (depth_ == kRememberDepth) return false;
    copy_words(remembered_[depth_++], row);
    return true;
  }
  if (depth_ == 0) return false;
  copy_words(row, remembered_[--depth_]);
  return true;
}

}  // namespace dprobe::core::unwinding
