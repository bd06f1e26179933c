// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// DWARF expressions (DW_OP_*, DWARF 4 section 2.5), for
// DW_CFA_def_cfa_expression, DW_CFA_expression and DW_CFA_val_expression:
// a small stack machine, as far as call frame information uses it (PLT
// entries, signal frames). Bounded work and stack, fault-safe reads: it
// runs on the hit path.
//
//   uint64_t address;
//   if (ExpressionEvaluator(regs, tables.fde_bytes, memory).run(block, &cfa, address)) ...
#ifndef DPROBE_CORE_DWARF_EXPRESSION_H_
#define DPROBE_CORE_DWARF_EXPRESSION_H_

#include <cstdint>

#include "core/hit/eh_frame_entries.h"
#include "core/hit/unwind_memory.h"
#include "core/unwind_registers.h"

namespace dprobe::core::unwinding {

// One evaluation: made for a frame's registers, run once.
class ExpressionEvaluator {
 public:
  // `bytes`: where the expression is read from (the FDE's window);
  // `memory`: what DW_OP_deref reads.
  ExpressionEvaluator(const Registers& regs, ByteCache& bytes, UnwindMemory memory)
      : regs_(regs), bytes_(bytes), memory_(memory) {}

  // The value of the expression block at `block` (ULEB128 length first),
  // with `initial` pushed first when given.
  bool run(uint64_t block, const uint64_t* initial, uint64_t& result) noexcept;

 private:
  static constexpr uint32_t kStackDepth = 16;
  static constexpr uint32_t kMaxExpressionOps = 64;

  void push(uint64_t v) {
    if (depth_ == kStackDepth) ok_ = false;
    if (ok_) stack_[depth_++] = v;
  }
  uint64_t pop() {
    if (depth_ == 0) ok_ = false;
    if (!ok_) return 0;
    return stack_[index(--depth_)];
  }
  uint64_t top() {
    if (depth_ == 0) ok_ = false;
    if (!ok_) return 0;
    return stack_[index(depth_ - 1)];
  }
  // depth_ never passes kStackDepth (push sees to it); the mask changes no
  // index and lets GCC's -Warray-bounds see it in range.
  static uint32_t index(uint32_t at) { return at & (kStackDepth - 1); }
  static_assert((kStackDepth & (kStackDepth - 1)) == 0);
  uint64_t reg(uint64_t column) {
    if (!regs_.has(column)) ok_ = false;
    return ok_ ? regs_.value[column] : 0;
  }

  uint64_t deref(uint64_t address, uint64_t size) {
    uint64_t v = 0;
    if (size == 0 || size > 8 || !memory_(&v, address, size)) ok_ = false;
    return v;
  }

  bool op(Cursor& c) noexcept;
  bool constant(uint8_t code, Cursor& c);
  bool stack_op(uint8_t code, Cursor& c);
  bool unary(uint8_t code, Cursor& c);
  bool binary(uint8_t code);
  bool branch(uint8_t code, Cursor& c);

  const Registers& regs_;
  ByteCache& bytes_;
  UnwindMemory memory_;
  uint64_t stack_[kStackDepth];
  uint32_t depth_ = 0;
  bool ok_ = true;
};

}  // namespace dprobe::core::unwinding

#endif  // DPROBE_CORE_DWARF_EXPRESSION_H_
