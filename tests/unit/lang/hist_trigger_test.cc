// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/hist_trigger.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace dprobe::lang {
namespace {

using trace::HistKey;
using trace::HistSortKey;
using trace::HistSpec;

std::vector<trace::RecordField> event_fields(bool is_return) {
  trace::EventDesc event;
  event.is_return = is_return;
  for (auto [name, type] :
       {std::pair{"size", trace::TypeId::kU64}, std::pair{"fd", trace::TypeId::kS32},
        std::pair{"name", trace::TypeId::kString}, std::pair{"id", trace::TypeId::kS64}}) {
    trace::EventArg a;
    a.name = name;
    a.type = type;
    event.args.push_back(a);
  }
  trace::layout_event(event);
  return trace::record_fields(event);
}

// A return event's fields: size, fd, name, id, common ones, $duration.
const std::vector<trace::RecordField>& fields() {
  static const auto* f = new std::vector<trace::RecordField>(event_fields(true));
  return *f;
}

HistSpec parse_ok(std::string_view text) {
  auto spec = parse_hist_trigger(text, fields());
  EXPECT_TRUE(spec) << text << ": " << spec.error().message << " at " << spec.error().column;
  return spec ? *spec : HistSpec{};
}

TEST(HistTrigger, KeysAloneTakeTheKernelsDefaults) {
  const HistSpec spec = parse_ok("hist:keys=size");
  ASSERT_EQ(spec.keys.size(), 1u);
  EXPECT_EQ(spec.keys[0].field.name, "size");
  EXPECT_EQ(spec.keys[0].label, "size");
  EXPECT_EQ(spec.keys[0].modifiers, 0);
  EXPECT_FALSE(spec.keys[0].stacktrace);
  EXPECT_TRUE(spec.vals.empty());
  ASSERT_EQ(spec.sort.size(), 1u);
  EXPECT_EQ(spec.sort[0].source, HistSortKey::kHitcount);
  EXPECT_FALSE(spec.sort[0].descending);
  EXPECT_EQ(spec.size, 2048u);
  EXPECT_EQ(spec.text, "hist:keys=size:vals=hitcount:sort=hitcount:size=2048");
  EXPECT_EQ(spec.filter, "");
}

TEST(HistTrigger, AcceptsTheKernelsSpellings) {
  const char* same[] = {"hist:key=size:val=fd", "hist:keys=size:vals=fd",
                        "hist:keys=size:values=fd", "hist:values=fd:keys=size",
                        "  hist:keys=size:vals=hitcount,fd:clock=mono\n"};
  for (const char* text : same) {
    EXPECT_EQ(parse_ok(text).text, "hist:keys=size:vals=hitcount,fd:sort=hitcount:size=2048")
        << text;
  }
}

TEST(HistTrigger, EveryKeyModifier) {
  const struct {
    const char* key;
    uint16_t modifiers;
    uint64_t buckets;
    const char* text;
  } cases[] = {
      {"size.hex", trace::kHistHex, 0, "size.hex"},
      {"__probe_func.sym", trace::kHistSym, 0, "__probe_func.sym"},
      {"__probe_ret_ip.sym-offset", trace::kHistSymOffset, 0, "__probe_ret_ip.sym-offset"},
      {"common_pid.execname", trace::kHistExecname, 0, "common_pid.execname"},
      {"id.syscall", trace::kHistSyscall, 0, "id.syscall"},
      {"size.log2", trace::kHistLog2, 0, "size.log2"},
      {"size.buckets=1024", trace::kHistBuckets, 1024, "size.buckets=1024"},
      {"size.bucket=0x10", trace::kHistBuckets, 16, "size.buckets=16"},
      {"size.buckets=010", trace::kHistBuckets, 8, "size.buckets=8"},
      {"$duration.usecs", trace::kHistUsecs, 0, "$duration.usecs"},
      {"$duration.log2", trace::kHistLog2, 0, "$duration.log2"},
  };
  for (const auto& c : cases) {
    const HistSpec spec = parse_ok(std::string("hist:keys=") + c.key);
    ASSERT_EQ(spec.keys.size(), 1u) << c.key;
    EXPECT_EQ(spec.keys[0].modifiers, c.modifiers) << c.key;
    EXPECT_EQ(spec.keys[0].buckets, c.buckets) << c.key;
    EXPECT_EQ(spec.text,
              std::string("hist:keys=") + c.text + ":vals=hitcount:sort=hitcount:size=2048")
        << c.key;
  }
}

TEST(HistTrigger, CommonFieldsAndTheirNames) {
  const HistSpec cpu = parse_ok("hist:keys=cpu,CPU,common_cpu");
  EXPECT_EQ(cpu.keys[0].label, "cpu");
  EXPECT_EQ(cpu.keys[1].label, "CPU");
  EXPECT_EQ(cpu.text,
            "hist:keys=common_cpu,common_cpu,common_cpu:vals=hitcount:sort=hitcount:size=2048");
  const HistSpec comm = parse_ok("hist:keys=common_comm");
  EXPECT_EQ(comm.keys[0].field.source, trace::FieldSource::kComm);
  EXPECT_EQ(comm.keys[0].label, "common_comm");
  EXPECT_EQ(parse_ok("hist:keys=COMM").keys[0].label, "COMM");
  for (const char* stack : {"stacktrace", "common_stacktrace", "STACKTRACE"}) {
    const HistSpec spec = parse_ok(std::string("hist:keys=") + stack);
    EXPECT_TRUE(spec.keys[0].stacktrace) << stack;
    EXPECT_EQ(spec.keys[0].label, "common_stacktrace");
  }
}

TEST(HistTrigger, ValuesSumNumbersWithHexOrUsecs) {
  const HistSpec spec = parse_ok("hist:keys=fd:vals=hitcount,size.hex,$duration.usecs");
  ASSERT_EQ(spec.vals.size(), 2u);
  EXPECT_EQ(spec.vals[0].modifiers, trace::kHistHex);
  EXPECT_EQ(spec.vals[1].field.source, trace::FieldSource::kDuration);
  EXPECT_EQ(spec.text,
            "hist:keys=fd:vals=hitcount,size.hex,$duration.usecs:sort=hitcount:size=2048");
  // hitcount is implicit, wherever and however often it is named.
  EXPECT_EQ(parse_ok("hist:keys=fd:vals=size,hitcount,id,hitcount").vals.size(), 2u);
}

TEST(HistTrigger, SizeRoundsUpToAPowerOfTwo) {
  const struct {
    const char* size;
    uint32_t entries;
  } cases[] = {{"100", 128}, {"128", 128}, {"3000", 4096}, {"0x800", 2048}, {"131072", 131072}};
  for (const auto& c : cases) {
    const HistSpec spec = parse_ok(std::string("hist:keys=size:size=") + c.size);
    EXPECT_EQ(spec.size, c.entries) << c.size;
    EXPECT_EQ(spec.text,
              "hist:keys=size:vals=hitcount:sort=hitcount:size=" + std::to_string(c.entries));
  }
}

TEST(HistTrigger, SortKeysFindValuesBeforeKeys) {
  const HistSpec spec = parse_ok("hist:keys=size.log2,fd:vals=fd:sort=size,fd.descending");
  ASSERT_EQ(spec.sort.size(), 2u);
  EXPECT_EQ(spec.sort[0].source, HistSortKey::kKey);
  EXPECT_EQ(spec.sort[0].index, 0);
  EXPECT_FALSE(spec.sort[0].descending);
  EXPECT_EQ(spec.sort[1].source, HistSortKey::kVal);  // fd is a value first
  EXPECT_EQ(spec.sort[1].index, 0);
  EXPECT_TRUE(spec.sort[1].descending);
  // The sort field prints as its key does, modifier included.
  EXPECT_EQ(spec.text,
            "hist:keys=size.log2,fd:vals=hitcount,fd:sort=size.log2,fd.descending:size=2048");
  const HistSpec hits = parse_ok("hist:keys=size:sort=hitcount.ascending");
  EXPECT_EQ(hits.text, "hist:keys=size:vals=hitcount:sort=hitcount:size=2048");
  const HistSpec pid = parse_ok("hist:keys=common_pid.execname:sort=common_pid.descending");
  EXPECT_EQ(pid.sort[0].source, HistSortKey::kKey);
  EXPECT_TRUE(pid.sort[0].descending);
}

TEST(HistTrigger, FilterAfterIfIsKeptForTheFilterCompiler) {
  const HistSpec spec = parse_ok("hist:keys=size:vals=fd if size > 4096 && fd != 0");
  EXPECT_EQ(spec.filter, "size > 4096 && fd != 0");
  EXPECT_EQ(spec.text,
            "hist:keys=size:vals=hitcount,fd:sort=hitcount:size=2048 if size > 4096 && fd != 0");
  // "if" inside a word does not start a filter.
  EXPECT_EQ(parse_ok("hist:keys=size:vals=fd").filter, "");
}

TEST(HistTrigger, KernelLimitsHoldAtTheirEdge) {
  EXPECT_EQ(parse_ok("hist:keys=size,fd,common_pid").keys.size(), 3u);
  EXPECT_EQ(parse_ok("hist:keys=name,stacktrace").keys.size(), 2u);  // 256 + 128 = 384
  EXPECT_EQ(parse_ok("hist:keys=size:vals=fd,id").vals.size(), 2u);
}

// ---- Errors ---------------------------------------------------------------------

struct ErrorCase {
  std::string_view trigger;
  std::string_view caret;  // spaces, then '^' under the column reported
  std::string_view message;
};
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.trigger; }

