// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every message encodes and decodes back to itself with rich content
// (message_samples.h). Malformed payloads: messages_malformed_test.cc.
#include "protocol/messages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/wire.h"
#include "trace/event.h"
#include "trace/event_analysis.h"
#include "trace/fetch.h"
#include "trace/hit/fetch_type.h"
#include "unit/protocol/message_samples.h"

namespace dprobe::protocol {
namespace {

using namespace test_support;
using ::testing::HasSubstr;
using trace::FetchInsn;
using trace::FetchOp;
using trace::TypeId;

// ---- Comparisons ----------------------------------------------------------

void expect_same(const FetchInsn& a, const FetchInsn& b, const std::string& where) {
  EXPECT_EQ(a.op, b.op) << where;
  EXPECT_EQ(a.size, b.size) << where;
  EXPECT_EQ(a.lshift, b.lshift) << where;
  EXPECT_EQ(a.rshift, b.rshift) << where;
  EXPECT_EQ(a.param, b.param) << where;
  EXPECT_EQ(a.imm, b.imm) << where;
}

void expect_same(const trace::EventArg& a, const trace::EventArg& b, const std::string& where) {
  EXPECT_EQ(a.name, b.name) << where;
  EXPECT_EQ(a.expr, b.expr) << where;
  EXPECT_EQ(a.type_text, b.type_text) << where;
  EXPECT_EQ(a.type, b.type) << where;
  EXPECT_EQ(a.count, b.count) << where;
  EXPECT_EQ(a.offset, b.offset) << where;
  EXPECT_EQ(a.data, b.data) << where;
  ASSERT_EQ(a.code.size(), b.code.size()) << where;
  for (size_t i = 0; i < a.code.size(); ++i) {
    expect_same(a.code[i], b.code[i], where + " op " + std::to_string(i));
  }
}

void expect_same(const trace::RecordField& a, const trace::RecordField& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.is_signed, b.is_signed);
  EXPECT_EQ(a.type, b.type);
}

void expect_same(const trace::FilterProgram& a, const trace::FilterProgram& b) {
  ASSERT_EQ(a.code.size(), b.code.size());
  EXPECT_EQ(0, std::memcmp(a.code.data(), b.code.data(), a.code.size() * sizeof(a.code[0])));
  ASSERT_EQ(a.fields.size(), b.fields.size());
  for (size_t i = 0; i < a.fields.size(); ++i) expect_same(a.fields[i], b.fields[i]);
  EXPECT_EQ(a.strings, b.strings);
  EXPECT_EQ(a.text, b.text);
}

void expect_same(const std::vector<trace::HistKey>& a, const std::vector<trace::HistKey>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    expect_same(a[i].field, b[i].field);
    EXPECT_EQ(a[i].label, b[i].label);
    EXPECT_EQ(a[i].stacktrace, b[i].stacktrace);
    EXPECT_EQ(a[i].modifiers, b[i].modifiers);
    EXPECT_EQ(a[i].buckets, b[i].buckets);
  }
}

void expect_same(const trace::EventAnalysis* a, const trace::EventAnalysis* b) {
  ASSERT_EQ(a == nullptr, b == nullptr);
  if (a == nullptr) return;
  expect_same(a->filter, b->filter);
  ASSERT_EQ(a->hists.size(), b->hists.size());
  for (size_t i = 0; i < a->hists.size(); ++i) {
    const trace::HistTrigger& x = a->hists[i];
    const trace::HistTrigger& y = b->hists[i];
    expect_same(x.spec.keys, y.spec.keys);
    expect_same(x.spec.vals, y.spec.vals);
    ASSERT_EQ(x.spec.sort.size(), y.spec.sort.size());
    for (size_t k = 0; k < x.spec.sort.size(); ++k) {
      EXPECT_EQ(x.spec.sort[k].source, y.spec.sort[k].source);
      EXPECT_EQ(x.spec.sort[k].index, y.spec.sort[k].index);
      EXPECT_EQ(x.spec.sort[k].descending, y.spec.sort[k].descending);
    }
    EXPECT_EQ(x.spec.size, y.spec.size);
    EXPECT_EQ(x.spec.text, y.spec.text);
    EXPECT_EQ(x.spec.filter, y.spec.filter);
    expect_same(x.filter, y.filter);
    EXPECT_EQ(x.table_offset, y.table_offset);
    EXPECT_EQ(x.table_bytes, y.table_bytes);
  }
}

