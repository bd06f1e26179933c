// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Jump tables and indirect tail calls in a function whose entry a jump
// would replace (arch/x86_64/jump_tables.h): the compilers' bounded
// tables read from memory, each target checked against the replaced
// bytes; what is not such a table refused; a jump through one pointer
// taken for the call it is.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "arch/x86_64/optimize.h"

namespace dprobe::arch::x86_64 {
namespace {

using Bytes = std::vector<uint8_t>;
using ::testing::HasSubstr;

constexpr uint64_t kFunction = 0x401000;
constexpr uint64_t kTable = 0x402000;

// switch (x) { case 0: return 0; case 1: return 0 (xor); default: return -1; }
// 0x401000: 89 f8                mov eax, edi
// 0x401002: 83 f8 02             cmp eax, 2
// 0x401005: 77 19                ja 0x401020
// 0x401007: 48 8d 15 f2 0f 00 00 lea rdx, [rip+0xff2] = [0x402000]
// 0x40100e: 48 63 04 82          movsxd rax, dword [rdx+rax*4]
// 0x401012: 48 01 d0             add rax, rdx
// 0x401015: ff e0                jmp rax
// 0x401017: b8 00 00 00 00       mov eax, 0
// 0x40101c: c3                   ret
// 0x40101d: 31 c0                xor eax, eax
// 0x40101f: c3                   ret
// 0x401020: b8 ff ff ff ff       mov eax, -1
// 0x401025: c3                   ret
Bytes switch_code(uint8_t bound_jump = 0x77) {
  return {0x89, 0xf8, 0x83, 0xf8, 0x02, bound_jump, 0x19, 0x48, 0x8d, 0x15, 0xf2, 0x0f, 0x00,
          0x00, 0x48, 0x63, 0x04, 0x82, 0x48,       0x01, 0xd0, 0xff, 0xe0, 0xb8, 0x00, 0x00,
          0x00, 0x00, 0xc3, 0x31, 0xc0, 0xc3,       0xb8, 0xff, 0xff, 0xff, 0xff, 0xc3};
}

// Memory holding the table at kTable (32-bit offsets from it), counting reads.
class TableMemory {
 public:
  explicit TableMemory(std::vector<uint64_t> targets) {
    for (uint64_t target : targets) {
      const auto offset = static_cast<int32_t>(target - kTable);
      uint8_t bytes[4];
      std::memcpy(bytes, &offset, 4);
      table_.insert(table_.end(), bytes, bytes + 4);
    }
  }
  ReadMemory reader() {
    return [this](uint64_t address, void* out, size_t size) {
      if (address < kTable || address + size > kTable + table_.size()) return false;
      std::memcpy(out, table_.data() + (address - kTable), size);
      ++reads_;
      return true;
    };
  }
  int reads() const { return reads_; }

 private:
  std::vector<uint8_t> table_;
  int reads_ = 0;
};

const std::vector<uint64_t> kCases = {0x401017, 0x40101d, 0x401020};

TEST(X86JumpTables, ABoundedTableWhoseTargetsAreOutsideTakesTheJump) {
  TableMemory memory(kCases);
  auto plan = can_optimize(switch_code(), kFunction, kFunction, {}, memory.reader());
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->displaced_length, 5);
  EXPECT_EQ(memory.reads(), 3);  // ja: the bound 2 and one more
}

TEST(X86JumpTables, ATargetInsideTheReplacedBytesRefuses) {
  TableMemory memory({0x401017, 0x401002, 0x401020});
  auto plan = can_optimize(switch_code(), kFunction, kFunction, {}, memory.reader());
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error(),
            "the jump table of the jmp at 0x401015 targets 0x401002, inside the replaced bytes");
}

TEST(X86JumpTables, JaeBoundsOneEntryFewer) {
  TableMemory memory({0x401017, 0x40101d});  // a third entry would be unreadable
  auto plan = can_optimize(switch_code(0x73), kFunction, kFunction, {}, memory.reader());
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(memory.reads(), 2);
}

