// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe attach` into a process with a root of its own, in its own mount
// and PID namespaces (`unshare -fpm --mount-proc --root=DIR`, what a
// container runtime does): the agent and the control channel reach it by
// descriptor, nothing is written into its file system, probes are named
// by the paths it sees or by ours, and every detach leaves its text, its
// descriptors and its root as they were.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "integration/container_root.h"
#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// Every file below `root`, /proc left out.
std::set<std::string> files_below(const std::string& root) {
  std::set<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::end(it); it.increment(ec)) {
    if (it->path() == root + "/proc") {
      it.disable_recursion_pending();
      continue;
    }
    files.insert(it->path().string());
  }
  return files;
}

// The process's descriptors and what each is.
std::map<std::string, std::string> descriptors_of(pid_t pid) {
  std::map<std::string, std::string> fds;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    fds[entry.path().filename().string()] = fs::read_symlink(entry.path(), ec).string();
  }
  return fds;
}

// The first child of `parent` (/proc's children list), 0 if none yet.
pid_t first_child(pid_t parent) {
  const std::string children = read_file("/proc/" + std::to_string(parent) + "/task/" +
                                         std::to_string(parent) + "/children");
  return children.empty() ? 0 : static_cast<pid_t>(std::stol(children));
}

class AttachContainer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    root_ = dir_.file("root");
    ASSERT_TRUE(make_root(root_)) << "cannot build a root for busy_loop_O2 in " << root_;
    app_ = std::make_unique<LiveProcess>(
        std::vector<std::string>{"/usr/bin/unshare", "-fpm", "--mount-proc", "--root=" + root_,
                                 "/app", "2", "120"},
        dir_.file("app.out"), dir_.file("app.err"));
    ASSERT_TRUE(app_->started());
    if (!app_->wait_for_output("busy_loop: ready", patience(2))) {
      GTEST_SKIP() << "no mount and PID namespaces here (unshare -fpm --root): " << app_->err();
    }
    pid_ = first_child(app_->pid());
    ASSERT_NE(pid_, 0);
  }

  RunResult attach(const std::vector<std::string>& definitions, const std::string& trace) const {
    std::vector<std::string> args{
        "attach", "-p", std::to_string(pid_), "--duration", "0.2", "--profile", "-o", trace};
    for (const std::string& definition : definitions) {
      args.push_back("-e");
      args.push_back(definition);
    }
    return run_dprobe(args);
  }

  TempDir dir_;
  std::string root_;
  std::unique_ptr<LiveProcess> app_;
  pid_t pid_ = 0;
};

// The agent's own descriptors, which it keeps from its first session on
// (its /proc/self/task/TID/mem, to write text): no descriptor of dprobe's
// stays (the memfds the agent was loaded from, the control socket).
bool only_the_agents_own(const std::map<std::string, std::string>& before,
                         const std::map<std::string, std::string>& after) {
  for (const auto& [fd, what] : after) {
    if (!before.contains(fd) && !what.ends_with("/mem")) return false;
  }
  return true;
}

TEST_F(AttachContainer, TwentyAttachesTraceItAndLeaveItAsItWas) {
  const TextSnapshot text = text_snapshot(pid_);
  const std::map<std::string, std::string> untraced = descriptors_of(pid_);
  std::map<std::string, std::string> fds;
  const std::set<std::string> files = files_below(root_);
  for (int i = 0; i < 20; ++i) {
    const std::string trace = dir_.file("trace" + std::to_string(i));
    const RunResult run =
        attach({"p:g/busy busy_probe t=%di", "p:g/nap libc.so.6:nanosleep"}, trace);
    ASSERT_EQ(run.status, 0) << "attach " << i << ": " << run;
    expect_hits(run, {"busy", "nap"});
    EXPECT_EQ(text_snapshot(pid_), text) << "attach " << i << " left its text patched";
    if (i == 0) {
      fds = descriptors_of(pid_);
      EXPECT_TRUE(only_the_agents_own(untraced, fds)) << ::testing::PrintToString(fds);
    }
    EXPECT_EQ(descriptors_of(pid_), fds) << "attach " << i << " left a descriptor";
  }
  EXPECT_EQ(files_below(root_), files) << "something was written into its root";
  const size_t printed = app_->out().size();
  EXPECT_TRUE(eventually([&] { return app_->out().size() > printed; }, patience()))
      << "it no longer runs on";
}

