// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The captured syscall table: lookups, globs, and the format files it
// writes, compared with every one of this machine's tracefs when readable.
#include "syscalls/syscall_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace dprobe::syscalls {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr arch::Isa kX86 = arch::Isa::kX86_64;
constexpr const char* kTracefsEvents = "/sys/kernel/tracing/events";

std::vector<std::string> names_of(const std::vector<const SyscallInfo*>& infos) {
  std::vector<std::string> names;
  for (const SyscallInfo* info : infos) names.emplace_back(info->name);
  return names;
}

TEST(SyscallTable, FindsByEventName) {
  const SyscallInfo* openat = find_syscall(kX86, "openat");
  ASSERT_NE(openat, nullptr);
  EXPECT_EQ(openat->nr, 257);
  EXPECT_EQ(openat->arg_count, 4);
  EXPECT_STREQ(openat->args[1].type, "const char *");
  EXPECT_STREQ(openat->args[1].name, "filename");
  EXPECT_STREQ(openat->args[3].type, "umode_t");
  // The event names the kernel function: stat (4) is sys_enter_newstat.
  ASSERT_NE(find_syscall(kX86, "newstat"), nullptr);
  EXPECT_EQ(find_syscall(kX86, "newstat")->nr, 4);
  EXPECT_EQ(find_syscall(kX86, "stat"), nullptr);
  EXPECT_EQ(find_syscall(kX86, "sys_enter_openat"), nullptr);
  EXPECT_EQ(find_syscall(kX86, ""), nullptr);
}

TEST(SyscallTable, FindsByNumber) {
  ASSERT_NE(syscall_by_nr(kX86, 0), nullptr);
  EXPECT_STREQ(syscall_by_nr(kX86, 0)->name, "read");
  EXPECT_STREQ(syscall_by_nr(kX86, 257)->name, "openat");
  EXPECT_STREQ(syscall_by_nr(kX86, 166)->name, "umount");  // umount2 in the headers
  // Newer than the installed headers: numbered by the capture script's list.
  EXPECT_STREQ(syscall_by_nr(kX86, 462)->name, "mseal");
  EXPECT_STREQ(syscall_by_nr(kX86, 336)->name, "uprobe");
  EXPECT_EQ(syscall_by_nr(kX86, 134), nullptr);  // uselib: no event
  EXPECT_EQ(syscall_by_nr(kX86, -1), nullptr);
  EXPECT_EQ(syscall_by_nr(kX86, 1L << 40), nullptr);
}

TEST(SyscallTable, GlobsMatchTheBareNameInNumberOrder) {
  EXPECT_THAT(
      names_of(match_syscalls(kX86, "open*")),
      ElementsAre("open", "openat", "open_by_handle_at", "open_tree", "openat2", "open_tree_attr"));
  EXPECT_THAT(names_of(match_syscalls(kX86, "get?id")),
              ElementsAre("getpid", "getuid", "getgid", "getsid", "gettid"));
  EXPECT_THAT(names_of(match_syscalls(kX86, "openat")), ElementsAre("openat"));
  EXPECT_EQ(match_syscalls(kX86, "*").size(), syscall_table(kX86).size());
  EXPECT_THAT(match_syscalls(kX86, "sys_enter_open*"), IsEmpty());
  EXPECT_THAT(match_syscalls(kX86, "no_such_call*"), IsEmpty());
}

TEST(SyscallTable, ArgumentCounts) {
  EXPECT_EQ(find_syscall(kX86, "getppid")->arg_count, 0);
  EXPECT_EQ(find_syscall(kX86, "close")->arg_count, 1);
  EXPECT_EQ(find_syscall(kX86, "read")->arg_count, 3);
  EXPECT_EQ(find_syscall(kX86, "mmap")->arg_count, 6);
  for (const SyscallInfo& info : syscall_table(kX86)) {
    ASSERT_LE(info.arg_count, 6) << info.name;
    for (size_t i = 0; i < 6; ++i) {
      const bool used = i < info.arg_count;
      EXPECT_EQ(info.args[i].type != nullptr, used) << info.name << " arg " << i;
      EXPECT_EQ(info.args[i].name != nullptr, used) << info.name << " arg " << i;
    }
  }
}

TEST(SyscallTable, SortedByNumberAndUnique) {
  const std::span<const SyscallInfo> table = syscall_table(kX86);
  ASSERT_GT(table.size(), 300u);
  std::set<std::string_view> names;
  for (size_t i = 0; i < table.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(table[i - 1].nr, table[i].nr) << table[i].name;
    }
    EXPECT_TRUE(names.insert(table[i].name).second) << table[i].name;
    EXPECT_EQ(syscall_by_nr(kX86, table[i].nr), &table[i]);
    EXPECT_EQ(find_syscall(kX86, table[i].name), &table[i]);
  }
}

TEST(SyscallTable, Arm64HasNoCapturedTableYet) {
  EXPECT_TRUE(syscall_table(arch::Isa::kArm64).empty());
  EXPECT_EQ(find_syscall(arch::Isa::kArm64, "openat"), nullptr);
  EXPECT_EQ(syscall_by_nr(arch::Isa::kArm64, 56), nullptr);
  EXPECT_THAT(match_syscalls(arch::Isa::kArm64, "*"), IsEmpty());
}

