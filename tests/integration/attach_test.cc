// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe attach -p PID`: probes armed in a process that already runs
// (tests/programs/busy_loop.c, threads hitting busy_probe without pause),
// hits streamed, and at detach every byte of its text as it was before,
// seen from outside through /proc/PID/mem. Processes that cannot be
// attached to get an error that says why and what to do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kBusyProbe = "p:g/busy busy_probe t=%di";
constexpr uid_t kNobody = 65534;
constexpr uid_t kOtherUser = 4242;  // no account needed: a uid nobody else runs as

// busy_loop_O2 with `threads` threads, started and ready (every thread
// calling busy_probe), its output in `dir`.
struct Busy {
  Busy(const TempDir& dir, const std::vector<std::string>& prefix, int threads, int seconds)
      : process(command(prefix, threads, seconds), dir.file("busy.out"), dir.file("busy.err")) {
    ready = process.started() && process.wait_for_output("busy_loop: ready", patience(2));
  }
  static std::vector<std::string> command(const std::vector<std::string>& prefix, int threads,
                                          int seconds) {
    std::vector<std::string> args = prefix;
    args.push_back(program("busy_loop_O2"));
    args.push_back(std::to_string(threads));
    args.push_back(std::to_string(seconds));
    return args;
  }
  pid_t pid() const { return process.pid(); }
  uint64_t calls() const {
    return last_number_after(process.out(), "busy_loop: calls ").value_or(0);
  }
  // Its count of calls goes on growing.
  bool making_progress() const {
    const uint64_t before = calls();
    return eventually([&] { return calls() > before; }, patience());
  }

  LiveProcess process;
  bool ready = false;
};

std::vector<std::string> attach_args(pid_t pid, const std::string& duration,
                                     const std::vector<std::string>& more = {}) {
  std::vector<std::string> args{"attach",     "-p",    std::to_string(pid), "-e", kBusyProbe,
                                "--duration", duration};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

uint64_t busy_hits(const RunResult& run) {
  const auto row = profile_row(parse_profile(run.err), "busy");
  return row ? row->hits : 0;
}

// "dprobe: N events lost (rings full; ...)": 0 when not said.
uint64_t lost_events(const std::string& err) {
  const size_t at = err.find(" events lost");
  if (at == std::string::npos) return 0;
  return last_number_after(err.substr(0, at), "dprobe: ").value_or(~uint64_t{0});
}

std::set<uint64_t> threads_of(pid_t pid) {
  std::set<uint64_t> tids;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    tids.insert(std::stoull(entry.path().filename().string()));
  }
  return tids;
}

