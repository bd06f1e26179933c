// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The filter compiler's first pass (lang/event_filter.h), as the kernel's
// calc_stack: quotes and parentheses checked over the whole text before any
// predicate is read (so their errors win), and the terms counted.
//
//   auto terms = count_terms(text);
//   if (terms && *terms == 0) ... nothing to filter with
#ifndef DPROBE_LANG_FILTER_TERMS_H_
#define DPROBE_LANG_FILTER_TERMS_H_

#include <cstddef>
#include <string_view>

#include "base/result.h"
#include "lang/event_filter.h"

namespace dprobe::lang::filter {

// The number of terms in `text`, or the kernel's error for an unmatched
// quote or parenthesis.
Result<size_t, FilterError> count_terms(std::string_view text);

}  // namespace dprobe::lang::filter

#endif  // DPROBE_LANG_FILTER_TERMS_H_
