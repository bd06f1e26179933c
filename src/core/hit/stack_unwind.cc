// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One frame at a time: the FDE covering the frame's pc (the object's search
// table, then the FDE and its CIE), the CFA program run up to that pc (the
// CIE's initial instructions, then the FDE's), which leaves a rule for the
// CFA and for each register saying where the caller's value is; from them
// the caller's registers, its pc being the return address column's value.
// Sources: DWARF 4 section 6.4 (call frame information), the LSB's
// .eh_frame/.eh_frame_hdr, the x86_64 psABI's DWARF register numbers.
//
// The parts: core/eh_frame_hdr.h finds the FDE, core/eh_frame_entries.h
// reads it and its CIE, core/cfa_program.h runs their instructions,
// core/dwarf_expression.h evaluates the expressions their rules may hold,
// core/unwind_cache.h keeps the rules worked out; here, the walk.
#include "core/hit/stack_unwind.h"

#include <bit>

#include "base/hit_path.h"
#include "core/hit/cfa_program.h"
#include "core/hit/dwarf_expression.h"
#include "core/hit/eh_frame_entries.h"
#include "core/hit/word_copy.h"
#include "core/unwind_registers.h"

namespace dprobe::core {
namespace unwinding {
namespace {

// How far above a frame's sp its frame pointer may be: more than any JIT
// frame is, less than a stack of garbage would take a number to be.
constexpr uint64_t kMaxFramePointerReach = uint64_t{1} << 20;

// What a frame's unwind needs, as the unwind cache keeps it.
struct FrameRules {
  Row row;
  uint32_t ra_column;
  uint32_t signal_frame;  // 1: the CIE says 'S'
  uint64_t ruled;         // bit c: column c has a rule (not kUnspecified)
};
static_assert(sizeof(FrameRules) == UnwindCache::kWords * 8);

// The frame being unwound.
struct Frame {
  Registers regs;
  uint64_t pc = 0;
  uint64_t callee_cfa = 0;  // the CFA of the frame unwound before (0: none)
  bool exact = true;        // pc is no return address: the first frame, or one a signal interrupted
  bool after_signal = false;
};

struct Walker {
  Walker(const UnwindObjects& o, const ReturnAddressFixup* f, UnwindMemory m, UnwindCache* c)
      : objects(o), fixup(f), memory(m), tables(m), stack(m), cache(c) {
    generation = objects.generation();
    if ((generation & 1) != 0) cache = nullptr;  // the table is changing
  }