// Attach, see hits and the patched byte while attached, detach: the
// process runs on, and its text is byte for byte what it was before and
// what the file holds.
TEST(Attach, HitsArriveAndDetachRestoresEveryByte) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Busy busy(dir, {}, 4, 60);
  ASSERT_TRUE(busy.ready) << busy.process.out() << busy.process.err();
  const pid_t pid = busy.pid();
  const std::string exe = executable_path(pid);
  const auto probe = symbol_address(pid, "busy_probe");
  if (!probe) GTEST_SKIP() << "needs nm for busy_probe's address";
  const TextSnapshot before = text_snapshot(pid);
  ASSERT_GE(before.mappings.size(), 3u) << "the text of the executable, libc and ld.so:" << before;
  ASSERT_EQ(text_differences_from_file(pid, exe), "");
  const unsigned original = first_byte(pid, *probe);
  ASSERT_FALSE(armed_byte(original));

  LiveProcess attach({DPROBE_BINARY, "attach", "-p", std::to_string(pid), "-e", kBusyProbe,
                      "--duration", "0.5", "--profile", "-o", dir.file("trace")},
                     dir.file("attach.out"), dir.file("attach.err"));
  ASSERT_TRUE(attach.started());
  EXPECT_TRUE(eventually([&] { return armed_byte(first_byte(pid, *probe)); }, patience(2)))
      << "busy_probe is never patched: " << attach.err();
  EXPECT_EQ(attach.wait(patience(6)), 0) << attach.err();

  EXPECT_THAT(attach.err(), Not(HasSubstr("error"))) << attach.err();
  const RunResult run{true, false, 0, attach.out(), attach.err()};
  EXPECT_GT(busy_hits(run), 0u) << run;
  const auto lines = parse_trace(read_file(dir.file("trace")));
  ASSERT_FALSE(lines.empty()) << run;
  EXPECT_EQ(lines.size() + lost_events(run.err), busy_hits(run)) << "every hit traced or counted";
  const std::set<uint64_t> tids = threads_of(pid);
  const std::set<std::string> t_values{"0x0", "0x1", "0x2", "0x3"};
  for (const TraceLine& line : lines) {
    ASSERT_EQ(line.comm, "busy_loop_O2") << line;
    ASSERT_EQ(line.event, "busy") << line;
    ASSERT_TRUE(tids.contains(line.tid) && line.tid != static_cast<uint64_t>(pid))
        << line << ": not one of the process's spinning threads";
    ASSERT_TRUE(t_values.contains(line.arg("t"))) << line;
  }

  EXPECT_TRUE(process_running(pid));
  EXPECT_TRUE(busy.making_progress()) << busy.process.out().substr(0, 2000);
  EXPECT_EQ(first_byte(pid, *probe), original);
  EXPECT_EQ(text_differences_from_file(pid, exe), "");
  EXPECT_EQ(text_snapshot(pid), before);
}

// Attached to 4 threads that call the probed function without pause (on
// the cores whenever the agent looks), the probe still becomes a jump:
// the threads are asked where they are (agent/thread_census.h) and none is
// found, or left, inside the displaced bytes. Repeated, so a thread caught
// mid-way through them (moved to the trampoline's copy) is likely at least
// once; the program's count of calls goes on growing throughout.
TEST(Attach, AProbeOnFunctionsFourBusyThreadsRunIsOptimized) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Busy busy(dir, {}, 4, 60);
  ASSERT_TRUE(busy.ready) << busy.process.out() << busy.process.err();
  const pid_t pid = busy.pid();
  const std::string exe = executable_path(pid);
  for (int attach = 0; attach < 5; ++attach) {
    const RunResult run = run_dprobe(attach_args(
        pid, "0.2", {"--probes", "--profile", "--buffer-size", "16K", "-o", dir.file("trace")}));
    ASSERT_EQ(run.status, 0) << run;
    EXPECT_THAT(run.err, ::testing::ContainsRegex("busy_probe\\+0x0/0x[0-9a-f]+  \\[OPTIMIZED\\]"))
        << run;
    EXPECT_GT(busy_hits(run), 0u) << run;
  }
  EXPECT_TRUE(busy.making_progress()) << busy.process.out().substr(0, 2000);
  EXPECT_EQ(text_differences_from_file(pid, exe), "");
}

// 100 short attaches to one process while 4 threads hit the probe without
// pause: every one of them sees hits and detaches cleanly, the process
// survives all of them with its text intact.
TEST(Attach, HundredAttachesAndDetachesUnderLoad) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Busy busy(dir, {}, 4, 300);
  ASSERT_TRUE(busy.ready) << busy.process.out() << busy.process.err();
  const pid_t pid = busy.pid();
  const TextSnapshot before = text_snapshot(pid);
  ASSERT_GE(before.mappings.size(), 3u) << before;
  for (int i = 0; i < 100; ++i) {
    // Small rings: an optimized probe's hits outrun any reader.
    const RunResult run = run_dprobe(
        attach_args(pid, "0.05", {"--profile", "--buffer-size", "16K", "-o", "/dev/null"}));
    ASSERT_EQ(run.status, 0) << "attach " << i << ": " << run;
    ASSERT_GT(busy_hits(run), 0u) << "attach " << i << ": " << run;
    ASSERT_TRUE(process_running(pid)) << "attach " << i << ": " << busy.process.err();
  }
  EXPECT_TRUE(busy.making_progress());
  EXPECT_EQ(text_differences_from_file(pid, executable_path(pid)), "");
  EXPECT_EQ(text_snapshot(pid), before);
  busy.process.signal(SIGTERM);
  EXPECT_EQ(busy.process.wait(patience()), 128 + SIGTERM) << "it died before, of something else";
}

