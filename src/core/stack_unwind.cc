// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One frame at a time: the FDE covering the frame's pc (the object's search
// table, then the FDE and its CIE), the CFA program run up to that pc (the
// CIE's initial instructions, then the FDE's), which leaves a rule for the
// CFA and for each register saying where the caller's value is; from them
// the caller's registers, its pc being the return address column's value.
// Sources: DWARF 4 section 6.4 (call frame information), the LSB's
// .eh_frame/.eh_frame_hdr, the x86_64 psABI's DWARF register numbers.
#include "core/stack_unwind.h"

#include <bit>
#include <type_traits>

namespace dprobe::core {
namespace unwinding {
namespace {

// ---- The ISA, in one place: the x86_64 psABI's DWARF register numbers
// (rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then the return address) and
// the SavedRegs slot of each. The rest is DWARF, the same for any ISA.
constexpr uint32_t kColumns = 17;
constexpr uint32_t kSpColumn = 7;
constexpr uint16_t kSlotOfColumn[kColumns] = {
    arch::x86_64::kAx,  arch::x86_64::kDx,  arch::x86_64::kCx,  arch::x86_64::kBx,
    arch::x86_64::kSi,  arch::x86_64::kDi,  arch::x86_64::kBp,  arch::x86_64::kSp,
    arch::x86_64::kR8,  arch::x86_64::kR9,  arch::x86_64::kR10, arch::x86_64::kR11,
    arch::x86_64::kR12, arch::x86_64::kR13, arch::x86_64::kR14, arch::x86_64::kR15,
    arch::x86_64::kIp};

// Copies and clears word by word, each word through an empty asm, so that
// the compiler cannot make them calls to memcpy or memset: those are the C
// library's, which uses vector registers and may itself be probed.
void copy_bytes(void* dst, const void* src, size_t size) noexcept {
  auto* to = static_cast<unsigned char*>(dst);
  const auto* from = static_cast<const unsigned char*>(src);
  for (size_t i = 0; i < size; i += 8) {
    uint64_t word;
    __builtin_memcpy(&word, from + i, 8);
    __asm__("" : "+r"(word));
    __builtin_memcpy(to + i, &word, 8);
  }
}

template <typename T>
void copy_words(T& dst, const T& src) noexcept {
  static_assert(sizeof(T) % 8 == 0 && std::is_trivially_copyable_v<T>);
  copy_bytes(&dst, &src, sizeof(T));
}

template <typename T>
void clear_words(T& dst) noexcept {
  static_assert(sizeof(T) % 8 == 0 && std::is_trivially_copyable_v<T>);
  auto* to = reinterpret_cast<unsigned char*>(&dst);
  for (size_t i = 0; i < sizeof(T); i += 8) {
    uint64_t word = 0;
    __asm__("" : "+r"(word));
    __builtin_memcpy(to + i, &word, 8);
  }
}

// ---- The CFA program (DW_CFA_*): the rules of a frame's row.

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

// Not initialized by itself (see copy_words): clear_words() makes it the
// empty row, every rule unspecified.
struct Row {
  int64_t operand[kColumns];
  Rule how[kColumns];
  bool cfa_is_expression;
  uint64_t cfa_register;
  int64_t cfa_offset;
  uint64_t cfa_expression;  // its block (ULEB128 length first)
};

// Nesting of DW_CFA_remember_state: compilers nest one level, hand-written
// assembly two at most.
constexpr uint32_t kRememberDepth = 4;
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

// Runs CFA instructions on a row, up to the row that covers the target.
class CfaProgram {
 public:
  // `initial`: the row the CIE's instructions made, for DW_CFA_restore
  // (null while they run: the empty row).
  CfaProgram(const Cie& cie, const Row* initial) : cie_(cie), initial_(initial) {}

  // Runs [begin, end) from location `loc` while loc <= target.
  bool run(ByteCache& bytes, uint64_t begin, uint64_t end, uint64_t loc, uint64_t target,
           Row& row) noexcept {
    Cursor c(bytes, begin, end);
    loc_ = loc;
    while (c.ok() && !c.done() && loc_ <= target) {
      if (ops_ == kMaxCfaOps || !op(c, row)) return false;
      ++ops_;
    }
    return c.ok();
  }

