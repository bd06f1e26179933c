// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/sdt_operand.h"

#include <array>
#include <cctype>

#include "base/strings.h"

namespace dprobe::arch {
namespace {

// An x86_64 register of any width, and the 64-bit one it is part of (the
// language names that one: "ax" for %rax, %eax, %ax and %al).
struct X86Name {
  std::string_view name;
  std::string_view full;
  uint8_t size;
};

constexpr std::array<X86Name, 35> kX86Legacy = {{
    {"rax", "ax", 8}, {"eax", "ax", 4}, {"ax", "ax", 2},  {"al", "ax", 1},  {"rbx", "bx", 8},
    {"ebx", "bx", 4}, {"bx", "bx", 2},  {"bl", "bx", 1},  {"rcx", "cx", 8}, {"ecx", "cx", 4},
    {"cx", "cx", 2},  {"cl", "cx", 1},  {"rdx", "dx", 8}, {"edx", "dx", 4}, {"dx", "dx", 2},
    {"dl", "dx", 1},  {"rsi", "si", 8}, {"esi", "si", 4}, {"si", "si", 2},  {"sil", "si", 1},
    {"rdi", "di", 8}, {"edi", "di", 4}, {"di", "di", 2},  {"dil", "di", 1}, {"rbp", "bp", 8},
    {"ebp", "bp", 4}, {"bp", "bp", 2},  {"bpl", "bp", 1}, {"rsp", "sp", 8}, {"esp", "sp", 4},
    {"sp", "sp", 2},  {"spl", "sp", 1}, {"rip", "ip", 8}, {"eip", "ip", 4}, {"ip", "ip", 2},
}};

// %r8..%r15 with their d, w and b forms.
std::optional<X86Name> numbered_x86_register(std::string_view name) {
  if (name.size() < 2 || name[0] != 'r' || std::isdigit(static_cast<unsigned char>(name[1])) == 0) {
    return std::nullopt;
  }
  size_t digits = 1;
  while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits])) != 0) {
    ++digits;
  }
  const std::string_view full = name.substr(0, digits);
  const std::string_view width = name.substr(digits);
  uint8_t size = 8;
  if (width == "d") {
    size = 4;
  } else if (width == "w") {
    size = 2;
  } else if (width == "b") {
    size = 1;
  } else if (!width.empty()) {
    return std::nullopt;
  }
  return X86Name{name, full, size};
}

std::optional<X86Name> x86_register(std::string_view name) {
  for (const X86Name& known : kX86Legacy) {
    if (known.name == name) return known;
  }
  return numbered_x86_register(name);
}

Result<uint16_t> slot_of(Isa isa, std::string_view name, std::string_view text) {
  const auto slot = register_index(isa, name);
  if (!slot) return fail("register " + std::string(name) + " of operand " + std::string(text));
  return *slot;
}

// `%REG`, `$IMM`, `DISP(%REG)`, `SYM[+-OFF](%rip)`.
Result<void> parse_x86(std::string_view op, std::string_view text, SdtOperand& out) {
  if (op.starts_with("$")) {
    const auto value = parse_s64(op.substr(1));
    if (!value) return fail("an immediate that is no number: " + std::string(text));
    out.kind = SdtOperand::Kind::kImmediate;
    out.offset = *value;
    return {};
  }
  if (op.starts_with("%")) {
    const auto reg = x86_register(op.substr(1));
    if (!reg) return fail("a register dprobe cannot read (%ah..%dh, vector): " + std::string(text));
    auto slot = slot_of(Isa::kX86_64, reg->full, text);
    if (!slot) return unexpected(slot.error());
    out.kind = SdtOperand::Kind::kRegister;
    out.reg = *slot;
    return {};
  }
  const size_t open = op.find('(');
  if (open == std::string_view::npos || !op.ends_with(")")) {
    return fail("an operand of no form sdt.h writes: " + std::string(text));
  }
  const std::string_view base = op.substr(open + 1, op.size() - open - 2);
  const std::string_view disp = op.substr(0, open);
  if (base.find(',') != std::string_view::npos) {
    return fail("an indexed address (base, index, scale), which no fetch argument can read: " +
                std::string(text));
  }
  if (!base.starts_with("%"))
    return fail("an operand of no form sdt.h writes: " + std::string(text));
  const auto reg = x86_register(base.substr(1));
  if (!reg || reg->size != 8)
    return fail("a base register of no 64-bit address: " + std::string(text));
  if (reg->full == "ip") {
    // GCC names the variable: `counter+8(%rip)` is the memory at counter+8.
    const size_t sign = disp.find_first_of("+-", 1);
    out.symbol = std::string(disp.substr(0, sign));
    const auto offset =
        sign == std::string_view::npos ? std::optional<int64_t>(0) : parse_s64(disp.substr(sign));
    if (out.symbol.empty() || std::isdigit(static_cast<unsigned char>(out.symbol[0])) != 0 ||
        out.symbol[0] == '-' || !offset) {
      return fail("a pc-relative operand with no symbol: " + std::string(text));
    }
    out.kind = SdtOperand::Kind::kSymbol;
    out.offset = *offset;
    return {};
  }
  const auto offset = disp.empty() ? std::optional<int64_t>(0) : parse_s64(disp);
  if (!offset) return fail("a displacement that is no number: " + std::string(text));
  auto slot = slot_of(Isa::kX86_64, reg->full, text);
  if (!slot) return unexpected(slot.error());
  out.kind = SdtOperand::Kind::kMemory;
  out.reg = *slot;
  out.offset = *offset;
  return {};
}

