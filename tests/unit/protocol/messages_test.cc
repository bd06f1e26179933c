// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every message encodes and decodes back to itself with rich content, and
// every malformed payload is an error: cut short at any byte, a trailing
// byte too many, counts no payload could hold. Payloads are decoded from
// memory that ends right before an inaccessible page, so any read past the
// end crashes the test instead of passing unnoticed.
#include "protocol/messages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "protocol/wire.h"
#include "trace/event.h"
#include "trace/event_analysis.h"
#include "trace/fetch.h"
#include "trace/hit/fetch_type.h"

namespace dprobe::protocol {
namespace {

using ::testing::HasSubstr;
using trace::FetchInsn;
using trace::FetchOp;
using trace::TypeId;

// A copy of some bytes placed so that the byte after the last one is on a
// PROT_NONE page.
class Guarded {
 public:
  explicit Guarded(std::span<const std::byte> bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t data_pages = (bytes.size() + page - 1) / page;
    size_ = (data_pages + 1) * page;
    void* mapping =
        mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED) std::abort();
    base_ = static_cast<std::byte*>(mapping);
    std::byte* guard = base_ + data_pages * page;
    if (mprotect(guard, page, PROT_NONE) != 0) std::abort();
    if (!bytes.empty()) std::memcpy(guard - bytes.size(), bytes.data(), bytes.size());
    view_ = {guard - bytes.size(), bytes.size()};
  }
  ~Guarded() { munmap(base_, size_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;

  std::span<const std::byte> bytes() const { return view_; }

 private:
  std::byte* base_ = nullptr;
  size_t size_ = 0;
  std::span<const std::byte> view_;
};

// ---- Rich content ---------------------------------------------------------

Hello rich_hello() {
  Hello hello;
  hello.version = kProtocolVersion;
  hello.pid = 4'194'304;
  hello.objects = {
      {"/usr/bin/sqlite3", 0x555555554000, 0x803, 1234567, true},
      {"/lib/x86_64-linux-gnu/libc.so.6", 0x7ffff7d8a000, 0x803, 42, false},
      {"/home/user/dir with spaces/libé.so", std::numeric_limits<uint64_t>::max(),
       std::numeric_limits<uint64_t>::max(), 0, false},
      {"", 0, 0, 0, false},  // the vdso has no path
      {"linux-vdso.so.1", 0x7ffff7fc1000, 0, 0, false},
  };
  return hello;
}

FetchInsn op(FetchOp code, uint8_t size = 0, uint32_t param = 0, int64_t imm = 0,
             uint8_t lshift = 0, uint8_t rshift = 0) {
  FetchInsn insn;
  insn.op = code;
  insn.size = size;
  insn.lshift = lshift;
  insn.rshift = rshift;
  insn.param = param;
  insn.imm = imm;
  return insn;
}

trace::EventArg arg(std::string name, std::string expr, std::string type_text, TypeId type,
                    std::vector<FetchInsn> code, uint32_t count = 0, std::string data = {}) {
  trace::EventArg a;
  a.name = std::move(name);
  a.expr = std::move(expr);
  a.type_text = std::move(type_text);
  a.type = type;
  a.count = count;
  a.code = std::move(code);
  a.data = std::move(data);
  return a;
}

// One argument of every type, and between them every fetch operation.
std::vector<trace::EventArg> args_of_every_kind() {
  std::vector<trace::EventArg> args;
  const auto reg = op(FetchOp::kReg, 0, 5);
  const auto end = op(FetchOp::kEnd);
  args.push_back(arg("a", "%di", "u8", TypeId::kU8, {reg, op(FetchOp::kStRaw, 1), end}));
  args.push_back(arg("b", "$stack2", "u16", TypeId::kU16,
                     {op(FetchOp::kStack, 0, 2), op(FetchOp::kStRaw, 2), end}));
  args.push_back(arg("c", "$stack", "u32", TypeId::kU32,
                     {op(FetchOp::kStackPtr), op(FetchOp::kStRaw, 4), end}));
  args.push_back(arg("d", "$arg3", "u64", TypeId::kU64,
                     {op(FetchOp::kArg, 0, 2), op(FetchOp::kStRaw, 8), end}));
  args.push_back(
      arg("e", "$retval", "s8", TypeId::kS8, {op(FetchOp::kRetval), op(FetchOp::kStRaw, 1), end}));
  args.push_back(arg("f", "\\-12345", "s16", TypeId::kS16,
                     {op(FetchOp::kImm, 0, 0, -12345), op(FetchOp::kStRaw, 2), end}));
  args.push_back(arg("g", "@0x601040", "s32", TypeId::kS32,
                     {op(FetchOp::kImm, 0, 0, 0x601040), op(FetchOp::kStMem, 4), end}));
  args.push_back(arg("h", "@libc.so.6:environ+8", "s64", TypeId::kS64,
                     {op(FetchOp::kSymbolAddr, 0, 0, 8), op(FetchOp::kStMem, 8), end}));
  args.push_back(arg("i", "@+0x4010", "x8", TypeId::kX8,
                     {op(FetchOp::kFileOffset, 0, 0, 0x4010), op(FetchOp::kStUMem, 1), end}));
  args.push_back(arg(
      "j", "+8(+0(%si))", "x16", TypeId::kX16,
      {op(FetchOp::kReg, 0, 4), op(FetchOp::kDeref, 0, 0, 0), op(FetchOp::kStMem, 2, 0, 8), end}));
  args.push_back(arg(
      "k", "+u-16(%sp)", "x32", TypeId::kX32,
      {op(FetchOp::kReg, 0, 19), op(FetchOp::kUDeref, 0, 0, -16), op(FetchOp::kStRaw, 4), end}));
  args.push_back(arg("l", "%ax", "x64", TypeId::kX64,
                     {op(FetchOp::kReg, 0, 10), op(FetchOp::kNop), op(FetchOp::kStRaw, 8), end}));
  args.push_back(arg("m", "+0(%di)", "char", TypeId::kChar, {reg, op(FetchOp::kStMem, 1), end}));
  args.push_back(arg("n", "+0(%si)", "string", TypeId::kString,
                     {op(FetchOp::kReg, 0, 4), op(FetchOp::kStString, 4), end}));
  args.push_back(arg("o", "+u0(%si)", "ustring", TypeId::kUString,
                     {op(FetchOp::kReg, 0, 4), op(FetchOp::kStUString, 4, 0, 0), end}));
  args.push_back(arg("p", "%ip", "symbol", TypeId::kSymbol,
                     {op(FetchOp::kReg, 0, 16), op(FetchOp::kStRaw, 8), end}));
  args.push_back(arg("q", "+0(%dx)", "symstr", TypeId::kSymStr,
                     {op(FetchOp::kReg, 0, 2), op(FetchOp::kStMem, 8), end}));
  args.push_back(
      arg("flags", "+4(%di)", "b4@2/32", TypeId::kU32,
          {reg, op(FetchOp::kStMem, 4, 0, 4), op(FetchOp::kModBitfield, 4, 0, 0, 26, 28), end}));
  args.push_back(arg("vec", "+0(%di)", "u16[8]", TypeId::kU16,
                     {reg, op(FetchOp::kStMem, 2), op(FetchOp::kLoopArray, 2, 8), end}, 8));
  args.push_back(arg("comm", "$comm", "string", TypeId::kString,
                     {op(FetchOp::kComm), op(FetchOp::kStString, 4), end}));
  args.push_back(arg("greeting", "\\\"hello\\nworld\"", "string", TypeId::kString,
                     {op(FetchOp::kData), op(FetchOp::kStString, 4), end}, 0,
                     std::string("hello\nworld\0!", 13)));
  args.push_back(arg("", "", "", TypeId::kU8, {}));  // empty everything
  // Extremes of every field of a fetch instruction.
  args.push_back(arg("max", "\\-1", "x64", TypeId::kX64,
                     {op(FetchOp::kImm, 255, std::numeric_limits<uint32_t>::max(),
                         std::numeric_limits<int64_t>::min(), 255, 255),
                      op(FetchOp::kStRaw, 8, 0, std::numeric_limits<int64_t>::max()), end}));
  uint32_t offset = 32;
  for (auto& a : args) {
    a.offset = offset;
    offset += 8;
  }
  return args;
}

trace::ProbeSpec spec(uint16_t id, std::string group, std::string name, bool is_return,
                      uint32_t maxactive, std::vector<trace::EventArg> args) {
  trace::ProbeSpec s;
  s.point.is_return = is_return;
  s.point.maxactive = maxactive;
  s.event.id = id;
  s.event.group = std::move(group);
  s.event.name = std::move(name);
  s.event.is_return = is_return;
  s.event.args = std::move(args);
  s.event.fixed_size = 1000 + id;
  return s;
}

// A filter, and a hist trigger with an "if" filter of its own.
std::shared_ptr<const trace::EventAnalysis> rich_analysis() {
  auto analysis = std::make_shared<trace::EventAnalysis>();
  trace::RecordField size{"size", trace::FieldSource::kNumber, 32, 4, true, TypeId::kS32};
  trace::RecordField comm{"comm", trace::FieldSource::kComm, 0, 8, false, TypeId::kString};
  trace::FilterInsn insn;
  insn.value = 4096;
  insn.field = 1;
  insn.on_true = 1;
  insn.on_false = 2;
  insn.op = trace::FilterOp::kGreater;
  analysis->filter = {{insn}, {comm, size}, "py*", "size > 4096"};
  trace::HistTrigger hist;
  hist.spec.keys.push_back({size, "size", false, trace::kHistLog2, 0});
  hist.spec.keys.push_back({{}, "common_stacktrace", true, 0, 0});
  hist.spec.vals.push_back({size, "size", false, trace::kHistBuckets, 512});
  hist.spec.sort.push_back({trace::HistSortKey::kVal, 0, true});
  hist.spec.size = 4096;
  hist.spec.text = "hist:keys=size.log2,common_stacktrace:vals=hitcount,size.buckets=512";
  hist.spec.filter = "comm ~ \"py*\"";
  hist.filter = analysis->filter;
  hist.table_offset = 128;
  hist.table_bytes = 65536;
  analysis->hists.push_back(hist);
  return analysis;
}

Probes rich_probes() {
  Probes probes;
  probes.ring_data_bytes = 1u << 20;
  probes.max_threads = 64;
  probes.optimize = false;     // not the default: the flag must travel
  probes.entry_times = false;  // nor this one
  probes.caller_places = {0x555555555151, 0x7ffff7e9a0e2};
  probes.holds_threads = true;  // not the default
  probes.probes.push_back({0x555555555149, 0x555555555149, 0x3e,
                           spec(0, "dprobes", "p_main_0", false, 0, args_of_every_kind())});
  probes.probes.push_back(
      {0x7ffff7e1a0e0, 0x7ffff7e1a0e0, 0x1a4,
       spec(1, "libc", "r_malloc_0", true, 4096,
            {arg("ret", "$retval", "x64", TypeId::kX64,
                 {op(FetchOp::kRetval), op(FetchOp::kStRaw, 8), op(FetchOp::kEnd)})})});
  probes.probes.push_back(
      {0x555555555160, 0x555555555149, 0x3e, spec(65535, "a_group", "no_args", false, 0, {})});
  probes.probes.push_back({0, 0, 0, spec(7, "", "", true, 0, {})});
  probes.probes[1].ifunc = true;  // not the default
  probes.probes[1].spec.event.analysis = rich_analysis();
  probes.probes[1].spec.event.stack_offset = 48;
  probes.probes[1].spec.event.entry_time_offset = 40;
  probes.hist_slot_bytes = 1u << 20;
  return probes;
}

ArmReport rich_arm_report() {
  ArmReport report;
  report.trace_memory_bytes = 0x04123000;
  report.results = {
      {0, arch::ArmStatus::kArmed, "", 0x7ffff7f28ac0},
      {1, arch::ArmStatus::kNotBoundary,
       "the address is inside an instruction (EILSEQ):\n"
       "  0x401136: 55                   push rbp\n"
       "> 0x401137: 48 89 e5             mov rbp, rsp  <- probe at +0x1\n"
       "  0x40113a: b8 2a 00 00 00       mov eax, 0x2a"},
      {2, arch::ArmStatus::kRejected,
       "0x401140: cc   int3: int3: another breakpoint is already there"},
      {3, arch::ArmStatus::kBlacklisted, "the agent itself"},
      {4, arch::ArmStatus::kNoSlot, "no free address within reach for an out-of-line slot"},
      {5, arch::ArmStatus::kNotMapped, "0x10 is not readable code"},
      {65535, arch::ArmStatus::kPatchFailed,
       std::string("writing code at 0x1: \0 Bad address", 34)},
  };
  report.states = {{0x401136, true, ""}, {0x401140, false, "indirect jump (jump table?)"}};
  return report;
}

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

// ---- Malformed payloads ---------------------------------------------------

template <typename Decode>
void expect_every_truncation_fails(const std::vector<std::byte>& bytes, Decode decode) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    const auto prefix = std::span(bytes).first(n);
    const Guarded guarded(prefix);
    auto decoded = decode(guarded.bytes());
    ASSERT_FALSE(decoded) << "decoded " << n << " of " << bytes.size() << " bytes";
    EXPECT_THAT(decoded.error().message, HasSubstr("malformed"));
  }
}

template <typename Decode>
void expect_trailing_byte_fails(std::vector<std::byte> bytes, Decode decode) {
  bytes.push_back(std::byte{0});
  const Guarded guarded(bytes);
  EXPECT_FALSE(decode(guarded.bytes()));
}

TEST(Messages, HoldThreadsRoundTripAndTruncatedFails) {
  const HoldThreads hold{{4242, 17, 0xffffffffu}};
  const std::vector<std::byte> bytes = encode(hold);
  auto decoded = decode_hold_threads(bytes);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->running, hold.running);
  for (size_t length = 0; length < bytes.size(); ++length) {
    EXPECT_FALSE(decode_hold_threads(std::span(bytes).first(length))) << length << " bytes";
  }
}