// What a session leaves in the process once it has detached: the agent
// library stays loaded, but its rings, its descriptors and its threads
// go. Attaching again and again must not grow the process without end.
TEST(Attach, RepeatedAttachesDoNotAccumulateMemoryOrDescriptors) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Busy busy(dir, {}, 4, 300);
  ASSERT_TRUE(busy.ready) << busy.process.out() << busy.process.err();
  const pid_t pid = busy.pid();
  // The agent's own thread and its socket go a moment after a detach: the
  // process is measured once only its own 5 threads are left.
  auto settled = [&] {
    return eventually([&] { return threads_of(pid).size() == 5; }, patience());
  };
  auto snapshot = [&] {
    EXPECT_TRUE(settled()) << threads_of(pid).size() << " threads";
    std::error_code ec;
    size_t fds = 0;
    for ([[maybe_unused]] const auto& fd :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec))
      ++fds;
    return std::tuple{vm_rss_kib(pid).value_or(0), fds, read_maps(pid).size(),
                      threads_of(pid).size()};
  };
  ASSERT_EQ(run_dprobe(attach_args(pid, "0.05", {"-o", "/dev/null"})).status, 0);
  const auto [rss_first, fds_first, maps_first, threads_first] = snapshot();
  for (int i = 0; i < 20; ++i) {
    const RunResult run = run_dprobe(attach_args(pid, "0.05", {"-o", "/dev/null"}));
    ASSERT_EQ(run.status, 0) << "attach " << i << ": " << run;
  }
  const auto [rss, fds, maps, threads] = snapshot();
  EXPECT_EQ(threads, threads_first) << "threads of the process after 1 attach and after 21";
  EXPECT_EQ(fds, fds_first) << "open descriptors of the process after 1 attach and after 21";
  EXPECT_EQ(maps, maps_first) << "mappings of the process after 1 attach and after 21";
  EXPECT_LT(rss, rss_first + 4096) << "VmRSS (KiB) after 1 attach and after 21";
}

// A program that loads and unloads a library without pause
// (tests/programs/dl_host.c), attached to again and again with a probe in
// that library: attaching stops it anywhere, inside the dynamic loader
// too (in the thread the agent is loaded through, or in another one that
// holds the loader's lock), and the agent must still load, and the
// program live on. Each session's trace is whole cycles' calls in order:
// 1, 2, 1, 2, ...
class AttachWhileLoading : public ::testing::TestWithParam<const char*> {};

TEST_P(AttachWhileLoading, LibrariesComeAndGoWhileAttaching) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string plugin_dir = DPROBE_PROGRAMS_DIR;
  LiveProcess host({program("dl_host_O2"), plugin_dir, "100000000", GetParam()},
                   dir.file("host.out"), dir.file("host.err"));
  ASSERT_TRUE(host.started());
  const std::string pid = std::to_string(host.pid());
  ASSERT_TRUE(eventually_mapped(host.pid(), "libdprobe_test_plugin", patience())) << host.err();
  for (int i = 0; i < 10; ++i) {
    const RunResult run =
        run_dprobe({"attach", "-p", pid, "-e",
                    "p:g/f " + plugin_dir + "/libdprobe_test_plugin.so:plugin_func x=%di:s64",
                    "--duration", "0.1", "--profile", "-o", dir.file("trace")});
    ASSERT_EQ(run.status, 0) << "attach " << i << ": " << run << "\n--- dl_host's stderr ---\n"
                             << host.err();
    const auto lines = parse_trace(read_file(dir.file("trace")));
    EXPECT_GT(lines.size(), 0u) << "attach " << i << ": " << run;
    for (size_t n = 1; n < lines.size(); ++n) {
      ASSERT_NE(lines[n].arg("x"), lines[n - 1].arg("x")) << "attach " << i << ", line " << n;
    }
  }
  ASSERT_TRUE(process_running(host.pid())) << host.err();
  host.signal(SIGTERM);
  EXPECT_EQ(host.wait(patience()), 128 + SIGTERM)
      << "it ended before, of something else: " << host.err();
}

