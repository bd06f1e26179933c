// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/hints.h"

#include <array>
#include <cctype>
#include <utility>

namespace dprobe::lang {
namespace {

// The name written at `column`: letters and digits, after a '%' or ':'.
std::string_view word_at(std::string_view command, size_t column) {
  if (column >= command.size()) return {};
  size_t begin = column;
  if (command[begin] == '%' || command[begin] == ':') ++begin;
  size_t end = begin;
  while (end < command.size() &&
         (std::isalnum(static_cast<unsigned char>(command[end])) != 0 || command[end] == '_')) {
    ++end;
  }
  return command.substr(begin, end - begin);
}

// %rdi, %edi, %rax...: the kernel names x86_64's registers without the
// width letter (and reads all 64 bits: a type narrows them).
std::string register_hint(std::string_view name, arch::Isa isa) {
  if (isa != arch::Isa::kX86_64 || name.size() != 3) return {};
  const std::string_view rest = name.substr(1);
  constexpr std::array kNames = {"ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "ip"};
  for (const std::string_view known : kNames) {
    if (rest != known) continue;
    if (name[0] == 'r')
      return "the kernel's name for %" + std::string(name) + " is %" + std::string(known);
    if (name[0] == 'e') {
      return "the kernel's name for %" + std::string(name) + " is %" + std::string(known) +
             " with a 32-bit type: %" + std::string(known) + ":u32 or :s32";
    }
  }
  return {};
}

// C's names for the kernel's fetch types.
std::string type_hint(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kTypes = {{
      {"int", "s32"},
      {"uint", "u32"},
      {"unsigned", "u32"},
      {"long", "s64"},
      {"ulong", "u64"},
      {"short", "s16"},
      {"ushort", "u16"},
      {"char", "s8"},
      {"uchar", "u8"},
      {"byte", "u8"},
      {"str", "string"},
      {"ptr", "x64"},
      {"pointer", "x64"},
      {"bool", "u8"},
  }};
  for (const auto& [c_name, kernel] : kTypes) {
    if (name == c_name) return "did you mean :" + std::string(kernel) + "?";
  }
  return {};
}

}  // namespace

std::string hint_for(ErrorCode code, std::string_view command, size_t column, arch::Isa isa) {
  if (code == ErrorCode::BAD_REG_NAME) return register_hint(word_at(command, column), isa);
  if (code == ErrorCode::BAD_TYPE) return type_hint(word_at(command, column));
  return {};
}

}  // namespace dprobe::lang
