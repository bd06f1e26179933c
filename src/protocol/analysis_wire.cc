// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "protocol/analysis_wire.h"

namespace dprobe::protocol {
namespace {

constexpr size_t kMinFieldBytes = 4 + 1 + 4 + 1 + 1 + 1;
constexpr size_t kMinKeyBytes = kMinFieldBytes + 4 + 1 + 2 + 8;
constexpr size_t kMinSortBytes = 3;
constexpr size_t kMinHistBytes = 4 * 3 + 4 + 4 + 4 + 8 + 8;

void put_field(WireWriter& w, const trace::RecordField& field) {
  w.str(field.name);
  w.u8(static_cast<uint8_t>(field.source));
  w.u32(field.offset);
  w.u8(field.size);
  w.boolean(field.is_signed);
  w.u8(static_cast<uint8_t>(field.type));
}

trace::RecordField get_field(WireReader& r) {
  trace::RecordField field;
  field.name = r.str();
  const uint8_t source = r.u8();
  field.source = source <= static_cast<uint8_t>(trace::FieldSource::kDuration)
                     ? static_cast<trace::FieldSource>(source)
                     : trace::FieldSource::kNumber;
  field.offset = r.u32();
  field.size = r.u8();
  field.is_signed = r.boolean();
  const uint8_t type = r.u8();
  field.type = type < static_cast<uint8_t>(trace::TypeId::kCount) ? static_cast<trace::TypeId>(type)
                                                                  : trace::kDefaultType;
  return field;
}

void put_filter(WireWriter& w, const trace::FilterProgram& filter) {
  w.values(filter.code);
  w.list(filter.fields, put_field);
  w.str(filter.strings);
  w.str(filter.text);
}

trace::FilterProgram get_filter(WireReader& r) {
  trace::FilterProgram filter;
  filter.code = r.values<trace::FilterInsn>();
  filter.fields = r.list(kMinFieldBytes, get_field);
  filter.strings = r.str();
  filter.text = r.str();
  return filter;
}

void put_key(WireWriter& w, const trace::HistKey& key) {
  put_field(w, key.field);
  w.str(key.label);
  w.boolean(key.stacktrace);
  w.u16(key.modifiers);
  w.u64(key.buckets);
}

trace::HistKey get_key(WireReader& r) {
  trace::HistKey key;
  key.field = get_field(r);
  key.label = r.str();
  key.stacktrace = r.boolean();
  key.modifiers = r.u16();
  key.buckets = r.u64();
  return key;
}

void put_sort(WireWriter& w, const trace::HistSortKey& sort) {
  w.u8(static_cast<uint8_t>(sort.source));
  w.u8(sort.index);
  w.boolean(sort.descending);
}

trace::HistSortKey get_sort(WireReader& r) {
  trace::HistSortKey sort;
  const uint8_t source = r.u8();
  sort.source = source <= trace::HistSortKey::kVal ? static_cast<trace::HistSortKey::Source>(source)
                                                   : trace::HistSortKey::kHitcount;
  sort.index = r.u8();
  sort.descending = r.boolean();
  return sort;
}

void put_hist(WireWriter& w, const trace::HistTrigger& hist) {
  const trace::HistSpec& spec = hist.spec;
  w.list(spec.keys, put_key);
  w.list(spec.vals, put_key);
  w.list(spec.sort, put_sort);
  w.u32(spec.size);
  w.str(spec.text);
  w.str(spec.filter);
  put_filter(w, hist.filter);
  w.u64(hist.table_offset);
  w.u64(hist.table_bytes);
}

trace::HistTrigger get_hist(WireReader& r) {
  trace::HistTrigger hist;
  trace::HistSpec& spec = hist.spec;
  spec.keys = r.list(kMinKeyBytes, get_key);
  spec.vals = r.list(kMinKeyBytes, get_key);
  spec.sort = r.list(kMinSortBytes, get_sort);
  spec.size = r.u32();
  spec.text = r.str();
  spec.filter = r.str();
  hist.filter = get_filter(r);
  hist.table_offset = r.u64();
  hist.table_bytes = r.u64();
  return hist;
}

}  // namespace

void put_analysis(WireWriter& w, const trace::EventAnalysis* analysis) {
  w.boolean(analysis != nullptr);
  if (analysis == nullptr) return;
  put_filter(w, analysis->filter);
  w.list(analysis->hists, put_hist);
}

std::shared_ptr<const trace::EventAnalysis> get_analysis(WireReader& r) {
  if (!r.boolean()) return nullptr;
  auto analysis = std::make_shared<trace::EventAnalysis>();
  analysis->filter = get_filter(r);
  analysis->hists = r.list(kMinHistBytes, get_hist);
  return analysis;
}

}  // namespace dprobe::protocol
