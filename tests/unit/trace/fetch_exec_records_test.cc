// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The fetch interpreter end to end (fetch_exec_fixture.h): bitfields,
// arrays, a fault at each stage, records and strings that do not fit,
// malformed programs, and a whole line.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/arm64/regs.h"
#include "arch/x86_64/regs.h"
#include "trace/hit/fetch_exec.h"
#include "trace/record.h"
#include "unit/trace/fetch_exec_fixture.h"

namespace dprobe::trace {
namespace {

using namespace test_support;
using arch::Isa;
namespace x86 = arch::x86_64;
namespace a64 = arch::arm64;

// ---- Bitfields ------------------------------------------------------------

// b<width>@<offset>/<container>: the reference computed the obvious way.
uint64_t bitfield_reference(uint64_t value, unsigned width, unsigned offset) {
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  return (value >> offset) & mask;
}

TEST_F(FetchExecTest, BitfieldsMatchTheReference) {
  struct Case {
    unsigned width, offset, container;
  };
  const Case cases[] = {{4, 2, 32},  {1, 63, 64}, {8, 0, 8}, {3, 5, 8},   {16, 16, 32},
                        {12, 4, 16}, {64, 0, 64}, {1, 0, 8}, {7, 57, 64}, {32, 0, 32},
                        {5, 11, 16}, {31, 1, 32}, {2, 6, 8}, {33, 20, 64}};
  const uint64_t values[] = {0xdeadbeefcafebabe, ~uint64_t{0}, 0, 0x8000000000000001,
                             0x0123456789abcdef};
  x86_reg(x86::kDi) = kData;
  for (uint64_t value : values) {
    memory_.put_u64(kData, value);
    for (const Case& c : cases) {
      const std::string type = "b" + std::to_string(c.width) + "@" + std::to_string(c.offset) +
                               "/" + std::to_string(c.container);
      const uint64_t container =
          c.container == 64 ? value : value & ((uint64_t{1} << c.container) - 1);
      const uint64_t expected = bitfield_reference(container, c.width, c.offset);
      const Hit hit = run("f=+0(%di):" + type);
      EXPECT_EQ(hit.field(0), expected) << type << " of " << std::hex << value;
      EXPECT_EQ(hit.args, " f=" + std::to_string(expected)) << type;
    }
  }
}

TEST_F(FetchExecTest, BitfieldOfARegister) {
  x86_reg(x86::kAx) = 0xabcd;
  const Hit hit = run("lo=%ax:b4@0/8 hi=%ax:b4@4/8 mid=%ax:b8@4/16 top=%ax:b1@15/16");
  EXPECT_EQ(hit.args, " lo=13 hi=12 mid=188 top=1");
}

TEST_F(FetchExecTest, BitfieldArray) {
  x86_reg(x86::kDi) = kData;
  const uint8_t bytes[] = {0x12, 0x34, 0x56};
  memory_.put(kData, bytes, sizeof(bytes));
  EXPECT_EQ(run("f=+0(%di):b4@4/8[3]").args, " f={1,3,5}");
}

// ---- Arrays ---------------------------------------------------------------

TEST_F(FetchExecTest, ArraysOfNumbers) {
  x86_reg(x86::kDi) = kData;
  const uint8_t bytes[] = {1, 2, 3, 4, 5, 0, 0, 0};
  memory_.put(kData, bytes, sizeof(bytes));
  const uint32_t words[] = {100, 200, 0xffffffff};
  memory_.put(kData + 0x40, words, sizeof(words));
  const Hit hit = run("a=+0(%di):u8[5] b=+0x40(%di):u32[3] c=+0(%di):x8[2] d=+0x40(%di):s32[3]");
  EXPECT_EQ(hit.args, " a={1,2,3,4,5} b={100,200,4294967295} c={0x1,0x2} d={100,200,-1}");
  EXPECT_EQ(hit.field(1, 2), 0xffffffffu);
}

TEST_F(FetchExecTest, ArrayElementsFaultOneByOne) {
  x86_reg(x86::kDi) = kData;
  const uint32_t words[] = {1, 2, 3, 4};
  memory_.put(kData, words, sizeof(words));
  memory_.unmap(kData + 9, 1);  // one byte of the third element
  const Hit hit = run("a=+0(%di):u32[4]");
  EXPECT_EQ(hit.args, " a={1,2,0,4}");
}

TEST_F(FetchExecTest, ArrayOfStrings) {
  // +0(%di):string[3] reads three pointers at di, di+8, di+16.
  x86_reg(x86::kDi) = kData;
  memory_.put_u64(kData, kData + 0x100);
  memory_.put_u64(kData + 8, kData + 0x200);
  memory_.put_u64(kData + 16, kData + 0x300);
  memory_.put_string(kData + 0x100, "a");
  memory_.put_string(kData + 0x200, "bb");
  memory_.put_string(kData + 0x300, "ccc");
  const Hit hit = run("s=+0(%di):string[3]");
  EXPECT_EQ(hit.args, " s={\"a\",\"bb\",\"ccc\"}");
  const uint32_t fixed = hit.event.fixed_size;
  EXPECT_EQ(hit.data_loc(0, 0), make_data_loc(fixed, 2));
  EXPECT_EQ(hit.data_loc(0, 1), make_data_loc(fixed + 2, 3));
  EXPECT_EQ(hit.data_loc(0, 2), make_data_loc(fixed + 5, 4));
  EXPECT_EQ(hit.size, fixed + 9);
}

TEST_F(FetchExecTest, ArrayOfStringsBehindAPointer) {
  // argv-like: +8(+0(%di)) follows di once; the pointer array starts 8
  // bytes into what it points to, so the pointers are at +8 and +16.
  x86_reg(x86::kDi) = kData;
  memory_.put_u64(kData, kData + 0x80);
  memory_.put_u64(kData + 0x80 + 8, kData + 0x100);
  memory_.put_u64(kData + 0x80 + 16, kData + 0x200);
  memory_.put_string(kData + 0x100, "first");
  memory_.put_string(kData + 0x200, "second");
  EXPECT_EQ(run("s=+8(+0(%di)):string[2]").args, " s={\"first\",\"second\"}");
}

TEST_F(FetchExecTest, ArrayOfStringsFaultsOneByOne) {
  x86_reg(x86::kDi) = kData;
  memory_.put_u64(kData, kData + 0x100);
  memory_.put_u64(kData + 8, 0x999000);  // points nowhere
  // the third pointer itself is unmapped
  memory_.put_u64(kData + 24, kData + 0x200);
  memory_.put_string(kData + 0x100, "ok");
  memory_.put_string(kData + 0x200, "last");
  const Hit hit = run("s=+0(%di):string[4]");
  EXPECT_EQ(hit.args, " s={\"ok\",(fault),(fault),\"last\"}");
  EXPECT_EQ(hit.size, hit.event.fixed_size + 3 + 5);
}

// ---- Faults at each stage -------------------------------------------------

TEST_F(FetchExecTest, DereferenceFault) {
  x86_reg(x86::kDi) = kData;
  memory_.put_u64(kData, 0x999000);  // a wild pointer
  const Hit hit = run("a=+0(+0(%di)):u32 b=+0(+0(%di)):string c=+0(+0(%si)):x64 d=+0(%di):u8[2]");
  EXPECT_EQ(hit.args, " a=0 b=(fault) c=0x0 d={0,144}");  // d reads the pointer's bytes
  EXPECT_EQ(hit.size, hit.event.fixed_size);
}

TEST_F(FetchExecTest, StoreFault) {
  x86_reg(x86::kDi) = 0x999000;
  x86_reg(x86::kSp) = 0x999000;
  const Hit hit = run("a=+0(%di):u64 b=+4(%di):s8 c=+0(%di):char d=$stack2 e=+0(%di):u8[3]");
  EXPECT_EQ(hit.args, std::string(" a=0 b=0 c='") + '\0' + "' d=0x0 e={0,0,0}");
  for (size_t i = 0; i < hit.event.args.size(); ++i) {
    for (uint32_t e = 0; e < (hit.event.args[i].count ? hit.event.args[i].count : 1); ++e) {
      EXPECT_EQ(hit.field(i, e), 0u) << i;
    }
  }
}

TEST_F(FetchExecTest, StringFault) {
  x86_reg(x86::kDi) = kData;
  memory_.put(kData, "no NUL here", 11);  // runs into unmapped memory
  x86_reg(x86::kSi) = kData + 0x100;
  memory_.put_string(kData + 0x100, "fine");
  const Hit hit = run("a=+0(%di):string b=+0(%si):string c=+0(%bx):string");
  EXPECT_EQ(hit.args, " a=(fault) b=\"fine\" c=(fault)");
  EXPECT_EQ(hit.data_loc(0), 0u);
  // The faulted string takes no room: the next one starts at fixed_size.
  EXPECT_EQ(hit.data_loc(1), make_data_loc(hit.event.fixed_size, 5));
}

// ---- Limits ---------------------------------------------------------------

TEST_F(FetchExecTest, StringLongerThanMaxStringSizeIsCut) {
  x86_reg(x86::kDi) = kData;
  memory_.put_string(kData, std::string(5000, 'x'));
  const Hit hit = run("s=+0(%di):string t=$comm");
  EXPECT_EQ(data_loc_length(hit.data_loc(0)), kMaxStringSize);
  EXPECT_EQ(hit.args, " s=\"" + std::string(kMaxStringSize - 1, 'x') + "\" t=\"worker\"");
  EXPECT_EQ(hit.size, hit.event.fixed_size + kMaxStringSize + 7);
}

TEST_F(FetchExecTest, StringsThatDoNotFitAreFaults) {
  x86_reg(x86::kDi) = kData;
  x86_reg(x86::kSi) = kData + 0x100;
  x86_reg(x86::kDx) = kData + 0x200;
  memory_.put_string(kData, "abc");               // 4 bytes
  memory_.put_string(kData + 0x100, "too long");  // 9 bytes
  memory_.put_string(kData + 0x200, "de");        // 3 bytes
  const std::string args = "a=+0(%di):string b=+0(%si):string c=+0(%dx):string";
  const uint32_t fixed = first_arg_offset(false) + 12;
  // Room for "abc" and "de" but not "too long".
  Hit hit = run(args, Isa::kX86_64, 'p', fixed + 4 + 8);
  EXPECT_EQ(hit.args, " a=\"abc\" b=(fault) c=\"de\"");
  EXPECT_EQ(hit.size, fixed + 7);
  // Exactly enough for all three.
  hit = run(args, Isa::kX86_64, 'p', fixed + 16);
  EXPECT_EQ(hit.args, " a=\"abc\" b=\"too long\" c=\"de\"");
  EXPECT_EQ(hit.size, fixed + 16);
  // No room at all.
  hit = run(args, Isa::kX86_64, 'p', fixed);
  EXPECT_EQ(hit.args, " a=(fault) b=(fault) c=(fault)");
  EXPECT_EQ(hit.size, fixed);
}

TEST_F(FetchExecTest, HostStringsThatDoNotFitAreFaults) {
  const std::string args = "c=$comm d=\\\"0123456789\"";
  const uint32_t fixed = first_arg_offset(false) + 8;
  Hit hit = run(args, Isa::kX86_64, 'p', fixed + 7 + 10);
  EXPECT_EQ(hit.args, " c=\"worker\" d=(fault)");
  hit = run(args, Isa::kX86_64, 'p', fixed + 7 + 11);
  EXPECT_EQ(hit.args, " c=\"worker\" d=\"0123456789\"");
}

TEST_F(FetchExecTest, FixedFieldsThatDoNotFitStoreNothing) {
  x86_reg(x86::kAx) = 1;
  const Hit hit = run("a=%ax b=%ax", Isa::kX86_64, 'p', first_arg_offset(false) + 15);
  EXPECT_EQ(hit.size, 0u);
}

TEST_F(FetchExecTest, NoArguments) {
  const Hit hit = run("");
  EXPECT_EQ(hit.size, first_arg_offset(false));
  EXPECT_EQ(hit.args, "");
  // A return record: the ip fields, then the entry time.
  EXPECT_EQ(run("", Isa::kX86_64, 'r').size, first_arg_offset(true) + 8);
}

TEST_F(FetchExecTest, RecordCapacityIsCappedAtTheLargestRecord) {
  // Sixteen 4095-byte strings would need 64 KiB; the last ones must fault
  // rather than get offsets a __data_loc cannot hold.
  x86_reg(x86::kDi) = kData;
  memory_.put_string(kData, std::string(4095, 'y'));
  std::string args;
  for (int i = 0; i < 17; ++i) args += " s" + std::to_string(i) + "=+0(%di):string";
  const Hit hit = run(args.substr(1), Isa::kX86_64, 'p', 100000);
  EXPECT_LE(hit.size, kMaxRecordSize);
  EXPECT_EQ(data_loc_length(hit.data_loc(0)), 4096u);
  EXPECT_EQ(data_loc_length(hit.data_loc(16)), 0u);
  EXPECT_EQ(data_loc_length(hit.data_loc(15)), 0u);
}

// ---- Malformed programs ---------------------------------------------------

TEST_F(FetchExecTest, MalformedProgramsStoreZero) {
  x86_reg(x86::kAx) = 0x1234;
  x86_reg(x86::kDi) = kData;
  memory_.put_u32(kData, 0x00090008);
  const Hit good = run("a=%ax:u32 b=%ax:u32 c=%ax:u32 d=%ax:u32 e=+0(%di):u16[2]");
  ASSERT_EQ(good.args, " a=4660 b=4660 c=4660 d=4660 e={8,9}");
  EventDesc bad = good.event;
  bad.args[0].code.pop_back();                                         // no kEnd
  bad.args[1].code[0].param = 1000;                                    // no such register
  bad.args[2].code[1].size = 8;                                        // store wider than the field
  bad.args[3].code.insert(bad.args[3].code.begin(), {FetchOp::kEnd});  // no source
  bad.args[4].code[2].param = 100;  // more elements than the field
  const Hit hit = run_event(bad);
  EXPECT_EQ(hit.args, " a=0 b=0 c=0 d=0 e={0,0}");
}

TEST_F(FetchExecTest, WholeLine) {
  x86_reg(x86::kDi) = kData;
  x86_reg(x86::kSi) = 0x41;
  x86_reg(x86::kDx) = static_cast<uint64_t>(-3);
  memory_.put_string(kData, "/tmp");
  const Hit hit = run("path=+0(%di):string flags=%si:x32 mode=%dx:s16 c=$comm");
  std::string line;
  TraceFormatter().format_text(hit.event, hit.record, "worker", line);
  EXPECT_EQ(line,
            "          worker-101     [001] .....     5.000000: ev: (0x401000) "
            "path=\"/tmp\" flags=0x41 mode=-3 c=\"worker\"\n");
}

}  // namespace
}  // namespace dprobe::trace
