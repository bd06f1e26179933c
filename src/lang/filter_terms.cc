// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/filter_terms.h"

#include "lang/filter_syntax.h"

namespace dprobe::lang::filter {
namespace {

// The '(' the kernel blames for a missing ')': scanning back from the
// end, the first one not closed after it; 0 when that is the first
// character (the scan stops before it).
size_t unclosed_paren(std::string_view text) {
  int level = 0;
  char quote = 0;
  for (size_t i = text.size() - 1; i > 0; --i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '(') {
      if (level == 0) return i;
      --level;
    } else if (c == ')') {
      ++level;
    } else if (is_quote(c)) {
      quote = c;
    }
  }
  return 0;
}

}  // namespace

// Quotes and parentheses, checked over the whole text before any predicate
// is read (so their errors win), and the number of terms, as the kernel's
// calc_stack counts them: none means there is nothing to filter with.
Result<size_t, FilterError> count_terms(std::string_view text) {
  size_t terms = 0;
  bool in_term = false;
  int open = 0;
  char quote = 0;
  size_t last_quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_space(c)) continue;
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (is_quote(c)) {
      quote = c;
      last_quote = i;
    } else if ((c == '&' || c == '|') && i + 1 < text.size() && text[i + 1] == c) {
      in_term = false;
      continue;
    } else if (c == '(' || c == ')') {
      in_term = false;
      if (c == ')' && open == 0) return filter_error(kTooManyClose, i);
      open += c == '(' ? 1 : -1;
      continue;
    }
    if (!in_term) ++terms;
    in_term = true;
  }
  if (quote != 0) return filter_error(kMissingQuote, last_quote);
  if (open != 0) return filter_error(kTooManyOpen, unclosed_paren(text));
  return terms;
}

}  // namespace dprobe::lang::filter
