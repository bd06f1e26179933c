// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "base/cxx_names.h"

#include <cctype>
#include <optional>

namespace dprobe {
namespace {

constexpr std::string_view kOperator = "operator";
constexpr std::string_view kOperatorChars = "+-*/%^&|~!=<>,[]";

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The length of the operator name starting at i ("operator<<", "operator()",
// "operator new[]", "operator int*"), 0 when none starts there. Its
// brackets are not brackets, and its spaces do not end a return type.
size_t operator_length(std::string_view text, size_t i) {
  if (text.substr(i, kOperator.size()) != kOperator) return 0;
  if (i > 0 && is_ident(text[i - 1])) return 0;
  size_t j = i + kOperator.size();
  if (j < text.size() && is_ident(text[j])) return 0;  // "operators", "operator_x"
  if (j == text.size()) return j - i;
  if (text[j] == ' ' || text[j] == '"') {
    // operator new, operator delete[], operator int, operator""_km: up to
    // the parameter list.
    const size_t paren = text.find('(', j);
    return (paren == std::string_view::npos ? text.size() : paren) - i;
  }
  if (text.substr(j, 2) == "()") return j + 2 - i;
  while (j < text.size() && kOperatorChars.find(text[j]) != std::string_view::npos) ++j;
  return j - i;
}

bool opens(char c) { return c == '(' || c == '<' || c == '{' || c == '['; }
bool closes(char c) { return c == ')' || c == '>' || c == '}' || c == ']'; }

// Calls visit(i, depth) for every character outside operator names, and
// visit_operator(i) at each operator name; depth is the number of brackets
// around the character (a bracket itself counts as outside). A visitor that
// returns false stops the scan.
template <typename Visit, typename VisitOperator>
void scan(std::string_view text, Visit visit, VisitOperator visit_operator) {
  int depth = 0;
  for (size_t i = 0; i < text.size();) {
    if (const size_t length = operator_length(text, i); length > 0) {
      if (!visit_operator(i)) return;
      i += length;
      continue;
    }
    if (closes(text[i])) --depth;
    if (!visit(i, depth)) return;
    if (opens(text[i])) ++depth;
    ++i;
  }
}

// The ')' closing the '(' at `open`.
std::optional<size_t> matching_paren(std::string_view text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return i;
  }
  return std::nullopt;
}

std::string_view trim_spaces(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

}  // namespace

bool is_cxx_name(std::string_view name) {
  return name.find("::") != std::string_view::npos || name.find('(') != std::string_view::npos;
}

CxxName split_cxx_name(std::string_view name) {
  name = trim_spaces(name.substr(0, name.find(" [clone ")));
  // The parameter list is the first '(' outside brackets whose ')' does not
  // go on with "::": "(anonymous namespace)::f(int)" and the enclosing
  // function of a local class ("f(int)::Local::get()") are part of the name.
  size_t params = std::string_view::npos;
  scan(
      name,
      [&](size_t i, int depth) {
        if (depth != 0 || name[i] != '(') return true;
        const std::optional<size_t> close = matching_paren(name, i);
        if (!close) return true;
        if (name.substr(*close + 1, 2) == "::") return true;
        params = i;
        return false;
      },
      [](size_t) { return true; });
  const std::string_view before = name.substr(0, params);
  // A return type (template functions print one) ends at the last space
  // outside brackets and operator names.
  size_t start = 0;
  scan(
      before,
      [&](size_t i, int depth) {
        if (depth == 0 && before[i] == ' ') start = i + 1;
        return true;
      },
      [](size_t) { return true; });
  CxxName parts;
  parts.qualified = trim_spaces(before.substr(start));
  if (params != std::string_view::npos) parts.params = name.substr(params);
  return parts;
}

std::string_view unqualified_name(std::string_view qualified) {
  size_t start = 0;
  scan(
      qualified,
      [&](size_t i, int depth) {
        if (depth == 0 && qualified.substr(i, 2) == "::") start = i + 2;
        return true;
      },
      [](size_t) { return true; });
  std::string_view last = qualified.substr(start);
  size_t end = last.size();
  scan(
      last,
      [&](size_t i, int depth) {
        if (depth != 0 || last[i] != '<') return true;
        end = i;
        return false;
      },
      [](size_t) { return true; });
  return trim_spaces(last.substr(0, end));
}

std::string cxx_match_key(std::string_view text) {
  std::string key;
  key.reserve(text.size());
  for (const char c : text) {
    if (c != ' ') key.push_back(c);
  }
  return key;
}

bool cxx_has_wildcard(std::string_view name) {
  bool found = false;
  scan(
      name,
      [&](size_t i, int depth) {
        found = depth == 0 && (name[i] == '*' || name[i] == '?');
        return !found;
      },
      [](size_t) { return true; });
  return found;
}

int cxx_open_brackets(std::string_view text) {
  int open = 0;
  scan(
      text,
      [&](size_t i, int) {
        if (text[i] == '(' || text[i] == '<') ++open;
        if (text[i] == ')' || text[i] == '>') --open;
        return true;
      },
      [](size_t) { return true; });
  return open;
}

}  // namespace dprobe
