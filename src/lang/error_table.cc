// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/error_table.h"

#include <array>

namespace dprobe::lang {
namespace {

struct ErrorEntry {
  std::string_view name;
  std::string_view message;
};

constexpr std::array<ErrorEntry, static_cast<size_t>(ErrorCode::kCount)> kErrors = {{
#define DPROBE_ERROR_ENTRY(code, message) {#code, message},
    DPROBE_PROBE_ERRORS(DPROBE_ERROR_ENTRY)
#undef DPROBE_ERROR_ENTRY
}};

}  // namespace

std::string_view error_name(ErrorCode code) { return kErrors[static_cast<size_t>(code)].name; }

std::string_view error_message(ErrorCode code) {
  return kErrors[static_cast<size_t>(code)].message;
}

}  // namespace dprobe::lang
