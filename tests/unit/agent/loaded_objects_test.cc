// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The objects the agent reports as loaded (agent/loaded_objects.h), in
// this test's own process: the executable by its real path and first, the
// libraries with their file identity and executable segments, none for
// the vDSO, one loaded late once it is, and the text range of the object
// holding an address.
#include "agent/loaded_objects.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <string>
#include <vector>

namespace dprobe::agent {
namespace {

// Code and data of this test's executable.
__attribute__((noinline)) int code_of_the_test() { return 42; }
int data_of_the_test = 7;

uint64_t address_of(const void* pointer) { return reinterpret_cast<uint64_t>(pointer); }
uint64_t address_of(int (*function)()) { return reinterpret_cast<uint64_t>(function); }

bool in_text(const MappedObject& mapped, uint64_t address) {
  return std::any_of(mapped.text.begin(), mapped.text.end(), [&](const TextRange& range) {
    return address >= range.begin && address < range.end;
  });
}

const MappedObject* holding(const std::vector<MappedObject>& objects, uint64_t address) {
  for (const MappedObject& mapped : objects) {
    if (in_text(mapped, address)) return &mapped;
  }
  return nullptr;
}

const MappedObject* named(const std::vector<MappedObject>& objects, const std::string& part) {
  for (const MappedObject& mapped : objects) {
    if (mapped.object.path.find(part) != std::string::npos) return &mapped;
  }
  return nullptr;
}

std::string own_executable() {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer));
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

TEST(MappedObjects, TheExecutableFirstByItsRealPath) {
  const std::vector<MappedObject> objects = mapped_objects();
  ASSERT_FALSE(objects.empty());
  const protocol::LoadedObject& main = objects[0].object;
  EXPECT_TRUE(main.is_main);
  EXPECT_EQ(main.path, own_executable());
  struct stat st {};
  ASSERT_EQ(::stat(main.path.c_str(), &st), 0);
  EXPECT_EQ(main.dev, st.st_dev);
  EXPECT_EQ(main.ino, st.st_ino);
  EXPECT_TRUE(in_text(objects[0], address_of(code_of_the_test)));
  for (size_t i = 1; i < objects.size(); ++i) EXPECT_FALSE(objects[i].object.is_main) << i;
}

TEST(MappedObjects, ALibraryWithItsIdentityAndItsCode) {
  const std::vector<MappedObject> objects = mapped_objects();
  const MappedObject* libc = holding(objects, address_of(reinterpret_cast<const void*>(&::getpid)));
  ASSERT_NE(libc, nullptr) << "no object holds getpid";
  EXPECT_NE(libc->object.path.find("libc.so"), std::string::npos) << libc->object.path;
  EXPECT_NE(libc->object.bias, 0u);
  struct stat st {};
  ASSERT_EQ(::stat(libc->object.path.c_str(), &st), 0);
  EXPECT_EQ(libc->object.dev, st.st_dev);
  EXPECT_EQ(libc->object.ino, st.st_ino);
}

// Executable segments only, each [begin, end) and not empty.
TEST(MappedObjects, TheTextIsTheExecutableSegmentsOnly) {
  const std::vector<MappedObject> objects = mapped_objects();
  for (const MappedObject& mapped : objects) {
    EXPECT_FALSE(mapped.text.empty()) << mapped.object.path;
    for (const TextRange& range : mapped.text) EXPECT_LT(range.begin, range.end);
  }
  EXPECT_EQ(holding(objects, address_of(&data_of_the_test)), nullptr);
}

// The loader names the vDSO as no file is named: no file, no object.
TEST(MappedObjects, NoneForTheVdso) {
  for (const MappedObject& mapped : mapped_objects()) {
    EXPECT_EQ(mapped.object.path.find("vdso"), std::string::npos) << mapped.object.path;
    EXPECT_FALSE(mapped.object.path.empty());
  }
}

TEST(MappedObjects, ALibraryLoadedLateOnceItIsLoaded) {
  constexpr const char* kLibrary = "libanl.so.1";  // glibc's, loaded by nothing here
  ASSERT_EQ(named(mapped_objects(), kLibrary), nullptr) << "already loaded";
  void* library = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) GTEST_SKIP() << "no " << kLibrary << ": " << ::dlerror();
  const std::vector<MappedObject> loaded = mapped_objects();
  ::dlclose(library);
  const MappedObject* late = named(loaded, kLibrary);
  ASSERT_NE(late, nullptr);
  EXPECT_FALSE(late->object.is_main);
  EXPECT_NE(late->object.bias, 0u);
  EXPECT_FALSE(late->text.empty());
}

TEST(LoadedObjects, TheMappedObjectsInTheirOrder) {
  const std::vector<MappedObject> mapped = mapped_objects();
  const std::vector<protocol::LoadedObject> loaded = loaded_objects();
  ASSERT_EQ(loaded.size(), mapped.size());
  for (size_t i = 0; i < loaded.size(); ++i) {
    EXPECT_EQ(loaded[i].path, mapped[i].object.path);
    EXPECT_EQ(loaded[i].bias, mapped[i].object.bias);
    EXPECT_EQ(loaded[i].is_main, mapped[i].object.is_main);
  }
}

// From the lowest executable segment's start to the highest's end.
TEST(TextRangeOf, CoversTheExecutableSegmentsOfTheObjectHoldingTheAddress) {
  const std::vector<MappedObject> objects = mapped_objects();
  const MappedObject& main = objects[0];
  TextRange expected{UINT64_MAX, 0};
  for (const TextRange& range : main.text) {
    expected.begin = std::min(expected.begin, range.begin);
    expected.end = std::max(expected.end, range.end);
  }
  const TextRange of_code =
      text_range_of(reinterpret_cast<const void*>(address_of(code_of_the_test)));
  EXPECT_EQ(of_code.begin, expected.begin);
  EXPECT_EQ(of_code.end, expected.end);
  const TextRange of_data = text_range_of(&data_of_the_test);
  EXPECT_EQ(of_data.begin, expected.begin) << "data: the object's text all the same";
  EXPECT_EQ(of_data.end, expected.end);
}

TEST(TextRangeOf, NothingForAnAddressOfNoObject) {
  const auto heap = std::make_unique<int>(1);
  const TextRange of_heap = text_range_of(heap.get());
  EXPECT_EQ(of_heap.begin, 0u);
  EXPECT_EQ(of_heap.end, 0u);
  int on_stack = 0;
  const TextRange of_stack = text_range_of(&on_stack);
  EXPECT_EQ(of_stack.begin, 0u);
  EXPECT_EQ(of_stack.end, 0u);
}

}  // namespace
}  // namespace dprobe::agent
