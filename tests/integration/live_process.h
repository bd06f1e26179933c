// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the tests of attaching and of a dying tracer share: a program kept
// running in the background while the test acts on it, and a look at its
// memory from outside (/proc/PID/maps, /proc/PID/mem) to tell whether any
// byte of its text (the program's, the C library's, the dynamic loader's)
// is still patched.
//
//   LiveProcess busy({program("busy_loop_O2"), "4", "30"}, dir.file("out"), dir.file("err"));
//   ASSERT_TRUE(busy.wait_for_output("busy_loop: ready", patience()));
//   const TextSnapshot before = text_snapshot(busy.pid());
//   ... attach, detach ...
//   EXPECT_EQ(text_snapshot(busy.pid()), before);
//   EXPECT_EQ(text_differences_from_file(busy.pid(), executable_path(busy.pid())), "");
#ifndef DPROBE_TESTS_INTEGRATION_LIVE_PROCESS_H_
#define DPROBE_TESTS_INTEGRATION_LIVE_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"
#include "support/child_process.h"

namespace dprobe::integration {

using support::eventually;

// A process started in the background, in a process group of its own,
// stdin from /dev/null, stdout and stderr into the files named. Unless it
// was waited for, the group is killed at the end of scope.
class LiveProcess {
 public:
  LiveProcess(const std::vector<std::string>& args, std::string out_path, std::string err_path)
      : out_path_(std::move(out_path)),
        err_path_(std::move(err_path)),
        pid_(support::spawn_redirected(with_probe_engine(args), out_path_, err_path_).pid) {}
  ~LiveProcess() {
    // Once reaped, its pid (and group id) may be another process's.
    if (pid_ <= 0 || reaped_) return;
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  LiveProcess(const LiveProcess&) = delete;
  LiveProcess& operator=(const LiveProcess&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  std::string out() const { return read_file(out_path_); }
  std::string err() const { return read_file(err_path_); }

  // Whether `text` shows up in its stdout within `limit`.
  bool wait_for_output(std::string_view text, std::chrono::milliseconds limit) const {
    return eventually([&] { return out().find(text) != std::string::npos; }, limit);
  }

  // Its exit status (128 + signal when killed by one), once it has ended
  // within `limit`; nullopt if it still runs. What else it left in its
  // process group is waited for within the limit too: `dprobe run`'s
  // collector writes the last of the trace after a death by a signal.
  std::optional<int> wait(std::chrono::milliseconds limit) {
    if (reaped_ || pid_ <= 0) return status_;
    const std::optional<int> status = support::wait_for_exit(pid_, limit);
    if (!status) return std::nullopt;
    reaped_ = true;
    status_ = *status;
    (void)eventually([&] { return !support::group_alive(pid_); }, limit);
    return status_;
  }

  void signal(int sig) const { ::kill(pid_, sig); }

 private:
  std::string out_path_;
  std::string err_path_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = -1;
};

// The state letter of /proc/PID/stat ('R', 'S', 'Z', ...), 0 when gone.
inline char process_state(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? 0 : stat[paren + 2];
}

// `dprobe run`'s collector beside the program `program` (the process
// dprobe was started as, cli/process/launcher.h): the live process of the
// program's group named dprobe, 0 when there is none (yet).
inline pid_t dprobe_collector(pid_t program) {
  for (const support::ProcessStat& process : support::all_processes()) {
    if (process.comm == "dprobe" && process.group == program && process.live() &&
        process.pid != program) {
      return process.pid;
    }
  }
  return 0;
}

// Runs, and is not a zombie: for processes the test is not the parent of.
inline bool process_running(pid_t pid) {
  const char state = process_state(pid);
  return state != 0 && state != 'Z' && state != 'X';
}

// The number after the last `prefix` in `text` ("busy_loop: calls 123").
inline std::optional<uint64_t> last_number_after(std::string_view text, std::string_view prefix) {
  const size_t at = text.rfind(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  size_t end = at + prefix.size();
  uint64_t value = 0;
  bool any = false;
  for (; end < text.size() && text[end] >= '0' && text[end] <= '9'; ++end, any = true) {
    value = value * 10 + static_cast<uint64_t>(text[end] - '0');
  }
  if (!any) return std::nullopt;
  return value;
}

// VmRSS of the process, in KiB, from /proc/PID/status.
inline std::optional<uint64_t> vm_rss_kib(pid_t pid) {
  std::istringstream lines(read_file("/proc/" + std::to_string(pid) + "/status"));
  std::string key;
  uint64_t kib = 0;
  while (lines >> key) {
    if (key == "VmRSS:" && lines >> kib) return kib;
    lines.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::nullopt;
}

// ---- The process's text, seen from outside ---------------------------------------

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string perms;
  uint64_t offset = 0;
  std::string path;
};

inline std::vector<Mapping> read_maps(pid_t pid) {
  std::vector<Mapping> maps;
  std::istringstream lines(read_file("/proc/" + std::to_string(pid) + "/maps"));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode;
    std::getline(fields >> std::ws, path);
    const size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    maps.push_back({std::stoull(range.substr(0, dash), nullptr, 16),
                    std::stoull(range.substr(dash + 1), nullptr, 16), perms,
                    std::stoull(offset, nullptr, 16), path});
  }
  return maps;
}

// `length` bytes at `address` of the process, from /proc/PID/mem.
inline std::optional<std::string> read_memory(pid_t pid, uint64_t address, size_t length) {
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string bytes(length, '\0');
  size_t done = 0;
  while (done < length) {
    const ssize_t n =
        ::pread(fd, bytes.data() + done, length - done, static_cast<off_t>(address + done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != length) return std::nullopt;
  return bytes;
}

inline std::string executable_path(pid_t pid) {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string();
}

inline bool is_libc_path(std::string_view path) {
  const std::string_view base = path.substr(path.rfind('/') + 1);
  return base.starts_with("libc.so") || base.starts_with("libc-");
}

inline bool is_loader_path(std::string_view path) {
  return path.substr(path.rfind('/') + 1).starts_with("ld-linux");
}

// The executable mappings of the program itself, of its C library and of
// the dynamic loader (where dprobe watches for libraries), each with its
// bytes: two snapshots are equal when no byte of that text
// changed (and nothing was mapped or unmapped there).
struct TextSnapshot {
  std::vector<Mapping> mappings;
  std::vector<std::string> bytes;
  bool operator==(const TextSnapshot& other) const {
    if (mappings.size() != other.mappings.size() || bytes != other.bytes) return false;
    for (size_t i = 0; i < mappings.size(); ++i) {
      if (mappings[i].start != other.mappings[i].start ||
          mappings[i].end != other.mappings[i].end || mappings[i].path != other.mappings[i].path)
        return false;
    }
    return true;
  }
};

inline std::ostream& operator<<(std::ostream& os, const TextSnapshot& snapshot) {
  for (size_t i = 0; i < snapshot.mappings.size(); ++i) {
    os << "\n  " << hex(snapshot.mappings[i].start) << "-" << hex(snapshot.mappings[i].end) << " "
       << snapshot.mappings[i].path << " (" << snapshot.bytes[i].size() << " bytes)";
  }
  return os;
}

inline TextSnapshot text_snapshot(pid_t pid) {
  TextSnapshot snapshot;
  const std::string exe = executable_path(pid);
  for (const Mapping& m : read_maps(pid)) {
    if (m.perms.find('x') == std::string::npos) continue;
    if (m.path != exe && !is_libc_path(m.path) && !is_loader_path(m.path)) continue;
    snapshot.mappings.push_back(m);
    snapshot.bytes.push_back(read_memory(pid, m.start, m.end - m.start).value_or("<unreadable>"));
  }
  return snapshot;
}

// Whether an object whose path holds `name` is mapped in the process
// within `limit`.
inline bool eventually_mapped(pid_t pid, std::string_view name, std::chrono::milliseconds limit) {
  const std::string maps = "/proc/" + std::to_string(pid) + "/maps";
  return eventually([&] { return read_file(maps).find(name) != std::string::npos; }, limit);
}

// The path of the first object mapped in the process whose path ends with
// `suffix` ("/libc.so.6"); "" when none is.
inline std::string mapped_path(pid_t pid, std::string_view suffix) {
  for (const Mapping& m : read_maps(pid)) {
    if (m.path.size() >= suffix.size() && m.path.ends_with(suffix)) return m.path;
  }
  return "";
}

// Where the executable mappings of `path` in the process differ from the
// file's own bytes: "" when none does; else the first few addresses, with
// the byte in memory and the byte in the file. Differences at file offsets
// in [allowed.first, allowed.second) are not counted.
inline std::string text_differences_from_file(pid_t pid, const std::string& path,
                                              std::pair<uint64_t, uint64_t> allowed = {0, 0}) {
  const std::string file = read_file(path);
  std::ostringstream differences;
  int shown = 0;
  bool mapped = false;
  for (const Mapping& m : read_maps(pid)) {
    if (m.path != path || m.perms.find('x') == std::string::npos) continue;
    mapped = true;
    const auto memory = read_memory(pid, m.start, m.end - m.start);
    if (!memory) return "cannot read " + hex(m.start) + " of pid " + std::to_string(pid);
    for (size_t i = 0; i < memory->size() && shown < 8; ++i) {
      // Past the end of the file the page is zeros.
      const char expected = m.offset + i < file.size() ? file[m.offset + i] : '\0';
      if ((*memory)[i] == expected) continue;
      if (m.offset + i >= allowed.first && m.offset + i < allowed.second) continue;
      differences << hex(m.start + i) << ": " << hex(static_cast<uint8_t>((*memory)[i]))
                  << " in memory, " << hex(static_cast<uint8_t>(expected)) << " in the file; ";
      ++shown;
    }
  }
  if (!mapped) return path + " has no executable mapping in pid " + std::to_string(pid);
  return differences.str();
}

// The run-time address of `symbol` of the process's executable: its
// st_value (from nm) in the executable mapping that holds it; nullopt
// without nm. Assumes the usual layout, where a text segment's file offset
// and virtual address are equal.
inline std::optional<uint64_t> symbol_address(pid_t pid, std::string_view symbol) {
  const std::string exe = executable_path(pid);
  const std::string nm = find_tool("nm");
  if (nm.empty()) return std::nullopt;
  const RunResult run = run_program({nm, "--defined-only", exe});
  std::istringstream lines(run.out);
  std::string line;
  std::optional<uint64_t> value;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string address, type, name;
    if (fields >> address >> type >> name && name == symbol) {
      value = std::stoull(address, nullptr, 16);
    }
  }
  if (!value) return std::nullopt;
  for (const Mapping& m : read_maps(pid)) {
    if (m.path != exe || m.perms.find('x') == std::string::npos) continue;
    if (*value >= m.offset && *value < m.offset + (m.end - m.start))
      return m.start + (*value - m.offset);
  }
  return std::nullopt;
}

// The byte at `address` of the process (0x100 when unreadable).
inline unsigned first_byte(pid_t pid, uint64_t address) {
  const auto byte = read_memory(pid, address, 1);
  return byte ? static_cast<uint8_t>((*byte)[0]) : 0x100u;
}

constexpr unsigned kInt3 = 0xcc;
constexpr unsigned kJmpRel32 = 0xe9;

// Whether a probe's first byte shows it armed: a breakpoint, or the jump of
// an optimized probe (the instruction there is never itself a jmp rel32:
// a probe on one is emulated, not optimized).
inline bool armed_byte(unsigned byte) { return byte == kInt3 || byte == kJmpRel32; }

}  // namespace dprobe::integration

#endif  // DPROBE_TESTS_INTEGRATION_LIVE_PROCESS_H_
