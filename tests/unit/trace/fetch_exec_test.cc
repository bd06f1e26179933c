// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The fetch interpreter end to end (fetch_exec_fixture.h): what each type
// stores and prints, every source of a value, dereferences. Bitfields,
// arrays, faults and limits: fetch_exec_records_test.cc.
#include "trace/hit/fetch_exec.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/arm64/regs.h"
#include "arch/x86_64/regs.h"
#include "trace/record.h"
#include "unit/trace/fetch_exec_fixture.h"

namespace dprobe::trace {
namespace {

using namespace test_support;
using arch::Isa;
namespace x86 = arch::x86_64;
namespace a64 = arch::arm64;

// ---- Types ----------------------------------------------------------------

TEST_F(FetchExecTest, UnsignedTypesStoreTheLowBytes) {
  x86_reg(x86::kAx) = 0xfedcba9876543210;
  const Hit hit = run("a=%ax:u8 b=%ax:u16 c=%ax:u32 d=%ax:u64");
  EXPECT_EQ(hit.args, " a=16 b=12816 c=1985229328 d=18364758544493064720");
  EXPECT_EQ(hit.field(0), 0x10u);
  EXPECT_EQ(hit.field(1), 0x3210u);
  EXPECT_EQ(hit.field(2), 0x76543210u);
  EXPECT_EQ(hit.field(3), 0xfedcba9876543210u);
  EXPECT_EQ(hit.size, 32u + 1 + 2 + 4 + 8);
}

TEST_F(FetchExecTest, SignedTypesPrintNegative) {
  x86_reg(x86::kBx) = static_cast<uint64_t>(-2);
  x86_reg(x86::kDi) = kData;
  memory_.put_u32(kData, 0x80000000u);
  memory_.put(kData + 4, "\x80\x7f", 2);
  const Hit hit =
      run("a=%bx:s8 b=%bx:s16 c=%bx:s32 d=%bx:s64 e=+0(%di):s32 f=+4(%di):s8 g=+5(%di):s8");
  EXPECT_EQ(hit.args, " a=-2 b=-2 c=-2 d=-2 e=-2147483648 f=-128 g=127");
  EXPECT_EQ(hit.field(0), 0xfeu);
  EXPECT_EQ(hit.field(2), 0xfffffffeu);
}

TEST_F(FetchExecTest, HexTypesAndTheDefault) {
  x86_reg(x86::kCx) = 0x1122334455667788;
  const Hit hit = run("a=%cx:x8 b=%cx:x16 c=%cx:x32 d=%cx:x64 e=%cx");
  EXPECT_EQ(hit.args, " a=0x88 b=0x7788 c=0x55667788 d=0x1122334455667788 e=0x1122334455667788");
}

TEST_F(FetchExecTest, Char) {
  x86_reg(x86::kSi) = 0x4241;
  x86_reg(x86::kDi) = kData;
  memory_.put_string(kData, "Quit");
  const Hit hit = run("a=%si:char b=+0(%di):char c=+3(%di):char");
  EXPECT_EQ(hit.args, " a='A' b='Q' c='t'");
}

TEST_F(FetchExecTest, SymbolTypesStoreTheRawAddress) {
  x86_reg(x86::kIp) = kProbeIp + 5;
  x86_reg(x86::kSp) = kStackTop;
  memory_.put_u64(kStackTop, 0x7f0011223344);
  const Hit hit = run("a=%ip:symbol b=+0(%sp):symstr");
  EXPECT_EQ(hit.field(0), kProbeIp + 5);
  EXPECT_EQ(hit.field(1), 0x7f0011223344u);
  EXPECT_EQ(hit.args, " a=0x401005 b=\"0x7f0011223344\"");  // no symbolizer: raw
}

TEST_F(FetchExecTest, StringAndUstring) {
  x86_reg(x86::kDi) = kData;
  x86_reg(x86::kSi) = kData + 0x100;
  memory_.put_string(kData, "/etc/passwd");
  memory_.put_string(kData + 0x100, "user");
  const Hit hit = run("a=+0(%di):string b=+0(%si):ustring c=+u5(%di):string d=+5(%di):ustring");
  EXPECT_EQ(hit.args, " a=\"/etc/passwd\" b=\"user\" c=\"passwd\" d=\"passwd\"");
  const uint32_t fixed = hit.event.fixed_size;
  EXPECT_EQ(hit.data_loc(0), make_data_loc(fixed, 12));
  EXPECT_EQ(hit.data_loc(1), make_data_loc(fixed + 12, 5));
  EXPECT_EQ(hit.size, fixed + 12 + 5 + 7 + 7);
  EXPECT_EQ(std::to_integer<char>(hit.record[fixed]), '/');
  EXPECT_EQ(std::to_integer<char>(hit.record[fixed + 11]), '\0');
}

TEST_F(FetchExecTest, EmptyString) {
  x86_reg(x86::kDi) = kData;
  memory_.put_string(kData, "");
  const Hit hit = run("s=+0(%di):string");
  EXPECT_EQ(hit.args, " s=\"\"");
  EXPECT_EQ(data_loc_length(hit.data_loc(0)), 1u);
}

// ---- Sources --------------------------------------------------------------

TEST_F(FetchExecTest, EveryX86Register) {
  std::string args;
  for (uint16_t i = 0; i < x86::kRegCount; ++i) {
    regs_[i] = 0x1000 + i;
    args += std::string(" r") + std::to_string(i) + "=%" + std::string(x86::kRegisterNames[i]);
  }
  const Hit hit = run(args.substr(1));
  for (uint16_t i = 0; i < x86::kRegCount; ++i) EXPECT_EQ(hit.field(i), 0x1000u + i) << i;
}

TEST_F(FetchExecTest, EveryArm64Register) {
  std::string args;
  for (uint16_t i = 0; i < a64::kRegCount; ++i) {
    regs_[i] = 0x2000 + i;
    args += std::string(" r") + std::to_string(i) + "=%" + std::string(a64::kRegisterNames[i]);
  }
  const Hit hit = run(args.substr(1), Isa::kArm64);
  for (uint16_t i = 0; i < a64::kRegCount; ++i) EXPECT_EQ(hit.field(i), 0x2000u + i) << i;
}

TEST_F(FetchExecTest, StackWordsAndStackPointer) {
  x86_reg(x86::kSp) = kStackTop;
  for (uint64_t i = 0; i < 4; ++i) memory_.put_u64(kStackTop + 8 * i, 0xa0 + i);
  const Hit hit = run("sp=$stack s0=$stack0 s1=$stack1 s3=$stack3:u8");
  EXPECT_EQ(hit.args, " sp=0x7ffd0000 s0=0xa0 s1=0xa1 s3=163");
}

TEST_F(FetchExecTest, Arm64StackUsesSp) {
  a64_reg(a64::kSp) = kStackTop;
  memory_.put_u64(kStackTop + 16, 77);
  const Hit hit = run("sp=$stack s2=$stack2:u64", Isa::kArm64);
  EXPECT_EQ(hit.args, " sp=0x7ffd0000 s2=77");
}

TEST_F(FetchExecTest, X86ArgumentsInRegistersThenOnTheStack) {
  const x86::Reg order[] = {x86::kDi, x86::kSi, x86::kDx, x86::kCx, x86::kR8, x86::kR9};
  for (unsigned i = 0; i < 6; ++i) x86_reg(order[i]) = i + 1;
  x86_reg(x86::kSp) = kStackTop;
  memory_.put_u64(kStackTop, 0xdead);  // the return address, never an argument
  memory_.put_u64(kStackTop + 8, 7);
  memory_.put_u64(kStackTop + 16, 8);
  const Hit hit = run("$arg1:u8 $arg2:u8 $arg3:u8 $arg4:u8 $arg5:u8 $arg6:u8 $arg7:u8 $arg8:u8");
  EXPECT_EQ(hit.args, " arg1=1 arg2=2 arg3=3 arg4=4 arg5=5 arg6=6 arg7=7 arg8=8");
}

TEST_F(FetchExecTest, Arm64ArgumentsInRegistersThenOnTheStack) {
  for (unsigned i = 0; i < 8; ++i) a64_reg(a64::kX0 + i) = 10 + i;
  a64_reg(a64::kSp) = kStackTop;
  memory_.put_u64(kStackTop, 18);
  memory_.put_u64(kStackTop + 8, 19);
  std::string args;
  for (unsigned n = 1; n <= 10; ++n) args += " $arg" + std::to_string(n) + ":u32";
  const Hit hit = run(args.substr(1), Isa::kArm64);
  EXPECT_EQ(hit.args,
            " arg1=10 arg2=11 arg3=12 arg4=13 arg5=14 arg6=15 arg7=16 arg8=17 arg9=18 arg10=19");
}

TEST_F(FetchExecTest, ReturnProbeArgumentsComeFromTheEntry) {
  entry_args_ = {11, 22, 33};
  x86_reg(x86::kDi) = 999;  // clobbered by the time the function returns
  x86_reg(x86::kAx) = static_cast<uint64_t>(-9);
  const Hit hit = run("$arg1:u32 $arg3:u32 rv=$retval:s64 $arg4:u32", Isa::kX86_64, 'r');
  EXPECT_EQ(hit.args, " arg1=11 arg2=33 rv=-9 arg4=0");  // $arg4 was never fetched
  EXPECT_EQ(hit.event.args[0].offset, 40u);
}

TEST_F(FetchExecTest, DurationIsTheReturnInstancesElapsedTime) {
  duration_ns_ = 1'500'000;
  const Hit hit = run("lat=$duration:u64 us=$duration:u32", Isa::kX86_64, 'r');
  EXPECT_EQ(hit.args, " lat=1500000 us=1500000");
}

TEST_F(FetchExecTest, ReturnValueOnArm64) {
  a64_reg(a64::kX0) = 0x55;
  a64_reg(8) = 0x66;
  EXPECT_EQ(run("$retval:u8 %x8:u8", Isa::kArm64, 'r').args, " arg1=85 arg2=102");
}

TEST_F(FetchExecTest, Comm) {
  const Hit hit = run("c=$comm");
  EXPECT_EQ(hit.args, " c=\"worker\"");
  EXPECT_EQ(data_loc_length(hit.data_loc(0)), 7u);
}

TEST_F(FetchExecTest, CommIsAtMostFifteenCharacters) {
  for (char& c : comm_) c = 'n';  // no NUL in all 16 bytes
  const Hit hit = run("c=$comm");
  EXPECT_EQ(hit.args, " c=\"nnnnnnnnnnnnnnn\"");
  EXPECT_EQ(data_loc_length(hit.data_loc(0)), 16u);
}

TEST_F(FetchExecTest, Immediates) {
  const Hit hit = run("a=\\1234 b=\\-5:s32 c=\\0x10:u8 d=\\\"hello_world\"");
  EXPECT_EQ(hit.args, " a=0x4d2 b=-5 c=16 d=\"hello_world\"");
}

TEST_F(FetchExecTest, ImmediateAddressAsString) {
  memory_.put_string(0x5000, "at 0x5000");
  const Hit hit = run("a=\\0x5000:string b=@0x5000:string");
  EXPECT_EQ(hit.args, " a=\"at 0x5000\" b=\"at 0x5000\"");
}

TEST_F(FetchExecTest, MemoryAtAnAddress) {
  memory_.put_u64(0x5000, 0x0102030405060708);
  const Hit hit = run("a=@0x5000:u32 b=@0x5004:x8 c=@0x5000");
  EXPECT_EQ(hit.args, " a=84281096 b=0x4 c=0x102030405060708");
}

TEST_F(FetchExecTest, UnresolvedSymbolsAndFileOffsetsFault) {
  memory_.put_u64(0x6000, 42);
  Hit hit = run("a=@counter+8:u32 b=@+0x2000:u32 c=@counter:string");
  EXPECT_EQ(hit.args, " a=0 b=0 c=(fault)");
  // Armed, the agent turns the reference into an immediate address.
  EventDesc resolved = hit.event;
  resolved.args[0].code[0] = {FetchOp::kImm, 0, 0, 0, 0, 0x5ff8 + 8};  // counter at 0x5ff8
  resolved.args[1].code[0] = {FetchOp::kImm, 0, 0, 0, 0, 0x6000};
  EXPECT_EQ(run_event(resolved).args, " a=42 b=42 c=(fault)");
}

// ---- Dereferences ---------------------------------------------------------

TEST_F(FetchExecTest, NestedDereferencesAndNegativeOffsets) {
  // di -> { +0: p1 }, p1 -> { +16: p2 }, p2 -> { +8: 0xbeef }
  x86_reg(x86::kDi) = kData;
  memory_.put_u64(kData, kData + 0x100);
  memory_.put_u64(kData + 0x100 + 16, kData + 0x200);
  memory_.put_u32(kData + 0x200 + 8, 0xbeef);
  x86_reg(x86::kBp) = kData + 0x300;
  memory_.put_u64(kData + 0x300 - 8, static_cast<uint64_t>(-1234));
  memory_.put_u64(kData + 0x300 - 16, kData + 0x400);
  memory_.put_u64(kData + 0x400 - 24, 0x7);
  const Hit hit =
      run("a=+8(+16(+0(%di))):x32 b=-8(%bp):s64 c=-24(-16(%bp)):u16 d=+u8(+u16(+u0(%di))):u16");
  EXPECT_EQ(hit.args, " a=0xbeef b=-1234 c=7 d=48879");
}

TEST_F(FetchExecTest, FourteenLevelsDeep) {
  // Each word points to the next; the last holds the value.
  std::string arg = "%di";
  for (int i = 0; i < 14; ++i) arg = "+0(" + arg + ")";
  x86_reg(x86::kDi) = kData;
  for (uint64_t i = 0; i < 13; ++i) memory_.put_u64(kData + 8 * i, kData + 8 * (i + 1));
  memory_.put_u64(kData + 8 * 13, 99);
  EXPECT_EQ(run("v=" + arg + ":u8").args, " v=99");
}

}  // namespace
}  // namespace dprobe::trace
