// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the message tests encode: messages with rich content (every type,
// every fetch operation, odd strings and extreme numbers), and a place for
// payloads that ends right before an inaccessible page.
#ifndef DPROBE_TESTS_UNIT_PROTOCOL_MESSAGE_SAMPLES_H_
#define DPROBE_TESTS_UNIT_PROTOCOL_MESSAGE_SAMPLES_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "protocol/messages.h"
#include "trace/event.h"
#include "trace/event_analysis.h"
#include "trace/fetch.h"
#include "trace/hit/fetch_type.h"

namespace dprobe::protocol::test_support {

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
inline Hello rich_hello() {
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

inline FetchInsn op(FetchOp code, uint8_t size = 0, uint32_t param = 0, int64_t imm = 0,
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

inline trace::EventArg arg(std::string name, std::string expr, std::string type_text, TypeId type,
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
inline std::vector<trace::EventArg> args_of_every_kind() {
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
  args.push_back(arg("r", "+8(%dx)", "f32", TypeId::kF32,
                     {op(FetchOp::kReg, 0, 2), op(FetchOp::kStMem, 4, 0, 0, 0, 8), end}));
  args.push_back(arg("s", "+16(%dx)", "f64", TypeId::kF64,
                     {op(FetchOp::kReg, 0, 2), op(FetchOp::kStMem, 8, 0, 0, 0, 16), end}));
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

inline trace::ProbeSpec spec(uint16_t id, std::string group, std::string name, bool is_return,
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
inline std::shared_ptr<const trace::EventAnalysis> rich_analysis() {
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

inline Probes rich_probes() {
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

inline ArmReport rich_arm_report() {
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

}  // namespace dprobe::protocol::test_support

#endif  // DPROBE_TESTS_UNIT_PROTOCOL_MESSAGE_SAMPLES_H_
