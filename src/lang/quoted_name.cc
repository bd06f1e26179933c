// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/quoted_name.h"

#include <cctype>

#include "base/cxx_names.h"

namespace dprobe::lang {

bool quotable_name(std::string_view name) {
  if (name.empty() || !is_cxx_name(name) || cxx_open_brackets(name) != 0) return false;
  // Begins as a name does ("(anonymous namespace)::f" included), ends
  // with no space; a '%' (the %return suffix) goes after the quotes.
  const char first = name.front();
  if (!(std::isalpha(static_cast<unsigned char>(first)) != 0 || first == '_' || first == '~' ||
        first == '(') ||
      name.back() == ' ') {
    return false;
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c < ' ' || c > '~' || c == '\'' || c == '%') return false;
    if (c == ':') {
      if (i + 1 >= name.size() || name[i + 1] != ':') return false;
      ++i;  // "::"
    }
  }
  return true;
}

bool needs_quotes(std::string_view name) {
  if (!quotable_name(name)) return false;
  int depth = 0;
  for (const char c : name) {
    if (c == '(' || c == '<') ++depth;
    if (c == ')' || c == '>') --depth;
    if (c == ' ' && depth <= 0) return true;
  }
  return false;
}

}  // namespace dprobe::lang
