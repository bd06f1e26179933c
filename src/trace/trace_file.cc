// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/trace_file.h"

#include <cstring>
#include <utility>

#include "trace/hit/fetch_type.h"
#include "trace/record.h"

namespace dprobe::trace {
namespace {

// Chunks larger than this are not written, so one is taken as corrupt.
constexpr uint32_t kMaxChunk = 1u << 24;

template <typename T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_string(std::string& out, std::string_view text) {
  put<uint32_t>(out, static_cast<uint32_t>(text.size()));
  out.append(text);
}

// Appends kind and a length to fill in once the payload is there.
size_t begin_chunk(std::string& out, ChunkKind kind) {
  put<uint32_t>(out, static_cast<uint32_t>(kind));
  put<uint32_t>(out, 0);
  return out.size();
}

void end_chunk(std::string& out, size_t payload) {
  const auto length = static_cast<uint32_t>(out.size() - payload);
  std::memcpy(out.data() + payload - sizeof(uint32_t), &length, sizeof(length));
}

// Reads a chunk's payload; any read past its end fails the cursor.
class Cursor {
 public:
  explicit Cursor(std::string_view data) : data_(data) {}
  template <typename T>
  T get() {
    T value{};
    if (!ok_ || data_.size() - at_ < sizeof(T)) {
      ok_ = false;
      return value;
    }
    std::memcpy(&value, data_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  std::string get_string() {
    const auto size = get<uint32_t>();
    if (!ok_ || data_.size() - at_ < size) {
      ok_ = false;
      return {};
    }
    std::string text(data_.substr(at_, size));
    at_ += size;
    return text;
  }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && at_ == data_.size(); }

 private:
  std::string_view data_;
  size_t at_ = 0;
  bool ok_ = true;
};

bool read_arg(Cursor& in, EventArg& arg) {
  arg.name = in.get_string();
  arg.type_text = in.get_string();
  const auto type = in.get<uint8_t>();
  arg.count = in.get<uint32_t>();
  arg.offset = in.get<uint32_t>();
  if (type >= static_cast<uint8_t>(TypeId::kCount)) return false;
  arg.type = static_cast<TypeId>(type);
  return in.ok();
}

// Empty, or why the chunk is bad.
std::string read_event(Cursor& in, TraceFileContents& file) {
  const auto stream = in.get<uint32_t>();
  EventDesc event;
  event.id = in.get<uint16_t>();
  event.group = in.get_string();
  event.name = in.get_string();
  event.is_return = in.get<uint8_t>() != 0;
  event.fixed_size = in.get<uint32_t>();
  const auto count = in.get<uint32_t>();
  for (uint32_t i = 0; i < count && in.ok(); ++i) {
    if (!read_arg(in, event.args.emplace_back())) return "event format: bad argument";
  }
  // Since version 2; version 1 return records have no entry time.
  if (!in.done()) event.entry_time_offset = in.get<uint32_t>();
  // Since version 3: what makes the event happen (a probe, a system call).
  if (!in.done()) {
    const auto source = in.get<uint8_t>();
    if (source > static_cast<uint8_t>(EventSource::kRawSyscallExit)) {
      return "event format: bad source";
    }
    event.source = static_cast<EventSource>(source);
    event.syscall_nr = in.get<int32_t>();
    event.syscall_name = in.get_string();
    event.event_probe = in.get<uint8_t>() != 0;
  }
  // Since version 4: the user stack field.
  if (!in.done()) event.stack_offset = in.get<uint32_t>();
  if (!in.done()) return "event format: bad length";
  file.events[{stream, event.id}] = std::move(event);
  return {};
}

std::string read_symbol(Cursor& in, TraceFileContents& file) {
  const auto stream = in.get<uint32_t>();
  const auto address = in.get<uint64_t>();
  FileSymbol symbol;
  symbol.offset = in.get<uint64_t>();
  symbol.size = in.get<uint64_t>();
  symbol.name = in.get_string();
  // Since version 4: the address's object. A chunk with no name adds the
  // object to what an earlier one said.
  if (!in.done()) symbol.object = in.get_string();
  if (!in.done()) return "symbol: bad length";
  FileSymbol& kept = file.symbols[{stream, address}];
  if (!symbol.name.empty() || kept.name.empty()) {
    std::string object = std::move(kept.object);
    kept = std::move(symbol);
    if (kept.object.empty()) kept.object = std::move(object);
  } else if (!symbol.object.empty()) {
    kept.object = std::move(symbol.object);
  }
  return {};
}

std::string read_record(Cursor& in, uint64_t offset, TraceFileContents& file) {
  FileRecord record;
  record.stream = in.get<uint32_t>();
  record.offset = offset;
  record.comm = in.get_string();
  record.bytes = in.get_string();
  if (!in.done()) return "record: bad length";
  if (record.bytes.size() < kRecordHeaderSize || record.bytes.size() > kMaxRecordSize) {
    return "record: " + std::to_string(record.bytes.size()) + " bytes, not a record's size";
  }
  file.records.push_back(std::move(record));
  return {};
}

// A chunk that is one string, taken only once it fills the chunk exactly:
// a chunk of another kind, relabelled, is an error, never text.
std::string read_text(Cursor& in, std::string_view what, std::string& text) {
  std::string read = in.get_string();
  if (!in.done()) return std::string(what) + ": bad length";
  text = std::move(read);
  return {};
}

std::string read_chunk(ChunkKind kind, std::string_view payload, uint64_t offset,
                       TraceFileContents& file) {
  Cursor in(payload);
  switch (kind) {
    case ChunkKind::kEvent:
      return read_event(in, file);
    case ChunkKind::kSymbol:
      return read_symbol(in, file);
    case ChunkKind::kRecord:
      return read_record(in, offset, file);
    case ChunkKind::kProfile:
      return read_text(in, "profile", file.profile);
    case ChunkKind::kNotes: {
      std::string notes;
      std::string why = read_text(in, "notes", notes);
      file.notes += notes;
      return why;
    }
  }
  return "unknown chunk kind " + std::to_string(static_cast<uint32_t>(kind));
}

// Empty, or why the file's header is not one this dprobe reads.
std::string check_header(std::string_view data) {
  if (data.size() < kTraceFileHeaderSize ||
      data.substr(0, kTraceFileMagic.size()) != kTraceFileMagic) {
    return "not a dprobe trace file (no DPROBETF header)";
  }
  uint32_t version = 0;
  std::memcpy(&version, data.data() + kTraceFileMagic.size(), sizeof(version));
  if (version < kOldestTraceFileVersion || version > kTraceFileVersion) {
    return "trace file version " + std::to_string(version) + "; this dprobe reads versions " +
           std::to_string(kOldestTraceFileVersion) + " to " + std::to_string(kTraceFileVersion);
  }
  return {};
}

}  // namespace

void append_file_header(std::string& out) {
  out.append(kTraceFileMagic);
  put<uint32_t>(out, kTraceFileVersion);
  put<uint32_t>(out, 0);
}

void append_event_chunk(std::string& out, uint32_t stream, const EventDesc& event) {
  const size_t payload = begin_chunk(out, ChunkKind::kEvent);
  put<uint32_t>(out, stream);
  put<uint16_t>(out, event.id);
  put_string(out, event.group);
  put_string(out, event.name);
  put<uint8_t>(out, event.is_return ? 1 : 0);
  put<uint32_t>(out, event.fixed_size);
  put<uint32_t>(out, static_cast<uint32_t>(event.args.size()));
  for (const EventArg& arg : event.args) {
    put_string(out, arg.name);
    put_string(out, arg.type_text);
    put<uint8_t>(out, static_cast<uint8_t>(arg.type));
    put<uint32_t>(out, arg.count);
    put<uint32_t>(out, arg.offset);
  }
  put<uint32_t>(out, event.entry_time_offset);
  put<uint8_t>(out, static_cast<uint8_t>(event.source));
  put<int32_t>(out, event.syscall_nr);
  put_string(out, event.syscall_name);
  put<uint8_t>(out, event.event_probe ? 1 : 0);
  put<uint32_t>(out, event.stack_offset);
  end_chunk(out, payload);
}

void append_symbol_chunk(std::string& out, uint32_t stream, uint64_t address, const SymbolHit& hit,
                         std::string_view object) {
  const size_t payload = begin_chunk(out, ChunkKind::kSymbol);
  put<uint32_t>(out, stream);
  put<uint64_t>(out, address);
  put<uint64_t>(out, hit.offset);
  put<uint64_t>(out, hit.size);
  put_string(out, hit.name);
  put_string(out, object);
  end_chunk(out, payload);
}

void append_object_chunk(std::string& out, uint32_t stream, uint64_t address,
                         std::string_view object) {
  append_symbol_chunk(out, stream, address, SymbolHit{{}, 0, 0}, object);
}

void append_record_chunk(std::string& out, uint32_t stream, std::string_view comm,
                         std::span<const std::byte> record) {
  const size_t payload = begin_chunk(out, ChunkKind::kRecord);
  put<uint32_t>(out, stream);
  put_string(out, comm);
  put_string(out, {reinterpret_cast<const char*>(record.data()), record.size()});
  end_chunk(out, payload);
}

void append_profile_chunk(std::string& out, std::string_view text) {
  const size_t payload = begin_chunk(out, ChunkKind::kProfile);
  put_string(out, text);
  end_chunk(out, payload);
}

void append_notes_chunk(std::string& out, std::string_view text) {
  const size_t payload = begin_chunk(out, ChunkKind::kNotes);
  put_string(out, text);
  end_chunk(out, payload);
}

TraceFileContents read_trace_file(std::string_view data) {
  TraceFileContents file;
  if (std::string why = check_header(data); !why.empty()) {
    file.error = {0, std::move(why)};
    return file;
  }
  size_t at = kTraceFileHeaderSize;
  while (at < data.size()) {
    Cursor head(data.substr(at));
    const auto kind = head.get<uint32_t>();
    const auto length = head.get<uint32_t>();
    if (!head.ok() || length > kMaxChunk || data.size() - at - 8 < length) {
      file.error = {at, head.ok() && length > kMaxChunk ? "chunk too large" : "truncated chunk"};
      return file;
    }
    std::string why =
        read_chunk(static_cast<ChunkKind>(kind), data.substr(at + 8, length), at, file);
    if (!why.empty()) {
      file.error = {at, std::move(why)};
      return file;
    }
    at += 8 + length;
  }
  return file;
}

std::optional<SymbolHit> FileSymbolizer::symbolize(uint64_t address) const {
  const auto found = file_.symbols.find({stream_, address});
  if (found == file_.symbols.end() || found->second.name.empty()) return std::nullopt;
  return SymbolHit{found->second.name, found->second.offset, found->second.size};
}

std::string_view FileSymbolizer::object_name(uint64_t address) const {
  const auto found = file_.symbols.find({stream_, address});
  return found == file_.symbols.end() ? std::string_view() : found->second.object;
}

LoggedAddress& SymbolLog::pending(uint64_t address) const {
  LoggedAddress& logged = new_[address];
  logged.address = address;
  return logged;
}

std::optional<SymbolHit> SymbolLog::symbolize(uint64_t address) const {
  if (inner_ == nullptr) return std::nullopt;
  std::optional<SymbolHit> hit = inner_->symbolize(address);
  if (hit && symbols_seen_.insert(address).second) pending(address).hit = hit;
  if (!hit && unnamed_.size() < kMaxUnnamed) unnamed_.insert(address);
  return hit;
}

void SymbolLog::retry_unnamed() {
  if (inner_ == nullptr || unnamed_.empty()) return;
  inner_->refresh();
  const std::set<uint64_t> unnamed = std::move(unnamed_);
  unnamed_.clear();
  for (const uint64_t address : unnamed) {
    if (symbols_seen_.count(address) != 0) continue;
    if (symbolize(address)) object_name(address);
  }
}

std::string_view SymbolLog::object_name(uint64_t address) const {
  if (inner_ == nullptr) return {};
  const std::string_view object = inner_->object_name(address);
  if (!object.empty() && objects_seen_.insert(address).second) pending(address).object = object;
  return object;
}

std::vector<LoggedAddress> SymbolLog::take_new() {
  std::vector<LoggedAddress> out;
  out.reserve(new_.size());
  for (auto& [address, logged] : new_) out.push_back(logged);
  new_.clear();
  return out;
}

}  // namespace dprobe::trace
