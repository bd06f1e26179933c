// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Writing this very test binary's read-only text through /proc/self/mem:
// the new bytes read back and run, the page stays r-x all along, and the
// old bytes restored make the function work as before.
#include "core/text_patcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "arch/runtime/safe_memory.h"
#include "support/memory_faults.h"

// 16 NOPs, then returns 42. Patched below to return something else.
extern "C" int dprobe_test_patch_target();
__asm__(R"(
  .pushsection .text
  .p2align 4
  .globl dprobe_test_patch_target
  .hidden dprobe_test_patch_target
  .type dprobe_test_patch_target, @function
dprobe_test_patch_target:
  .byte 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90   # nop x 8
  .byte 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90   # nop x 8
  .byte 0xb8, 0x2a, 0x00, 0x00, 0x00                     # mov eax, 42
  .byte 0xc3                                             # ret
  .size dprobe_test_patch_target, .-dprobe_test_patch_target
  .popsection
)");

namespace dprobe::core {
namespace {

using ::testing::HasSubstr;

constexpr size_t kTargetBytes = 22;

uint64_t target_address() { return reinterpret_cast<uintptr_t>(&dprobe_test_patch_target); }

std::vector<uint8_t> bytes_at(uint64_t address, size_t size) {
  const auto* first = reinterpret_cast<const uint8_t*>(address);
  return {first, first + size};
}

// The permissions /proc/self/maps shows for the mapping holding `address`,
// as "r-xp"; empty if no mapping holds it.
std::string permissions_of(uint64_t address) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uint64_t begin = 0;
    uint64_t end = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %4s", &begin, &end, perms) != 3) {
      continue;
    }
    if (address >= begin && address < end) return perms;
  }
  return {};
}

// An address nothing is mapped at.
uint64_t unmapped_address() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapping = mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(mapping, MAP_FAILED);
  munmap(mapping, page);
  return reinterpret_cast<uintptr_t>(mapping);
}

TextPatcher open_patcher() {
  auto patcher = TextPatcher::open();
  if (!patcher) {
    ADD_FAILURE() << patcher.error().message;
    std::abort();
  }
  return std::move(*patcher);
}

// Puts the original bytes back even when an assertion fails midway.
class RestoreTarget {
 public:
  RestoreTarget() : original_(bytes_at(target_address(), kTargetBytes)) {}
  ~RestoreTarget() {
    if (bytes_at(target_address(), kTargetBytes) == original_) return;
    auto patcher = TextPatcher::open();
    if (!patcher || !patcher->write(target_address(), original_)) std::abort();
  }
  const std::vector<uint8_t>& original() const { return original_; }

 private:
  std::vector<uint8_t> original_;
};

TEST(TextPatcher, TargetIsTheExpectedReadOnlyCode) {
  EXPECT_EQ(dprobe_test_patch_target(), 42);
  const std::vector<uint8_t> expected = {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
                                         0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
                                         0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3};
  EXPECT_EQ(bytes_at(target_address(), kTargetBytes), expected);
  EXPECT_EQ(permissions_of(target_address()), "r-xp");
}

TEST(TextPatcher, ReadGivesTheBytesInMemory) {
  const TextPatcher patcher = open_patcher();
  std::vector<uint8_t> read(kTargetBytes);
  ASSERT_TRUE(patcher.read(target_address(), read));
  EXPECT_EQ(read, bytes_at(target_address(), kTargetBytes));
}

