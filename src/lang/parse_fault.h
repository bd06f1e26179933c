// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Inside the parser an error is a code and a column; the command text is
// attached once, at the top, when it becomes a ProbeError.
#ifndef DPROBE_LANG_PARSE_FAULT_H_
#define DPROBE_LANG_PARSE_FAULT_H_

#include <cstddef>

#include "base/result.h"
#include "lang/error_table.h"

namespace dprobe::lang {

struct Fault {
  ErrorCode code;
  size_t column;
};

template <typename T>
using Parsed = Result<T, Fault>;

inline Unexpected<Fault> fault(ErrorCode code, size_t column) { return {Fault{code, column}}; }

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_PARSE_FAULT_H_
