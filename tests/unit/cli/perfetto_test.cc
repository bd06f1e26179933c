// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The Perfetto (Chrome trace-event) JSON of a small trace file made here,
// against a fixture read by eye once (tests/unit/cli/data/perfetto.json):
// nested calls of one function as nested slices, a return probe with no
// entry probe as a slice from its record's entry time, a call that never
// returned as an instant, two threads of one process named, a version 1
// return record (no entry time) as an instant.
#include "cli/output/perfetto.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "trace/record.h"

namespace dprobe::cli {
namespace {

using trace::EventArg;
using trace::EventDesc;
using trace::TypeId;

constexpr uint32_t kStream = 0;
constexpr uint64_t kF = 0x1000;     // f, probed at entry and return
constexpr uint64_t kLone = 0x2000;  // lone, probed at return only
constexpr uint64_t kMain = 0x3000;  // where both return to

EventDesc event(uint16_t id, const char* name, bool is_return, const char* arg, TypeId type) {
  EventDesc desc;
  desc.id = id;
  desc.group = "g";
  desc.name = name;
  desc.is_return = is_return;
  EventArg field;
  field.name = arg;
  field.type = type;
  field.type_text = type == TypeId::kU64 ? "u64" : "s64";
  desc.args.push_back(field);
  trace::layout_event(desc);
  return desc;
}

class Recording {
 public:
  Recording() {
    add_event(event(1, "f", false, "n", TypeId::kU64));
    add_event(event(2, "f_ret", true, "rv", TypeId::kS64));
    add_event(event(3, "lone", true, "rv", TypeId::kS64));
    EventDesc old = event(4, "old", true, "rv", TypeId::kS64);
    old.entry_time_offset = 0;  // as a version 1 file has it
    add_event(old);
    file_.symbols[{kStream, kF}] = {"f", 0, 0x40, {}};
    file_.symbols[{kStream, kLone}] = {"lone", 0, 0x20, {}};
    file_.symbols[{kStream, kMain}] = {"main", 0x10, 0x100, {}};
  }

  void entry(uint32_t tid, const char* comm, uint64_t ts, uint64_t n) {
    std::string record = header(1, tid, ts);
    put(record, EventDesc::kIpOffset, kF);
    put(record, trace::first_arg_offset(false), n);
    add(comm, record);
  }

  void exit(uint16_t id, uint32_t tid, uint64_t ts, uint64_t function, int64_t rv,
            uint64_t entry_ts) {
    std::string record = header(id, tid, ts);
    put(record, EventDesc::kFuncOffset, function);
    put(record, EventDesc::kRetIpOffset, kMain + 0x10);
    put(record, trace::first_arg_offset(true), static_cast<uint64_t>(rv));
    const uint32_t at = file_.events.at({kStream, id}).entry_time_offset;
    if (at != 0) put(record, at, entry_ts);
    add("prog", record);
  }

  const trace::TraceFileContents& file() const { return file_; }

 private:
  void add_event(const EventDesc& desc) { file_.events[{kStream, desc.id}] = desc; }

  std::string header(uint16_t id, uint32_t tid, uint64_t ts) const {
    const EventDesc& desc = file_.events.at({kStream, id});
    std::string record(desc.fixed_size, '\0');
    const trace::RecordHeader head{id, static_cast<uint16_t>(desc.fixed_size), 1, 10, tid, ts};
    std::memcpy(record.data(), &head, sizeof(head));
    return record;
  }
  static void put(std::string& record, uint32_t at, uint64_t value) {
    std::memcpy(record.data() + at, &value, sizeof(value));
  }
  void add(const char* comm, const std::string& record) {
    file_.records.push_back({kStream, 0, comm, record});
  }

  trace::TraceFileContents file_;
};

std::string fixture() {
  std::ifstream in(DPROBE_SOURCE_DIR "/tests/unit/cli/data/perfetto.json");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Perfetto, MatchesTheFixture) {
  Recording recording;
  recording.entry(10, "prog", 1000, 1);          // f(1)
  recording.entry(10, "prog", 1500, 2);          //   f(2)
  recording.exit(2, 10, 1800, kF, 20, 1500);     //   f(2) returns 20
  recording.exit(2, 10, 2500, kF, 10, 1000);     // f(1) returns 10
  recording.exit(3, 10, 3000, kLone, -1, 2600);  // lone(), return probe only
  recording.exit(4, 10, 3500, kLone, 7, 0);      // a version 1 record
  recording.entry(11, "worker", 4000, 3);        // f(3), never returns
  const std::string json = perfetto_json(recording.file());
  EXPECT_EQ(json, fixture()) << json;
}

}  // namespace
}  // namespace dprobe::cli
