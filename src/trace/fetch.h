// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The compiled form of a fetch argument: a flat list of operations, in the
// manner of the kernel's FETCH_OP_*. The language front end emits it, the
// agent interprets it on every hit; no text is ever parsed on the hot path.
//
// A program has up to four stages, always in this order:
//   1. one value source      (kReg, kStack, kArg, kImm, kComm, ...)
//   2. zero or more derefs   (kDeref / kUDeref: value = *(value + imm))
//   3. one store             (kSt*: write into the record, kStString copies
//                             a NUL-terminated string into the dynamic area)
//   4. modifiers and loops   (kModBitfield, kLoopArray), then kEnd.
//
//   $argN  +8(%di):u32[4]  ->  kReg(di) kStMem(off 8, size 4) kLoopArray(4) kEnd
#ifndef DPROBE_TRACE_FETCH_H_
#define DPROBE_TRACE_FETCH_H_

#include <cstdint>
#include <string_view>

namespace dprobe::trace {

enum class FetchOp : uint8_t {
  kNop,
  // Stage 1: sources.
  kReg,         // param: register slot of the ISA's saved frame
  kStack,       // param: word N above the stack pointer ($stackN)
  kStackPtr,    // the stack pointer itself ($stack)
  kArg,         // param: 0-based argument index ($argN), by the ISA's ABI
  kRetval,      // the return value register
  kComm,        // the thread's name (a string source)
  kImm,         // imm: the value itself (\IMM, @ADDR)
  kData,        // the argument's immediate string (\"...")
  kSymbolAddr,  // param: index of the argument's symbol reference, imm: offset
  kFileOffset,  // imm: file offset in the probed object (@+OFFS)
  // Stage 2: dereferences.
  kDeref,   // value = *(value + imm), a read that may fault
  kUDeref,  // the same, spelled +u: user memory, which all ours is
  // Stage 3: stores; size is the element size in bytes.
  kStRaw,      // the value itself
  kStMem,      // *(value + imm)
  kStUMem,     // *(value + imm), user memory
  kStString,   // NUL-terminated string at value (+ imm) into the dynamic area
  kStUString,  // the same, user memory
  // Stage 4: modifiers and loops.
  kModBitfield,  // value = (value << lshift) >> rshift, within size bytes
  kLoopArray,    // param: element count; repeat the store at value + i * size
  kEnd,
  // Sources added later, after kEnd so that the earlier operations keep
  // their numbers.
  kDuration,     // return events: nanoseconds since the entry ($duration)
  kFloatRetval,  // return events: the floating-point return register ($retval:f32/f64)
};

// One operation. Kept to 16 bytes so a whole argument's program fits a few
// cache lines.
struct FetchInsn {
  FetchOp op = FetchOp::kNop;
  uint8_t size = 0;
  uint8_t lshift = 0;
  uint8_t rshift = 0;
  uint32_t param = 0;
  int64_t imm = 0;
};
static_assert(sizeof(FetchInsn) == 16);

// The kernel's FETCH_INSN_MAX: at most this many operations per argument.
inline constexpr unsigned kMaxFetchInsns = 16;

std::string_view fetch_op_name(FetchOp op);

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_FETCH_H_
