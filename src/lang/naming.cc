// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/naming.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>

#include "base/cxx_names.h"
#include "base/strings.h"
#include "lang/limits.h"

namespace dprobe::lang {
namespace {

// uprobe_events names a probe after its file: the basename up to the first
// '.', '-' or '_' ("libc.so.6" -> "libc").
std::string object_stem(std::string_view object) {
  const size_t slash = object.rfind('/');
  if (slash != std::string_view::npos) object.remove_prefix(slash + 1);
  return std::string(object.substr(0, object.find_first_of(".-_")));
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Runs of characters that cannot be in a name become one '_' between words.
void append_words(std::string_view text, std::string& out) {
  bool gap = false;
  for (const char c : text) {
    if (!is_name_char(c)) {
      gap = true;
      continue;
    }
    if (gap && !out.empty() && out.back() != '_') out.push_back('_');
    gap = false;
    out.push_back(c);
  }
}

}  // namespace

std::string cxx_event_stem(std::string_view name) {
  const CxxName parts = split_cxx_name(name);
  std::string stem;
  append_words(unqualified_name(parts.qualified), stem);
  std::string params;
  append_words(parts.params, params);
  if (!params.empty()) stem += (stem.empty() ? "" : "_") + params;
  return stem;
}

std::string sanitize_event_name(std::string_view name) {
  std::string out(name.substr(0, kMaxEventNameLen));
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return out;
}

std::string source_event_name(const core::ProbePoint& point, const SourcePlace& place) {
  std::string stem = place.function;
  if (stem.empty()) {
    std::string_view file = place.file;
    if (const size_t slash = file.rfind('/'); slash != std::string_view::npos) {
      file.remove_prefix(slash + 1);
    }
    stem = std::string(file.substr(0, file.find('.')));
  }
  const std::string where = place.line >= 0 ? "_L" + std::to_string(place.line) : "_0";
  return sanitize_event_name((point.is_return ? "r_" : "p_") + stem + where);
}

std::string default_event_name(const core::ProbePoint& point) {
  const std::string prefix = point.is_return ? "r_" : "p_";
  const core::ProbeTarget& target = point.target;
  switch (target.kind) {
    case core::TargetKind::kSymbol:
      if (is_cxx_name(target.symbol)) {
        return sanitize_event_name(prefix + cxx_event_stem(target.symbol) + "_" +
                                   std::to_string(target.offset));
      }
      return sanitize_event_name(prefix + target.symbol + "_" + std::to_string(target.offset));
    case core::TargetKind::kAddress:
      return sanitize_event_name(prefix + hex(target.address));
    case core::TargetKind::kObjectAddress:
      return sanitize_event_name(prefix + object_stem(target.object) + "_" + hex(target.address));
    case core::TargetKind::kFileOffset:
      return sanitize_event_name(prefix + object_stem(target.object) + "_" +
                                 hex(static_cast<uint64_t>(target.offset)));
    case core::TargetKind::kSyscall:
      return sanitize_event_name(target.symbol);
  }
  return prefix;
}

}  // namespace dprobe::lang
