// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The pieces strace prints values with, for --format strace: quoted
// strings with its escapes, flag sets and named constants, errno names
// with their messages, signal names. Pure functions over numbers and
// bytes; which argument gets which is strace_arguments.h's business.
//
//   quote_string("a\tb\n", 32)              // "\"a\\tb\\n\""
//   quote_string(std::string(40, 'x'), 32)  // 32 x's quoted, then "..."
//   flags_text(0x80000, kOpenFlags)         // "O_RDONLY|O_CLOEXEC"
//   errno_text(2)                           // "ENOENT (No such file or directory)"
#ifndef DPROBE_CLI_OUTPUT_STRACE_VALUES_H_
#define DPROBE_CLI_OUTPUT_STRACE_VALUES_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace dprobe::cli::strace {

// A named value of a flag set or of a set of constants, as the kernel's
// headers name it.
struct Named {
  uint64_t value;
  const char* name;
};

// `bytes` in double quotes as strace prints a string: printable ASCII as
// is (`"` and `\` escaped), \t \n \v \f \r, every other byte in octal, as
// short as it reads back (three digits when a digit follows). At most
// `limit` bytes; when there are more, `...` after the closing quote.
std::string quote_string(std::string_view bytes, size_t limit);

// The set bits of `value` by the names of `names`, '|'-separated, in the
// table's order (a name of several bits matches only when all are set);
// what no name covers is appended in hex. `zero` prints when value is 0
// ("0" when the table names none).
std::string flags_text(uint64_t value, std::span<const Named> names, const char* zero = "0");

// The name of `value` in `names`, or `fallback` when it has none.
std::string constant_text(uint64_t value, std::span<const Named> names,
                          const std::string& fallback);

// strace's pointer: NULL, or 0x and the hex digits.
std::string pointer_text(uint64_t value);

// An octal mode as strace prints it: a leading 0, at least three digits.
std::string octal_text(uint64_t value);

// "ENOENT (No such file or directory)"; a number no name is known for
// prints as "E??? (Unknown error N)"; the kernel's own restart codes (512
// to 517), which a traced call can show, by their kernel names.
std::string errno_text(int error);

// "SIGINT", "SIGRTMIN", "SIGRT_3"; another number in decimal.
std::string signal_name(uint64_t signal);

}  // namespace dprobe::cli::strace

#endif  // DPROBE_CLI_OUTPUT_STRACE_VALUES_H_
