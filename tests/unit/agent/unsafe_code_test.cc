// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Code no probe may go on (agent/unsafe_code.h), in this test's process
// with its C library: the agent's own code (here, the test's executable,
// which the agent's parts are linked into), the signal restorer, the C
// library's functions that run with every signal blocked, and the
// functions no return probe may go on (returning twice, acting for their
// caller, the entry points).
#include "agent/unsafe_code.h"

#include <dlfcn.h>
#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/auxv.h>

#include <string>

#include "unit/agent/link_seams.h"

namespace dprobe::agent {
namespace {

using ::testing::HasSubstr;

__attribute__((noinline)) int code_of_the_agent() { return 1; }

class UnsafeCode : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = core::ProbeRegistry::create();
    ASSERT_TRUE(created) << created.error().message;
    registry_.emplace(std::move(*created));
    blacklist_unsafe_code(*registry_);
    libc_ = ::dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    ASSERT_NE(libc_, nullptr);
  }
  void TearDown() override {
    if (libc_ != nullptr) ::dlclose(libc_);
  }

  // Why a probe may not go at `address`, or "" when it may (or is refused
  // for another reason than a blacklist).
  std::string blacklisted_why(uint64_t address) {
    auto added = registry_->add({address, address, 0}, 0);
    if (added || added.error().status != arch::ArmStatus::kBlacklisted) return "";
    return added.error().message;
  }
  uint64_t in_libc(const char* name) { return reinterpret_cast<uint64_t>(::dlsym(libc_, name)); }

  std::optional<core::ProbeRegistry> registry_;
  void* libc_ = nullptr;
};

TEST_F(UnsafeCode, TheAgentsOwnCode) {
  EXPECT_EQ(blacklisted_why(reinterpret_cast<uint64_t>(&code_of_the_agent)),
            "the dprobe agent's own code");
}

TEST_F(UnsafeCode, TheSignalRestorer) {
  const uint64_t restorer = test::signal_restorer_stand_in();
  ASSERT_NE(restorer, 0u);
  EXPECT_EQ(blacklisted_why(restorer), "the signal return trampoline");
  EXPECT_EQ(blacklisted_why(restorer + 15), "the signal return trampoline");
  EXPECT_EQ(blacklisted_why(restorer + 16), "");
}

TEST_F(UnsafeCode, TheCLibrarysFunctionsThatRunWithEverySignalBlocked) {
  for (const char* name : {"clone", "getpid", "madvise", "munmap", "_exit", "setsid", "dup2"}) {
    const uint64_t function = in_libc(name);
    ASSERT_NE(function, 0u) << name;
    EXPECT_THAT(blacklisted_why(function), HasSubstr("every signal blocked")) << name;
  }
}

TEST_F(UnsafeCode, NotTheCLibrarysOtherFunctions) {
  for (const char* name : {"write", "getppid", "mmap"}) {
    const uint64_t function = in_libc(name);
    ASSERT_NE(function, 0u) << name;
    EXPECT_EQ(blacklisted_why(function), "") << name;
  }
}

TEST_F(UnsafeCode, TheLoaderFreeingAThreadsTls) {
  const auto function = reinterpret_cast<uint64_t>(::dlsym(RTLD_DEFAULT, "_dl_deallocate_tls"));
  if (function == 0) GTEST_SKIP() << "the loader does not export _dl_deallocate_tls";
  EXPECT_THAT(blacklisted_why(function), HasSubstr("every signal blocked"));
}

// Its whole symbol, to its last byte.
TEST_F(UnsafeCode, FunctionsThatReturnTwiceTakeNoReturnProbe) {
  for (const char* name : {"setjmp", "_setjmp", "__sigsetjmp", "getcontext", "vfork"}) {
    const uint64_t function = in_libc(name);
    ASSERT_NE(function, 0u) << name;
    const char* why = return_probe_refusal(function);
    ASSERT_NE(why, nullptr) << name;
    EXPECT_THAT(why, HasSubstr("returns twice")) << name;
  }
  Dl_info info;
  void* entry = nullptr;
  const uint64_t setjmp = in_libc("setjmp");
  ASSERT_NE(::dladdr1(reinterpret_cast<void*>(setjmp), &info, &entry, RTLD_DL_SYMENT), 0);
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  ASSERT_GT(symbol->st_size, 0u);
  EXPECT_NE(return_probe_refusal(setjmp + symbol->st_size - 1), nullptr);
}

TEST_F(UnsafeCode, FunctionsThatActForTheirCallerTakeNoReturnProbe) {
  for (const char* name : {"dlopen", "dlsym", "dl_iterate_phdr"}) {
    const uint64_t function = in_libc(name);
    ASSERT_NE(function, 0u) << name;
    const char* why = return_probe_refusal(function);
    ASSERT_NE(why, nullptr) << name;
    EXPECT_THAT(why, HasSubstr("on behalf of its caller")) << name;
  }
}

// The kernel jumps to them: the stack holds argc where a return address
// would be.
TEST_F(UnsafeCode, EntryPointsTakeNoReturnProbe) {
  const char* program = return_probe_refusal(::getauxval(AT_ENTRY));
  ASSERT_NE(program, nullptr);
  EXPECT_THAT(program, HasSubstr("entry point"));
  const uint64_t loader = ::getauxval(AT_BASE);
  ASSERT_NE(loader, 0u);
  const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(loader);
  const char* loaders = return_probe_refusal(loader + header->e_entry);
  ASSERT_NE(loaders, nullptr);
  EXPECT_THAT(loaders, HasSubstr("entry point"));
}

TEST_F(UnsafeCode, OtherFunctionsTakeReturnProbes) {
  for (const char* name : {"malloc", "write", "getpid"}) {
    EXPECT_EQ(return_probe_refusal(in_libc(name)), nullptr) << name;
  }
  EXPECT_EQ(return_probe_refusal(reinterpret_cast<uint64_t>(&code_of_the_agent)), nullptr);
}

}  // namespace
}  // namespace dprobe::agent
