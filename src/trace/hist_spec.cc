// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/hist_spec.h"

#include <string_view>

namespace dprobe::trace {
namespace {

bool is_cpu_field(const RecordField& field) {
  return field.name == "cpu" || field.name == "CPU" || field.name == "common_cpu";
}

// The kernel's get_hist_field_flags: the first modifier set, in its order.
std::string_view modifier_text(uint16_t modifiers) {
  static constexpr struct {
    HistModifier bit;
    std::string_view text;
  } kOrder[] = {
      {kHistHex, "hex"},           {kHistSym, "sym"},         {kHistSymOffset, "sym-offset"},
      {kHistExecname, "execname"}, {kHistSyscall, "syscall"}, {kHistLog2, "log2"},
      {kHistBuckets, "buckets"},   {kHistUsecs, "usecs"},
  };
  for (const auto& m : kOrder) {
    if ((modifiers & m.bit) != 0) return m.text;
  }
  return {};
}

std::string sort_key_text(const HistSpec& spec, const HistSortKey& key) {
  std::string out;
  switch (key.source) {
    case HistSortKey::kKey:
      out = key.index < spec.keys.size() ? hist_field_text(spec.keys[key.index]) : "?";
      break;
    case HistSortKey::kVal:
      out = key.index < spec.vals.size() ? hist_field_text(spec.vals[key.index]) : "?";
      break;
    default:
      out = "hitcount";
      break;
  }
  if (key.descending) out += ".descending";
  return out;
}

}  // namespace

std::string hist_field_text(const HistKey& key) {
  if (key.stacktrace) return "common_stacktrace";
  std::string out;
  if (is_cpu_field(key.field)) {
    out = "common_cpu";
  } else if (key.field.source == FieldSource::kComm) {
    out = "common_comm";
  } else {
    out = key.label;
  }
  const std::string_view modifier = modifier_text(key.modifiers);
  if (!modifier.empty()) {
    out += '.';
    out += modifier;
  }
  if (key.has(kHistBuckets)) out += "=" + std::to_string(key.buckets);
  return out;
}

std::string hist_trigger_text(const HistSpec& spec) {
  std::string out = "hist:keys=";
  for (size_t i = 0; i < spec.keys.size(); ++i) {
    if (i > 0) out += ',';
    out += hist_field_text(spec.keys[i]);
  }
  out += ":vals=hitcount";
  for (const HistKey& val : spec.vals) out += "," + hist_field_text(val);
  out += ":sort=";
  if (spec.sort.empty()) out += "hitcount";
  for (size_t i = 0; i < spec.sort.size(); ++i) {
    if (i > 0) out += ',';
    out += sort_key_text(spec, spec.sort[i]);
  }
  out += ":size=" + std::to_string(spec.size);
  if (!spec.filter.empty()) out += " if " + spec.filter;
  return out;
}

}  // namespace dprobe::trace
