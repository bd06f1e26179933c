// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/trace_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cli/line_writer.h"

namespace dprobe::cli {

TraceReader::TraceReader(const trace::TraceMemory& memory,
                         const std::vector<trace::EventDesc>& events,
                         const trace::Symbolizer* symbolizer, OutputFormat format, std::FILE* out)
    : memory_(memory),
      formatter_(symbolizer),
      format_(format),
      out_(out),
      slots_(memory.slot_count()) {
  events_by_id_.resize(memory.event_slots(), nullptr);
  for (const trace::EventDesc& event : events) {
    if (event.id < events_by_id_.size()) events_by_id_[event.id] = &event;
  }
}

size_t TraceReader::poll() {
  const size_t count = collect(pass_);
  pass_.write(out_);
  return count;
}

size_t TraceReader::collect(TracePass& pass) {
  const size_t before = pass.size();
  for (uint32_t i = 0; i < memory_.slot_count(); ++i) drain_slot(i, pass);
  return pass.size() - before;
}

void TraceReader::drain_slot(uint32_t index, TracePass& pass) {
  trace::SlotState& state = memory_.slot(index);
  const uint32_t value = state.state.load(std::memory_order_acquire);
  if (value != trace::kSlotActive && value != trace::kSlotRetired) return;
  Slot& slot = slots_[index];
  const uint32_t generation = state.generation.load(std::memory_order_acquire);
  if (!slot.reader || slot.generation != generation) {
    auto ring = trace::RingBuffer::attach(memory_.ring(index), memory_.ring_bytes());
    if (!ring) {
      problems_.push_back("ring " + std::to_string(index) + ": " + ring.error().message);
      return;
    }
    slot.reader.emplace(*ring);
    slot.generation = generation;
    slot.comm = slot.reader->comm();
  }
  trace::RingReader& reader = *slot.reader;
  reader.drain([&](const trace::RecordHeader* header, std::span<const std::byte> record) {
    take(slot, header, record, pass);
  });
  if (reader.corrupt()) {
    problems_.push_back("ring of thread " + std::to_string(reader.tid()) + ": " +
                        reader.corruption());
  }
  // Retired before this drain began: everything it wrote has been read.
  if (value == trace::kSlotRetired || reader.corrupt()) {
    lost_retired_ += reader.lost();
    slot.reader.reset();
    uint32_t expected = value;
    state.state.compare_exchange_strong(expected, trace::kSlotFree, std::memory_order_release);
  }
}

void TraceReader::take(Slot& slot, const trace::RecordHeader* header,
                       std::span<const std::byte> record, TracePass& pass) {
  if (header->type == trace::kCommRecordType && record.size() >= trace::kCommRecordSize) {
    const auto* name = reinterpret_cast<const char*>(record.data()) + trace::kRecordHeaderSize;
    slot.comm.assign(name, strnlen(name, 16));
    return;
  }
  if (header->type >= events_by_id_.size() || events_by_id_[header->type] == nullptr) return;
  const trace::EventDesc& event = *events_by_id_[header->type];
  std::string& text = pass.text();
  const size_t begin = text.size();
  if (format_ == OutputFormat::kJson) {
    formatter_.format_json(event, record, slot.comm, text);
  } else {
    formatter_.format_text(event, record, slot.comm, text);
  }
  pass.add(header->timestamp_ns, begin, text.size());
}

void TracePass::write(std::FILE* out) {
  std::stable_sort(lines_.begin(), lines_.end(),
                   [](const Line& a, const Line& b) { return a.timestamp < b.timestamp; });
  sorted_.clear();
  for (const Line& line : lines_) sorted_.append(text_, line.begin, line.end - line.begin);
  std::fflush(out);
  write_whole_lines(::fileno(out), sorted_);
  lines_.clear();
  text_.clear();
}

uint64_t TraceReader::lost() const {
  uint64_t total = lost_retired_ + memory_.header().slotless.load(std::memory_order_relaxed);
  for (const Slot& slot : slots_) {
    if (slot.reader) total += slot.reader->lost();
  }
  return total;
}

}  // namespace dprobe::cli