TEST(TextPatcher, WritesReadOnlyTextWithoutMakingItWritable) {
  RestoreTarget restore;
  const TextPatcher patcher = open_patcher();
  ASSERT_EQ(permissions_of(target_address()), "r-xp");

  // mov eax, 7; ret  over the first NOPs.
  const std::vector<uint8_t> patch = {0xb8, 0x07, 0x00, 0x00, 0x00, 0xc3};
  auto written = patcher.write(target_address(), patch);
  ASSERT_TRUE(written) << written.error().message;

  std::vector<uint8_t> read(patch.size());
  ASSERT_TRUE(patcher.read(target_address(), read));
  EXPECT_EQ(read, patch);
  EXPECT_EQ(bytes_at(target_address(), patch.size()), patch);  // the process sees them too
  // The bytes after the patch are untouched.
  EXPECT_EQ(bytes_at(target_address() + patch.size(), kTargetBytes - patch.size()),
            std::vector<uint8_t>(restore.original().begin() + 6, restore.original().end()));
  EXPECT_EQ(permissions_of(target_address()), "r-xp");
  EXPECT_EQ(dprobe_test_patch_target(), 7);  // the new code runs

  written = patcher.write(target_address(), restore.original());
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(bytes_at(target_address(), kTargetBytes), restore.original());
  EXPECT_EQ(permissions_of(target_address()), "r-xp");
  EXPECT_EQ(dprobe_test_patch_target(), 42);
}

TEST(TextPatcher, WritesOneByteAtATime) {
  RestoreTarget restore;
  const TextPatcher patcher = open_patcher();
  // Turn "mov eax, 42" into "mov eax, 43" by its immediate's low byte only.
  const uint8_t imm = 0x2b;
  ASSERT_TRUE(patcher.write(target_address() + 17, {&imm, 1}));
  EXPECT_EQ(dprobe_test_patch_target(), 43);
  ASSERT_TRUE(patcher.write(target_address(), restore.original()));
  EXPECT_EQ(dprobe_test_patch_target(), 42);
}

TEST(TextPatcher, TextStaysUnwritableToOrdinaryStores) {
  RestoreTarget restore;
  const TextPatcher patcher = open_patcher();
  {
    support::MemoryFaultHandler handler;
    ASSERT_TRUE(handler.installed());
    const uint8_t int3 = 0xcc;
    ASSERT_TRUE(patcher.write(target_address(), {&int3, 1}));
    // A store by the program itself still faults: no page was made writable.
    const uint8_t nop = 0x90;
    EXPECT_FALSE(arch::safe_write(target_address(), &nop, 1));
    EXPECT_EQ(bytes_at(target_address(), 1), std::vector<uint8_t>{0xcc});
  }
  ASSERT_TRUE(patcher.write(target_address(), restore.original()));
  EXPECT_EQ(dprobe_test_patch_target(), 42);
}

TEST(TextPatcher, WritesAcrossAPageBoundaryOfAnExecutableMapping) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapping =
      mmap(nullptr, 2 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  const uint64_t boundary = reinterpret_cast<uintptr_t>(mapping) + page;
  const TextPatcher patcher = open_patcher();
  const std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(patcher.write(boundary - 4, bytes));
  std::vector<uint8_t> read(bytes.size());
  ASSERT_TRUE(patcher.read(boundary - 4, read));
  EXPECT_EQ(read, bytes);
  EXPECT_EQ(bytes_at(boundary - 4, bytes.size()), bytes);
  EXPECT_EQ(permissions_of(boundary - 1), "r-xp");
  EXPECT_EQ(permissions_of(boundary), "r-xp");
  munmap(mapping, 2 * page);
}

TEST(TextPatcher, UnmappedAddressesFailWithTheAddress) {
  const TextPatcher patcher = open_patcher();
  const uint64_t address = unmapped_address();
  char hex[32];
  std::snprintf(hex, sizeof(hex), "0x%" PRIx64, address);

  const uint8_t byte = 0xcc;
  auto written = patcher.write(address, {&byte, 1});
  ASSERT_FALSE(written);
  EXPECT_THAT(written.error().message, HasSubstr("writing code"));
  EXPECT_THAT(written.error().message, HasSubstr(hex));

  uint8_t out[4];
  auto read = patcher.read(address, out);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("reading code"));
  EXPECT_THAT(read.error().message, HasSubstr(hex));
}

TEST(TextPatcher, MovedPatcherKeepsWorking) {
  TextPatcher first = open_patcher();
  TextPatcher second(std::move(first));
  std::vector<uint8_t> read(kTargetBytes);
  ASSERT_TRUE(second.read(target_address(), read));
  EXPECT_EQ(read, bytes_at(target_address(), kTargetBytes));
}

}  // namespace
}  // namespace dprobe::core
