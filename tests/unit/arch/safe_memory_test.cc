// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The fault-safe copies against real memory: every size and alignment on
// good pages, and real faults on PROT_NONE, read-only and unmapped pages,
// caught by a SIGSEGV/SIGBUS handler that calls fixup_memory_fault as the
// agent's does.
#include "arch/runtime/safe_memory.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "arch/runtime/context.h"
#include "support/memory_faults.h"

namespace dprobe::arch {
namespace {

class SafeMemoryTest : public support::MemoryFaultTest {};

// A few pages in a row, each of which can be made inaccessible.
class Pages {
 public:
  explicit Pages(size_t count) : size_(page_size() * count) {
    void* mapping =
        mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(mapping, MAP_FAILED);
    base_ = static_cast<char*>(mapping);
  }
  ~Pages() { munmap(base_, size_); }
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;

  static size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
  char* page(size_t index) const { return base_ + index * page_size(); }
  void protect(size_t index, int prot) const {
    ASSERT_EQ(mprotect(page(index), page_size(), prot), 0);
  }

 private:
  size_t size_;
  char* base_;
};

uint64_t address(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

std::vector<char> pattern(size_t size) {
  std::vector<char> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i * 7 + 1);
  return bytes;
}

// Sizes around each path of the copy: bytes, words, rep movsb.
const size_t kSizes[] = {0,  1,  2,  3,  4,  5,  6,  7,   8,   9,   15,  16,  17,
                         23, 24, 31, 33, 63, 64, 65, 127, 255, 256, 257, 300, 511};

TEST_F(SafeMemoryTest, ReadsEverySizeAndAlignment) {
  const std::vector<char> source = pattern(600);
  for (size_t size : kSizes) {
    for (size_t src_offset = 0; src_offset < 16; ++src_offset) {
      for (size_t dst_offset = 0; dst_offset < 16; ++dst_offset) {
        std::vector<char> dst(600, '#');
        ASSERT_TRUE(safe_read(dst.data() + dst_offset, address(source.data() + src_offset), size));
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool copied = i >= dst_offset && i < dst_offset + size;
          const char expected = copied ? source[src_offset + i - dst_offset] : '#';
          ASSERT_EQ(dst[i], expected) << size << " " << src_offset << " " << dst_offset << " " << i;
        }
      }
    }
  }
}

TEST_F(SafeMemoryTest, WritesEverySizeAndAlignment) {
  const std::vector<char> source = pattern(600);
  for (size_t size : kSizes) {
    for (size_t dst_offset = 0; dst_offset < 16; ++dst_offset) {
      std::vector<char> dst(600, '#');
      ASSERT_TRUE(safe_write(address(dst.data() + dst_offset), source.data() + 3, size));
      for (size_t i = 0; i < dst.size(); ++i) {
        const bool copied = i >= dst_offset && i < dst_offset + size;
        ASSERT_EQ(dst[i], copied ? source[3 + i - dst_offset] : '#') << size << " " << i;
      }
    }
  }
}

TEST_F(SafeMemoryTest, SizeZeroTouchesNothing) {
  char byte = 'x';
  EXPECT_TRUE(safe_read(&byte, 0, 0));
  EXPECT_TRUE(safe_write(0, &byte, 0));
  EXPECT_EQ(byte, 'x');
}

TEST_F(SafeMemoryTest, NullPointerFaults) {
  uint64_t word = 0;
  EXPECT_FALSE(safe_read(&word, 0, sizeof(word)));
  EXPECT_FALSE(safe_read(&word, 0, 1));
  EXPECT_FALSE(safe_write(0, &word, sizeof(word)));
  char text[16];
  EXPECT_EQ(safe_read_string(text, 0, sizeof(text)), -1);
}

TEST_F(SafeMemoryTest, ProtNonePageFaults) {
  const Pages pages(1);
  pages.protect(0, PROT_NONE);
  for (size_t size : {size_t{1}, size_t{8}, size_t{300}}) {
    std::vector<char> dst(size);
    EXPECT_FALSE(safe_read(dst.data(), address(pages.page(0)), size)) << size;
    EXPECT_FALSE(safe_write(address(pages.page(0)), dst.data(), size)) << size;
  }
}

TEST_F(SafeMemoryTest, ReadRunningIntoProtNonePageFaults) {
  const Pages pages(2);
  pages.protect(1, PROT_NONE);
  // Every path: the byte tail, a word straddling the edge, rep movsb.
  for (size_t size : {size_t{3}, size_t{8}, size_t{16}, size_t{300}, size_t{5000}}) {
    for (size_t before_edge : {size_t{1}, size_t{2}, size_t{7}}) {
      if (before_edge >= size) continue;
      std::vector<char> dst(size);
      const char* start = pages.page(1) - before_edge;
      EXPECT_FALSE(safe_read(dst.data(), address(start), size)) << size << " " << before_edge;
    }
  }
  // Up to the edge and no further reads fine.
  char tail[8];
  EXPECT_TRUE(safe_read(tail, address(pages.page(1) - 8), 8));
}

TEST_F(SafeMemoryTest, UnmappedMemoryFaults) {
  void* mapping = mmap(nullptr, Pages::page_size(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  munmap(mapping, Pages::page_size());
  uint64_t word = 0;
  EXPECT_FALSE(safe_read(&word, address(mapping), sizeof(word)));
}

TEST_F(SafeMemoryTest, MappingPastTheEndOfAFileFaultsWithSigbus) {
  const int fd = memfd_create("dprobe_safe_memory_test", 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(Pages::page_size())), 0);
  void* mapping = mmap(nullptr, 2 * Pages::page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  ASSERT_NE(mapping, MAP_FAILED);
  const uint64_t second_page = address(mapping) + Pages::page_size();
  uint64_t word = 0;
  EXPECT_TRUE(safe_read(&word, second_page - 8, sizeof(word)));
  EXPECT_FALSE(safe_read(&word, second_page, sizeof(word)));
  EXPECT_FALSE(safe_write(second_page, &word, sizeof(word)));
  char text[8];
  EXPECT_EQ(safe_read_string(text, second_page, sizeof(text)), -1);
  munmap(mapping, 2 * Pages::page_size());
}

TEST_F(SafeMemoryTest, NonCanonicalAddressFaults) {
  // A general-protection fault (SIGSEGV with si_addr 0), not a page fault.
  uint64_t word = 0;
  EXPECT_FALSE(safe_read(&word, 0x8000000000000000ull, sizeof(word)));
  char text[8];
  EXPECT_EQ(safe_read_string(text, 0xdead000000000000ull, sizeof(text)), -1);
}

TEST_F(SafeMemoryTest, WriteToReadOnlyPageFaults) {
  const Pages pages(2);
  pages.protect(1, PROT_READ);
  const uint64_t word = 0x1122334455667788;
  EXPECT_FALSE(safe_write(address(pages.page(1)), &word, sizeof(word)));
  EXPECT_FALSE(safe_write(address(pages.page(1) - 4), &word, sizeof(word)));
  // The read-only page itself still reads.
  uint64_t back = 1;
  EXPECT_TRUE(safe_read(&back, address(pages.page(1)), sizeof(back)));
  EXPECT_EQ(back, 0u);
}

TEST_F(SafeMemoryTest, ReadsStringsOfEveryLengthAndAlignment) {
  const Pages pages(1);
  for (size_t length = 0; length < 40; ++length) {
    for (size_t offset = 0; offset < 16; ++offset) {
      std::string text;
      for (size_t i = 0; i < length; ++i) text.push_back(static_cast<char>('a' + i % 26));
      std::memcpy(pages.page(0) + offset, text.c_str(), length + 1);
      std::vector<char> dst(64, '#');
      const int64_t got = safe_read_string(dst.data(), address(pages.page(0) + offset), 64);
      ASSERT_EQ(got, static_cast<int64_t>(length + 1)) << length << " " << offset;
      ASSERT_EQ(std::string(dst.data()), text);
      ASSERT_EQ(dst[length + 1], '#');  // nothing written past the NUL
    }
  }
}

TEST_F(SafeMemoryTest, StringEndingAtThePageEdgeReads) {
  // The word loop may read ahead of the NUL, but never into the next page.
  const Pages pages(2);
  pages.protect(1, PROT_NONE);
  for (size_t length = 0; length < 24; ++length) {
    char* start = pages.page(1) - length - 1;
    std::memset(start, 'z', length);
    start[length] = '\0';
    char dst[64];
    EXPECT_EQ(safe_read_string(dst, address(start), sizeof(dst)), static_cast<int64_t>(length + 1))
        << length;
    EXPECT_EQ(std::string(dst), std::string(length, 'z'));
  }
}

TEST_F(SafeMemoryTest, StringRunningIntoProtNonePageFaults) {
  const Pages pages(2);
  pages.protect(1, PROT_NONE);
  for (size_t length = 1; length < 24; ++length) {
    char* start = pages.page(1) - length;
    std::memset(start, 'q', length);  // no NUL before the edge
    char dst[64];
    EXPECT_EQ(safe_read_string(dst, address(start), sizeof(dst)), -1) << length;
  }
}

TEST_F(SafeMemoryTest, CapacityReachingThePageEdgeDoesNotFault) {
  // Cut by the capacity just before the bad page: the bad byte is never read.
  const Pages pages(2);
  pages.protect(1, PROT_NONE);
  for (size_t length = 1; length < 24; ++length) {
    char* start = pages.page(1) - length;
    std::memset(start, 'k', length);
    std::vector<char> dst(length + 1);
    EXPECT_EQ(safe_read_string(dst.data(), address(start), dst.size()),
              static_cast<int64_t>(length + 1))
        << length;
    EXPECT_EQ(std::string(dst.data()), std::string(length, 'k'));
  }
}

TEST_F(SafeMemoryTest, StringLongerThanCapacityIsCut) {
  const std::string text = "a string a good deal longer than the capacity";
  for (size_t capacity = 1; capacity < text.size(); ++capacity) {
    std::vector<char> dst(capacity + 8, '#');
    EXPECT_EQ(safe_read_string(dst.data(), address(text.c_str()), capacity),
              static_cast<int64_t>(capacity));
    EXPECT_EQ(std::string(dst.data()), text.substr(0, capacity - 1));
    EXPECT_EQ(dst[capacity], '#');
  }
}

TEST_F(SafeMemoryTest, StringFillingTheCapacityExactly) {
  const char text[] = "12345678";
  char dst[9];
  EXPECT_EQ(safe_read_string(dst, address(text), sizeof(dst)), 9);
  EXPECT_STREQ(dst, text);
}

TEST_F(SafeMemoryTest, ZeroCapacityWritesNothing) {
  char dst = '#';
  EXPECT_EQ(safe_read_string(&dst, address("text"), 0), 0);
  EXPECT_EQ(safe_read_string(&dst, 0, 0), 0);  // nothing read either
  EXPECT_EQ(dst, '#');
}

TEST_F(SafeMemoryTest, LongStringCopiesWhole) {
  const std::string text(5000, 'w');
  std::vector<char> dst(6000);
  EXPECT_EQ(safe_read_string(dst.data(), address(text.c_str() + 1), dst.size()), 5000);
  EXPECT_EQ(std::string(dst.data()), text.substr(1));
}

TEST_F(SafeMemoryTest, FaultsElsewhereAreNotClaimed) {
  ucontext_t context = {};
  const uint64_t elsewhere = address(reinterpret_cast<void*>(&support::on_memory_fault));
  set_context_pc(context, elsewhere);
  EXPECT_FALSE(fixup_memory_fault(&context));
  EXPECT_EQ(context_pc(context), elsewhere);
  set_context_pc(context, 0);
  EXPECT_FALSE(fixup_memory_fault(&context));
  EXPECT_FALSE(fixup_memory_fault(nullptr));
}

TEST_F(SafeMemoryTest, FaultsInsideTheCopiesAreClaimed) {
  // Offsets into each routine's copy loop (see the disassembly of the .S),
  // past an endbr64 if there is one.
  struct Case {
    uint64_t start;
    uint64_t offset;
  };
#if defined(__x86_64__)
  constexpr uint64_t kStringLoop = 48;
#else
  constexpr uint64_t kStringLoop = 24;
#endif
  const Case cases[] = {
      {address(reinterpret_cast<const void*>(&dprobe_safe_copy)), 16},
      {address(reinterpret_cast<const void*>(&dprobe_safe_copy_string)), kStringLoop}};
  for (const Case& c : cases) {
    ucontext_t context = {};
    set_context_pc(context, c.start + c.offset);
    EXPECT_TRUE(fixup_memory_fault(&context));
    const uint64_t exit = context_pc(context);
    EXPECT_GT(exit, c.start + c.offset);  // the exits follow the loops
    EXPECT_LT(exit, c.start + 256);
  }
}

TEST_F(SafeMemoryTest, GenuineFaultIsNotSwallowed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        volatile uintptr_t bad = 8;
        *reinterpret_cast<volatile int*>(bad) = 1;
      },
      "");
}

}  // namespace
}  // namespace dprobe::arch
