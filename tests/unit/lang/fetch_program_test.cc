// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The compiled form of each fetch argument: the flat operation list the
// agent will interpret, written here as "op(param,imm,size)" steps.
#include <gtest/gtest.h>

#include <string>

#include "arch/x86_64/regs.h"
#include "lang/definition.h"

namespace dprobe::lang {
namespace {

using trace::FetchInsn;
using trace::FetchOp;
using trace::TypeId;

// A compact text form of a program, for readable expectations.
std::string describe(const std::vector<FetchInsn>& code) {
  std::string out;
  for (const FetchInsn& insn : code) {
    if (!out.empty()) out += " ";
    out += std::string(trace::fetch_op_name(insn.op));
    if (insn.op == FetchOp::kEnd) continue;
    out += "(" + std::to_string(insn.param) + "," + std::to_string(insn.imm) + "," +
           std::to_string(insn.size) + ")";
    if (insn.op == FetchOp::kModBitfield) {
      out += "<<" + std::to_string(insn.lshift) + ">>" + std::to_string(insn.rshift);
    }
  }
  return out;
}

trace::EventArg parse_arg(const std::string& arg, const char* place = "libc.so.6:open",
                          char kind = 'p') {
  auto def = parse_definition(std::string(1, kind) + " " + place + " " + arg, {arch::Isa::kX86_64});
  EXPECT_TRUE(def) << (def ? "" : render_error(def.error()));
  if (!def) return {};
  EXPECT_EQ(def->spec.event.args.size(), 1u);
  return def->spec.event.args.at(0);
}

std::string program(const std::string& arg, const char* place = "libc.so.6:open", char kind = 'p') {
  return describe(parse_arg(arg, place, kind).code);
}

constexpr unsigned kDi = arch::x86_64::kDi;
constexpr unsigned kSi = arch::x86_64::kSi;

TEST(FetchProgram, RegisterStoresRaw) {
  EXPECT_EQ(program("%di"), "reg(" + std::to_string(kDi) + ",0,0) st_raw(0,0,8) end");
  EXPECT_EQ(program("%si:u32"), "reg(" + std::to_string(kSi) + ",0,0) st_raw(0,0,4) end");
}

TEST(FetchProgram, DereferenceBecomesMemoryStore) {
  EXPECT_EQ(program("+8(%di):u16"), "reg(5,0,0) st_mem(0,8,2) end");
  EXPECT_EQ(program("-16(%di):s32"), "reg(5,0,0) st_mem(0,-16,4) end");
  EXPECT_EQ(program("+u4(%di):u8"), "reg(5,0,0) st_umem(0,4,1) end");
}

TEST(FetchProgram, NestedDereferences) {
  EXPECT_EQ(program("+0(+8(+16(%di))):x32"),
            "reg(5,0,0) deref(0,16,0) deref(0,8,0) st_mem(0,0,4) end");
}

TEST(FetchProgram, FourteenNestedDereferencesFit) {
  std::string arg = "%di";
  for (int i = 0; i < 14; ++i) arg = "+0(" + arg + ")";
  const trace::EventArg parsed = parse_arg(arg + ":u8");
  EXPECT_EQ(parsed.code.size(), 16u);  // reg, 13 derefs, st_mem, end
}

TEST(FetchProgram, Strings) {
  EXPECT_EQ(program("+0(%di):string"), "reg(5,0,0) st_string(0,0,4) end");
  EXPECT_EQ(program("+0(%di):ustring"), "reg(5,0,0) st_ustring(0,0,4) end");
  EXPECT_EQ(program("+u0(%di):string"), "reg(5,0,0) st_ustring(0,0,4) end");
  EXPECT_EQ(program("@0x1000:string"), "imm(0,4096,0) st_string(0,0,4) end");
  EXPECT_EQ(program("\\0x1000:string"), "imm(0,4096,0) st_string(0,0,4) end");
}

TEST(FetchProgram, CommAndImmediateStringAreStrings) {
  const trace::EventArg comm = parse_arg("$comm");
  EXPECT_EQ(describe(comm.code), "comm(0,0,0) st_string(0,0,4) end");
  EXPECT_EQ(comm.type, TypeId::kString);
  const trace::EventArg data = parse_arg("\\\"hello_world\"");
  EXPECT_EQ(describe(data.code), "data(0,0,0) st_string(0,0,4) end");
  EXPECT_EQ(data.data, "hello_world");
}

TEST(FetchProgram, ImmediateStringsEndAtWhitespaceAsInTheKernel) {
  auto def = parse_definition("p libc.so.6:open \\\"hello world\"");
  ASSERT_FALSE(def);
  EXPECT_EQ(def.error().code, ErrorCode::IMMSTR_NO_CLOSE);
}

TEST(FetchProgram, StackSlotsAndArguments) {
  EXPECT_EQ(program("$stack"), "stackp(0,0,0) st_raw(0,0,8) end");
  EXPECT_EQ(program("$stack3:u64"), "stack(3,0,0) st_raw(0,0,8) end");
  EXPECT_EQ(program("$arg1"), "arg(0,0,0) st_raw(0,0,8) end");
  EXPECT_EQ(program("$arg8:s32"), "arg(7,0,0) st_raw(0,0,4) end");
}

TEST(FetchProgram, ReturnValueOnlyOnReturnProbes) {
  EXPECT_EQ(program("$retval", "libc.so.6:open", 'r'), "retval(0,0,0) st_raw(0,0,8) end");
  EXPECT_EQ(program("$retval", "libc.so.6:open%return"), "retval(0,0,0) st_raw(0,0,8) end");
  // $argN on a return probe is fetched at entry and kept.
  EXPECT_EQ(program("$arg2", "libc.so.6:open", 'r'), "arg(1,0,0) st_raw(0,0,8) end");
}

// A float or a double comes back in the vector register (xmm0, v0).
TEST(FetchProgram, FloatReturnValuesFromTheVectorRegister) {
  EXPECT_EQ(program("$retval:f64", "libm.so.6:sqrt", 'r'), "fretval(0,0,0) st_raw(0,0,8) end");
  EXPECT_EQ(program("$retval:f32", "libm.so.6:sqrtf", 'r'), "fretval(0,0,0) st_raw(0,0,4) end");
  EXPECT_EQ(program("$retval:s32", "libc.so.6:open", 'r'), "retval(0,0,0) st_raw(0,0,4) end");
  EXPECT_EQ(program("+0($retval):f64", "libc.so.6:f", 'r'), "retval(0,0,0) st_mem(0,0,8) end")
      << "a double the integer result points at";
}

TEST(FetchProgram, ArgumentsOnAddressesAreTheUsersCall) {
  // Whether an address is a function entry is not known when parsing.
  EXPECT_EQ(program("$arg1", "0x401000"), "arg(0,0,0) st_raw(0,0,8) end");
  EXPECT_EQ(program("$arg1", "/bin/true:0x1000"), "arg(0,0,0) st_raw(0,0,8) end");
}

TEST(FetchProgram, Immediates) {
  EXPECT_EQ(program("\\1234"), "imm(0,1234,0) st_raw(0,0,8) end");
  EXPECT_EQ(program("\\0x10:u8"), "imm(0,16,0) st_raw(0,0,1) end");
  EXPECT_EQ(program("\\-5:s32"), "imm(0,-5,0) st_raw(0,0,4) end");
  EXPECT_EQ(program("\\+7"), "imm(0,7,0) st_raw(0,0,8) end");
}

TEST(FetchProgram, MemoryBySymbolKeepsTheReference) {
  const trace::EventArg arg = parse_arg("@libc.so.6:environ+8:x64");
  EXPECT_EQ(describe(arg.code), "symbol(0,8,0) st_mem(0,0,8) end");
  ASSERT_EQ(arg.symbols.size(), 1u);
  EXPECT_EQ(arg.symbols[0].object, "libc.so.6");
  EXPECT_EQ(arg.symbols[0].symbol, "environ");
  const trace::EventArg local = parse_arg("@counter-4:u32");
  EXPECT_EQ(describe(local.code), "symbol(0,-4,0) st_mem(0,0,4) end");
  EXPECT_EQ(local.symbols[0].object, "");
  // Without a type, and with an object named by path.
  const trace::EventArg untyped = parse_arg("@libc.so.6:environ");
  EXPECT_EQ(describe(untyped.code), "symbol(0,0,0) st_mem(0,0,8) end");
  const trace::EventArg by_path = parse_arg("@/lib/libz.so.1:z_errmsg:u32");
  EXPECT_EQ(by_path.symbols[0].object, "/lib/libz.so.1");
  EXPECT_EQ(by_path.symbols[0].symbol, "z_errmsg");
  EXPECT_EQ(by_path.type_text, "u32");
}

TEST(FetchProgram, FileOffset) {
  EXPECT_EQ(program("@+0x2000:u32"), "foffs(0,8192,0) st_mem(0,0,4) end");
}

TEST(FetchProgram, Bitfield) {
  // b4@2/32: shift the 4 bits at offset 2 to the top of 32, then down to 0.
  EXPECT_EQ(program("+0(%di):b4@2/32"), "reg(5,0,0) st_mem(0,0,4) mod_bf(0,0,4)<<26>>28 end");
  EXPECT_EQ(program("%di:b1@63/64"), "reg(5,0,0) st_raw(0,0,8) mod_bf(0,0,8)<<0>>63 end");
}

TEST(FetchProgram, Arrays) {
  EXPECT_EQ(program("+8(%di):u32[4]"), "reg(5,0,0) st_mem(0,8,4) lp_array(4,0,0) end");
  // A string array reads pointers: the dereference stays, a string store follows.
  EXPECT_EQ(program("+0(%di):string[2]"),
            "reg(5,0,0) deref(0,0,0) st_string(0,0,4) lp_array(2,0,0) end");
  EXPECT_EQ(program("+0(%di):u8[64]"), "reg(5,0,0) st_mem(0,0,1) lp_array(64,0,0) end");
}

TEST(FetchProgram, Char) {
  EXPECT_EQ(program("+0(%di):char"), "reg(5,0,0) st_mem(0,0,1) end");
  EXPECT_EQ(program("%di:char"), "reg(5,0,0) st_raw(0,0,1) end");
}

TEST(FetchProgram, SymbolTypes) {
  EXPECT_EQ(parse_arg("%ip:symbol").type, TypeId::kSymbol);
  EXPECT_EQ(parse_arg("+0(%sp):symstr").type, TypeId::kSymStr);
}

TEST(FetchProgram, TypesAndSizes) {
  struct Case {
    const char* type;
    TypeId id;
    uint32_t size;
  };
  const Case cases[] = {
      {"u8", TypeId::kU8, 1},   {"u16", TypeId::kU16, 2}, {"u32", TypeId::kU32, 4},
      {"u64", TypeId::kU64, 8}, {"s8", TypeId::kS8, 1},   {"s16", TypeId::kS16, 2},
      {"s32", TypeId::kS32, 4}, {"s64", TypeId::kS64, 8}, {"x8", TypeId::kX8, 1},
      {"x16", TypeId::kX16, 2}, {"x32", TypeId::kX32, 4}, {"x64", TypeId::kX64, 8},
  };
  for (const Case& c : cases) {
    const trace::EventArg arg = parse_arg(std::string("%ax:") + c.type);
    EXPECT_EQ(arg.type, c.id) << c.type;
    EXPECT_EQ(arg.field_size(), c.size) << c.type;
    EXPECT_EQ(arg.type_text, c.type);
  }
}

TEST(FetchProgram, Arm64Registers) {
  auto def = parse_definition("p libc.so.6:open a=%x0 b=%sp c=%pc d=$arg9", {arch::Isa::kArm64});
  ASSERT_TRUE(def) << render_error(def.error());
  EXPECT_EQ(describe(def->spec.event.args[0].code), "reg(0,0,0) st_raw(0,0,8) end");
  EXPECT_EQ(describe(def->spec.event.args[1].code), "reg(31,0,0) st_raw(0,0,8) end");
  EXPECT_EQ(describe(def->spec.event.args[2].code), "reg(32,0,0) st_raw(0,0,8) end");
  auto x86_name = parse_definition("p libc.so.6:open %di", {arch::Isa::kArm64});
  ASSERT_FALSE(x86_name);
  EXPECT_EQ(x86_name.error().code, ErrorCode::BAD_REG_NAME);
}

}  // namespace
}  // namespace dprobe::lang