void expect_same(const Probes& a, const Probes& b) {
  EXPECT_EQ(a.ring_data_bytes, b.ring_data_bytes);
  EXPECT_EQ(a.max_threads, b.max_threads);
  EXPECT_EQ(a.optimize, b.optimize);
  EXPECT_EQ(a.entry_times, b.entry_times);
  EXPECT_EQ(a.caller_places, b.caller_places);
  EXPECT_EQ(a.holds_threads, b.holds_threads);
  EXPECT_EQ(a.hist_slot_bytes, b.hist_slot_bytes);
  ASSERT_EQ(a.probes.size(), b.probes.size());
  for (size_t i = 0; i < a.probes.size(); ++i) {
    const ProbeRequest& x = a.probes[i];
    const ProbeRequest& y = b.probes[i];
    const std::string where = "probe " + std::to_string(i);
    EXPECT_EQ(x.address, y.address) << where;
    EXPECT_EQ(x.function_address, y.function_address) << where;
    EXPECT_EQ(x.function_size, y.function_size) << where;
    EXPECT_EQ(x.ifunc, y.ifunc) << where;
    EXPECT_EQ(x.spec.point.is_return, y.spec.point.is_return) << where;
    EXPECT_EQ(x.spec.point.maxactive, y.spec.point.maxactive) << where;
    EXPECT_EQ(x.spec.event.id, y.spec.event.id) << where;
    EXPECT_EQ(x.spec.event.group, y.spec.event.group) << where;
    EXPECT_EQ(x.spec.event.name, y.spec.event.name) << where;
    EXPECT_EQ(x.spec.event.is_return, y.spec.event.is_return) << where;
    EXPECT_EQ(x.spec.event.fixed_size, y.spec.event.fixed_size) << where;
    EXPECT_EQ(x.spec.event.stack_offset, y.spec.event.stack_offset) << where;
    EXPECT_EQ(x.spec.event.entry_time_offset, y.spec.event.entry_time_offset) << where;
    expect_same(x.spec.event.analysis.get(), y.spec.event.analysis.get());
    ASSERT_EQ(x.spec.event.args.size(), y.spec.event.args.size()) << where;
    for (size_t j = 0; j < x.spec.event.args.size(); ++j) {
      expect_same(x.spec.event.args[j], y.spec.event.args[j], where + " arg " + std::to_string(j));
    }
  }
}

// ---- Round trips ----------------------------------------------------------

TEST(Messages, HelloRoundTrip) {
  const Hello hello = rich_hello();
  const std::vector<std::byte> bytes = encode(hello);
  const Guarded guarded(bytes);
  auto back = decode_hello(guarded.bytes());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->version, hello.version);
  EXPECT_EQ(back->pid, hello.pid);
  ASSERT_EQ(back->objects.size(), hello.objects.size());
  for (size_t i = 0; i < hello.objects.size(); ++i) {
    EXPECT_EQ(back->objects[i].path, hello.objects[i].path) << i;
    EXPECT_EQ(back->objects[i].bias, hello.objects[i].bias) << i;
    EXPECT_EQ(back->objects[i].dev, hello.objects[i].dev) << i;
    EXPECT_EQ(back->objects[i].ino, hello.objects[i].ino) << i;
    EXPECT_EQ(back->objects[i].is_main, hello.objects[i].is_main) << i;
  }
}

TEST(Messages, EmptyHelloRoundTrip) {
  Hello hello;
  hello.pid = 1;
  auto back = decode_hello(encode(hello));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->version, kProtocolVersion);
  EXPECT_EQ(back->pid, 1u);
  EXPECT_TRUE(back->objects.empty());
}

