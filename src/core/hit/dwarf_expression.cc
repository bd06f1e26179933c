// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/dwarf_expression.h"

#include "base/hit_path.h"

namespace dprobe::core::unwinding {
namespace {

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

}  // namespace

DPROBE_HIT_PATH bool ExpressionEvaluator::run(uint64_t block, const uint64_t* initial,
                                              uint64_t& result) noexcept {
  Cursor c(bytes_, block, block + kMaxLebBytes);
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

DPROBE_HIT_PATH bool ExpressionEvaluator::op(Cursor& c) noexcept {
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

DPROBE_HIT_PATH bool ExpressionEvaluator::constant(uint8_t code, Cursor& c) {
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

DPROBE_HIT_PATH bool ExpressionEvaluator::stack_op(uint8_t code, Cursor& c) {
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

DPROBE_HIT_PATH bool ExpressionEvaluator::unary(uint8_t code, Cursor& c) {
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

DPROBE_HIT_PATH bool ExpressionEvaluator::binary(uint8_t code) {
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

DPROBE_HIT_PATH bool ExpressionEvaluator::branch(uint8_t code, Cursor& c) {
  if (code != op::kBra && code != op::kSkip) return false;
  const auto offset = static_cast<int16_t>(c.fixed(2));
  if (code == op::kSkip || pop() != 0) c.seek(c.at() + static_cast<uint64_t>(int64_t{offset}));
  return true;
}

}  // namespace dprobe::core::unwinding