TEST(Messages, TruncatedHelloFailsAtEveryLength) {
  expect_every_truncation_fails(encode(rich_hello()), decode_hello);
  expect_trailing_byte_fails(encode(rich_hello()), decode_hello);
}

TEST(Messages, TruncatedProbesFailAtEveryLength) {
  expect_every_truncation_fails(encode(rich_probes()), decode_probes);
  expect_trailing_byte_fails(encode(rich_probes()), decode_probes);
}

TEST(Messages, TruncatedArmReportFailsAtEveryLength) {
  expect_every_truncation_fails(encode(rich_arm_report()), decode_arm_report);
  expect_trailing_byte_fails(encode(rich_arm_report()), decode_arm_report);
}

// Whatever a single byte becomes, decoding ends (in a value or an error)
// without reading outside the payload.
template <typename Decode>
void decode_every_corruption(const std::vector<std::byte>& bytes, Decode decode) {
  const Guarded guarded(bytes);
  auto* data = const_cast<std::byte*>(guarded.bytes().data());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (const uint8_t value : std::array<uint8_t, 5>{0x00, 0x01, 0x7f, 0x80, 0xff}) {
      data[i] = std::byte{value};
      (void)decode(guarded.bytes());
    }
    data[i] = bytes[i];
  }
}

TEST(Messages, CorruptedBytesNeverCrash) {
  decode_every_corruption(encode(rich_hello()), decode_hello);
  decode_every_corruption(encode(rich_probes()), decode_probes);
  decode_every_corruption(encode(rich_arm_report()), decode_arm_report);
  SUCCEED();
}

