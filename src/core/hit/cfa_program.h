// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The CFA program (DW_CFA_*, DWARF 4 section 6.4.2): the instructions of a
// CIE and an FDE, run up to a pc, leave the row of rules for that pc: how
// to compute the CFA, and for each register where the caller's value is.
// Bounded work (the instructions run, the remember_state nesting), no
// allocation: it runs on the hit path.
//
//   Row initial;
//   clear_words(initial);
//   CfaProgram(cie, nullptr).run(bytes, cie.insns, cie.insns_end, 0, UINT64_MAX, initial);
//   Row row;
//   copy_words(row, initial);
//   CfaProgram(cie, &initial).run(bytes, fde.insns, fde.insns_end, fde.pc_begin, pc, row);
#ifndef DPROBE_CORE_CFA_PROGRAM_H_
#define DPROBE_CORE_CFA_PROGRAM_H_

#include <cstdint>

#include "core/hit/eh_frame_entries.h"
#include "core/unwind_registers.h"

namespace dprobe::core::unwinding {

enum class Rule : uint8_t {
  kUnspecified,  // none given: the CFA for the stack pointer, the same value for others
  kUndefined,
  kSame,
  kAtOffset,       // saved at CFA + operand
  kValOffset,      // is CFA + operand
  kInRegister,     // in register `operand`
  kAtExpression,   // saved at the address the expression at `operand` computes
  kValExpression,  // is what the expression at `operand` computes
};

// Not initialized by itself (see copy_words, core/word_copy.h):
// clear_words() makes it the empty row, every rule unspecified.
struct Row {
  int64_t operand[kColumns];
  Rule how[kColumns];
  bool cfa_is_expression;
  uint64_t cfa_register;
  int64_t cfa_offset;
  uint64_t cfa_expression;  // its block (ULEB128 length first)
};

// Runs CFA instructions on a row, up to the row that covers the target.
class CfaProgram {
 public:
  // `initial`: the row the CIE's instructions made, for DW_CFA_restore
  // (null while they run: the empty row).
  CfaProgram(const Cie& cie, const Row* initial) : cie_(cie), initial_(initial) {}

  // Runs [begin, end) from location `loc` while loc <= target.
  bool run(ByteCache& bytes, uint64_t begin, uint64_t end, uint64_t loc, uint64_t target,
           Row& row) noexcept;

 private:
  // Nesting of DW_CFA_remember_state: compilers nest one level, hand-written
  // assembly two at most.
  static constexpr uint32_t kRememberDepth = 4;

  int64_t factored(uint64_t offset) const {
    return static_cast<int64_t>(offset * static_cast<uint64_t>(cie_.data_align));
  }
  static void set(Row& row, uint64_t column, Rule how, int64_t operand) {
    // Columns past the unwinder's (vector registers) are read and dropped.
    if (column >= kColumns) return;
    row.how[column] = how;
    row.operand[column] = operand;
  }
  void restore(Row& row, uint64_t column) const {
    if (column >= kColumns) return;
    if (initial_ == nullptr) {
      set(row, column, Rule::kUnspecified, 0);
    } else {
      set(row, column, initial_->how[column], initial_->operand[column]);
    }
  }
  // The block of an expression operand: where it is, then stepped over.
  DPROBE_HIT_PATH static int64_t block(Cursor& c) {
    const uint64_t at = c.at();
    c.skip(c.uleb());
    return static_cast<int64_t>(at);
  }

  bool op(Cursor& c, Row& row) noexcept;
  bool location_op(uint8_t code, Cursor& c);
  bool register_op(uint8_t code, Cursor& c, Row& row);
  bool cfa_op(uint8_t code, Cursor& c, Row& row);
  bool state_op(uint8_t code, Row& row);

  const Cie& cie_;
  const Row* initial_;
  Row remembered_[kRememberDepth];
  uint32_t depth_ = 0;
  uint32_t ops_ = 0;
  uint64_t loc_ = 0;
};

}  // namespace dprobe::core::unwinding

#endif  // DPROBE_CORE_CFA_PROGRAM_H_
