// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/lookup_error.h"

namespace dprobe::symbols {

std::string_view describe(LookupError::Kind kind) {
  using Kind = LookupError::Kind;
  switch (kind) {
    case Kind::kFileNotFound:
      return "file not found";
    case Kind::kNotRegularFile:
      return "not a regular file";
    case Kind::kNotElf:
      return "not an ELF file";
    case Kind::kObjectNotFound:
      return "object not found";
    case Kind::kSymbolNotFound:
      return "no such function";
    case Kind::kNotUnique:
      return "function name is not unique";
    case Kind::kOffsetPastEnd:
      return "offset is outside the function";
    case Kind::kNotExecutable:
      return "address is not in executable code";
  }
  return "unknown error";
}

}  // namespace dprobe::symbols