 private:
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
  static int64_t block(Cursor& c) {
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

bool CfaProgram::op(Cursor& c, Row& row) noexcept {
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

bool CfaProgram::location_op(uint8_t code, Cursor& c) {
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

bool CfaProgram::register_op(uint8_t code, Cursor& c, Row& row) {
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

bool CfaProgram::cfa_op(uint8_t code, Cursor& c, Row& row) {
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
bool CfaProgram::state_op(uint8_t code, Row& row) {
  if (code == cfa::kRememberState) {
    if (depth_ == kRememberDepth) return false;
    copy_words(remembered_[depth_++], row);
    return true;
  }
  if (depth_ == 0) return false;
  copy_words(row, remembered_[--depth_]);
  return true;
}

// What a frame's unwind needs, as the unwind cache keeps it.
struct FrameRules {
  Row row;
  uint32_t ra_column;
  uint32_t signal_frame;  // 1: the CIE says 'S'
  uint64_t ruled;         // bit c: column c has a rule (not kUnspecified)
};
static_assert(sizeof(FrameRules) == UnwindCache::kWords * 8);

// The registers of one frame, by DWARF column.
struct Registers {
  uint64_t value[kColumns];  // not initialized: see copy_words
  uint64_t known = 0;        // bit c: value[c] is known

  bool has(uint64_t column) const { return column < kColumns && ((known >> column) & 1) != 0; }
  void set(uint64_t column, uint64_t v) {
    value[column] = v;
    known |= uint64_t{1} << column;
  }
};

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

// ---- DWARF expressions (DW_OP_*), for DW_CFA_def_cfa_expression,
// DW_CFA_expression and DW_CFA_val_expression: a small stack machine, as
// far as call frame information uses it (PLT entries, signal frames).
class Evaluator {
 public:
  Evaluator(const Registers& regs, Walker& walker) : regs_(regs), walker_(walker) {}

  // The value of the expression block at `block` (ULEB128 length first),
  // with `initial` pushed first when given.
  bool run(uint64_t block, const uint64_t* initial, uint64_t& result) noexcept {
    Cursor c(walker_.tables.fde_bytes, block, block + kMaxLebBytes);
    const uint64_t length = c.uleb();
    c.limit(c.at() + length);
    if (initial != nullptr) push(*initial);
    for (uint32_t ops = 0; c.ok() && !c.done(); ++ops) {
      if (ops == kMaxExpressionOps || !op(c)) return false;
    }
    if (!c.ok() || !ok_ || depth_ == 0) return false;
    result = stack_[depth_ - 1];
    return true;
  }

 private:
  static constexpr uint32_t kStackDepth = 16;
  static constexpr uint32_t kMaxExpressionOps = 64;

  void push(uint64_t v) {
    if (depth_ == kStackDepth) ok_ = false;
    if (ok_) stack_[depth_++] = v;
  }
  uint64_t pop() {
    if (depth_ == 0) ok_ = false;
    return ok_ ? stack_[--depth_] : 0;
  }
  uint64_t top() {
    if (depth_ == 0) ok_ = false;
    return ok_ ? stack_[depth_ - 1] : 0;
  }
  uint64_t reg(uint64_t column) {
    if (!regs_.has(column)) ok_ = false;
    return ok_ ? regs_.value[column] : 0;
  }

  uint64_t deref(uint64_t address, uint64_t size) {
    uint64_t v = 0;
    if (size == 0 || size > 8 || !walker_.memory(&v, address, size)) ok_ = false;
    return v;
  }

  bool op(Cursor& c) noexcept;
  bool constant(uint8_t code, Cursor& c);
  bool stack_op(uint8_t code, Cursor& c);
  bool unary(uint8_t code, Cursor& c);
  bool binary(uint8_t code);
  bool branch(uint8_t code, Cursor& c);

  const Registers& regs_;
  Walker& walker_;
  uint64_t stack_[kStackDepth];
  uint32_t depth_ = 0;
  bool ok_ = true;
};

namespace op {
constexpr uint8_t kAddr = 0x03, kDeref = 0x06, kConst1u = 0x08, kConst8s = 0x0f, kConstu = 0x10,
                  kConsts = 0x11, kDup = 0x12, kDrop = 0x13, kOver = 0x14, kPick = 0x15,
                  kSwap = 0x16, kRot = 0x17, kAbs = 0x19, kAnd = 0x1a, kMinus = 0x1c, kMul = 0x1e,
                  kNeg = 0x1f, kNot = 0x20, kOr = 0x21, kPlus = 0x22, kPlusUconst = 0x23,
                  kShl = 0x24, kShr = 0x25, kShra = 0x26, kXor = 0x27, kBra = 0x28, kEq = 0x29,
                  kGe = 0x2a, kGt = 0x2b, kLe = 0x2c, kLt = 0x2d, kNe = 0x2e, kSkip = 0x2f,
                  kLit0 = 0x30, kLit31 = 0x4f, kBreg0 = 0x70, kBreg31 = 0x8f, kBregx = 0x92,
                  kDerefSize = 0x94, kNop = 0x96;
}  // namespace op

bool Evaluator::op(Cursor& c) noexcept {
  const uint8_t code = c.u8();
  if (code == op::kNop) return true;
  if (code >= op::kLit0 && code <= op::kLit31) {
    push(code - op::kLit0);
  } else if (code >= op::kBreg0 && code <= op::kBreg31) {
    push(reg(code - op::kBreg0) + static_cast<uint64_t>(c.sleb()));
  } else if (code == op::kBregx) {
    const uint64_t column = c.uleb();
    push(reg(column) + static_cast<uint64_t>(c.sleb()));
  } else if (!constant(code, c) && !stack_op(code, c) && !unary(code, c) && !binary(code) &&
             !branch(code, c)) {
    return false;  // an operation call frame information has no use for
  }
  return ok_ && c.ok();
}

bool Evaluator::constant(uint8_t code, Cursor& c) {
  if (code == op::kAddr) {
    push(c.fixed(8));
  } else if (code >= op::kConst1u && code <= op::kConst8s) {
    // const1u, const1s, const2u, ... const8s: size 1 << (n / 2), signed when odd.
    const uint32_t n = code - op::kConst1u;
    const uint32_t bytes = 1u << (n / 2);
    const uint64_t v = c.fixed(bytes);
    push((n & 1) != 0 ? sign_extend(v, bytes * 8) : v);
  } else if (code == op::kConstu) {
    push(c.uleb());
  } else if (code == op::kConsts) {
    push(static_cast<uint64_t>(c.sleb()));
  } else {
    return false;
  }
  return true;
}

bool Evaluator::stack_op(uint8_t code, Cursor& c) {
  switch (code) {
    case op::kDup:
      push(top());
      return true;
    case op::kDrop:
      pop();
      return true;
    case op::kOver:
    case op::kPick: {
      const uint64_t index = code == op::kOver ? 1 : c.u8();
      if (index >= depth_) ok_ = false;
      if (ok_) push(stack_[depth_ - 1 - index]);
      return true;
    }
    case op::kSwap: {
      const uint64_t a = pop(), b = pop();
      push(a);
      push(b);
      return true;
    }
    case op::kRot: {  // a b c (c on top) becomes c a b
      const uint64_t c1 = pop(), b = pop(), a = pop();
      push(c1);
      push(a);
      push(b);
      return true;
    }
    default:
      return false;
  }
}

bool Evaluator::unary(uint8_t code, Cursor& c) {
  switch (code) {
    case op::kDeref:
      push(deref(pop(), 8));
      return true;
    case op::kDerefSize: {
      const uint64_t size = c.u8();
      push(deref(pop(), size));
      return true;
    }
    case op::kAbs: {
      const uint64_t v = pop();
      push(static_cast<int64_t>(v) < 0 ? 0 - v : v);
      return true;
    }
    case op::kNeg:
      push(0 - pop());
      return true;
    case op::kNot:
      push(~pop());
      return true;
    case op::kPlusUconst:
      push(pop() + c.uleb());
      return true;
    default:
      return false;
  }
}

bool Evaluator::binary(uint8_t code) {
  if (code < op::kAnd || code > op::kNe || code == op::kBra || code == op::kPlusUconst ||
      code == op::kNeg || code == op::kNot) {
    return false;
  }
  const uint64_t b = pop(), a = pop();  // b was on top
  const auto sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  switch (code) {
    case op::kAnd:
      push(a & b);
      return true;
    case op::kMinus:
      push(a - b);
      return true;
    case op::kMul:
      push(a * b);
      return true;
    case op::kOr:
      push(a | b);
      return true;
    case op::kPlus:
      push(a + b);
      return true;
    case op::kShl:
      push(b < 64 ? a << b : 0);
      return true;
    case op::kShr:
      push(b < 64 ? a >> b : 0);
      return true;
    case op::kShra:
      push(static_cast<uint64_t>(b < 64 ? sa >> b : (sa < 0 ? -1 : 0)));
      return true;
    case op::kXor:
      push(a ^ b);
      return true;
    // Comparisons are signed (DWARF 4, 2.5.1.4).
    case op::kEq:
      push(a == b);
      return true;
    case op::kGe:
      push(sa >= sb);
      return true;
    case op::kGt:
      push(sa > sb);
      return true;
    case op::kLe:
      push(sa <= sb);
      return true;
    case op::kLt:
      push(sa < sb);
      return true;
    case op::kNe:
      push(a != b);
      return true;
    default:
      ok_ = false;
      return true;  // div, mod: nothing frame information needs
  }
}

bool Evaluator::branch(uint8_t code, Cursor& c) {
  if (code != op::kBra && code != op::kSkip) return false;
  const auto offset = static_cast<int16_t>(c.fixed(2));
  if (code == op::kSkip || pop() != 0) c.seek(c.at() + static_cast<uint64_t>(int64_t{offset}));
  return true;
}

// ---- From one frame to its caller.

// Where the caller's CFA is: this frame's CFA.
bool compute_cfa(const Row& row, const Registers& regs, Walker& walker, uint64_t& cfa) {
  if (row.cfa_is_expression) {
    return Evaluator(regs, walker).run(row.cfa_expression, nullptr, cfa);
  }
  if (!regs.has(row.cfa_register)) return false;
  cfa = regs.value[row.cfa_register] + static_cast<uint64_t>(row.cfa_offset);
  return true;
}

// The caller's value of `column` by its rule, a rule given (the caller's
// registers start as this frame's: the rule of the unspecified ones);
// `slot` gets where it was read from (0: not read from memory). False when
// a read fails: the stack is not what the tables say, and the unwind stops.
bool caller_value(const Row& row, uint32_t column, uint64_t cfa, const Registers& regs,
                  Walker& walker, Registers& caller, uint64_t& slot) {
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
      if (!Evaluator(regs, walker).run(static_cast<uint64_t>(operand), &cfa, address)) return false;
      break;
    case Rule::kValExpression:
      if (!Evaluator(regs, walker).run(static_cast<uint64_t>(operand), &cfa, v)) return false;
      caller.set(column, v);
      return true;
  }
  if (!walker.stack.word(address, v)) return false;
  slot = address;
  caller.set(column, v);
  return true;
}

// The row of `target` in the FDE's function, from the walker's CIE.
bool frame_row(Walker& walker, const Fde& fde, uint64_t target, Row& row) {
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

// The rules of the frame at `pc` from the tables (`lookup` is the address
// looked up: pc, or pc - 1 for a return address). False when there is no
// unwind information.
bool read_rules(Walker& walker, uint64_t lookup, FrameRules& rules) {
  UnwindObject object;
  if (!walker.objects.find(lookup, object)) return false;
  const uint64_t fde_address = find_fde(object, lookup, walker.memory);
  Fde fde;
  if (fde_address == 0 || !parse_fde(walker.tables, fde_address, walker.cie, fde)) return false;
  if (lookup < fde.pc_begin || lookup >= fde.pc_end) return false;
  if (walker.cie.ra_column >= kColumns || !frame_row(walker, fde, lookup, rules.row)) return false;
  rules.ra_column = static_cast<uint32_t>(walker.cie.ra_column);
  rules.signal_frame = walker.cie.signal_frame ? 1 : 0;
  rules.ruled = 0;
  for (uint32_t column = 0; column < kColumns; ++column) {
    if (rules.row.how[column] != Rule::kUnspecified) rules.ruled |= uint64_t{1} << column;
  }
  return true;
}

// The rules from the cache, or else from the tables into the cache.
bool rules_for(Walker& walker, uint64_t lookup, FrameRules& rules) {
  uint64_t words[UnwindCache::kWords];
  if (walker.cache != nullptr && walker.cache->recall(lookup, walker.generation, words)) {
    copy_bytes(&rules, words, sizeof rules);
    return true;
  }
  clear_words(rules);
  if (!read_rules(walker, lookup, rules)) return false;
  if (walker.cache != nullptr) {
    copy_bytes(words, &rules, sizeof rules);
    walker.cache->remember(lookup, walker.generation, words);
  }
  return true;
}

// Unwinds `frame` to its caller; false at the end of the stack, or where
// the unwind cannot go on.
bool step(Frame& frame, Walker& walker) {
  const uint64_t lookup = frame.exact ? frame.pc : frame.pc - 1;
  FrameRules rules;
  const Row& row = rules.row;
  uint64_t cfa = 0;
  if (!rules_for(walker, lookup, rules) || !compute_cfa(row, frame.regs, walker, cfa)) {
    return false;
  }
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
  // An undefined return address marks the outermost frame (_start's); one
  // without a rule would be this frame's own pc.
  if (!caller.has(rules.ra_column) || ((rules.ruled >> rules.ra_column) & 1) == 0) return false;
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

namespace {

uint32_t entry_of(uint64_t pc) {
  // Fibonacci hashing: the high bits of a multiple mix every bit of pc.
  constexpr uint32_t kBits = std::bit_width(UnwindCache::kEntries - 1);
  return static_cast<uint32_t>((pc * 0x9e3779b97f4a7c15ull) >> (64 - kBits));
}

}  // namespace

bool UnwindCache::recall(uint64_t pc, uint64_t generation,
                         uint64_t (&words)[kWords]) const noexcept {
  const Entry& entry = entries_[entry_of(pc)];
  const uint64_t before = entry.sequence.load(std::memory_order_acquire);
  if ((before & 1) != 0 || entry.pc.load(std::memory_order_relaxed) != pc ||
      entry.tag.load(std::memory_order_relaxed) != generation + 1) {
    return false;
  }
  for (uint32_t i = 0; i < kWords; ++i) words[i] = entry.words[i].load(std::memory_order_relaxed);
  // The words were read before the sequence is read again.
  std::atomic_thread_fence(std::memory_order_acquire);
  return entry.sequence.load(std::memory_order_relaxed) == before;
}

void UnwindCache::remember(uint64_t pc, uint64_t generation,
                           const uint64_t (&words)[kWords]) noexcept {
  Entry& entry = entries_[entry_of(pc)];
  uint64_t sequence = entry.sequence.load(std::memory_order_relaxed);
  // Taken by another writer: that one's rules will do.
  if ((sequence & 1) != 0 ||
      !entry.sequence.compare_exchange_strong(sequence, sequence + 1, std::memory_order_acquire)) {
    return;
  }
  std::atomic_thread_fence(std::memory_order_release);
  entry.pc.store(pc, std::memory_order_relaxed);
  entry.tag.store(generation + 1, std::memory_order_relaxed);
  for (uint32_t i = 0; i < kWords; ++i) entry.words[i].store(words[i], std::memory_order_relaxed);
  entry.sequence.store(sequence + 2, std::memory_order_release);
}

uint32_t unwind_stack(const arch::SavedRegs& regs, const UnwindObjects& objects, uint64_t* pcs,
                      uint32_t max, const ReturnAddressFixup* fixup, UnwindMemory memory,
                      UnwindCache* cache) noexcept {
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
