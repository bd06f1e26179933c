// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The trace file's chunks: what is written is read back (event formats,
// symbols, records, the profile), and a file cut at any byte, or with any
// byte changed, is read up to the bad chunk, whose offset is named, and
// never past it.
#include "trace/trace_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "trace/record.h"

namespace dprobe::trace {
namespace {

using ::testing::HasSubstr;

EventDesc sample_event() {
  EventDesc event;
  event.id = 7;
  event.group = "g";
  event.name = "open";
  event.is_return = true;
  EventArg arg;
  arg.name = "path";
  arg.type = TypeId::kString;
  arg.type_text = "string";
  event.args.push_back(arg);
  layout_event(event);
  return event;
}

std::string sample_record(uint16_t type, uint64_t timestamp) {
  std::string record(48, '\0');
  RecordHeader header{type, static_cast<uint16_t>(record.size()), 1, 10, 11, timestamp};
  std::memcpy(record.data(), &header, sizeof(header));
  return record;
}

std::string sample_file() {
  std::string out;
  append_file_header(out);
  append_event_chunk(out, 3, sample_event());
  append_symbol_chunk(out, 3, 0x1234, SymbolHit{"main", 0x10, 0x80});
  for (uint64_t i = 0; i < 4; ++i) {
    const std::string record = sample_record(7, 100 + i);
    append_record_chunk(out, 3, "prog", std::as_bytes(std::span(record)));
  }
  append_profile_chunk(out, "  open 4 0\n");
  append_notes_chunk(out, "dprobe: 3 events lost\n");
  return out;
}

TEST(TraceFile, ReadsBackWhatWasWritten) {
  const TraceFileContents file = read_trace_file(sample_file());
  ASSERT_FALSE(file.error) << file.error->second;
  ASSERT_EQ(file.events.size(), 1u);
  const EventDesc& event = file.events.at({3, 7});
  const EventDesc expected = sample_event();
  EXPECT_EQ(event.group, "g");
  EXPECT_EQ(event.name, "open");
  EXPECT_TRUE(event.is_return);
  EXPECT_EQ(event.fixed_size, expected.fixed_size);
  EXPECT_EQ(event.entry_time_offset, expected.entry_time_offset);
  EXPECT_EQ(event.entry_time_offset, expected.args[0].offset + expected.args[0].field_size());
  ASSERT_EQ(event.args.size(), 1u);
  EXPECT_EQ(event.args[0].name, "path");
  EXPECT_EQ(event.args[0].type, TypeId::kString);
  EXPECT_EQ(event.args[0].offset, expected.args[0].offset);
  ASSERT_EQ(file.records.size(), 4u);
  EXPECT_EQ(file.records[2].comm, "prog");
  EXPECT_EQ(file.records[2].bytes, sample_record(7, 102));
  EXPECT_EQ(file.profile, "  open 4 0\n");
  EXPECT_EQ(file.notes, "dprobe: 3 events lost\n");
  const FileSymbolizer symbols(file, 3);
  const auto hit = symbols.symbolize(0x1234);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->name, "main");
  EXPECT_EQ(hit->offset, 0x10u);
  EXPECT_FALSE(FileSymbolizer(file, 4).symbolize(0x1234));
}

TEST(TraceFile, CutAnywhereKeepsWhatCameBefore) {
  const std::string whole = sample_file();
  size_t records_before = 0;
  for (size_t size = 0; size < whole.size(); ++size) {
    const TraceFileContents file = read_trace_file(std::string_view(whole).substr(0, size));
    // Cut between chunks, the file is whole as far as it goes.
    if (file.error) {
      EXPECT_LE(file.error->first, size);
    }
    EXPECT_GE(file.records.size(), records_before) << size;
    records_before = file.records.size();
  }
  EXPECT_EQ(records_before, 4u);
}

TEST(TraceFile, AnyByteChangedIsReadOrRefusedSafely) {
  const std::string whole = sample_file();
  for (size_t at = 0; at < whole.size(); ++at) {
    std::string changed = whole;
    changed[at] = static_cast<char>(changed[at] ^ 0xa5);
    const TraceFileContents file = read_trace_file(changed);
    if (file.error) {
      EXPECT_LE(file.error->first, at) << at;
    }
    for (const FileRecord& record : file.records) EXPECT_GE(record.bytes.size(), kRecordHeaderSize);
  }
}

TEST(TraceFile, ForeignAndNewerFilesAreRefusedAtOffsetZero) {
  TraceFileContents file = read_trace_file("# tracer: nop\n");
  ASSERT_TRUE(file.error);
  EXPECT_EQ(file.error->first, 0u);
  EXPECT_THAT(file.error->second, HasSubstr("not a dprobe trace file"));
  std::string newer = sample_file();
  newer[8] = 5;
  file = read_trace_file(newer);
  ASSERT_TRUE(file.error);
  EXPECT_THAT(file.error->second, HasSubstr("version 5; this dprobe reads versions 1 to 4"));
  EXPECT_TRUE(file.records.empty());
}

// The event chunk of an older version: without the last `fields` bytes,
// its length that much shorter.
std::string old_event_chunk(size_t fields) {
  std::string chunk;
  append_event_chunk(chunk, 3, sample_event());
  chunk.resize(chunk.size() - fields);
  uint32_t length = 0;
  std::memcpy(&length, chunk.data() + 4, sizeof(length));
  length -= static_cast<uint32_t>(fields);
  std::memcpy(chunk.data() + 4, &length, sizeof(length));
  return chunk;
}

// Version 4's field after version 3's: the user stack's offset.
constexpr size_t kVersionFourFields = 4;
// Version 3's fields after the entry time: source, number, name (empty), event probe.
constexpr size_t kVersionThreeFields = 1 + 4 + 4 + 1;

TEST(TraceFile, VersionThreeFilesAreStillRead) {
  std::string out;
  append_file_header(out);
  out[8] = 3;
  out += old_event_chunk(kVersionFourFields);
  const TraceFileContents file = read_trace_file(out);
  ASSERT_FALSE(file.error) << file.error->second;
  ASSERT_EQ(file.events.size(), 1u);
  EXPECT_EQ(file.events.at({3, 7}).stack_offset, 0u);
}

TEST(TraceFile, TheStackFieldRoundTrips) {
  EventDesc event = sample_event();
  add_stack_field(event);
  std::string out;
  append_file_header(out);
  append_event_chunk(out, 3, event);
  const TraceFileContents file = read_trace_file(out);
  ASSERT_FALSE(file.error) << file.error->second;
  EXPECT_EQ(file.events.at({3, 7}).stack_offset, event.stack_offset);
  EXPECT_NE(event.stack_offset, 0u);
}

TEST(TraceFile, VersionTwoFilesAreStillRead) {
  std::string out;
  append_file_header(out);
  out[8] = 2;
  out += old_event_chunk(kVersionFourFields + kVersionThreeFields);
  const TraceFileContents file = read_trace_file(out);
  ASSERT_FALSE(file.error) << file.error->second;
  ASSERT_EQ(file.events.size(), 1u);
  EXPECT_EQ(file.events.at({3, 7}).source, EventSource::kProbe);
}

// Version 1: no entry time in return records (the event chunk ends with
// its arguments), no notes. Read as it is.
TEST(TraceFile, VersionOneFilesAreStillRead) {
  std::string out;
  append_file_header(out);
  out[8] = 1;
  out += old_event_chunk(kVersionFourFields + kVersionThreeFields + sizeof(uint32_t));
  const std::string record = sample_record(7, 100);
  append_record_chunk(out, 3, "prog", std::as_bytes(std::span(record)));
  const TraceFileContents file = read_trace_file(out);
  ASSERT_FALSE(file.error) << file.error->second;
  ASSERT_EQ(file.events.size(), 1u);
  EXPECT_EQ(file.events.at({3, 7}).entry_time_offset, 0u);
  EXPECT_EQ(file.records.size(), 1u);
  EXPECT_EQ(file.notes, "");
}

TEST(TraceFile, SymbolLogHandsOutEachAddressOnce) {
  class Fixed : public Symbolizer {
   public:
    std::optional<SymbolHit> symbolize(uint64_t address) const override {
      if (address == 0) return std::nullopt;
      return SymbolHit{"f", address - 0x100, 0x200};
    }
  } fixed;
  SymbolLog log(&fixed);
  EXPECT_TRUE(log.symbolize(0x150));
  EXPECT_FALSE(log.symbolize(0));
  EXPECT_TRUE(log.symbolize(0x150));
  auto first = log.take_new();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].address, 0x150u);
  ASSERT_TRUE(first[0].hit);
  EXPECT_EQ(first[0].hit->offset, 0x50u);
  log.symbolize(0x150);
  EXPECT_TRUE(log.take_new().empty());
}

