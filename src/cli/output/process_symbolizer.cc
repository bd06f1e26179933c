// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/process_symbolizer.h"

namespace dprobe::cli {

std::optional<trace::SymbolHit> ProcessSymbolizer::symbolize(uint64_t address) const {
  const auto object = objects_.containing_then_or_now(address);
  if (!object) {
    if (perf_map_ == nullptr) return std::nullopt;
    const auto jit = perf_map_->find(address);
    if (!jit) return std::nullopt;
    return trace::SymbolHit{jit->name, jit->offset, jit->size};
  }
  const auto hit = object->file->table.symbolize(address - object->loaded->bias);
  if (!hit) return std::nullopt;
  return trace::SymbolHit{hit->function->display_name(), hit->offset, hit->function->size};
}

std::string_view ProcessSymbolizer::object_name(uint64_t address) const {
  const auto object = objects_.containing_then_or_now(address);
  if (!object) {
    if (perf_map_ == nullptr || !perf_map_->find(address)) return {};
    return perf_map_->label();
  }
  const std::string_view path = object->loaded->path;
  return path.substr(path.rfind('/') + 1);
}

void ProcessSymbolizer::refresh() const {
  if (perf_map_ != nullptr) perf_map_->refresh();
}

}  // namespace dprobe::cli
