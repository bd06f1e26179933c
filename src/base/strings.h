// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Small string helpers shared by the language, symbols and CLI. Number
// parsing follows the kernel's kstrtoul/kstrtol: base 0 means "0x" is hex,
// a leading "0" is octal, otherwise decimal; the whole text must be a number.
#ifndef DPROBE_BASE_STRINGS_H_
#define DPROBE_BASE_STRINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dprobe {

// Unsigned number, base 0 as kstrtoul (an optional leading '+' is accepted).
std::optional<uint64_t> parse_u64(std::string_view text);
// Signed number, base 0 as kstrtol; accepts a leading '+' or '-'.
std::optional<int64_t> parse_s64(std::string_view text);

// The kernel's is_good_name(): a C identifier.
bool is_c_identifier(std::string_view name);

// Whitespace-separated words, as the kernel's argv_split().
struct Word {
  std::string_view text;
  size_t position;  // byte offset in the source line
};
std::vector<Word> split_words(std::string_view line);

// Shell-style wildcard match with '*' and '?'.
bool glob_match(std::string_view pattern, std::string_view text);

// The Levenshtein distance of a and b, or `limit` + 1 once it is over
// `limit` (the work stays bounded: names are compared by the thousand).
size_t edit_distance(std::string_view a, std::string_view b, size_t limit);
bool has_wildcard(std::string_view text);

std::string_view trim(std::string_view text);

// "0x" and the value in lowercase hex, as the kernel's %#lx and the
// engine's messages print an address.
std::string hex(uint64_t value);

}  // namespace dprobe

#endif  // DPROBE_BASE_STRINGS_H_