// A stack frame's object travels with its symbol, or alone where no
// symbol covers the address, and a later chunk adds it to an earlier one.
TEST(TraceFile, ObjectsOfAddressesRoundTrip) {
  class Objects : public Symbolizer {
   public:
    std::optional<SymbolHit> symbolize(uint64_t address) const override {
      if (address != 0x150) return std::nullopt;
      return SymbolHit{"f", 0x50, 0x200};
    }
    std::string_view object_name(uint64_t address) const override {
      return address == 0x150 ? "prog" : "libc.so.6";
    }
  } objects;
  SymbolLog log(&objects);
  std::string out;
  append_file_header(out);
  log.symbolize(0x150);
  for (const LoggedAddress& logged : log.take_new()) {
    append_symbol_chunk(out, 3, logged.address, *logged.hit, logged.object);
  }
  log.object_name(0x150);
  log.symbolize(0x7000);
  log.object_name(0x7000);
  for (const LoggedAddress& logged : log.take_new()) {
    if (logged.hit) {
      append_symbol_chunk(out, 3, logged.address, *logged.hit, logged.object);
    } else {
      append_object_chunk(out, 3, logged.address, logged.object);
    }
  }
  const TraceFileContents file = read_trace_file(out);
  ASSERT_FALSE(file.error) << file.error->second;
  const FileSymbolizer symbols(file, 3);
  ASSERT_TRUE(symbols.symbolize(0x150));
  EXPECT_EQ(symbols.symbolize(0x150)->name, "f");
  EXPECT_EQ(symbols.object_name(0x150), "prog");
  EXPECT_FALSE(symbols.symbolize(0x7000));
  EXPECT_EQ(symbols.object_name(0x7000), "libc.so.6");
}

