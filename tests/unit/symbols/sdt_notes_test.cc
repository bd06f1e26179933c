// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// ElfFile::sdt_notes() on a program gcc built with <sys/sdt.h>
// (fixtures/sdt.c) and on the host's libstdc++, whose points have no
// semaphore; checked against what readelf -n prints for the same files.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "fixture_build.h"
#include "symbols/elf_file.h"
#include "symbols/search_paths.h"

namespace dprobe::symbols {
namespace {

using test_support::fixture;

const SdtNote* find_note(const std::vector<SdtNote>& notes, std::string_view name) {
  for (const SdtNote& note : notes) {
    if (note.name == name) return &note;
  }
  return nullptr;
}

// readelf's "Location: 0x..., Base: ..., Semaphore: 0x..." of the note NAME.
std::string readelf_line(const std::string& path, const std::string& name) {
  const std::string command = "readelf -n " + path + " | grep -A1 'Name: " + name + "$' | tail -1";
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) out += buffer;
    ::pclose(pipe);
  }
  return out;
}

std::string hex16(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

TEST(SdtNotes, ReadsEachPointOfAProgram) {
  const auto& fx = fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  auto elf = ElfFile::open(fx.sdt);
  ASSERT_TRUE(elf) << elf.error().detail;
  const std::vector<SdtNote> notes = elf->sdt_notes();
  ASSERT_EQ(notes.size(), 5u);
  for (const SdtNote& note : notes) {
    EXPECT_EQ(note.provider, "fix");
    const std::string line = readelf_line(fx.sdt, note.name);
    EXPECT_NE(line.find("Location: " + hex16(note.address)), std::string::npos) << line;
    EXPECT_NE(line.find("Semaphore: " + hex16(note.semaphore)), std::string::npos) << line;
    EXPECT_TRUE(elf->is_executable_vaddr(note.address)) << note.name;
    EXPECT_TRUE(elf->is_writable_vaddr(note.semaphore, 2)) << note.name;
  }
  const SdtNote* regs = find_note(notes, "regs");
  ASSERT_NE(regs, nullptr);
  EXPECT_EQ(regs->arguments, "-4@%edi -8@%rsi");
  const SdtNote* constant = find_note(notes, "constant");
  ASSERT_NE(constant, nullptr);
  EXPECT_EQ(constant->arguments, "-4@$42");
}

TEST(SdtNotes, PointsWithoutSemaphoreHaveNone) {
  const std::string path = "/usr/lib/" + std::string(host_multiarch()) + "/libstdc++.so.6";
  auto elf = ElfFile::open(path);
  if (!elf) GTEST_SKIP() << "no " << path;
  const std::vector<SdtNote> notes = elf->sdt_notes();
  const SdtNote* thrown = find_note(notes, "throw");
  ASSERT_NE(thrown, nullptr) << path << " has no libstdcxx:throw";
  EXPECT_EQ(thrown->provider, "libstdcxx");
  EXPECT_EQ(thrown->semaphore, 0u);
  EXPECT_NE(readelf_line(path, "throw").find("Location: " + hex16(thrown->address)),
            std::string::npos);
}

TEST(SdtNotes, AFileWithoutNotesHasNoPoints) {
  const auto& fx = fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  auto elf = ElfFile::open(fx.app);
  ASSERT_TRUE(elf);
  EXPECT_TRUE(elf->sdt_notes().empty());
  EXPECT_FALSE(elf->is_writable_vaddr(0, 2));
}

}  // namespace
}  // namespace dprobe::symbols