// xN and wN are one register; sp; [REG] and [REG, OFF].
Result<uint16_t> arm64_register(std::string_view name, std::string_view text) {
  if (name == "sp") return slot_of(Isa::kArm64, "sp", text);
  if (name.size() >= 2 && (name[0] == 'x' || name[0] == 'w')) {
    return slot_of(Isa::kArm64, "x" + std::string(name.substr(1)), text);
  }
  return fail("a register dprobe cannot read: " + std::string(text));
}

Result<void> parse_arm64(std::string_view op, std::string_view text, SdtOperand& out) {
  if (op.starts_with("[")) {
    if (!op.ends_with("]")) return fail("an operand of no form sdt.h writes: " + std::string(text));
    const std::string_view inside = op.substr(1, op.size() - 2);
    const size_t comma = inside.find(',');
    auto reg = arm64_register(inside.substr(0, comma), text);
    if (!reg) return unexpected(reg.error());
    int64_t offset = 0;
    if (comma != std::string_view::npos) {
      std::string_view rest = inside.substr(comma + 1);
      while (rest.starts_with(" ")) rest.remove_prefix(1);
      if (rest.starts_with("#")) rest.remove_prefix(1);
      if (rest.starts_with(":")) {
        return fail("an address the assembler computes (" + std::string(rest) +
                    "), which the note does not give: " + std::string(text));
      }
      const auto parsed = parse_s64(rest);
      if (!parsed) return fail("an offset that is no number: " + std::string(text));
      offset = *parsed;
    }
    out.kind = SdtOperand::Kind::kMemory;
    out.reg = *reg;
    out.offset = offset;
    return {};
  }
  std::string_view number = op.starts_with("#") ? op.substr(1) : op;
  if (!number.empty() && (std::isdigit(static_cast<unsigned char>(number[0])) != 0 ||
                          number[0] == '-' || number[0] == '+')) {
    const auto value = parse_s64(number);
    if (!value) return fail("an immediate that is no number: " + std::string(text));
    out.kind = SdtOperand::Kind::kImmediate;
    out.offset = *value;
    return {};
  }
  auto reg = arm64_register(op, text);
  if (!reg) return unexpected(reg.error());
  out.kind = SdtOperand::Kind::kRegister;
  out.reg = *reg;
  return {};
}

}  // namespace

Result<SdtOperand> parse_sdt_operand(Isa isa, std::string_view text) {
  SdtOperand out;
  std::string_view op = text;
  // SIZE@ came with sdt.h version 3; the older notes had none: a long.
  if (const size_t at = op.find('@'); at != std::string_view::npos) {
    const auto size = parse_s64(op.substr(0, at));
    const int64_t bytes = size ? (*size < 0 ? -*size : *size) : 0;
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) {
      return fail("an operand of no size 1, 2, 4 or 8: " + std::string(text));
    }
    out.size = static_cast<uint8_t>(bytes);
    out.is_signed = *size < 0;
    op.remove_prefix(at + 1);
  }
  auto parsed = isa == Isa::kX86_64 ? parse_x86(op, text, out) : parse_arm64(op, text, out);
  if (!parsed) return unexpected(parsed.error());
  return out;
}

std::vector<std::string_view> split_sdt_operands(std::string_view arguments) {
  std::vector<std::string_view> operands;
  // arm64's "[sp, 16]" holds a space of its own: a word ends outside brackets.
  size_t begin = std::string_view::npos;
  int depth = 0;
  for (size_t i = 0; i <= arguments.size(); ++i) {
    const char c = i < arguments.size() ? arguments[i] : ' ';
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c == ' ' && depth == 0) {
      if (begin != std::string_view::npos) operands.push_back(arguments.substr(begin, i - begin));
      begin = std::string_view::npos;
    } else if (begin == std::string_view::npos) {
      begin = i;
    }
  }
  return operands;
}

}  // namespace dprobe::arch