constexpr uint32_t kFourBillion = 4'000'000'000u;

template <typename Decode>
void expect_fails_fast(const WireWriter& w, Decode decode) {
  const Guarded guarded(w.bytes());
  const auto start = std::chrono::steady_clock::now();
  auto decoded = decode(guarded.bytes());
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(decoded);
  EXPECT_LT(elapsed, std::chrono::milliseconds(100));
}

void put_padding(WireWriter& w) {
  for (int i = 0; i < 64; ++i) w.u8(0);
}

TEST(Messages, HelloClaimingFourBillionObjectsFailsFast) {
  WireWriter w;
  w.u32(kProtocolVersion);
  w.u32(1);
  w.u32(kFourBillion);
  put_padding(w);
  expect_fails_fast(w, decode_hello);
}

TEST(Messages, ProbesClaimingFourBillionProbesFailFast) {
  WireWriter w;
  w.u32(4096);
  w.u32(1);
  w.u32(kFourBillion);
  put_padding(w);
  expect_fails_fast(w, decode_probes);
}

// One probe, its event's header written; the caller goes on with the args.
void put_probe_head(WireWriter& w) {
  w.u32(4096);
  w.u32(1);
  w.u32(1);  // one probe
  w.u64(0x401000);
  w.u64(0x401000);
  w.u64(16);
  w.boolean(false);
  w.u32(0);
  w.u16(0);
  w.str("g");
  w.str("e");
  w.u32(40);
}

