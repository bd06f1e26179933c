// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// landing_pads() on the tables the compiler and the linker wrote: this test
// binary's own functions, libstdc++ and libc, read where they are loaded.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/landing_pads.h"

// Each function below alone in a section: the linker names its bounds, so
// the test knows the function's extent without trusting the tables.
extern "C" const char __start_dprobe_lp_catches[];
extern "C" const char __stop_dprobe_lp_catches[];
extern "C" const char __start_dprobe_lp_plain[];
extern "C" const char __stop_dprobe_lp_plain[];

namespace dprobe::core {
namespace {

using ::testing::IsEmpty;
using ::testing::Not;

[[gnu::noinline]] void throw_if(int value) {
  if (value != 0) throw std::runtime_error("thrown");
}

// A call that may throw, caught: the compiler keeps a landing pad.
[[gnu::noinline, gnu::section("dprobe_lp_catches")]] int catches(int value) {
  try {
    throw_if(value);
    return value + 1;
  } catch (const std::runtime_error&) {
    return -1;
  }
}

// Nothing to unwind into: an FDE, no LSDA.
[[gnu::noinline, gnu::section("dprobe_lp_plain")]] int plain(int value) { return value * 3 + 1; }

uint64_t address_of(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

std::vector<uint64_t> pads_of(uint64_t begin, uint64_t end) {
  auto tables = unwind_tables_for(begin);
  EXPECT_TRUE(tables) << "no PT_GNU_EH_FRAME for " << begin;
  if (!tables) return {};
  auto pads = landing_pads(*tables, begin, end);
  EXPECT_TRUE(pads) << pads.error();
  return pads ? *pads : std::vector<uint64_t>{};
}

void expect_inside(const std::vector<uint64_t>& pads, uint64_t begin, uint64_t end) {
  for (const uint64_t pad : pads) {
    EXPECT_GE(pad, begin);
    EXPECT_LT(pad, end);
  }
}

TEST(LandingPadsLoaded, ACatchingFunctionsPadsLieInsideIt) {
  const uint64_t begin = address_of(__start_dprobe_lp_catches);
  const uint64_t end = address_of(__stop_dprobe_lp_catches);
  ASSERT_LT(begin, end);
  const auto pads = pads_of(begin, begin + 1);
  EXPECT_THAT(pads, Not(IsEmpty()));
  expect_inside(pads, begin + 1, end);  // never the entry: a pad follows a call
  EXPECT_EQ(pads_of(end - 1, end), pads) << "any byte of the function gives its pads";
  EXPECT_EQ(pads_of(begin, end), pads);
}

TEST(LandingPadsLoaded, TheCatchStillCatches) {
  volatile int one = 1;  // not a constant the compiler could fold
  EXPECT_EQ(catches(one), -1);
  EXPECT_EQ(catches(one - 1), 1);
}

TEST(LandingPadsLoaded, AFunctionWithoutExceptionHandlingHasNone) {
  const uint64_t begin = address_of(__start_dprobe_lp_plain);
  const uint64_t end = address_of(__stop_dprobe_lp_plain);
  ASSERT_LT(begin, end);
  EXPECT_THAT(pads_of(begin, end), IsEmpty());
  volatile int two = 2;
  EXPECT_EQ(plain(two), 7);
}

TEST(LandingPadsLoaded, ALibstdcxxFunctionWithATryBlock) {
  // std::locale::locale(const char*): __try around the named locale's set-up.
  void* constructor = dlsym(RTLD_DEFAULT, "_ZNSt6localeC1EPKc");
  ASSERT_NE(constructor, nullptr) << dlerror();
  Dl_info info{};
  void* entry = nullptr;
  ASSERT_NE(dladdr1(constructor, &info, &entry, RTLD_DL_SYMENT), 0);
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  ASSERT_NE(symbol, nullptr);
  const uint64_t begin = address_of(constructor);
  const auto pads = pads_of(begin, begin + 1);
  EXPECT_THAT(pads, Not(IsEmpty()));
  expect_inside(pads, begin + 1, begin + symbol->st_size);
}

// The executable segments of the object holding an address.
struct Segments {
  uint64_t address = 0;
  std::vector<std::pair<uint64_t, uint64_t>> text;
};

Segments executable_segments(uint64_t address) {
  Segments segments{.address = address, .text = {}};
  dl_iterate_phdr(
      [](dl_phdr_info* object, size_t, void* data) {
        auto* found = static_cast<Segments*>(data);
        std::vector<std::pair<uint64_t, uint64_t>> text;
        bool holds = false;
        for (ElfW(Half) i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = object->dlpi_phdr[i];
          const uint64_t start = object->dlpi_addr + segment.p_vaddr;
          if (segment.p_type != PT_LOAD) continue;
          if (found->address - start < segment.p_memsz) holds = true;
          if ((segment.p_flags & PF_X) != 0) text.emplace_back(start, start + segment.p_memsz);
        }
        if (holds) found->text = text;
        return holds ? 1 : 0;
      },
      &segments);
  return segments;
}

// Every FDE of the object, every LSDA: read without an error, every pad in
// its text. libc's C code has pads too (pthread cleanup built with
// -fexceptions).
void expect_whole_object_reads(const void* inside, const char* name) {
  const Segments segments = executable_segments(address_of(inside));
  ASSERT_THAT(segments.text, Not(IsEmpty())) << name;
  for (const auto& [begin, end] : segments.text) {
    const auto pads = pads_of(begin, end);
    EXPECT_THAT(pads, Not(IsEmpty())) << name;
    expect_inside(pads, begin, end);
  }
}

TEST(LandingPadsLoaded, EveryFunctionOfLibstdcxxLibcAndThisBinary) {
  expect_whole_object_reads(dlsym(RTLD_DEFAULT, "_ZNSt6localeC1EPKc"), "libstdc++");
  expect_whole_object_reads(dlsym(RTLD_DEFAULT, "printf"), "libc");
  expect_whole_object_reads(__start_dprobe_lp_catches, "this test binary");
}

TEST(LandingPadsLoaded, NoObjectNoTables) {
  EXPECT_FALSE(unwind_tables_for(0x10));
  std::vector<char> heap(64);
  EXPECT_FALSE(unwind_tables_for(address_of(heap.data())));
}

}  // namespace
}  // namespace dprobe::core