TEST_F(AttachContainer, ProbesNameItsFilesByItsPathsOrOurs) {
  std::string libc;
  for (const std::string& file : loaded_files(program("busy_loop_O2"))) {
    if (file.find("/libc.so") != std::string::npos) libc = file;
  }
  ASSERT_FALSE(libc.empty());
  const RunResult run =
      attach({"p:g/inside /app:busy_probe", "p:g/outside " + root_ + "/app:busy_probe",
              "p:g/lib " + libc + ":nanosleep"},
             dir_.file("trace"));
  ASSERT_EQ(run.status, 0) << run;
  expect_hits(run, {"inside", "outside", "lib"});
}

TEST_F(AttachContainer, ListNamesItsObjectsAsItSeesThem) {
  const RunResult own = run_dprobe({"list", "-p", std::to_string(pid_), "busy_*"});
  EXPECT_EQ(own.status, 0) << own;
  EXPECT_THAT(own.out, HasSubstr(" busy_probe\n")) << own;
  const RunResult by_path = run_dprobe({"list", "-p", std::to_string(pid_), "/app:busy_probe"});
  EXPECT_EQ(by_path.status, 0) << by_path;
  EXPECT_THAT(by_path.out, HasSubstr(" busy_probe\n")) << "/app, the container's path: " << by_path;
}

// A root without /proc mounted in it (unshare -m --root without
// --mount-proc): refused before anything is placed in the process, with
// the reason, and the process runs on untouched.
TEST(AttachNoProc, ARootWithoutProcIsRefusedWithTheReason) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string root = dir.file("root");
  ASSERT_TRUE(make_root(root));
  LiveProcess app({"/usr/bin/unshare", "-m", "--root=" + root, "/app", "1", "60"},
                  dir.file("app.out"), dir.file("app.err"));
  ASSERT_TRUE(app.started());
  if (!app.wait_for_output("busy_loop: ready", patience(2))) {
    GTEST_SKIP() << "no mount namespace here (unshare -m --root): " << app.err();
  }
  const pid_t pid = app.pid();
  const TextSnapshot text = text_snapshot(pid);
  const std::map<std::string, std::string> fds = descriptors_of(pid);
  const RunResult run = run_dprobe(
      {"attach", "-p", std::to_string(pid), "--duration", "0.2", "-e", "p:g/busy /app:busy_probe"});
  EXPECT_EQ(run.status, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("without /proc mounted in it")) << run;
  EXPECT_EQ(text_snapshot(pid), text);
  EXPECT_EQ(descriptors_of(pid), fds);
  const size_t printed = app.out().size();
  EXPECT_TRUE(eventually([&] { return app.out().size() > printed; }, patience()));
}

// The process execs after the attach. Its agent came from a memfd, whose
// path names nothing in the new program: that program runs untraced, and
// its loader says nothing about a preload it cannot open.
// A shell in a root of its own (busy_loop as /app, sh and sleep), in its
// own mount and PID namespaces, running `script` once it said "ready";
// `pid` is its host pid.
struct ContainerShell {
  ContainerShell(const TempDir& dir, const std::string& script)
      : built(make_root(dir.file("root"), {"/bin/sh", "/bin/sleep"})),
        process({"/usr/bin/unshare", "-fpm", "--mount-proc", "--root=" + dir.file("root"),
                 "/bin/sh", "-c", "echo ready; " + script},
                dir.file("sh.out"), dir.file("sh.err")) {
    ready = built && process.started() && process.wait_for_output("ready", patience(2));
    if (ready) pid = first_child(process.pid());
  }