  const UnwindObjects& objects;
  const ReturnAddressFixup* fixup;
  UnwindMemory memory;
  Tables tables;
  ByteCache stack;
  UnwindCache* cache;
  uint64_t generation;
  // The last CIE read, and the row its initial instructions make: frames
  // of one object mostly share one.
  Cie cie;
  uint64_t initial_of = 0;  // the CIE whose row `initial` is; 0: none
  Row initial;
};

// ---- From one frame to its caller.

// The value of the expression block at `block` in the frame of `regs`.
DPROBE_HIT_PATH bool evaluate(Walker& walker, const Registers& regs, uint64_t block,
                              const uint64_t* initial, uint64_t& result) {
  return ExpressionEvaluator(regs, walker.tables.fde_bytes, walker.memory)
      .run(block, initial, result);
}

// Where the caller's CFA is: this frame's CFA.
DPROBE_HIT_PATH bool compute_cfa(const Row& row, const Registers& regs, Walker& walker,
                                 uint64_t& cfa) {
  if (row.cfa_is_expression) {
    return evaluate(walker, regs, row.cfa_expression, nullptr, cfa);
  }
  if (!regs.has(row.cfa_register)) return false;
  cfa = regs.value[row.cfa_register] + static_cast<uint64_t>(row.cfa_offset);
  return true;
}

// The caller's value of `column` by its rule, a rule given (the caller's
// registers start as this frame's: the rule of the unspecified ones);
// `slot` gets where it was read from (0: not read from memory). False when
// a read fails: the stack is not what the tables say, and the unwind stops.
DPROBE_HIT_PATH bool caller_value(const Row& row, uint32_t column, uint64_t cfa,
                                  const Registers& regs, Walker& walker, Registers& caller,
                                  uint64_t& slot) {
  const int64_t operand = row.operand[column];
  uint64_t address = 0;
  uint64_t v = 0;
  switch (row.how[column]) {
    case Rule::kUnspecified:
    case Rule::kSame:
      return true;
    case Rule::kUndefined:
      caller.known &= ~(uint64_t{1} << column);
      return true;
    case Rule::kAtOffset:
      address = cfa + static_cast<uint64_t>(operand);
      break;
    case Rule::kValOffset:
      caller.set(column, cfa + static_cast<uint64_t>(operand));
      return true;
    case Rule::kInRegister:
      if (regs.has(static_cast<uint64_t>(operand))) {
        caller.set(column, regs.value[static_cast<uint64_t>(operand)]);
      } else {
        caller.known &= ~(uint64_t{1} << column);
      }
      return true;
    case Rule::kAtExpression:
      if (!evaluate(walker, regs, static_cast<uint64_t>(operand), &cfa, address)) return false;
      break;
    case Rule::kValExpression:
      if (!evaluate(walker, regs, static_cast<uint64_t>(operand), &cfa, v)) return false;
      caller.set(column, v);
      return true;
  }
  if (!walker.stack.word(address, v)) return false;
  slot = address;
  caller.set(column, v);
  return true;
}

// The row of `target` in the FDE's function, from the walker's CIE.
DPROBE_HIT_PATH bool frame_row(Walker& walker, const Fde& fde, uint64_t target, Row& row) {
  const Cie& cie = walker.cie;
  if (walker.initial_of != cie.address) {
    walker.initial_of = 0;
    clear_words(walker.initial);
    CfaProgram program(cie, nullptr);
    if (!program.run(walker.tables.cie_bytes, cie.insns, cie.insns_end, 0, UINT64_MAX,
                     walker.initial)) {
      return false;
    }
    walker.initial_of = cie.address;
  }
  copy_words(row, walker.initial);
  CfaProgram program(cie, &walker.initial);
  return program.run(walker.tables.fde_bytes, fde.insns, fde.insns_end, fde.pc_begin, target, row);
}

// What the tables say of a frame: its rules, nothing (no object holds the
// pc, or no FDE covers it: JIT code, V8's embedded builtins), or rules this
// unwinder cannot use (a broken entry, CFI it does not know).
enum class Found : uint8_t { kRules, kNone, kUnusable };

// The rules of the frame at `pc` from the tables (`lookup` is the address
// looked up: pc, or pc - 1 for a return address).
DPROBE_HIT_PATH Found read_rules(Walker& walker, uint64_t lookup, FrameRules& rules) {
  UnwindObject object;
  if (!walker.objects.find(lookup, object)) return Found::kNone;
  const uint64_t fde_address = find_fde(object, lookup, walker.memory);
  if (fde_address == 0) return Found::kNone;
  Fde fde;
  if (!parse_fde(walker.tables, fde_address, walker.cie, fde)) return Found::kUnusable;
  if (lookup < fde.pc_begin || lookup >= fde.pc_end) return Found::kNone;
  if (walker.cie.ra_column >= kColumns || !frame_row(walker, fde, lookup, rules.row)) {
    return Found::kUnusable;
  }
  rules.ra_column = static_cast<uint32_t>(walker.cie.ra_column);
  rules.signal_frame = walker.cie.signal_frame ? 1 : 0;
  rules.ruled = 0;
  for (uint32_t column = 0; column < kColumns; ++column) {
    if (rules.row.how[column] != Rule::kUnspecified) rules.ruled |= uint64_t{1} << column;
  }
  return Found::kRules;
}

// The rules from the cache, or else from the tables into the cache.
DPROBE_HIT_PATH Found rules_for(Walker& walker, uint64_t lookup, FrameRules& rules) {
  uint64_t words[UnwindCache::kWords];
  if (walker.cache != nullptr && walker.cache->recall(lookup, walker.generation, words)) {
    copy_bytes(&rules, words, sizeof rules);
    return Found::kRules;
  }
  clear_words(rules);
  const Found found = read_rules(walker, lookup, rules);
  if (found == Found::kRules && walker.cache != nullptr) {
    copy_bytes(words, &rules, sizeof rules);
    walker.cache->remember(lookup, walker.generation, words);
  }
  return found;
}

// The caller of a frame no table covers, by its frame pointer: JIT code
// keeps one (V8, HotSpot, CPython's perf trampoline), and the frame record
// it points at holds the caller's frame pointer and the return address
// (arch/probe_insn.h). Believed only when it is plausible: aligned, at or
// above the frame's sp and not far above it, so that each such step moves
// up the stack (the caller's sp is above the record) and a loop in the
// chain, or a frame pointer that is a plain number, ends the stack. The
// caller's other registers are unknown: JIT code makes no promise to keep
// them, and a rule that needs one ends the stack rather than misread it.
DPROBE_HIT_PATH bool frame_pointer_step(Frame& frame, Walker& walker) {
  if (!frame.regs.has(kFpColumn) || !frame.regs.has(kSpColumn)) return false;
  const uint64_t fp = frame.regs.value[kFpColumn];
  const uint64_t sp = frame.regs.value[kSpColumn];
  if (fp % arch::kFramePointerAlignment != 0 || fp < sp || fp - sp > kMaxFramePointerReach ||
      fp > UINT64_MAX - arch::kFrameRecordSize) {
    return false;
  }
  const uint64_t cfa = fp + arch::kFrameRecordSize;
  if (frame.callee_cfa != 0 && !frame.after_signal && cfa <= frame.callee_cfa) return false;
  const uint64_t ra_slot = fp + arch::kFrameRecordReturnOffset;
  uint64_t caller_fp = 0;
  uint64_t ra = 0;
  if (!walker.stack.word(fp, caller_fp) || !walker.stack.word(ra_slot, ra)) return false;
  if (walker.fixup != nullptr) ra = walker.fixup->real_return_address(ra, ra_slot);
  if (ra == 0) return false;
  frame.regs.known = 0;
  frame.regs.set(kSpColumn, cfa);
  frame.regs.set(kFpColumn, caller_fp);
  frame.regs.set(kRaColumn, ra);
  frame.pc = ra;
  frame.callee_cfa = cfa;
  frame.exact = false;
  frame.after_signal = false;
  return true;
}

// Unwinds `frame` to its caller; false at the end of the stack, or where
// the unwind cannot go on.
DPROBE_HIT_PATH bool step(Frame& frame, Walker& walker) {
  const uint64_t lookup = frame.exact ? frame.pc : frame.pc - 1;
  FrameRules rules;
  const Row& row = rules.row;
  uint64_t cfa = 0;
  const Found found = rules_for(walker, lookup, rules);
  if (found == Found::kNone) return frame_pointer_step(frame, walker);
  if (found != Found::kRules || !compute_cfa(row, frame.regs, walker, cfa)) return false;
  if (frame.callee_cfa != 0 && !frame.after_signal && cfa <= frame.callee_cfa) return false;
  // Unspecified registers keep their values (libgcc's reading), but for
  // the stack pointer: the caller's is the CFA, by definition of the CFA.
  Registers caller;
  copy_words(caller, frame.regs);
  caller.set(kSpColumn, cfa);
  uint64_t ra_slot = 0;
  for (uint64_t ruled = rules.ruled; ruled != 0; ruled &= ruled - 1) {
    const auto column = static_cast<uint32_t>(std::countr_zero(ruled));
    uint64_t slot = 0;
    if (!caller_value(row, column, cfa, frame.regs, walker, caller, slot)) return false;
    if (column == rules.ra_column) ra_slot = slot;
  }
  // An undefined return address marks the outermost frame (_start's). One
  // without a rule keeps its value: where the return column is the pc
  // itself (x86_64's rip) that is this frame's own pc, the end; where it is
  // a register (arm64's x30, at a function's entry or in a leaf) it holds
  // the return address.
  const bool ra_ruled = ((rules.ruled >> rules.ra_column) & 1) != 0;
  if (!caller.has(rules.ra_column) ||
      (!ra_ruled && kSlotOfColumn[rules.ra_column] == arch::kIpSlot)) {
    return false;
  }
  uint64_t ra = caller.value[rules.ra_column];
  if (walker.fixup != nullptr) ra = walker.fixup->real_return_address(ra, ra_slot);
  if (ra == 0) return false;
  caller.set(rules.ra_column, ra);
  copy_words(frame.regs, caller);
  frame.pc = ra;
  frame.callee_cfa = cfa;
  // Past a signal frame the pc is where the signal struck, not a return
  // address, and the stack may be another (the handler's sigaltstack).
  frame.exact = rules.signal_frame != 0;
  frame.after_signal = rules.signal_frame != 0;
  return true;
}

}  // namespace
}  // namespace unwinding

DPROBE_HIT_PATH uint32_t unwind_stack(const arch::SavedRegs& regs, const UnwindObjects& objects,
                                      uint64_t* pcs, uint32_t max, const ReturnAddressFixup* fixup,
                                      UnwindMemory memory, UnwindCache* cache) noexcept {
  using namespace unwinding;
  if (max == 0) return 0;
  Frame frame;
  for (uint32_t column = 0; column < kColumns; ++column) {
    frame.regs.set(column, regs.slot[kSlotOfColumn[column]]);
  }
  frame.pc = regs.slot[arch::kIpSlot];
  Walker walker(objects, fixup, memory, cache);
  uint32_t count = 0;
  pcs[count++] = frame.pc;
  while (count < max && step(frame, walker)) pcs[count++] = frame.pc;
  return count;
}

}  // namespace dprobe::core
