// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/format_definition.h"

#include <cinttypes>
#include <cstdio>

#include "lang/quoted_name.h"

namespace dprobe::lang {
namespace {

// Addresses and file offsets print in 16 hex digits, as the kernel lists them.
std::string hex16(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "0x%016" PRIx64, value);
  return buffer;
}

std::string object_prefix(const core::ProbeTarget& target) {
  return target.object.empty() ? std::string() : target.object + ":";
}

}  // namespace

std::string format_target(const core::ProbeTarget& target) {
  switch (target.kind) {
    case core::TargetKind::kSymbol: {
      std::string name = target.symbol;
      if (target.offset > 0) name += "+" + std::to_string(target.offset);
      if (target.offset < 0) name += std::to_string(target.offset);
      // Quoted whole, offset included: that is how it is read back.
      return object_prefix(target) + (needs_quotes(name) ? "'" + name + "'" : name);
    }
    case core::TargetKind::kAddress:
    case core::TargetKind::kObjectAddress:
      return object_prefix(target) + hex16(target.address);
    case core::TargetKind::kFileOffset:
      return object_prefix(target) + hex16(static_cast<uint64_t>(target.offset));
    case core::TargetKind::kSyscall:
      return target.symbol;
  }
  return {};
}

std::string format_definition(const trace::ProbeSpec& spec) {
  const core::ProbePoint& point = spec.point;
  const trace::EventDesc& event = spec.event;
  if (trace::is_syscall_source(event.source) && !event.event_probe) {
    return event.group + ":" + event.name;  // the kernel's event, as named
  }
  std::string out(1, event.event_probe ? 'e' : point.is_return ? 'r' : 'p');
  if (point.is_return && point.maxactive != 0) out += std::to_string(point.maxactive);
  out += ":" + spec.event.group + "/" + spec.event.name + " " + format_target(point.target);
  for (const trace::EventArg& arg : spec.event.args) {
    if (!arg.source_expr.empty()) {
      // Not resolved yet (no debug information read): as written.
      if (arg.source_expr.starts_with('$')) {
        out += " " + arg.source_expr;
      } else {
        out += " " + arg.name + "=" + arg.source_expr;
        if (!arg.source_type.empty()) out += ":" + arg.source_type;
      }
      continue;
    }
    out += " " + arg.name + "=" + arg.expr + ":" + arg.type_text;
    if (arg.count > 0) out += "[" + std::to_string(arg.count) + "]";
  }
  return out;
}

}  // namespace dprobe::lang