  bool built;
  LiveProcess process;
  bool ready = false;
  pid_t pid = 0;
};

TEST(AttachContainerExec, AProgramExecdFromItRunsAndSaysNothingOfTheAgent) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  ContainerShell shell(dir, "/bin/sleep 1; exec /app 1 0.2");
  ASSERT_TRUE(shell.built);
  ASSERT_TRUE(shell.process.started());
  if (!shell.ready) GTEST_SKIP() << "no mount and PID namespaces here: " << shell.process.err();
  ASSERT_NE(shell.pid, 0);
  // Attached still when the shell execs, a second on.
  const RunResult run = run_dprobe({"attach", "-p", std::to_string(shell.pid), "--duration", "3",
                                    "-e", "p:g/nap libc.so.6:nanosleep", "-o", "/dev/null"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_TRUE(shell.process.wait_for_output("busy_loop: done", patience(4))) << shell.process.err();
  EXPECT_THAT(shell.process.err(), Not(HasSubstr("ld.so"))) << shell.process.err();
}

// --follow into a container: the agent gets dprobe's directory over its
// channel, and the process's children (each subshell here) connect
// through it and are traced, by their host pids. The programs they exec
// (sleep) run untraced, quietly.
TEST(AttachContainerFollow, ChildrenOfAContainersProcessAreTraced) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  ContainerShell shell(dir, "while :; do (echo x > /tmp/x); /bin/sleep 0.05; done");
  ASSERT_TRUE(shell.built);
  ASSERT_TRUE(shell.process.started());
  if (!shell.ready) GTEST_SKIP() << "no mount and PID namespaces here: " << shell.process.err();
  const pid_t pid = shell.pid;
  ASSERT_NE(pid, 0);
  const std::map<std::string, std::string> untraced = descriptors_of(pid);
  const std::string trace = dir.file("trace");
  const RunResult run = run_dprobe({"attach", "--follow", "-p", std::to_string(pid), "--duration",
                                    "1", "-e", "p:g/w libc.so.6:write", "-o", trace});
  ASSERT_EQ(run.status, 0) << run;
  std::set<uint64_t> children;
  for (const TraceLine& line : parse_trace(read_file(trace))) {
    if (line.tid != static_cast<uint64_t>(pid)) children.insert(line.tid);
  }
  // dprobe's directory, handed over for the children, is closed again.
  EXPECT_TRUE(only_the_agents_own(untraced, descriptors_of(pid)))
      << ::testing::PrintToString(descriptors_of(pid));
  EXPECT_GE(children.size(), 2u) << "subshells traced: " << run;
  EXPECT_THAT(shell.process.err(), Not(HasSubstr("ld.so"))) << shell.process.err();
}

// A rootless container: a user's own user, mount and PID namespaces
// (`unshare -U --map-root-user`, as rootless podman makes them), traced by
// that same user from outside, with no privilege of root's.
TEST(AttachRootless, AUsersOwnContainerIsTracedByThatUser) {
  constexpr uid_t kUser = 4242;  // no account needed
  const std::string setpriv = ::getuid() == 0 ? find_tool("setpriv") : std::string();
  if (setpriv.empty()) GTEST_SKIP() << "needs root's setpriv to act as another user";
  const std::vector<std::string> as_user = {setpriv, "--reuid=4242", "--regid=4242",
                                            "--clear-groups"};
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string root = dir.file("root");
  ASSERT_TRUE(make_root(root));
  fs::permissions(dir.file(""), fs::perms::owner_all | fs::perms::group_read |
                                    fs::perms::group_exec | fs::perms::others_read |
                                    fs::perms::others_exec);
  std::vector<std::string> command = as_user;
  command.insert(command.end(), {"/usr/bin/unshare", "-Ufpm", "--map-root-user", "--mount-proc",
                                 "--root=" + root, "/app", "2", "120"});
  LiveProcess app(command, dir.file("app.out"), dir.file("app.err"));
  ASSERT_TRUE(app.started());
  if (!app.wait_for_output("busy_loop: ready", patience(2))) {
    GTEST_SKIP() << "no user namespace for uid " << kUser << " here: " << app.err();
  }
  const pid_t pid = first_child(app.pid());
  ASSERT_NE(pid, 0);
  std::vector<std::string> attach = as_user;
  attach.insert(attach.end(),
                {find_tool("env"), "-u", "XDG_RUNTIME_DIR", DPROBE_BINARY, "attach", "-p",
                 std::to_string(pid), "--duration", "0.3", "--profile", "-o", "/dev/null", "-e",
                 "p:g/busy /app:busy_probe", "-e", "p:g/nap libc.so.6:nanosleep"});
  const RunResult run = run_program(attach);
  ASSERT_EQ(run.status, 0) << run;
  expect_hits(run, {"busy", "nap"});
}

