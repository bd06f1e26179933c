// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The trace file `dprobe record` writes and `dprobe report` reads: a header
// (magic, version), then self-describing chunks, each `kind (u32) | length
// (u32) | payload`, appended as the rings are drained, so that a file cut
// short (a crash, Ctrl-C) is a readable prefix. Integers are little-endian,
// strings a u32 length and their bytes.
//
//   event   stream, the EventDesc the formatter needs (names, args, layout)
//   symbol  stream, an address and the symbol the trace printed for it
//   record  stream, the thread's name, the raw record (its time in ns)
//   profile the profile table, at the end
//   notes   what the session said at its end (events lost, children
//           untraced, probes left pending), at the end
//
// Version 2 added the entry time of return records (EventDesc::
// entry_time_offset, last in the event chunk) and the notes; version 1
// files are still read. Version 3 added what makes an event happen (a
// probe or a system call: EventDesc::source, syscall_nr, syscall_name,
// event_probe), after the entry time. Version 4 added the user stack field
// (EventDesc::stack_offset, --stacktrace), after those, and the object of
// a symbol chunk's address (a stack frame's "(libc.so.6)"), after its
// name; a chunk with an empty name names only the object.
//
// A stream is one traced process image (one TraceReader): event ids and
// addresses mean something only within it.
//
//   std::string out;
//   append_file_header(out);
//   append_record_chunk(out, stream, comm, record);
//   TraceFileContents file = read_trace_file(data);   // stops at the first bad chunk
#ifndef DPROBE_TRACE_TRACE_FILE_H_
#define DPROBE_TRACE_TRACE_FILE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/event.h"
#include "trace/symbolizer.h"

namespace dprobe::trace {

inline constexpr std::string_view kTraceFileMagic{"DPROBETF", 8};
inline constexpr uint32_t kTraceFileVersion = 4;
inline constexpr uint32_t kOldestTraceFileVersion = 1;
inline constexpr size_t kTraceFileHeaderSize = 16;  // magic, version, reserved

enum class ChunkKind : uint32_t { kEvent = 1, kSymbol = 2, kRecord = 3, kProfile = 4, kNotes = 5 };

void append_file_header(std::string& out);
void append_event_chunk(std::string& out, uint32_t stream, const EventDesc& event);
void append_symbol_chunk(std::string& out, uint32_t stream, uint64_t address, const SymbolHit& hit,
                         std::string_view object = {});
// The object alone, for an address no symbol covers.
void append_object_chunk(std::string& out, uint32_t stream, uint64_t address,
                         std::string_view object);
void append_record_chunk(std::string& out, uint32_t stream, std::string_view comm,
                         std::span<const std::byte> record);
void append_profile_chunk(std::string& out, std::string_view text);
void append_notes_chunk(std::string& out, std::string_view text);

struct FileRecord {
  uint32_t stream = 0;
  uint64_t offset = 0;  // of its chunk in the file
  std::string comm;
  std::string bytes;
};

struct FileSymbol {
  std::string name;  // empty: only the object is known
  uint64_t offset = 0;
  uint64_t size = 0;
  std::string object;
};

struct TraceFileContents {
  std::map<std::pair<uint32_t, uint16_t>, EventDesc> events;    // (stream, id)
  std::map<std::pair<uint32_t, uint64_t>, FileSymbol> symbols;  // (stream, address)
  std::vector<FileRecord> records;                              // in file order
  std::string profile;
  std::string notes;  // "dprobe: ..." lines, as the session printed them
  // Where reading stopped, and why; everything before it was read.
  std::optional<std::pair<uint64_t, std::string>> error;
};

TraceFileContents read_trace_file(std::string_view data);

// The symbols one stream of a file recorded, for the formatter.
class FileSymbolizer : public Symbolizer {
 public:
  FileSymbolizer(const TraceFileContents& file, uint32_t stream) : file_(file), stream_(stream) {}
  std::optional<SymbolHit> symbolize(uint64_t address) const override;
  std::string_view object_name(uint64_t address) const override;

 private:
  const TraceFileContents& file_;
  uint32_t stream_;
};

// Wraps the symbolizer of a live process and keeps every address it
// resolved that was not handed out before: what a recorded record needs.
// What a SymbolLog learned of one address: its symbol, its object, or both.
struct LoggedAddress {
  uint64_t address = 0;
  std::optional<SymbolHit> hit;
  std::string_view object;  // empty: not asked, or unknown
};

class SymbolLog : public Symbolizer {
 public:
  explicit SymbolLog(const Symbolizer* inner) : inner_(inner) {}
  std::optional<SymbolHit> symbolize(uint64_t address) const override;
  std::string_view object_name(uint64_t address) const override;
  // What was resolved since the last call, by address; each symbol and
  // each object once over the log's life.
  std::vector<LoggedAddress> take_new();
  // Asks the inner symbolizer again, refreshed, for the addresses it had no
  // symbol for; what it names now take_new() gives. For the end of a
  // recording: a JIT's names may be written only as its process exits.
  void retry_unnamed();

 private:
  // The addresses without a symbol kept for retry_unnamed(), at most.
  static constexpr size_t kMaxUnnamed = 1 << 16;

  LoggedAddress& pending(uint64_t address) const;

  const Symbolizer* inner_;
  mutable std::set<uint64_t> symbols_seen_;  // handed out or waiting
  mutable std::set<uint64_t> unnamed_;       // asked, not named
  mutable std::set<uint64_t> objects_seen_;
  mutable std::map<uint64_t, LoggedAddress> new_;
};

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_TRACE_FILE_H_
