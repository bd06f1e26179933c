// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/strace_tables.h"

namespace dprobe::cli::strace {
namespace {

constexpr Named kOpenAccessModesData[] = {{0, "O_RDONLY"}, {1, "O_WRONLY"}, {2, "O_RDWR"}};
// O_SYNC holds O_DSYNC's bit, O_TMPFILE O_DIRECTORY's: each comes first.
constexpr Named kOpenFlagsData[] = {
    {0100, "O_CREAT"},        {0200, "O_EXCL"},         {0400, "O_NOCTTY"},
    {01000, "O_TRUNC"},       {02000, "O_APPEND"},      {04000, "O_NONBLOCK"},
    {04010000, "O_SYNC"},     {010000, "O_DSYNC"},      {020000, "O_ASYNC"},
    {040000, "O_DIRECT"},     {0100000, "O_LARGEFILE"}, {020200000, "O_TMPFILE"},
    {0200000, "O_DIRECTORY"}, {0400000, "O_NOFOLLOW"},  {01000000, "O_NOATIME"},
    {02000000, "O_CLOEXEC"},  {010000000, "O_PATH"}};
constexpr Named kProtFlagsData[] = {
    {0, "PROT_NONE"},           {1, "PROT_READ"}, {2, "PROT_WRITE"},
    {4, "PROT_EXEC"},           {8, "PROT_SEM"},  {0x1000000, "PROT_GROWSDOWN"},
    {0x2000000, "PROT_GROWSUP"}};
constexpr Named kMapTypesData[] = {
    {1, "MAP_SHARED"}, {2, "MAP_PRIVATE"}, {3, "MAP_SHARED_VALIDATE"}};
constexpr Named kMapFlagsData[] = {{0x10, "MAP_FIXED"},
                                   {0x20, "MAP_ANONYMOUS"},
                                   {0x40, "MAP_32BIT"},
                                   {0x100, "MAP_GROWSDOWN"},
                                   {0x800, "MAP_DENYWRITE"},
                                   {0x1000, "MAP_EXECUTABLE"},
                                   {0x2000, "MAP_LOCKED"},
                                   {0x4000, "MAP_NORESERVE"},
                                   {0x8000, "MAP_POPULATE"},
                                   {0x10000, "MAP_NONBLOCK"},
                                   {0x20000, "MAP_STACK"},
                                   {0x40000, "MAP_HUGETLB"},
                                   {0x80000, "MAP_SYNC"},
                                   {0x100000, "MAP_FIXED_NOREPLACE"},
                                   {0x4000000, "MAP_UNINITIALIZED"}};
constexpr Named kMremapFlagsData[] = {
    {1, "MREMAP_MAYMOVE"}, {2, "MREMAP_FIXED"}, {4, "MREMAP_DONTUNMAP"}};
constexpr Named kAccessModesData[] = {{0, "F_OK"}, {4, "R_OK"}, {2, "W_OK"}, {1, "X_OK"}};
constexpr Named kAtFlagsData[] = {{0x100, "AT_SYMLINK_NOFOLLOW"}, {0x200, "AT_REMOVEDIR"},
                                  {0x400, "AT_SYMLINK_FOLLOW"},   {0x800, "AT_NO_AUTOMOUNT"},
                                  {0x1000, "AT_EMPTY_PATH"},      {0x2000, "AT_STATX_FORCE_SYNC"},
                                  {0x4000, "AT_STATX_DONT_SYNC"}, {0x8000, "AT_RECURSIVE"}};
constexpr Named kFcntlCommandsData[] = {
    {0, "F_DUPFD"},         {1, "F_GETFD"},         {2, "F_SETFD"},
    {3, "F_GETFL"},         {4, "F_SETFL"},         {5, "F_GETLK"},
    {6, "F_SETLK"},         {7, "F_SETLKW"},        {8, "F_SETOWN"},
    {9, "F_GETOWN"},        {10, "F_SETSIG"},       {11, "F_GETSIG"},
    {15, "F_SETOWN_EX"},    {16, "F_GETOWN_EX"},    {36, "F_OFD_GETLK"},
    {37, "F_OFD_SETLK"},    {38, "F_OFD_SETLKW"},   {1024, "F_SETLEASE"},
    {1025, "F_GETLEASE"},   {1026, "F_NOTIFY"},     {1030, "F_DUPFD_CLOEXEC"},
    {1031, "F_SETPIPE_SZ"}, {1032, "F_GETPIPE_SZ"}, {1033, "F_ADD_SEALS"},
    {1034, "F_GET_SEALS"}};
constexpr Named kFdFlagsData[] = {{1, "FD_CLOEXEC"}};
constexpr Named kCloneFlagsData[] = {{0x100, "CLONE_VM"},
                                     {0x200, "CLONE_FS"},
                                     {0x400, "CLONE_FILES"},
                                     {0x800, "CLONE_SIGHAND"},
                                     {0x1000, "CLONE_PIDFD"},
                                     {0x2000, "CLONE_PTRACE"},
                                     {0x4000, "CLONE_VFORK"},
                                     {0x8000, "CLONE_PARENT"},
                                     {0x10000, "CLONE_THREAD"},
                                     {0x20000, "CLONE_NEWNS"},
                                     {0x40000, "CLONE_SYSVSEM"},
                                     {0x80000, "CLONE_SETTLS"},
                                     {0x100000, "CLONE_PARENT_SETTID"},
                                     {0x200000, "CLONE_CHILD_CLEARTID"},
                                     {0x400000, "CLONE_DETACHED"},
                                     {0x800000, "CLONE_UNTRACED"},
                                     {0x1000000, "CLONE_CHILD_SETTID"},
                                     {0x2000000, "CLONE_NEWCGROUP"},
                                     {0x4000000, "CLONE_NEWUTS"},
                                     {0x8000000, "CLONE_NEWIPC"},
                                     {0x10000000, "CLONE_NEWUSER"},
                                     {0x20000000, "CLONE_NEWPID"},
                                     {0x40000000, "CLONE_NEWNET"},
                                     {0x80000000, "CLONE_IO"}};
constexpr Named kSigprocmaskHowsData[] = {{0, "SIG_BLOCK"}, {1, "SIG_UNBLOCK"}, {2, "SIG_SETMASK"}};
constexpr Named kSeekWhencesData[] = {
    {0, "SEEK_SET"}, {1, "SEEK_CUR"}, {2, "SEEK_END"}, {3, "SEEK_DATA"}, {4, "SEEK_HOLE"}};
constexpr Named kFadviseAdviceData[] = {{0, "POSIX_FADV_NORMAL"},     {1, "POSIX_FADV_RANDOM"},
                                        {2, "POSIX_FADV_SEQUENTIAL"}, {3, "POSIX_FADV_WILLNEED"},
                                        {4, "POSIX_FADV_DONTNEED"},   {5, "POSIX_FADV_NOREUSE"}};
constexpr Named kMadviseAdviceData[] = {
    {0, "MADV_NORMAL"},           {1, "MADV_RANDOM"},         {2, "MADV_SEQUENTIAL"},
    {3, "MADV_WILLNEED"},         {4, "MADV_DONTNEED"},       {8, "MADV_FREE"},
    {9, "MADV_REMOVE"},           {10, "MADV_DONTFORK"},      {11, "MADV_DOFORK"},
    {12, "MADV_MERGEABLE"},       {13, "MADV_UNMERGEABLE"},   {14, "MADV_HUGEPAGE"},
    {15, "MADV_NOHUGEPAGE"},      {16, "MADV_DONTDUMP"},      {17, "MADV_DODUMP"},
    {18, "MADV_WIPEONFORK"},      {19, "MADV_KEEPONFORK"},    {20, "MADV_COLD"},
    {21, "MADV_PAGEOUT"},         {22, "MADV_POPULATE_READ"}, {23, "MADV_POPULATE_WRITE"},
    {24, "MADV_DONTNEED_LOCKED"}, {25, "MADV_COLLAPSE"}};
constexpr Named kArchPrctlCodesData[] = {
    {0x1001, "ARCH_SET_GS"},         {0x1002, "ARCH_SET_FS"},
    {0x1003, "ARCH_GET_FS"},         {0x1004, "ARCH_GET_GS"},
    {0x1011, "ARCH_GET_CPUID"},      {0x1012, "ARCH_SET_CPUID"},
    {0x1021, "ARCH_GET_XCOMP_SUPP"}, {0x1022, "ARCH_GET_XCOMP_PERM"},
    {0x1023, "ARCH_REQ_XCOMP_PERM"}};
constexpr Named kAddressFamiliesData[] = {
    {0, "AF_UNSPEC"},  {1, "AF_UNIX"},       {2, "AF_INET"}, {10, "AF_INET6"}, {16, "AF_NETLINK"},
    {17, "AF_PACKET"}, {31, "AF_BLUETOOTH"}, {38, "AF_ALG"}, {40, "AF_VSOCK"}};
constexpr Named kSocketTypesData[] = {{1, "SOCK_STREAM"}, {2, "SOCK_DGRAM"},     {3, "SOCK_RAW"},
                                      {4, "SOCK_RDM"},    {5, "SOCK_SEQPACKET"}, {6, "SOCK_DCCP"},
                                      {10, "SOCK_PACKET"}};
constexpr Named kSocketFlagsData[] = {{02000000, "SOCK_CLOEXEC"}, {04000, "SOCK_NONBLOCK"}};
constexpr Named kResourcesData[] = {
    {0, "RLIMIT_CPU"},       {1, "RLIMIT_FSIZE"}, {2, "RLIMIT_DATA"},    {3, "RLIMIT_STACK"},
    {4, "RLIMIT_CORE"},      {5, "RLIMIT_RSS"},   {6, "RLIMIT_NPROC"},   {7, "RLIMIT_NOFILE"},
    {8, "RLIMIT_MEMLOCK"},   {9, "RLIMIT_AS"},    {10, "RLIMIT_LOCKS"},  {11, "RLIMIT_SIGPENDING"},
    {12, "RLIMIT_MSGQUEUE"}, {13, "RLIMIT_NICE"}, {14, "RLIMIT_RTPRIO"}, {15, "RLIMIT_RTTIME"}};
constexpr Named kWaitOptionsData[] = {{1, "WNOHANG"},         {2, "WUNTRACED"},
                                      {4, "WEXITED"},         {8, "WCONTINUED"},
                                      {0x1000000, "WNOWAIT"}, {0x20000000, "__WNOTHREAD"},
                                      {0x40000000, "__WALL"}, {0x80000000, "__WCLONE"}};
constexpr Named kFutexCommandsData[] = {{0, "FUTEX_WAIT"},
                                        {1, "FUTEX_WAKE"},
                                        {2, "FUTEX_FD"},
                                        {3, "FUTEX_REQUEUE"},
                                        {4, "FUTEX_CMP_REQUEUE"},
                                        {5, "FUTEX_WAKE_OP"},
                                        {6, "FUTEX_LOCK_PI"},
                                        {7, "FUTEX_UNLOCK_PI"},
                                        {8, "FUTEX_TRYLOCK_PI"},
                                        {9, "FUTEX_WAIT_BITSET"},
                                        {10, "FUTEX_WAKE_BITSET"},
                                        {11, "FUTEX_WAIT_REQUEUE_PI"},
                                        {12, "FUTEX_CMP_REQUEUE_PI"},
                                        {13, "FUTEX_LOCK_PI2"}};
constexpr Named kCloseRangeFlagsData[] = {{2, "CLOSE_RANGE_UNSHARE"}, {4, "CLOSE_RANGE_CLOEXEC"}};
constexpr Named kGetrandomFlagsData[] = {
    {1, "GRND_NONBLOCK"}, {2, "GRND_RANDOM"}, {4, "GRND_INSECURE"}};
constexpr Named kIoctlCommandsData[] = {
    {0x5401, "TCGETS"},        {0x5402, "TCSETS"},     {0x5403, "TCSETSW"},
    {0x5404, "TCSETSF"},       {0x540E, "TIOCSCTTY"},  {0x540F, "TIOCGPGRP"},
    {0x5410, "TIOCSPGRP"},     {0x5413, "TIOCGWINSZ"}, {0x5414, "TIOCSWINSZ"},
    {0x541B, "FIONREAD"},      {0x5421, "FIONBIO"},    {0x5450, "FIONCLEX"},
    {0x5451, "FIOCLEX"},       {0x5452, "FIOASYNC"},   {0x80045430, "TIOCGPTN"},
    {0x40045431, "TIOCSPTLCK"}};

}  // namespace

const std::span<const Named> kOpenAccessModes = kOpenAccessModesData;
const std::span<const Named> kOpenFlags = kOpenFlagsData;
const std::span<const Named> kProtFlags = kProtFlagsData;
const std::span<const Named> kMapTypes = kMapTypesData;
const std::span<const Named> kMapFlags = kMapFlagsData;
const std::span<const Named> kMremapFlags = kMremapFlagsData;
const std::span<const Named> kAccessModes = kAccessModesData;
const std::span<const Named> kAtFlags = kAtFlagsData;
const std::span<const Named> kFcntlCommands = kFcntlCommandsData;
const std::span<const Named> kFdFlags = kFdFlagsData;
const std::span<const Named> kCloneFlags = kCloneFlagsData;
const std::span<const Named> kSigprocmaskHows = kSigprocmaskHowsData;
const std::span<const Named> kSeekWhences = kSeekWhencesData;
const std::span<const Named> kFadviseAdvice = kFadviseAdviceData;
const std::span<const Named> kMadviseAdvice = kMadviseAdviceData;
const std::span<const Named> kArchPrctlCodes = kArchPrctlCodesData;
const std::span<const Named> kAddressFamilies = kAddressFamiliesData;
const std::span<const Named> kSocketTypes = kSocketTypesData;
const std::span<const Named> kSocketFlags = kSocketFlagsData;
const std::span<const Named> kResources = kResourcesData;
const std::span<const Named> kWaitOptions = kWaitOptionsData;
const std::span<const Named> kFutexCommands = kFutexCommandsData;
const std::span<const Named> kCloseRangeFlags = kCloseRangeFlagsData;
const std::span<const Named> kGetrandomFlags = kGetrandomFlagsData;
const std::span<const Named> kIoctlCommands = kIoctlCommandsData;

}  // namespace dprobe::cli::strace
