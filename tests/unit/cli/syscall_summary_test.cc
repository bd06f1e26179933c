// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The --summary table against strace 6.1's own `strace -c -w` tables: the
// same counts must print the same text, byte for byte.
#include "cli/output/syscall_summary.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dprobe::cli {
namespace {

TEST(SyscallSummary, NoCallsPrintNoTable) {
  // strace prints nothing at all when it counted no call (`-e trace=getpid true`).
  EXPECT_EQ(render_syscall_summary({}), "");
  EXPECT_EQ(render_syscall_summary({{"getpid", 0, 0, 0}}), "");
}

TEST(SyscallSummary, MostTimeFirstWithBlankErrorsAndTotal) {
  const std::vector<SyscallCount> counts = {
      {"read", 4, 0, 1'000'000},    // first of two with the same time
      {"openat", 3, 1, 2'000'000},  // the most time: first line
      {"getpid", 0, 0, 0},          // never called: no line
      {"close", 2, 0, 1'000'000},   // as much time as read: stays after it
      {"write", 1, 0, 0},           // no time: 0% and 0 usecs/call
  };
  EXPECT_EQ(render_syscall_summary(counts),
            "% time     seconds  usecs/call     calls    errors syscall\n"
            "------ ----------- ----------- --------- --------- ----------------\n"
            " 50.00    0.002000         666         3         1 openat\n"
            " 25.00    0.001000         250         4           read\n"
            " 25.00    0.001000         500         2           close\n"
            "  0.00    0.000000           0         1           write\n"
            "------ ----------- ----------- --------- --------- ----------------\n"
            "100.00    0.004000         400        10         1 total\n");
}

TEST(SyscallSummary, RowAverageIsRoundedToTheNanosecondBeforeTruncating) {
  // 1999 ns over 2 calls: strace rounds the average to 1000 ns, 1 us; its
  // total line divides the seconds as a double, and truncates 0.9995 us to 0.
  EXPECT_EQ(render_syscall_summary({{"brk", 2, 0, 1999}}),
            "% time     seconds  usecs/call     calls    errors syscall\n"
            "------ ----------- ----------- --------- --------- ----------------\n"
            "100.00    0.000002           1         2           brk\n"
            "------ ----------- ----------- --------- --------- ----------------\n"
            "100.00    0.000002           0         2           total\n");
}

// `strace -C -w -T --syscall-times=ns -o trace ls /`: each count below sums
// the <ns> durations of its calls in the trace, the very numbers strace adds
// up for the table. Strace's printed seconds would not do: they are rounded
// to the microsecond, and strace averages the nanoseconds (execve's 0.000324
// seconds were 324043 ns).
TEST(SyscallSummary, SameTextAsStraceForARealRun) {
  const std::vector<SyscallCount> counts = {
      {"execve", 1, 0, 324043},
      {"brk", 3, 0, 118417},
      {"mmap", 30, 0, 1237976},
      {"access", 2, 2, 81141},
      {"openat", 34, 13, 1441345},
      {"newfstatat", 22, 0, 948374},
      {"close", 23, 0, 846148},
      {"read", 7, 0, 282741},
      {"pread64", 2, 0, 119337},
      {"arch_prctl", 1, 0, 36724},
      {"set_tid_address", 1, 0, 37355},
      {"set_robust_list", 1, 0, 36053},
      {"rseq", 1, 0, 34731},
      {"mprotect", 5, 0, 255071},
      {"prlimit64", 1, 0, 37226},
      {"munmap", 1, 0, 50255},
      {"statfs", 2, 2, 84236},
      {"getrandom", 1, 0, 37446},
      {"futex", 1, 0, 37937},
      {"ioctl", 2, 2, 75001},
      {"statx", 1, 0, 39579},
      {"getdents64", 2, 0, 296025},
      {"write", 1, 0, 37256},
  };
  EXPECT_EQ(render_syscall_summary(counts),
            "% time     seconds  usecs/call     calls    errors syscall\n"
            "------ ----------- ----------- --------- --------- ----------------\n"
            " 22.19    0.001441          42        34        13 openat\n"
            " 19.06    0.001238          41        30           mmap\n"
            " 14.60    0.000948          43        22           newfstatat\n"
            " 13.03    0.000846          36        23           close\n"
            "  4.99    0.000324         324         1           execve\n"
            "  4.56    0.000296         148         2           getdents64\n"
            "  4.35    0.000283          40         7           read\n"
            "  3.93    0.000255          51         5           mprotect\n"
            "  1.84    0.000119          59         2           pread64\n"
            "  1.82    0.000118          39         3           brk\n"
            "  1.30    0.000084          42         2         2 statfs\n"
            "  1.25    0.000081          40         2         2 access\n"
            "  1.15    0.000075          37         2         2 ioctl\n"
            "  0.77    0.000050          50         1           munmap\n"
            "  0.61    0.000040          39         1           statx\n"
            "  0.58    0.000038          37         1           futex\n"
            "  0.58    0.000037          37         1           getrandom\n"
            "  0.58    0.000037          37         1           set_tid_address\n"
            "  0.57    0.000037          37         1           write\n"
            "  0.57    0.000037          37         1           prlimit64\n"
            "  0.57    0.000037          36         1           arch_prctl\n"
            "  0.56    0.000036          36         1           set_robust_list\n"
            "  0.53    0.000035          34         1           rseq\n"
            "------ ----------- ----------- --------- --------- ----------------\n"
            "100.00    0.006494          44       145        19 total\n");
}

// A real run too: names of 16 characters or more widen the rule under the
// last column, and are never padded.
TEST(SyscallSummary, LongNamesWidenOnlyTheRule) {
  const std::vector<SyscallCount> counts = {
      {"sched_get_priority_max", 3, 0, 57246 + 55803 + 57906},
      {"set_mempolicy_home_node", 1, 0, 93519},
      {"getppid", 1, 0, 38718},
  };
  EXPECT_EQ(render_syscall_summary(counts),
            "% time     seconds  usecs/call     calls    errors syscall\n"
            "------ ----------- ----------- --------- --------- ------------------------\n"
            " 56.39    0.000171          56         3           sched_get_priority_max\n"
            " 30.84    0.000094          93         1           set_mempolicy_home_node\n"
            " 12.77    0.000039          38         1           getppid\n"
            "------ ----------- ----------- --------- --------- ------------------------\n"
            "100.00    0.000303          60         5           total\n");
}

TEST(SyscallSummary, HugeValuesWidenTheirColumns) {
  // Each column grows to its widest value: the seconds and calls of the
  // total, the largest average, the errors of the total. The two times add
  // up to more nanoseconds than 64 bits hold.
  const std::vector<SyscallCount> counts = {
      {"a_name_longer_than_the_column", 10'000'000'000'000'000'000u, 12'345'678'901'234,
       18'000'000'000'000'000'000u},
      {"getpid", 1, 0, 18'000'000'000'000'000'000u},
  };
  EXPECT_EQ(
      render_syscall_summary(counts),
      "% time            seconds        usecs/call                calls         errors syscall\n"
      "------ ------------------ ----------------- -------------------- -------------- "
      "------------------------------\n"
      " 50.00 18000000000.000000                 0 10000000000000000000 12345678901234 "
      "a_name_longer_than_the_column\n"
      " 50.00 18000000000.000000 18000000000000000                    1                getpid\n"
      "------ ------------------ ----------------- -------------------- -------------- "
      "------------------------------\n"
      "100.00 36000000000.000000                 0 10000000000000000001 12345678901234 total\n");
}

// strace names a call as x86_64's syscall table does; the kernel's event
// is named for its function.
TEST(SyscallSummary, RowsUseStracesNames) {
  EXPECT_EQ(strace_syscall_name("newuname"), "uname");
  EXPECT_EQ(strace_syscall_name("newfstat"), "fstat");
  EXPECT_EQ(strace_syscall_name("newstat"), "stat");
  EXPECT_EQ(strace_syscall_name("newlstat"), "lstat");
  EXPECT_EQ(strace_syscall_name("sendfile64"), "sendfile");
  EXPECT_EQ(strace_syscall_name("umount"), "umount2");
  EXPECT_EQ(strace_syscall_name("newfstatat"), "newfstatat") << "strace's name too";
  EXPECT_EQ(strace_syscall_name("openat"), "openat");
}

}  // namespace
}  // namespace dprobe::cli