INSTANTIATE_TEST_SUITE_P(Attach, AttachWhileLoading, ::testing::Values("main", "thread"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param) == "main" ? "LoaderInTheMainThread"
                                                                    : "LoaderInAnotherThread";
                         });

TEST(Attach, ANonExistentProcessIsAClearError) {
  // A process that was and is no more: started, ended, reaped.
  LiveProcess ended({find_tool("true")}, "/dev/null", "/dev/null");
  ASSERT_TRUE(ended.started());
  ASSERT_EQ(ended.wait(patience()), 0);
  const pid_t pid = ended.pid();
  const RunResult run = run_dprobe(attach_args(pid, "0.1"));
  EXPECT_EQ(run.status, 1) << run;
  EXPECT_EQ(run.err, "dprobe: error: no such process: " + std::to_string(pid) + "\n") << run;
  EXPECT_EQ(run.out, "");

  for (const std::string bad : {"0", "-1"}) {
    const RunResult invalid = run_dprobe({"attach", "-p", bad, "-e", kBusyProbe});
    EXPECT_NE(invalid.status, 0) << invalid;
    EXPECT_THAT(invalid.err, HasSubstr("no such process: " + bad)) << invalid;
  }
}

// A process that has exited but is not reaped yet (a zombie) still has
// its /proc entry, but no memory and no threads to stop: the error must
// say so, whatever the definitions name, not blame them or permissions.
TEST(Attach, AnExitedProcessNotYetReapedIsAClearError) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess zombie({find_tool("true")}, dir.file("out"), dir.file("err"));
  ASSERT_TRUE(zombie.started());
  ASSERT_TRUE(eventually([&] { return process_state(zombie.pid()) == 'Z'; }, patience()));
  for (const std::string& definition : {kBusyProbe, std::string("p:g/malloc libc.so.6:malloc")}) {
    const RunResult run = run_dprobe(
        {"attach", "-p", std::to_string(zombie.pid()), "-e", definition, "--duration", "0.1"});
    EXPECT_EQ(run.status, 1) << run;
    EXPECT_THAT(run.err, HasSubstr("dprobe: error: process " + std::to_string(zombie.pid())))
        << run;
    EXPECT_THAT(run.err, AnyOf(HasSubstr("exited"), HasSubstr("zombie"))) << run;
    EXPECT_THAT(run.err, Not(AnyOf(HasSubstr("NO_EXECUTABLE"), HasSubstr("another user")))) << run;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << "one line:\n" << run.err;
  }
  EXPECT_EQ(zombie.wait(patience()), 0);
}

// ---- Permissions ----------------------------------------------------------------

// setpriv, when the test can run processes as other users with it: as
// root, and util-linux's (busybox's sets no ids).
std::string setpriv_as_root() {
  static const std::string tool = [] {
    const std::string setpriv = ::getuid() == 0 ? find_tool("setpriv") : std::string();
    if (setpriv.empty()) return setpriv;
    const RunResult probe =
        run_program({setpriv, "--reuid=0", "--regid=0", "--clear-groups", find_tool("true")});
    return probe.status == 0 ? setpriv : std::string();
  }();
  return tool;
}

// The command prefix that runs what follows as `uid`, in its own group
// and no other (setpriv_as_root()).
std::vector<std::string> as_user(uid_t uid) {
  const std::string id = std::to_string(uid);
  return {setpriv_as_root(), "--reuid=" + id, "--regid=" + id, "--clear-groups"};
}