// clang-format off
constexpr ErrorCase kErrorCases[] = {
    {"hist:keys=nosuch",
     "          ^", "Couldn't find field"},
    {"hist:keys=size:vals=nosuch",
     "                    ^", "Couldn't find field"},
    {"hist:keys=size,,fd",
     "               ^", "Couldn't find field"},
    {"hist:keys=$nosuch",
     "           ^", "Couldn't find variable"},
    {"hist:keys=hitcount",
     "          ^", "Couldn't find field"},
    {"hist:keys=size.foo",
     "               ^", "Invalid field modifier"},
    {"hist:keys=size.hex.log2",
     "               ^", "Invalid field modifier"},
    {"hist:keys=size.execname",
     "               ^", "Invalid field modifier"},
    {"hist:keys=size.buckets=0",
     "               ^", "Invalid field modifier"},
    {"hist:keys=size.buckets",
     "               ^", "Invalid field modifier"},
    {"hist:keys=size.buckets=1k",
     "               ^", "Invalid field modifier"},
    {"hist:keys=size.descending",
     "               ^", "Invalid field modifier"},
    {"hist:keys=name.hex",
     "               ^", "Invalid field modifier"},
    {"hist:keys=stacktrace.hex",
     "                     ^", "Invalid field modifier"},
    {"hist:keys=size:vals=fd.log2",
     "                    ^", "Invalid field modifier"},
    {"hist:keys=size:vals=fd.buckets=10",
     "                    ^", "Invalid field modifier"},
    {"hist:keys=size:vals=__probe_func.sym",
     "                    ^", "Invalid field modifier"},
    {"hist:keys=size:vals=id.syscall",
     "                    ^", "Invalid field modifier"},
    {"hist:keys=size:vals=stacktrace",
     "                    ^", "Invalid field modifier"},
    {"hist:keys=size:vals=hitcount.foo",
     "                             ^", "Invalid field modifier"},
    {"hist:keys=size:vals=name",
     "                    ^", "A string field can not be a value"},
    {"hist:keys=size:vals=size.percent",
     "                         ^", ".percent and .graph are not supported"},
    {"hist:keys=size:vals=hitcount.graph",
     "                             ^", ".percent and .graph are not supported"},
    {"hist:keys=size,fd,common_pid,cpu",
     "                             ^", "Too many keys (Max = 3)"},
    {"hist:keys=size:vals=fd,$duration,size",
     "                                 ^", "Too many values (Max = 3, hitcount included)"},
    {"hist:keys=name,stacktrace,size",
     "                          ^",
     "Key too large (Max = 384 bytes: a string counts 256, a stacktrace 128)"},
    {"hist:keys=name,comm",
     "               ^",
     "Key too large (Max = 384 bytes: a string counts 256, a stacktrace 128)"},
    {"hist:keys=",
     "     ^", "Empty assignment"},
    {"hist:keys=size:vals=",
     "               ^", "Empty assignment"},
    {"hist:vals=size",
     "              ^", "Missing keys"},
    {"hist",
     "    ^", "Missing keys"},
    {"hist:",
     "     ^", "Missing keys"},
    {"hist:keys=size:sort=nosuch",
     "                    ^", "Sort field must be a key or a val"},
    {"hist:keys=stacktrace:sort=stacktrace",
     "                          ^", "Sort field must be a key or a val"},
    {"hist:keys=size:sort=size.up",
     "                         ^", "Invalid sort modifier"},
    {"hist:keys=size:sort=hitcount.descending.x",
     "                             ^", "Invalid sort modifier"},
    {"hist:keys=size:sort=size,",
     "               ^", "Empty sort field"},
    {"hist:keys=size:sort=.descending",
     "               ^", "Empty sort field"},
    {"hist:keys=size:sort=size,fd,hitcount",
     "               ^", "Too many sort fields (Max = 2)"},
    {"hist:keys=size:size=64",
     "                    ^", "Invalid size (rounded up to a power of two, it must be 128 to 131072)"},
    {"hist:keys=size:size=200000",
     "                    ^", "Invalid size (rounded up to a power of two, it must be 128 to 131072)"},
    {"hist:keys=size:size=lots",
     "                    ^", "Invalid size (rounded up to a power of two, it must be 128 to 131072)"},
    {"hist:keys=size:size=0",
     "                    ^", "Invalid size (rounded up to a power of two, it must be 128 to 131072)"},
    {"hist:keys=size:clear",
     "               ^", "Can't clear or continue a nonexistent hist trigger"},
    {"hist:keys=size:cont",
     "               ^", "Can't clear or continue a nonexistent hist trigger"},
    {"hist:keys=size:pause",
     "               ^", "pause is not supported"},
    {"hist:keys=size:nohitcount",
     "               ^", "nohitcount is not supported"},
    {"hist:keys=size:name=foo",
     "               ^", "Named triggers are not supported"},
    {"hist:keys=size:ts0=common_timestamp",
     "               ^", "Variables are not supported"},
    {"hist:keys=size:onmax($x).save(size)",
     "               ^", "Actions (onmatch, onmax, onchange) are not supported"},
    {"hist:keys=size:bogus",
     "               ^", "Unknown hist trigger attribute"},
    {"hist:keys=size+fd",
     "          ^", "Expressions are not supported"},
    {"hist:keys=size:vals=2*size",
     "                    ^", "Expressions are not supported"},
    {"hist:keys=common_timestamp",
     "          ^", "common_timestamp is not supported"},
    {"hist:keys=size if",
     "               ^", "Missing filter after 'if'"},
    {"traceon",
     "^", "Only hist triggers are supported"},
    {"  histogram:keys=size",
     "  ^", "Only hist triggers are supported"},
    // The kernel parses values before keys: their fault comes first.
    {"hist:keys=nosuch:vals=alsonot",
     "                      ^", "Couldn't find field"},
};
// clang-format on

class HistTriggerError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(HistTriggerError, ReportsMessageAndColumn) {
  const ErrorCase& c = GetParam();
  auto spec = parse_hist_trigger(c.trigger, fields());
  ASSERT_FALSE(spec) << c.trigger;
  EXPECT_EQ(spec.error().message, c.message) << c.trigger;
  EXPECT_EQ(spec.error().column, c.caret.find('^')) << c.trigger;
}

INSTANTIATE_TEST_SUITE_P(Table, HistTriggerError, ::testing::ValuesIn(kErrorCases));

TEST(HistTrigger, DurationOnlyOnReturnEvents) {
  const auto entry_fields = event_fields(false);
  auto spec = parse_hist_trigger("hist:keys=$duration.log2", entry_fields);
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().message, "Couldn't find variable");
  EXPECT_EQ(spec.error().column, 11u);
  EXPECT_TRUE(parse_hist_trigger("hist:keys=__probe_ip.sym", entry_fields));
}

}  // namespace
}  // namespace dprobe::lang
