// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The one error type of the symbols layer: what went wrong (a Kind the CLI
// can map to an exit status or hint), details for humans, and for an
// ambiguous name the list of functions the user can choose from.
//
//   auto elf = ElfFile::open(path);
//   if (!elf) std::cerr << describe(elf.error().kind) << ": " << elf.error().detail;
#ifndef DPROBE_SYMBOLS_LOOKUP_ERROR_H_
#define DPROBE_SYMBOLS_LOOKUP_ERROR_H_

#include <string>
#include <string_view>
#include <vector>

namespace dprobe::symbols {

struct LookupError {
  enum class Kind {
    kFileNotFound,
    kNotRegularFile,
    kNotElf,
    kObjectNotFound,
    kSymbolNotFound,
    kNotUnique,
    kOffsetPastEnd,
    kNotExecutable,
  };
  Kind kind;
  std::string detail;
  // For kNotUnique: one line per function, "name@0x1234 (size 0x20)",
  // with the PATH:0xOFFSET spelling that names it alone.
  std::vector<std::string> candidates;
};

// A short message for each kind, without trailing punctuation.
std::string_view describe(LookupError::Kind kind);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_LOOKUP_ERROR_H_
