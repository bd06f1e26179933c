// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One operand of an SDT probe point, as <sys/sdt.h> writes it into the
// note: `[-]SIZE@OPERAND`, the size in bytes (negative: signed) and the
// operand in the assembler's own syntax, which the compiler chose:
//
//   x86_64   -4@%eax   8@-16(%rbp)   8@(%rdi)   -4@$42   4@counter+8(%rip)
//   arm64    -4@w0     8@x19         8@[sp, 16]  8@[x29, -8]   -4@42
//
//   auto op = parse_sdt_operand(Isa::kX86_64, "-4@%eax");
//   op->kind == SdtOperand::Kind::kRegister, op->size == 4, op->is_signed
#ifndef DPROBE_ARCH_SDT_OPERAND_H_
#define DPROBE_ARCH_SDT_OPERAND_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arch/isa.h"
#include "base/result.h"

namespace dprobe::arch {

struct SdtOperand {
  enum class Kind : uint8_t {
    kRegister,   // the register's value
    kMemory,     // the value at register + offset
    kImmediate,  // offset itself
    kSymbol,     // the value at symbol + offset (x86_64's sym(%rip))
  };
  Kind kind = Kind::kRegister;
  uint8_t size = 8;  // 1, 2, 4 or 8
  bool is_signed = false;
  uint16_t reg = 0;  // a saved-frame slot (register_index)
  int64_t offset = 0;
  std::string symbol;
};

// An operand the notes of both ISAs use, or why not (an indexed address,
// a register the probe language cannot read).
Result<SdtOperand> parse_sdt_operand(Isa isa, std::string_view text);

// The note's operands, split as the note separates them (by spaces).
std::vector<std::string_view> split_sdt_operands(std::string_view arguments);

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_SDT_OPERAND_H_