TEST(X86JumpTables, WithoutTheMemoryOrItsBoundTheTableRefuses) {
  auto unread = can_optimize(switch_code(), kFunction, kFunction, {}, {});
  ASSERT_FALSE(unread);
  EXPECT_THAT(unread.error(), HasSubstr("a jump table, not read here"));
  TableMemory short_table({0x401017});
  auto unreadable = can_optimize(switch_code(), kFunction, kFunction, {}, short_table.reader());
  ASSERT_FALSE(unreadable);
  EXPECT_THAT(unreadable.error(), HasSubstr("is unreadable"));
  // jb instead of ja/jae: no bound this reads.
  TableMemory memory(kCases);
  auto unbounded = can_optimize(switch_code(0x72), kFunction, kFunction, {}, memory.reader());
  ASSERT_FALSE(unbounded);
  EXPECT_THAT(unbounded.error(), HasSubstr("bound check is not found"));
}

TEST(X86JumpTables, ABranchAroundTheCheckRefuses) {
  // 0x401026: eb e6                jmp 0x40100e: in between the check and the jmp
  Bytes code = switch_code();
  code.insert(code.end(), {0xeb, 0xe6});
  TableMemory memory(kCases);
  auto plan = can_optimize(code, kFunction, kFunction, {}, memory.reader());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error(), HasSubstr("reached around its bound check"));
}

// Two ways to one dispatch, each with its own table (cross-jumping):
// only the table whose lea is in sight would be read.
TEST(X86JumpTables, AnotherPathsTableRefuses) {
  // 0x401000: 53                   push rbx
  // 0x401001: 48 89 fb             mov rbx, rdi
  // 0x401004: 85 f6                test esi, esi
  // 0x401006: 75 16                jne 0x40101e
  // 0x401008: 48 8d 15 f1 0f 00 00 lea rdx, [rip+0xff1] = [0x402000]
  // 0x40100f: 48 83 f8 01          cmp rax, 1         <- also reached from 0x401025
  // 0x401013: 77 12                ja 0x401027
  // 0x401015: 48 63 04 82          movsxd rax, dword [rdx+rax*4]
  // 0x401019: 48 01 d0             add rax, rdx
  // 0x40101c: ff e0                jmp rax
  // 0x40101e: 48 8d 15 db 1f 00 00 lea rdx, [rip+0x1fdb] = [0x403000]
  // 0x401025: eb e8                jmp 0x40100f
  // 0x401027: 5b c3                pop rbx; ret
  const Bytes code = {0x53, 0x48, 0x89, 0xfb, 0x85, 0xf6, 0x75, 0x16, 0x48, 0x8d, 0x15,
                      0xf1, 0x0f, 0x00, 0x00, 0x48, 0x83, 0xf8, 0x01, 0x77, 0x12, 0x48,
                      0x63, 0x04, 0x82, 0x48, 0x01, 0xd0, 0xff, 0xe0, 0x48, 0x8d, 0x15,
                      0xdb, 0x1f, 0x00, 0x00, 0xeb, 0xe8, 0x5b, 0xc3};
  TableMemory memory({0x401027, 0x401027});
  auto plan = can_optimize(code, kFunction, kFunction, {}, memory.reader());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error(), HasSubstr("reached around its bound check"));
}

TEST(X86JumpTables, ALandingPadAfterTheCheckIsAWayIn) {
  TableMemory memory(kCases);
  auto plan = can_optimize(switch_code(), kFunction, kFunction, std::vector<uint64_t>{0x40100e},
                           memory.reader());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error(), HasSubstr("reached around its bound check"));
}

TEST(X86JumpTables, WhatNoCompilerWritesIsNotTaken) {
  TableMemory memory(kCases);
  // movsxd rax, dword [rax+rdx*4]: the table in the index slot.
  Bytes swapped = switch_code();
  swapped[17] = 0x90;
  auto plan = can_optimize(swapped, kFunction, kFunction, {}, memory.reader());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error(), HasSubstr("no pattern dprobe reads"));
  // nop; cmp al, 2: a byte's bound says nothing of the rest of rax.
  Bytes byte_check = switch_code();
  byte_check[2] = 0x90;
  byte_check[3] = 0x3c;
  byte_check[4] = 0x02;
  plan = can_optimize(byte_check, kFunction, kFunction, {}, memory.reader());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error(), HasSubstr("bound check is not found"));
}