TEST(Messages, ProbesRoundTripWithEveryTypeAndFetchOperation) {
  const Probes probes = rich_probes();
  // The content covers what it claims to.
  std::vector<bool> types(static_cast<size_t>(TypeId::kCount));
  std::vector<bool> ops(static_cast<size_t>(FetchOp::kEnd) + 1);
  for (const auto& a : probes.probes[0].spec.event.args) {
    types[static_cast<size_t>(a.type)] = true;
    for (const auto& insn : a.code) ops[static_cast<size_t>(insn.op)] = true;
  }
  for (size_t t = 0; t < types.size(); ++t) EXPECT_TRUE(types[t]) << "type " << t;
  for (size_t o = 0; o < ops.size(); ++o) EXPECT_TRUE(ops[o]) << "op " << o;

  const std::vector<std::byte> bytes = encode(probes);
  const Guarded guarded(bytes);
  auto back = decode_probes(guarded.bytes());
  ASSERT_TRUE(back) << back.error().message;
  expect_same(*back, probes);
}

TEST(Messages, EmptyProbesRoundTrip) {
  Probes probes;
  probes.ring_data_bytes = 4096;
  probes.max_threads = 1;
  auto back = decode_probes(encode(probes));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->ring_data_bytes, 4096u);
  EXPECT_EQ(back->max_threads, 1u);
  EXPECT_TRUE(back->probes.empty());
}

TEST(Messages, ManyProbesRoundTrip) {
  Probes probes;
  probes.ring_data_bytes = 1u << 16;
  probes.max_threads = 8;
  for (uint16_t i = 0; i < 5000; ++i) {
    probes.probes.push_back(
        {0x400000u + i * 16u, 0x400000u + (i & ~7u) * 16u, 128,
         spec(i, "g", "e" + std::to_string(i), i % 3 == 0, static_cast<uint32_t>(i % 5),
              {arg("x", "%di", "x64", TypeId::kX64,
                   {op(FetchOp::kReg, 0, static_cast<uint32_t>(i % 17)), op(FetchOp::kStRaw, 8),
                    op(FetchOp::kEnd)})})});
  }
  auto back = decode_probes(encode(probes));
  ASSERT_TRUE(back) << back.error().message;
  expect_same(*back, probes);
}

TEST(Messages, ArmReportRoundTripWithEveryStatusAndMultiLineMessages) {
  const ArmReport report = rich_arm_report();
  const std::vector<std::byte> bytes = encode(report);
  const Guarded guarded(bytes);
  auto back = decode_arm_report(guarded.bytes());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->trace_memory_bytes, report.trace_memory_bytes);
  ASSERT_EQ(back->results.size(), report.results.size());
  for (size_t i = 0; i < report.results.size(); ++i) {
    EXPECT_EQ(back->results[i].event_id, report.results[i].event_id) << i;
    EXPECT_EQ(back->results[i].status, report.results[i].status) << i;
    EXPECT_EQ(back->results[i].message, report.results[i].message) << i;
    EXPECT_EQ(back->results[i].implementation, report.results[i].implementation) << i;
  }
  EXPECT_THAT(back->results[1].message, HasSubstr("\n> 0x401137"));
  ASSERT_EQ(back->states.size(), 2u);
  EXPECT_EQ(back->states[0].address, 0x401136u);
  EXPECT_TRUE(back->states[0].optimized);
  EXPECT_FALSE(back->states[1].optimized);
  EXPECT_EQ(back->states[1].reason, "indirect jump (jump table?)");
}

TEST(Messages, UnknownTypeDecodesAsTheDefaultType) {
  Probes probes;
  probes.probes.push_back(
      {0x1000, 0x1000, 0,
       spec(0, "g", "e", false, 0, {arg("x", "%di", "x99", static_cast<TypeId>(200), {})})});
  auto back = decode_probes(encode(probes));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->probes[0].spec.event.args[0].type, trace::kDefaultType);
}

}  // namespace
}  // namespace dprobe::protocol