// A JIT's names known only later (the JVM writes its map at its exit):
// retry_unnamed() asks again, after a refresh, for the addresses that had
// no name, and a later chunk naming an address wins over the bare one.
TEST(TraceFile, SymbolLogNamesLaterWhatItCouldNotBefore) {
  class Late : public Symbolizer {
   public:
    std::optional<SymbolHit> symbolize(uint64_t address) const override {
      if (address == 0x150) return SymbolHit{"f", 0x50, 0x200};
      if (address == 0x9000 && refreshed_) return SymbolHit{"JS:*hot", 0x10, 0x80};
      return std::nullopt;
    }
    std::string_view object_name(uint64_t address) const override {
      if (address == 0x9000 && refreshed_) return "[JIT] tid 7";
      return address == 0x150 ? "prog" : "";
    }
    void refresh() const override { refreshed_ = true; }
    mutable bool refreshed_ = false;
  } late;
  SymbolLog log(&late);
  std::string out;
  append_file_header(out);
  for (uint64_t address : {uint64_t{0x150}, uint64_t{0x9000}, uint64_t{0x9999}}) {
    if (log.symbolize(address)) log.object_name(address);
  }
  std::vector<LoggedAddress> first = log.take_new();
  ASSERT_EQ(first.size(), 1u);
  append_symbol_chunk(out, 3, first[0].address, *first[0].hit, first[0].object);
  log.retry_unnamed();
  EXPECT_TRUE(late.refreshed_);
  std::vector<LoggedAddress> later = log.take_new();
  ASSERT_EQ(later.size(), 1u);  // 0x150 was given already, 0x9999 is still nothing
  EXPECT_EQ(later[0].address, 0x9000u);
  ASSERT_TRUE(later[0].hit);
  append_symbol_chunk(out, 3, later[0].address, *later[0].hit, later[0].object);
  log.retry_unnamed();
  EXPECT_TRUE(log.take_new().empty());
  const TraceFileContents file = read_trace_file(out);
  ASSERT_FALSE(file.error) << file.error->second;
  const FileSymbolizer symbols(file, 3);
  ASSERT_TRUE(symbols.symbolize(0x9000));
  EXPECT_EQ(symbols.symbolize(0x9000)->name, "JS:*hot");
  EXPECT_EQ(symbols.symbolize(0x9000)->offset, 0x10u);
  EXPECT_EQ(symbols.object_name(0x9000), "[JIT] tid 7");
  EXPECT_FALSE(symbols.symbolize(0x9999));
}

}  // namespace
}  // namespace dprobe::trace