TEST(X86JumpTables, ThreadedCodeWalkingItsLabelsIsNoCall) {
  // 0x401000: 53                   push rbx
  // 0x401001: 48 89 fb             mov rbx, rdi
  // 0x401004: 5b                   pop rbx
  // 0x401005: 48 8b 03             mov rax, [rbx]      (the next label's address)
  // 0x401008: 48 83 c3 08          add rbx, 8          (ip++)
  // 0x40100c: ff e0                jmp rax
  auto plan = can_optimize(
      Bytes{0x53, 0x48, 0x89, 0xfb, 0x5b, 0x48, 0x8b, 0x03, 0x48, 0x83, 0xc3, 0x08, 0xff, 0xe0},
      kFunction, kFunction, {}, {});
  ASSERT_FALSE(plan);
}

TEST(X86JumpTables, AByteIndexIsBoundedByItsWidth) {
  // 0x401000: 0f b6 c7             movzx eax, dil      (no cmp: 256 entries)
  // then the table's lea, movsxd, add and jmp as above, shifted by one byte
  Bytes code = {0x0f, 0xb6, 0xc7, 0x90, 0x90, 0x90, 0x90, 0x48, 0x8d, 0x15, 0xf2, 0x0f,
                0x00, 0x00, 0x48, 0x63, 0x04, 0x82, 0x48, 0x01, 0xd0, 0xff, 0xe0, 0xc3};
  std::vector<uint64_t> entries(256, 0x401017);
  TableMemory memory(entries);
  auto plan = can_optimize(code, kFunction, kFunction, {}, memory.reader());
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(memory.reads(), 256);
}

TEST(X86JumpTables, AJumpThroughOnePointerIsACall) {
  // 0x401000: 53                   push rbx
  // 0x401001: 48 89 fb             mov rbx, rdi
  // 0x401004: 49 8b 44 24 18       mov rax, [r12+0x18]   (a vtable's slot)
  // 0x401009: 5b                   pop rbx
  // 0x40100a: ff e0                jmp rax
  auto plan =
      can_optimize(Bytes{0x53, 0x48, 0x89, 0xfb, 0x49, 0x8b, 0x44, 0x24, 0x18, 0x5b, 0xff, 0xe0},
                   kFunction, kFunction, {}, {});
  ASSERT_TRUE(plan) << plan.error();
  // 0x401004: 5b                   pop rbx
  // 0x401005: ff 60 18             jmp [rax+0x18]
  EXPECT_TRUE(can_optimize(Bytes{0x53, 0x48, 0x89, 0xfb, 0x5b, 0xff, 0x60, 0x18}, kFunction,
                           kFunction, {}, {}));
}

TEST(X86JumpTables, AJumpThroughATableOfPointersIsNoCall) {
  // 0x401004: 48 8b 04 c2          mov rax, [rdx+rax*8]   (one of many)
  // 0x401008: ff e0                jmp rax
  auto indexed = can_optimize(Bytes{0x53, 0x48, 0x89, 0xfb, 0x48, 0x8b, 0x04, 0xc2, 0xff, 0xe0},
                              kFunction, kFunction, {}, {});
  ASSERT_FALSE(indexed);
  EXPECT_THAT(indexed.error(), HasSubstr("no pattern dprobe reads"));
  // The register's value from elsewhere (an argument): no pointer seen loaded.
  auto argument =
      can_optimize(Bytes{0x53, 0x48, 0x89, 0xf8, 0x5b, 0xff, 0xe0}, kFunction, kFunction, {}, {});
  ASSERT_FALSE(argument);
}

}  // namespace
}  // namespace dprobe::arch::x86_64
