// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/object_targets.h"

#include "lang/limits.h"
#include "symbols/lookup.h"

namespace dprobe::cli {

std::string numbered_event_name(const std::string& base, size_t n) {
  const std::string suffix = "_" + std::to_string(n);
  return base.substr(0, lang::kMaxEventNameLen - suffix.size()) + suffix;
}

std::optional<core::ProbeTarget> target_at(const LoadedObject& object, const std::string& name,
                                           uint64_t address) {
  core::ProbeTarget target;
  target.object = name;
  if (auto where = object.table.symbolize(address)) {
    const auto offset = static_cast<int64_t>(where->offset);
    auto by_name = symbols::resolve_symbol(object.elf, object.table, where->function->name, offset);
    if (by_name && by_name->address == address) {
      target.kind = core::TargetKind::kSymbol;
      target.symbol = where->function->name;
      target.offset = offset;
      return target;
    }
  }
  const auto offset = object.elf.file_offset_of(address);
  if (!offset) return std::nullopt;
  target.kind = core::TargetKind::kFileOffset;
  target.object = object.elf.path();
  target.offset = static_cast<int64_t>(*offset);
  return target;
}

}  // namespace dprobe::cli
