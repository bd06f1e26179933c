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

// A probe written without its type: "compute%return" (perf probe's
// spelling) or "malloc" alone.
std::string probe_type_hint(std::string_view command) {
  const size_t end = command.find_first_of(" \t");
  const std::string_view point = command.substr(0, end);
  // "x st_step", "x:GRP/EVENT": a type letter the kernel does not have,
  // not a place.
  if (point.size() <= 1 || point[1] == ':') return {};
  const std::string rest(end == std::string_view::npos ? "" : command.substr(end));
  constexpr std::string_view kReturn = "%return";
  if (point.size() > kReturn.size() && point.ends_with(kReturn)) {
    const std::string_view function = point.substr(0, point.size() - kReturn.size());
    return "a return probe: 'r " + std::string(function) + rest + "' (or 'p " + std::string(point) +
           rest + "')";
  }
  if (std::isalpha(static_cast<unsigned char>(point[0])) != 0 || point[0] == '_') {
    return "an entry probe: 'p " + std::string(point) + rest + "'";
  }
  return {};
}

// $arg0: the kernel counts a function's arguments from $arg1.
std::string argument_number_hint(std::string_view command, size_t column) {
  if (command.substr(column).starts_with("$arg0")) {
    return "arguments count from $arg1, the first (as the kernel's)";
  }
  return {};
}

}  // namespace

std::string hint_for(ErrorCode code, std::string_view command, size_t column, arch::Isa isa) {
  if (code == ErrorCode::BAD_REG_NAME) return register_hint(word_at(command, column), isa);
  if (code == ErrorCode::BAD_TYPE) return type_hint(word_at(command, column));
  if (code == ErrorCode::BAD_PROBE_TYPE && column == 0) return probe_type_hint(command);
  if (code == ErrorCode::BAD_ARG_NUM) return argument_number_hint(command, column);
  return {};
}

}  // namespace dprobe::lang
