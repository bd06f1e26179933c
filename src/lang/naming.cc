// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/naming.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>

#include "lang/limits.h"

namespace dprobe::lang {
namespace {

std::string hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "0x%" PRIx64, value);
  return buffer;
}

// uprobe_events names a probe after its file: the basename up to the first
// '.', '-' or '_' ("libc.so.6" -> "libc").
std::string object_stem(std::string_view object) {
  const size_t slash = object.rfind('/');
  if (slash != std::string_view::npos) object.remove_prefix(slash + 1);
  return std::string(object.substr(0, object.find_first_of(".-_")));
}

}  // namespace

std::string sanitize_event_name(std::string_view name) {
  std::string out(name.substr(0, kMaxEventNameLen));
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return out;
}

std::string default_event_name(const core::ProbePoint& point) {
  const std::string prefix = point.is_return ? "r_" : "p_";
  const core::ProbeTarget& target = point.target;
  switch (target.kind) {
    case core::TargetKind::kSymbol:
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
