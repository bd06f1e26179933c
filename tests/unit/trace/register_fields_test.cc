// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The hit path's planned register fields against the fetch interpreter:
// for every event they take, the same record bytes; every other event is
// left to the interpreter.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "lang/definition.h"
#include "trace/hit/fetch_exec.h"

namespace dprobe::trace {
namespace {

using arch::Isa;

EventDesc event_of(const std::string& definition, Isa isa) {
  auto def = lang::parse_definition(definition, {isa});
  EXPECT_TRUE(def) << (def ? "" : lang::render_error(def.error()));
  return def ? def->spec.event : EventDesc{};
}

bool never_read(void*, void*, uint64_t, size_t) { return false; }
int64_t never_read_string(void*, char*, uint64_t, size_t) { return -1; }

// Distinct bytes in every register, so a wrong slot or width shows.
std::array<uint64_t, 40> sample_registers() {
  std::array<uint64_t, 40> regs{};
  for (size_t i = 0; i < regs.size(); ++i) regs[i] = 0x8877665544332211u * (i + 1) + i;
  return regs;
}

struct Case {
  const char* definition;
  Isa isa;
};

class RegisterFieldsTest : public ::testing::TestWithParam<Case> {};

TEST_P(RegisterFieldsTest, WritesWhatTheInterpreterWrites) {
  const EventDesc event = event_of(GetParam().definition, GetParam().isa);
  const RegisterFields plan = plan_register_fields(event, GetParam().isa);
  ASSERT_TRUE(plan.usable);
  const std::array<uint64_t, 40> regs = sample_registers();
  std::vector<std::byte> interpreted(event.fixed_size, std::byte{0x5a});
  std::vector<std::byte> planned(event.fixed_size, std::byte{0x5a});
  const char comm[16] = "worker";
  const FetchEnv env{regs.data(), GetParam().isa,
                     nullptr,     0,
                     comm,        {never_read, never_read_string, nullptr},
                     0,           0};
  const uint32_t size = store_event_args(event, env, interpreted.data(), event.fixed_size);
  EXPECT_EQ(store_register_fields(plan, event, regs.data(), planned.data()), size);
  EXPECT_EQ(planned, interpreted);
}

INSTANTIATE_TEST_SUITE_P(
    Registers, RegisterFieldsTest,
    ::testing::Values(Case{"p:g/e libc.so.6:open a=%di b=%si", Isa::kX86_64},
                      Case{"p:g/e libc.so.6:open a=%di:u8 b=%si:s16 c=%dx:x32 d=%cx:u64",
                           Isa::kX86_64},
                      Case{"p:g/e libc.so.6:open $arg1 $arg2 $arg6 r=%ax", Isa::kX86_64},
                      Case{"p:g/e libc.so.6:open p=%ip s=%sp f=%flags", Isa::kX86_64},
                      Case{"p:g/e libc.so.6:open a=%x0 b=%x30:u32 $arg8", Isa::kArm64},
                      Case{"p:g/e libc.so.6:open", Isa::kX86_64}));

TEST(RegisterFields, AReturnEventTakesItsArgumentsFromTheEntry) {
  const EventDesc event =
      event_of("r:g/e libc.so.6:open rv=$retval a=$arg1 c=$arg3:u16", Isa::kX86_64);
  const RegisterFields plan = plan_register_fields(event, Isa::kX86_64, 6);
  ASSERT_TRUE(plan.usable);
  const std::array<uint64_t, 40> regs = sample_registers();
  const std::array<uint64_t, 6> entry = {0x1111, 0x2222, 0x3333'4444'5555'6666, 4, 5, 6};
  std::vector<std::byte> interpreted(event.fixed_size, std::byte{0x5a});
  std::vector<std::byte> planned(event.fixed_size, std::byte{0x5a});
  const char comm[16] = "worker";
  const FetchEnv env{regs.data(),
                     Isa::kX86_64,
                     entry.data(),
                     6,
                     comm,
                     {never_read, never_read_string, nullptr},
                     0,
                     0};
  const uint32_t size = store_event_args(event, env, interpreted.data(), event.fixed_size);
  EXPECT_EQ(store_register_fields(plan, event, regs.data(), planned.data(), entry.data()), size);
  EXPECT_EQ(planned, interpreted);
}

TEST(RegisterFields, EverythingElseIsLeftToTheInterpreter) {
  for (const char* definition : {
           "p:g/e libc.so.6:open a=+0(%di)",         // a dereference
           "p:g/e libc.so.6:open a=%di:b4@2/32",     // a bitfield
           "p:g/e libc.so.6:open a=+0(%di):string",  // a string
           "p:g/e libc.so.6:open a=$stack1",         // the stack
           "p:g/e libc.so.6:open $arg7",             // an argument on the stack
           "p:g/e libc.so.6:open c=$comm",           // the thread's name
           "p:g/e libc.so.6:open a=\\123",           // an immediate
           "r:g/e libc.so.6:open $arg9",             // an argument its entry did not keep
       }) {
    EXPECT_FALSE(plan_register_fields(event_of(definition, Isa::kX86_64), Isa::kX86_64, 6).usable)
        << definition;
  }
}

}  // namespace
}  // namespace dprobe::trace
