// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The formatter's JSON lines against hand-built records, and the JSON
// escaper on its own.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event.h"
#include "trace/formatter.h"
#include "trace/json.h"
#include "trace/record.h"
#include "unit/trace/event_records.h"

namespace dprobe::trace {
namespace {

using namespace test_support;

std::string json(const EventDesc& ev, const std::vector<std::byte>& record,
                 const Symbolizer* symbolizer = nullptr, std::string_view comm = "ls") {
  std::string out;
  TraceFormatter(symbolizer).format_json(ev, record, comm, out);
  return out;
}

TEST(FormatJson, EntryEvent) {
  const EventDesc ev = make_event("opendir", false,
                                  {{"path", TypeId::kString},
                                   {"d", TypeId::kX64},
                                   {"c", TypeId::kChar},
                                   {"s", TypeId::kS32},
                                   {"n", TypeId::kU64},
                                   {"arr", TypeId::kX8, 3},
                                   {"sym", TypeId::kSymbol},
                                   {"ss", TypeId::kSymStr}});
  RecordBuilder b(ev);
  b.ip(kOpendir).string(0, "/tmp").value(1, 0x561ea4b8e250).value(2, 'P').signed_value(3, -3);
  b.value(4, 18446744073709551615u).value(5, 0x2f, 0).value(5, 0x74, 1).value(5, 0x6d, 2);
  b.value(6, kMainPlus5a).value(7, 0x10);
  const FakeSymbolizer symbols;
  EXPECT_EQ(json(ev, b.build(), &symbols),
            R"({"ts":86.566478,"comm":"ls","pid":1880,"tid":1882,"cpu":0,"group":"test",)"
            R"("event":"opendir","ip":"0x7fdc221d4e90","sym":"opendir+0x0/0x9a","args":{)"
            R"("path":"/tmp","d":94689612587600,"c":"P","s":-3,"n":18446744073709551615,)"
            R"("arr":[47,116,109],"sym":"main+0x5a/0x120","ss":"0x10"}})"
            "\n");
}

TEST(FormatJson, UnknownIpHasNoSym) {
  const EventDesc ev = make_event("p", false, {});
  EXPECT_EQ(json(ev, RecordBuilder(ev).header(3, 1, 2, 5000001000).ip(0x10).build()),
            R"({"ts":5.000001,"comm":"ls","pid":1,"tid":2,"cpu":3,"group":"test",)"
            R"("event":"p","ip":"0x10","args":{}})"
            "\n");
}

TEST(FormatJson, ReturnEvent) {
  const EventDesc ev = make_event("ropendir", true, {{"rv", TypeId::kX64}});
  RecordBuilder b(ev);
  b.header(0, 1880, 1882, 86566765000).func(kOpendir).ret_ip(kMainPlus5a).value(0, 0x561ea4b8e270);
  const FakeSymbolizer symbols;
  EXPECT_EQ(json(ev, b.build(), &symbols),
            R"({"ts":86.566765,"comm":"ls","pid":1880,"tid":1882,"cpu":0,"group":"test",)"
            R"("event":"ropendir","func":"0x7fdc221d4e90","func_sym":"opendir",)"
            R"("ret_ip":"0x561ea4b8e05a","ret_sym":"main+0x5a/0x120","args":{"rv":94689612587632}})"
            "\n");
  EXPECT_EQ(json(ev, b.build()),
            R"({"ts":86.566765,"comm":"ls","pid":1880,"tid":1882,"cpu":0,"group":"test",)"
            R"("event":"ropendir","func":"0x7fdc221d4e90","ret_ip":"0x561ea4b8e05a",)"
            R"("args":{"rv":94689612587632}})"
            "\n");
}

TEST(FormatJson, UserStackIsAnArrayOfFrames) {
  EventDesc ev = make_event("opendir", false, {});
  add_stack_field(ev);
  std::vector<std::byte> record = RecordBuilder(ev).ip(kOpendir).build();
  const auto start = static_cast<uint32_t>(record.size());
  for (uint64_t pc : {kMainPlus5a, uint64_t{0x1234}}) {
    record.resize(record.size() + 8);
    store_field(record.data(), static_cast<uint32_t>(record.size() - 8), pc);
  }
  store_field(record.data(), ev.stack_offset, make_data_loc(start, 16));
  store_field(record.data(), 2, static_cast<uint16_t>(record.size()));
  const FakeSymbolizer symbols;
  EXPECT_EQ(json(ev, record, &symbols),
            R"({"ts":86.566478,"comm":"ls","pid":1880,"tid":1882,"cpu":0,"group":"test",)"
            R"("event":"opendir","ip":"0x7fdc221d4e90","sym":"opendir+0x0/0x9a","args":{},)"
            R"("stack":[{"ip":"0x561ea4b8e05a","sym":"main+0x5a/0x120","object":"ls"},)"
            R"({"ip":"0x1234","object":"ls"}]})"
            "\n");
}

TEST(FormatJson, StringsAreEscaped) {
  const EventDesc ev = make_event("p", false,
                                  {{"q", TypeId::kString},
                                   {"ctl", TypeId::kString},
                                   {"hi", TypeId::kString},
                                   {"utf8", TypeId::kString},
                                   {"f", TypeId::kString},
                                   {"c", TypeId::kChar},
                                   {"a", TypeId::kString, 2}});
  RecordBuilder b(ev);
  b.ip(1).string(0, R"(say "hi" \o/)").string(1, "tab\there\nnl\x01\x1f\x7f");
  b.string(2, "caf\xe9").string(3, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80").fault(4);
  b.value(5, '"').string(6, "x", 0).fault(6, 1);
  const FakeSymbolizer symbols;
  EXPECT_EQ(json(ev, b.build(), &symbols, "a\"b"),
            R"({"ts":86.566478,"comm":"a\"b","pid":1880,"tid":1882,"cpu":0,"group":"test",)"
            R"("event":"p","ip":"0x1","args":{"q":"say \"hi\" \\o/",)"
            R"("ctl":"tab\u0009here\u000anl\u0001\u001f)"
            "\x7f"
            R"(","hi":"caf\u00e9","utf8":"caf)"
            "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"
            R"(","f":null,"c":"\"","a":["x",null]}})"
            "\n");
}