// Runs `args` as `uid`, without a runtime directory that is root's.
RunResult run_as(uid_t uid, const std::vector<std::string>& args) {
  std::vector<std::string> argv = as_user(uid);
  argv.insert(argv.end(), {find_tool("env"), "-u", "XDG_RUNTIME_DIR"});
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

// The process is as it was before an attach: its text unchanged (nothing
// left patched, or nothing patched at all), and running on.
void expect_untouched(const Busy& busy, const TextSnapshot& before) {
  EXPECT_EQ(text_snapshot(busy.pid()), before);
  EXPECT_TRUE(busy.making_progress());
}

RunResult run_dprobe_as(uid_t uid, const std::vector<std::string>& args) {
  std::vector<std::string> argv{DPROBE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_as(uid, argv);
}

// Whether `uid` may run dprobe, load its agent and run busy_loop: not
// where the build directory is private to root.
bool can_run_the_build(uid_t uid) {
  const std::string binary = DPROBE_BINARY;
  const std::string agent = binary.substr(0, binary.rfind('/')) + "/libdprobe_agent.so";
  return run_as(uid, {find_tool("test"), "-x", binary, "-a", "-r", agent, "-a", "-x",
                      program("busy_loop_O2")})
             .status == 0;
}

// "real effective saved fs" of /proc/PID/status's Uid line.
std::string uids_of(pid_t pid) {
  const std::string status = read_file("/proc/" + std::to_string(pid) + "/status");
  const size_t at = status.find("Uid:\t");
  if (at == std::string::npos) return {};
  std::string ids = status.substr(at + 5, status.find('\n', at) - at - 5);
  std::replace(ids.begin(), ids.end(), '\t', ' ');
  return ids;
}

int yama_ptrace_scope() {
  const std::string scope = read_file("/proc/sys/kernel/yama/ptrace_scope");
  return scope.empty() ? 0 : std::stoi(scope);
}

TEST(Attach, AnotherUsersProcessIsRefusedSayingWhatToDo) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  if (setpriv_as_root().empty()) {
    // Not root: a process of root's (init) stands for another user's.
    struct stat st {};
    if (::stat("/proc/1", &st) != 0 || st.st_uid == ::getuid())
      GTEST_SKIP() << "needs root and util-linux's setpriv, or a pid 1 of another user";
    const RunResult run = run_dprobe(attach_args(1, "0.1"));
    EXPECT_EQ(run.status, 1) << run;
    EXPECT_THAT(run.err, HasSubstr("process 1 belongs to another user (uid " +
                                   std::to_string(st.st_uid) + "): attach as that user"))
        << run;
    return;
  }
  if (!can_run_the_build(kNobody) || !can_run_the_build(kOtherUser))
    GTEST_SKIP() << "the build directory is not open to other users";
  Busy busy(dir, as_user(kNobody), 2, 60);
  ASSERT_TRUE(busy.ready) << busy.process.out() << busy.process.err();
  ASSERT_EQ(uids_of(busy.pid()), "65534 65534 65534 65534");
  const TextSnapshot before = text_snapshot(busy.pid());
  const RunResult run = run_dprobe_as(kOtherUser, attach_args(busy.pid(), "0.2"));
  EXPECT_EQ(run.status, 1) << run;
  EXPECT_EQ(run.err, "dprobe: error: process " + std::to_string(busy.pid()) +
                         " belongs to another user (uid 65534): attach as that user\n")
      << run;
  expect_untouched(busy, before);
}

// Root, too, attaches only to root's processes: the agent talks to a
// dprobe of its own user only (the socket is in that user's private
// directory). The error says how to attach as that user.
TEST(Attach, RootAttachesAsTheProcesssUser) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  if (setpriv_as_root().empty()) GTEST_SKIP() << "needs root and util-linux's setpriv";
  if (!can_run_the_build(kNobody)) GTEST_SKIP() << "the build directory is not open to other users";
  Busy busy(dir, as_user(kNobody), 2, 60);
  ASSERT_TRUE(busy.ready) << busy.process.out() << busy.process.err();
  const TextSnapshot before = text_snapshot(busy.pid());
  const RunResult run = run_dprobe(attach_args(busy.pid(), "0.2"));
  EXPECT_EQ(run.status, 1) << run;
  EXPECT_EQ(run.err, "dprobe: error: process " + std::to_string(busy.pid()) +
                         " runs as uid 65534: attach as that user (for example: setpriv "
                         "--reuid=65534 --regid=65534 --clear-groups dprobe attach ...), not as "
                         "root\n")
      << run;
  expect_untouched(busy, before);
}