TEST(Messages, EventClaimingFourBillionArgsFailsFast) {
  WireWriter w;
  put_probe_head(w);
  w.u32(kFourBillion);
  put_padding(w);
  expect_fails_fast(w, decode_probes);
}

TEST(Messages, ArgClaimingFourBillionFetchOperationsFailsFast) {
  WireWriter w;
  put_probe_head(w);
  w.u32(1);  // one arg
  w.str("x");
  w.str("%di");
  w.str("x64");
  w.u8(static_cast<uint8_t>(TypeId::kX64));
  w.u32(0);
  w.u32(32);
  w.u32(kFourBillion);
  put_padding(w);
  expect_fails_fast(w, decode_probes);
}

TEST(Messages, ArgWithAHugeStringFailsFast) {
  WireWriter w;
  put_probe_head(w);
  w.u32(1);
  w.u32(std::numeric_limits<uint32_t>::max());  // the name's length
  put_padding(w);
  expect_fails_fast(w, decode_probes);
}

TEST(Messages, ArmReportClaimingFourBillionResultsFailsFast) {
  WireWriter w;
  w.u64(4096);
  w.u32(kFourBillion);
  put_padding(w);
  expect_fails_fast(w, decode_arm_report);
}

TEST(Messages, CountExactlyFillingThePayloadIsAccepted) {
  // Seven smallest results: event id, status, empty message, no IFUNC
  // implementation.
  WireWriter w;
  w.u64(0);  // trace memory bytes
  w.u32(7);
  for (uint16_t i = 0; i < 7; ++i) {
    w.u16(i);
    w.u8(0);
    w.str("");
    w.u64(0);
  }
  w.u32(0);  // no probe states
  auto report = decode_arm_report(w.bytes());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->results.size(), 7u);
  // One more claimed than present: refused.
  WireWriter more;
  more.u64(0);
  more.u32(8);
  for (uint16_t i = 0; i < 7; ++i) {
    more.u16(i);
    more.u8(0);
    more.str("");
    more.u64(0);
  }
  more.u32(0);
  EXPECT_FALSE(decode_arm_report(more.bytes()));
}

}  // namespace
}  // namespace dprobe::protocol