TEST(FormatJson, SymbolNamesAreEscaped) {
  const EventDesc ev = make_event("p", false, {{"s", TypeId::kSymbol}});
  const FakeSymbolizer symbols;
  EXPECT_EQ(
      json(ev, RecordBuilder(ev).ip(0x7fdc22200001).value(0, 0x7fdc22200002).build(), &symbols),
      R"({"ts":86.566478,"comm":"ls","pid":1880,"tid":1882,"cpu":0,"group":"test",)"
      R"("event":"p","ip":"0x7fdc22200001","sym":"we\"ird+0x1/0x10",)"
      R"("args":{"s":"we\"ird+0x2/0x10"}})"
      "\n");
}

TEST(FormatJson, MalformedFieldsAreBadStrings) {
  const EventDesc ev = make_event("p", false, {{"a", TypeId::kU32}, {"s", TypeId::kString}});
  std::vector<std::byte> record = RecordBuilder(ev).ip(1).value(0, 5).build();
  store_field(record.data(), ev.args[1].offset, make_data_loc(0x100, 3));
  EXPECT_EQ(json(ev, record),
            R"({"ts":86.566478,"comm":"ls","pid":1880,"tid":1882,"cpu":0,"group":"test",)"
            R"js("event":"p","ip":"0x1","args":{"a":5,"s":"(bad)"}})js"
            "\n");
  record.resize(4);
  EXPECT_EQ(json(ev, record),
            R"({"ts":0.000000,"comm":"ls","pid":0,"tid":0,"cpu":0,"group":"test",)"
            R"js("event":"p","ip":"(bad)","args":{"a":"(bad)","s":"(bad)"}})js"
            "\n");
}

// ---- The JSON escaper on its own ------------------------------------------

std::string escaped(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

TEST(JsonString, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(escaped(""), R"("")");
  EXPECT_EQ(escaped("plain"), R"("plain")");
  EXPECT_EQ(escaped(R"(a"b\c)"), R"("a\"b\\c")");
  EXPECT_EQ(escaped(std::string_view("\0\n\r\x1b", 4)), R"("\u0000\u000a\u000d\u001b")");
  EXPECT_EQ(escaped("/"), R"("/")");
}

TEST(JsonString, KeepsValidUtf8AndEscapesInvalidBytes) {
  EXPECT_EQ(escaped("\xc3\xa9"), "\"\xc3\xa9\"");
  EXPECT_EQ(escaped("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"");           // U+10FFFF
  EXPECT_EQ(escaped("\xff"), R"("\u00ff")");                                // never a lead byte
  EXPECT_EQ(escaped("\xc3"), R"("\u00c3")");                                // truncated
  EXPECT_EQ(escaped("\xc3x"), R"("\u00c3x")");                              // bad continuation
  EXPECT_EQ(escaped("\xc0\xaf"), R"("\u00c0\u00af")");                      // overlong '/'
  EXPECT_EQ(escaped("\xe0\x80\xaf"), R"("\u00e0\u0080\u00af")");            // overlong
  EXPECT_EQ(escaped("\xed\xa0\x80"), R"("\u00ed\u00a0\u0080")");            // surrogate D800
  EXPECT_EQ(escaped("\xf4\x90\x80\x80"), R"("\u00f4\u0090\u0080\u0080")");  // > U+10FFFF
  EXPECT_EQ(escaped("\x80\xe2\x82\xac"), "\"\\u0080\xe2\x82\xac\"");        // stray, then euro
}

}  // namespace
}  // namespace dprobe::trace