// The same user, without privileges: allowed, unless the kernel's Yama
// restricts ptrace to descendants; then the error names the setting.
TEST(Attach, TheSameUnprivilegedUserCanAttach) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  if (setpriv_as_root().empty())
    GTEST_SKIP() << "needs root and util-linux's setpriv to act as another user";
  if (!can_run_the_build(kNobody)) GTEST_SKIP() << "the build directory is not open to other users";
  Busy busy(dir, as_user(kNobody), 2, 60);
  ASSERT_TRUE(busy.ready) << busy.process.out() << busy.process.err();
  ASSERT_EQ(uids_of(busy.pid()), "65534 65534 65534 65534");
  const TextSnapshot before = text_snapshot(busy.pid());
  const RunResult run =
      run_dprobe_as(kNobody, attach_args(busy.pid(), "0.2", {"--profile", "-o", "/dev/null"}));
  if (yama_ptrace_scope() >= 1) {
    EXPECT_EQ(run.status, 1) << run;
    EXPECT_THAT(run.err, HasSubstr("ptrace is restricted to a process's descendants")) << run;
    EXPECT_THAT(run.err, HasSubstr("sysctl kernel.yama.ptrace_scope=0")) << run;
  } else {
    EXPECT_EQ(run.status, 0) << run;
    EXPECT_GT(busy_hits(run), 0u) << run;
  }
  EXPECT_TRUE(process_running(busy.pid()));
  expect_untouched(busy, before);
}

// A process whose real and effective ids differ (what a set-uid or
// set-gid program runs as) is refused even to root, before anything is
// touched.
TEST(Attach, ASetUidOrSetGidProcessIsRefused) {
  if (setpriv_as_root().empty())
    GTEST_SKIP() << "needs root and util-linux's setpriv to split real and effective ids";
  const std::string id = std::to_string(kNobody);
  const std::vector<std::vector<std::string>> splits{
      {"--euid=" + id},                   // set-uid: real uid 0, effective 65534
      {"--egid=" + id, "--keep-groups"},  // set-gid: real gid 0, effective 65534
  };
  for (const auto& split : splits) {
    SCOPED_TRACE(split.front());
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    std::vector<std::string> prefix{setpriv_as_root()};
    prefix.insert(prefix.end(), split.begin(), split.end());
    Busy busy(dir, prefix, 2, 60);
    ASSERT_TRUE(busy.ready) << busy.process.out() << busy.process.err();
    if (split.front().starts_with("--euid")) {
      ASSERT_EQ(uids_of(busy.pid()), "0 65534 65534 65534");
    }
    const TextSnapshot before = text_snapshot(busy.pid());
    const RunResult run = run_dprobe(attach_args(busy.pid(), "0.2"));
    EXPECT_EQ(run.status, 1) << run;
    EXPECT_THAT(run.err, HasSubstr("dprobe: error: process " + std::to_string(busy.pid()) +
                                   " runs set-uid or set-gid"))
        << run;
    EXPECT_THAT(run.err, HasSubstr("privilege boundary")) << run;
    expect_untouched(busy, before);
  }
}

}  // namespace
}  // namespace dprobe::integration
