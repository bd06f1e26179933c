// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/trace_reader.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "cli/clock/trace_clock.h"
#include "cli/output/line_writer.h"

namespace dprobe::cli {
namespace {

std::atomic<uint32_t> g_next_stream{0};

}  // namespace

uint64_t PlausibleCount::observe(uint64_t value, uint64_t now_ns) {
  if (corrupt_) return value_;
  const uint64_t elapsed = seen_ns_ == 0 ? 0 : now_ns - seen_ns_;
  const uint64_t room = elapsed + kSlack;
  if (value < value_ || value - value_ > room) {
    corrupt_ = true;
    return value_;
  }
  value_ = value;
  seen_ns_ = now_ns;
  return value_;
}

TraceReader::TraceReader(const trace::TraceMemory& memory,
                         const std::vector<trace::EventDesc>& events,
                         const trace::Symbolizer* symbolizer, OutputFormat format, std::FILE* out,
                         bool also_record)
    : memory_(memory),
      symbol_log_(symbolizer),
      formatter_(format == OutputFormat::kRecord || also_record ? &symbol_log_ : symbolizer),
      stream_(g_next_stream.fetch_add(1)),
      format_(format),
      out_(out),
      slots_(memory.slot_count()),
      created_ns_(monotonic_ns()),
      slotless_(created_ns_) {
  events_by_id_.resize(memory.event_slots(), nullptr);
  for (const trace::EventDesc& event : events) {
    if (event.id < events_by_id_.size()) events_by_id_[event.id] = &event;
  }
  format_written_.resize(events_by_id_.size());
}

size_t TraceReader::poll() {
  const size_t count = collect(pass_);
  pass_.write(out_);
  return count;
}

size_t TraceReader::collect(TracePass& pass, TracePass* records) {
  const size_t before = pass.size();
  // The kernel may have adjusted its conversion since the last pass.
  formatter_.set_scale(TraceClock::get().scale(memory_.clock()));
  for (uint32_t i = 0; i < memory_.slot_count(); ++i) drain_slot(i, pass, records);
  observe_slotless();
  return pass.size() - before;
}

// The shared counter, plus what rings given back counted, plus what the
// rings in use count now.
uint64_t TraceReader::count(uint32_t id, const std::atomic<uint64_t>& shared,
                            const std::vector<uint64_t>& retired,
                            uint64_t (trace::RingReader::*in_ring)(uint32_t) const) const {
  uint64_t total = shared.load(std::memory_order_relaxed);
  if (id >= retired.size()) return total;
  total += retired[id];
  for (const Slot& slot : slots_) {
    if (slot.reader) total += ((*slot.reader).*in_ring)(id);
  }
  return total;
}

uint64_t TraceReader::hits(uint32_t id) const {
  return count(id, memory_.counter(id).hits, retired_hits_, &trace::RingReader::hits);
}

uint64_t TraceReader::misses(uint32_t id) const {
  return count(id, memory_.counter(id).misses, retired_misses_, &trace::RingReader::misses);
}

uint64_t TraceReader::filtered(uint32_t id) const {
  return count(id, memory_.counter(id).filtered, retired_filtered_, &trace::RingReader::filtered);
}

void TraceReader::observe_slotless() {
  slotless_.observe(memory_.header().slotless.load(std::memory_order_relaxed), monotonic_ns());
  if (slotless_.corrupt() && !slotless_said_) {
    slotless_said_ = true;
    problems_.push_back("the trace memory's count of hits that found no ring is corrupt; kept at " +
                        std::to_string(slotless_.value()));
  }
}

void TraceReader::drain_slot(uint32_t index, TracePass& pass, TracePass* records) {
  trace::SlotState& state = memory_.slot(index);
  const uint32_t value = state.state.load(std::memory_order_acquire);
  if (value != trace::kSlotActive && value != trace::kSlotRetired &&
      value != trace::kSlotChecking) {
    return;
  }
  Slot& slot = slots_[index];
  const uint32_t generation = state.generation.load(std::memory_order_acquire);
  if (slot.lost && slot.generation == generation) {
    // Given up on: freed once its thread is done with it, never read again.
    if (value == trace::kSlotRetired) free_slot(state, value);
    return;
  }
  if (!slot.reader || slot.generation != generation) {
    slot.reader.reset();
    slot.generation = generation;
    auto ring = trace::RingBuffer::attach(memory_.ring(index), memory_.ring_bytes());
    if (!ring) {
      lose(slot, "ring " + std::to_string(index) + ": " + ring.error().message);
      return;
    }
    slot.lost = false;
    slot.reader.emplace(*ring);
    slot.lost_count = PlausibleCount{created_ns_};
    slot.last_ns = 0;
    slot.comm = slot.reader->comm();
  }
  trace::RingReader& reader = *slot.reader;
  reader.drain([&](const trace::RecordHeader* header, std::span<const std::byte> record) {
    take(slot, header, record, pass, records);
  });
  ring_lost(slot);
  if (reader.corrupt()) {
    lose(slot, "ring of thread " + std::to_string(reader.tid()) + ": " + reader.corruption());
    return;
  }
  // Retired before this drain began: everything it wrote has been read.
  if (value == trace::kSlotRetired) {
    lost_retired_ += ring_lost(slot);
    for (uint32_t id = 0; id < retired_hits_.size(); ++id) {
      retired_hits_[id] += reader.hits(id);
      retired_misses_[id] += reader.misses(id);
      retired_filtered_[id] += reader.filtered(id);
    }
    slot.reader.reset();
    free_slot(state, value);
  }
}

// A ring that cannot be read on is lost, counted and said once; the other
// rings go on. Its slot stays taken while its thread may still write there.
void TraceReader::lose(Slot& slot, std::string why) {
  ++lost_rings_;
  if (lost_rings_ <= kMaxProblems) problems_.push_back(std::move(why));
  slot.reader.reset();
  slot.lost = true;
}

void TraceReader::free_slot(trace::SlotState& state, uint32_t seen) {
  uint32_t expected = seen;
  state.state.compare_exchange_strong(expected, trace::kSlotFree, std::memory_order_release);
}

void TraceReader::take(Slot& slot, const trace::RecordHeader* header,
                       std::span<const std::byte> record, TracePass& pass, TracePass* records) {
  if (header->type == trace::kCommRecordType && record.size() >= trace::kCommRecordSize) {
    const auto* name = reinterpret_cast<const char*>(record.data()) + trace::kRecordHeaderSize;
    slot.comm.assign(name, strnlen(name, 16));
    return;
  }
  if (header->type >= events_by_id_.size() || events_by_id_[header->type] == nullptr) return;
  trace::RecordHeader host_header;
  std::optional<trace::TraceFormatter::NamespaceIds> own;
  if (ids_ && ids_->translates()) {
    own = trace::TraceFormatter::NamespaceIds{header->pid, header->tid};
    host_header = *header;
    host_header.pid = ids_->host_pid();
    host_header.tid = ids_->host_tid(header->tid);
    translated_.assign(reinterpret_cast<const char*>(record.data()), record.size());
    std::memcpy(translated_.data(), &host_header, sizeof(host_header));
    header = &host_header;
    record = std::as_bytes(std::span(translated_));
  }
  const trace::EventDesc& event = *events_by_id_[header->type];
  const uint64_t ns = time_in_order(slot, *header);
  // A record's chunks are made once: the event's format and the symbols go
  // out with the first record that needs them, to every file alike.
  if (format_ == OutputFormat::kRecord || records != nullptr) {
    chunks_.clear();
    take_record(event, *header, ns, record, slot.comm, chunks_);
  }
  std::string& text = pass.text();
  const size_t begin = text.size();
  if (format_ == OutputFormat::kRecord) {
    text += chunks_;
  } else if (format_ == OutputFormat::kJson) {
    formatter_.format_json(event, record, slot.comm, text, ns, own ? &*own : nullptr);
  } else {
    formatter_.format_text(event, record, slot.comm, text, ns);
  }
  pass.add(ns, begin, text.size());
  if (records != nullptr) {
    const size_t at = records->text().size();
    records->text() += chunks_;
    records->add(ns, at, records->text().size());
  }
}

void TraceReader::collect_late_symbols(TracePass& pass, TracePass* records) {
  if (format_ != OutputFormat::kRecord && records == nullptr) return;
  symbol_log_.retry_unnamed();
  chunks_.clear();
  append_symbol_chunks(chunks_);
  if (chunks_.empty()) return;
  // At time 0: symbol chunks are read before any record is shown, wherever
  // they are in the file, and a later one naming an address wins.
  for (TracePass* to : {format_ == OutputFormat::kRecord ? &pass : nullptr, records}) {
    if (to == nullptr) continue;
    const size_t at = to->text().size();
    to->text() += chunks_;
    to->add(0, at, to->text().size());
  }
}

void TraceReader::append_symbol_chunks(std::string& out) {
  for (const trace::LoggedAddress& logged : symbol_log_.take_new()) {
    if (logged.hit) {
      trace::append_symbol_chunk(out, stream_, logged.address, *logged.hit, logged.object);
    } else {
      trace::append_object_chunk(out, stream_, logged.address, logged.object);
    }
  }
}

// The record's time, never before its thread's previous one: a thread's
// records are written in order, but the counter-to-ns conversion is
// refined at every pass, and a thread moved to another core may read a
// counter a little behind; either could otherwise put one of its lines
// before the one it came after.
uint64_t TraceReader::time_in_order(Slot& slot, const trace::RecordHeader& header) const {
  slot.last_ns = std::max(slot.last_ns, formatter_.timestamp_ns(header));
  return slot.last_ns;
}

void TraceReader::take_record(const trace::EventDesc& event, const trace::RecordHeader& header,
                              uint64_t ns, std::span<const std::byte> record,
                              const std::string& comm, std::string& out) {
  scratch_.clear();
  formatter_.format_text(event, record, comm, scratch_, ns);  // looks up what the text shows
  if (!format_written_[event.id]) {
    format_written_[event.id] = true;
    trace::append_event_chunk(out, stream_, event);
  }
  append_symbol_chunks(out);
  // The time in trace-clock ns: the file needs no clock to be read.
  std::string copy(reinterpret_cast<const char*>(record.data()), record.size());
  trace::store_field<uint64_t>(copy.data(), offsetof(trace::RecordHeader, timestamp), ns);
  if (event.entry_time_offset != 0 && event.entry_time_offset + 8 <= copy.size()) {
    trace::RecordHeader entry = header;
    entry.timestamp = trace::load_field<uint64_t>(copy.data(), event.entry_time_offset);
    // 0: the session took no entry times (stays 0, "none").
    if (entry.timestamp != 0) {
      trace::store_field<uint64_t>(copy.data(), event.entry_time_offset,
                                   formatter_.timestamp_ns(entry));
    }
  }
  trace::append_record_chunk(out, stream_, comm, std::as_bytes(std::span(copy)));
}

int TracePass::write(std::FILE* out, uint64_t upto) {
  std::stable_sort(lines_.begin(), lines_.end(),
                   [](const Line& a, const Line& b) { return a.timestamp < b.timestamp; });
  sorted_.clear();
  std::string held;
  std::vector<Line> later;
  for (const Line& line : lines_) {
    if (line.timestamp <= upto) {
      sorted_.append(text_, line.begin, line.end - line.begin);
    } else {
      later.push_back({line.timestamp, held.size(), held.size() + (line.end - line.begin)});
      held.append(text_, line.begin, line.end - line.begin);
    }
  }
  text_ = std::move(held);
  lines_ = std::move(later);
  errno = 0;
  if (std::fflush(out) != 0) return errno != 0 ? errno : EIO;
  if (!write_whole_lines(::fileno(out), sorted_)) return errno != 0 ? errno : EIO;
  return 0;
}

void TracePass::discard() {
  lines_.clear();
  text_.clear();
}

uint64_t TraceReader::ring_lost(Slot& slot) {
  const uint64_t lost = slot.lost_count.observe(slot.reader->lost(), monotonic_ns());
  if (slot.lost_count.corrupt() && !slot.lost_said) {
    slot.lost_said = true;
    if (++corrupt_counts_ > kMaxProblems) return lost;
    problems_.push_back("ring of thread " + std::to_string(slot.reader->tid()) +
                        ": its lost-event count is corrupt; kept at " + std::to_string(lost));
  }
  return lost;
}

uint64_t TraceReader::lost_ring_full() const {
  uint64_t total = lost_retired_;
  for (const Slot& slot : slots_) {
    if (slot.reader) total += slot.lost_count.value();
  }
  return total;
}

uint64_t TraceReader::lost_no_slot() const { return slotless_.value(); }

std::vector<std::string> TraceReader::problems() const {
  std::vector<std::string> out = problems_;
  if (lost_rings_ > kMaxProblems) {
    out.push_back(std::to_string(lost_rings_ - kMaxProblems) + " more rings corrupt");
  }
  if (lost_rings_ > 0) {
    out.push_back(std::to_string(lost_rings_) +
                  " thread rings lost: the program overwrote its trace memory");
  }
  return out;
}

}  // namespace dprobe::cli