// The shapes, written out once, for machines whose tracefs the test below
// cannot read.
TEST(SyscallFormat, EnterWithArguments) {
  EXPECT_EQ(syscall_format(*find_syscall(kX86, "close"), false, 7),
            "name: sys_enter_close\nID: 7\nformat:\n"
            "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
            "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
            "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
            "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
            "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
            "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n\n"
            "print fmt: \"fd: 0x%08lx\", ((unsigned long)(REC->fd))\n");
  const std::string openat = syscall_format(*find_syscall(kX86, "openat"), false, 782);
  EXPECT_NE(openat.find("\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n"),
            std::string::npos);
  EXPECT_NE(openat.find("print fmt: \"dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, mode: "
                        "0x%08lx\", ((unsigned long)(REC->dfd)), ((unsigned "
                        "long)(REC->filename)), ((unsigned long)(REC->flags)), ((unsigned "
                        "long)(REC->mode))\n"),
            std::string::npos);
}

TEST(SyscallFormat, EnterWithoutArgumentsAndExit) {
  const std::string common =
      "format:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
      "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
      "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n";
  const SyscallInfo& getppid = *find_syscall(kX86, "getppid");
  EXPECT_EQ(syscall_format(getppid, false, 305),
            "name: sys_enter_getppid\nID: 305\n" + common + "\nprint fmt: \"\"\n");
  EXPECT_EQ(syscall_format(getppid, true, 304),
            "name: sys_exit_getppid\nID: 304\n" + common +
                "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n"
                "print fmt: \"0x%lx\", REC->ret\n");
}

TEST(SyscallFormat, RawSyscalls) {
  const std::string enter = raw_syscall_format(false, 443);
  EXPECT_EQ(enter.substr(0, 30), "name: sys_enter\nID: 443\nformat");
  EXPECT_NE(enter.find("\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
                       "\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n\n"
                       "print fmt: \"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, "
                       "REC->args[0], REC->args[1], REC->args[2], REC->args[3], "
                       "REC->args[4], REC->args[5]\n"),
            std::string::npos);
  const std::string exit = raw_syscall_format(true, 442);
  EXPECT_EQ(exit.substr(0, 28), "name: sys_exit\nID: 442\nforma");
  EXPECT_NE(exit.find("\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
                      "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n"
                      "print fmt: \"NR %ld = %ld\", REC->id, REC->ret\n"),
            std::string::npos);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The number on a format file's ID: line; the kernel assigns them at boot.
uint32_t event_id(const std::string& format) {
  const size_t at = format.find("\nID: ");
  if (at == std::string::npos) return 0;
  return static_cast<uint32_t>(std::stoul(format.substr(at + 5)));
}

// The kernel release the table was captured from: its header's "of Linux X (".
std::string captured_release() {
  const fs::path data = fs::path(__FILE__).parent_path() / "../../../data/syscalls/x86_64.inc";
  const std::string text = read_text(data);
  const size_t at = text.find("of Linux ");
  if (at == std::string::npos) return {};
  const size_t end = text.find(' ', at + 9);
  return text.substr(at + 9, end == std::string::npos ? end : end - (at + 9));
}

std::string running_release() {
  utsname name{};
  return ::uname(&name) == 0 ? name.release : "";
}

// Why the machine's formats cannot be compared here, or "" when they can.
// Another kernel has other system calls: the table is of the one it was
// captured from, and this test checks exactly that one.
std::string tracefs_unreadable() {
  if (arch::host_isa() != kX86) return "no captured table for this host's ISA";
  if (const std::string captured = captured_release(); captured != running_release()) {
    return "this is Linux " + running_release() + ", the table is of Linux " + captured;
  }
  const fs::path probe = fs::path(kTracefsEvents) / "syscalls/sys_enter_openat/format";
  if (!std::ifstream(probe)) return "cannot read " + probe.string() + " (root? tracefs mounted?)";
  return "";
}

// The proof that the data is the kernel's: every format file of this
// machine's syscalls events, enter and exit, byte for byte.
TEST(SyscallFormat, MatchesEveryFormatOfThisKernel) {
  if (const std::string why = tracefs_unreadable(); !why.empty()) GTEST_SKIP() << why;
  const std::string refresh = "; refresh with scripts/capture-syscall-formats.sh";
  std::set<std::string> seen;
  for (const fs::directory_entry& dir :
       fs::directory_iterator(fs::path(kTracefsEvents) / "syscalls")) {
    const std::string event = dir.path().filename().string();
    const bool exit = event.starts_with("sys_exit_");
    if (!exit && !event.starts_with("sys_enter_")) continue;  // enable, filter
    const std::string name = event.substr(exit ? 9 : 10);
    const SyscallInfo* info = find_syscall(kX86, name);
    if (!info) {
      ADD_FAILURE() << event << " is not in the table" << refresh;
      continue;
    }
    const std::string kernel = read_text(dir.path() / "format");
    EXPECT_EQ(syscall_format(*info, exit, event_id(kernel)), kernel) << event << refresh;
    seen.insert(event);
  }
  for (const SyscallInfo& info : syscall_table(kX86)) {
    EXPECT_TRUE(seen.contains(std::string("sys_enter_") + info.name)) << info.name << refresh;
    EXPECT_TRUE(seen.contains(std::string("sys_exit_") + info.name)) << info.name << refresh;
  }
}

TEST(SyscallFormat, MatchesTheRawSyscallsFormats) {
  if (const std::string why = tracefs_unreadable(); !why.empty()) GTEST_SKIP() << why;
  const fs::path raw = fs::path(kTracefsEvents) / "raw_syscalls";
  const std::string enter = read_text(raw / "sys_enter/format");
  const std::string exit = read_text(raw / "sys_exit/format");
  EXPECT_EQ(raw_syscall_format(false, event_id(enter)), enter);
  EXPECT_EQ(raw_syscall_format(true, event_id(exit)), exit);
}

}  // namespace
}  // namespace dprobe::syscalls