// `podman run --rootfs`: a real container runtime's container, attached
// to from the host by its host pid. Tried with podman's defaults, then
// with what a machine without cgroup v2 alone or without CAP_SYS_RESOURCE
// needs (runc and cgroupfs, limits no higher than ours); skipped with
// podman's own words when none starts.
class PodmanContainer {
 public:
  explicit PodmanContainer(const std::string& root) {
    const std::vector<std::vector<std::string>> ways = {
        {"/usr/bin/podman", "run"},
        {"/usr/bin/podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs", "run", "--ulimit",
         "nofile=1024:1024", "--ulimit", "nproc=1024:1024"},
    };
    for (std::vector<std::string> args : ways) {
      for (const char* more : {"--rm", "-d", "--network", "none", "--rootfs"}) {
        args.emplace_back(more);
      }
      for (const std::string& more :
           {root, std::string("/app"), std::string("2"), std::string("120")}) {
        args.push_back(more);
      }
      const RunResult run = run_program(args);
      if (run.status == 0) {
        id_ = run.out.substr(0, run.out.find('\n'));
        break;
      }
      why_ = run.err;
    }
  }
  ~PodmanContainer() {
    if (!id_.empty()) (void)run_program({"/usr/bin/podman", "rm", "-f", "-t", "0", id_});
  }
  bool started() const { return !id_.empty(); }
  const std::string& why() const { return why_; }
  // Whether the program has printed `text` (podman logs).
  bool says(const std::string& text) const {
    return run_program({"/usr/bin/podman", "logs", id_}).out.find(text) != std::string::npos;
  }
  pid_t pid() const {
    const RunResult run = run_program({"/usr/bin/podman", "inspect", "-f", "{{.State.Pid}}", id_});
    return run.status == 0 ? static_cast<pid_t>(std::atol(run.out.c_str())) : 0;
  }

 private:
  std::string id_;
  std::string why_;
};

TEST(AttachPodman, AContainersProcessIsTracedFromTheHost) {
  if (!fs::exists("/usr/bin/podman")) GTEST_SKIP() << "podman is not installed";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string root = dir.file("root");
  ASSERT_TRUE(make_root(root));
  PodmanContainer container(root);
  if (!container.started())
    GTEST_SKIP() << "podman cannot run a container here: " << container.why();
  const pid_t pid = container.pid();
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(eventually([&] { return container.says("busy_loop: ready"); }, patience(2)));
  const TextSnapshot text = text_snapshot(pid);
  const RunResult run = run_dprobe(
      {"attach", "-p", std::to_string(pid), "--duration", "0.3", "--profile", "-o",
       dir.file("trace"), "-e", "p:g/busy /app:busy_probe", "-e", "p:g/nap libc.so.6:nanosleep"});
  ASSERT_EQ(run.status, 0) << run;
  expect_hits(run, {"busy", "nap"});
  EXPECT_EQ(text_snapshot(pid), text);
}

}  // namespace
}  // namespace dprobe::integration
