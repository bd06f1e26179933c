// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/own_loads.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <initializer_list>
#include <string>

namespace dprobe::cli {
namespace {

constexpr const char* kAgent = "/usr/lib/dprobe/libdprobe_agent.so";

StartupCall call(uint64_t nr, std::initializer_list<uint64_t> args, std::string path = {}) {
  StartupCall c;
  c.nr = nr;
  size_t i = 0;
  for (uint64_t arg : args) c.args[i++] = arg;
  c.path = std::move(path);
  return c;
}

// One call at its entry and its exit: whether it was dprobe's.
bool made(OwnLoads& own, const StartupCall& c, int64_t result) {
  const bool is_own = own.is_own(c);
  if (is_own) own.made(c, result);
  return is_own;
}

// The loader's calls for one object, as strace shows them for the agent.
TEST(OwnLoads, TheAgentsLoadIsDprobesFromOpenToProtect) {
  OwnLoads own({kAgent, "libZydis.so.4.0"});
  const uint64_t base = 0x7f0000000000;
  EXPECT_TRUE(made(own, call(SYS_openat, {0, 0, 0}, kAgent), 3));
  EXPECT_TRUE(made(own, call(SYS_read, {3, 0, 832}), 832));
  EXPECT_TRUE(made(own, call(SYS_newfstatat, {3, 0, 0, 0x1000}), 0));
  EXPECT_TRUE(made(own, call(SYS_mmap, {0, 0x18e000, PROT_READ, MAP_PRIVATE, 3, 0}),
                   static_cast<int64_t>(base)));
  EXPECT_TRUE(made(own,
                   call(SYS_mmap, {base + 0x9000, 0x86000, PROT_READ | PROT_EXEC,
                                   MAP_PRIVATE | MAP_FIXED, 3, 0x9000}),
                   static_cast<int64_t>(base + 0x9000)));
  // Its .bss: anonymous, but inside the range the object reserved.
  EXPECT_TRUE(
      made(own,
           call(SYS_mmap, {base + 0xb7000, 0xd7000, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, static_cast<uint64_t>(-1), 0}),
           static_cast<int64_t>(base + 0xb7000)));
  EXPECT_TRUE(made(own, call(SYS_close, {3}), 0));
  EXPECT_TRUE(made(own, call(SYS_mprotect, {base + 0xae000, 0x4000, PROT_READ}), 0));
  // Descriptor 3 is the next object's now.
  EXPECT_FALSE(made(own, call(SYS_read, {3, 0, 832}), 832));
}

TEST(OwnLoads, TheProgramsOwnCallsAreNot) {
  OwnLoads own({kAgent, "libZydis.so.4.0"});
  EXPECT_FALSE(made(own, call(SYS_openat, {0, 0, 0}, "/lib/x86_64-linux-gnu/libc.so.6"), 3));
  EXPECT_FALSE(made(own, call(SYS_read, {3, 0, 832}), 832));
  EXPECT_FALSE(made(own,
                    call(SYS_mmap, {0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                    static_cast<uint64_t>(-1), 0}),
                    0x7f0000100000));
  EXPECT_FALSE(made(own, call(SYS_mprotect, {0x7f0000100000, 4096, PROT_READ}), 0));
  EXPECT_FALSE(made(own, call(SYS_faccessat, {0, 0, 4}, "/etc/ld.so.preload"), -2));
}

TEST(OwnLoads, ALibraryOnlyTheAgentNeedsIsKnownByItsFileName) {
  OwnLoads own({kAgent, "libZydis.so.4.0"});
  EXPECT_TRUE(made(own, call(SYS_openat, {0, 0, 0}, "/lib/x86_64-linux-gnu/libZydis.so.4.0"), 4));
  EXPECT_TRUE(made(own, call(SYS_close, {4}), 0));
  // Another directory's file of the same path elsewhere is not the agent.
  EXPECT_FALSE(made(own, call(SYS_openat, {0, 0, 0}, "/opt/other/libdprobe_agent.so"), 4));
}

TEST(OwnLoads, AFailedOpenLeavesNoDescriptor) {
  OwnLoads own({kAgent});
  EXPECT_TRUE(made(own, call(SYS_openat, {0, 0, 0}, kAgent), -2));
  EXPECT_FALSE(made(own, call(SYS_read, {static_cast<uint64_t>(-2), 0, 832}), -9));
}

}  // namespace
}  // namespace dprobe::cli
