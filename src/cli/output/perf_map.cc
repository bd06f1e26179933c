// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/perf_map.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <utility>

#include "cli/output/jit_dump.h"

namespace dprobe::cli {
namespace {

// How long a look at the file stands for a miss: the symbolizer is asked
// once per frame, and one look per line is enough.
constexpr auto kLookInterval = std::chrono::milliseconds(1);
// More than any map seen (node's hold some MiB after hours); past it the
// rest is not read.
constexpr uint64_t kMaxMapBytes = uint64_t{256} << 20;

// A hex number, all of `text`: node writes it bare, the JVM with 0x and
// padded with zeros (perf reads both: strtoull base 16).
std::optional<uint64_t> parse_hex(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    text.remove_prefix(2);
  while (text.size() > 1 && text[0] == '0') text.remove_prefix(1);
  if (text.empty() || text.size() > 16) return std::nullopt;
  uint64_t value = 0;
  for (const char c : text) {
    uint64_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<uint64_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<uint64_t>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    value = value << 4 | digit;
  }
  return value;
}

// The word of `line` at `at` up to the next space; `at` moves past it and
// its space.
std::string_view next_word(std::string_view line, size_t& at) {
  const size_t end = std::min(line.find(' ', at), line.size());
  const std::string_view word = line.substr(at, end - at);
  at = end + 1;
  return word;
}

}  // namespace

std::optional<PerfMapLine> parse_perf_map_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  size_t at = 0;
  const std::optional<uint64_t> start = parse_hex(next_word(line, at));
  if (!start || at >= line.size()) return std::nullopt;
  const std::optional<uint64_t> size = parse_hex(next_word(line, at));
  if (!size || *size == 0 || at >= line.size() || *start > UINT64_MAX - *size) {
    return std::nullopt;
  }
  return PerfMapLine{*start, *size, line.substr(at)};
}

void PerfMapTable::add(const PerfMapLine& line) {
  const uint64_t end = line.start + line.size;
  // The entries it overlaps: the one before it reaching into it, and those
  // beginning inside it.
  auto first = entries_.lower_bound(line.start);
  if (first != entries_.begin()) {
    const auto before = std::prev(first);
    if (before->first + before->second.size > line.start) first = before;
  }
  auto last = first;
  while (last != entries_.end() && last->first < end) ++last;
  entries_.erase(first, last);
  const std::string_view name = *names_.emplace(line.name).first;
  entries_.emplace(line.start, Entry{line.size, name});
}

size_t PerfMapTable::add_lines(std::string_view text) {
  size_t taken = 0;
  for (;;) {
    const size_t newline = text.find('\n', taken);
    if (newline == std::string_view::npos) return taken;
    if (auto line = parse_perf_map_line(text.substr(taken, newline - taken))) add(*line);
    taken = newline + 1;
  }
}

std::optional<PerfMapHit> PerfMapTable::find(uint64_t address) const {
  auto after = entries_.upper_bound(address);
  if (after == entries_.begin()) return std::nullopt;
  const auto& [start, entry] = *std::prev(after);
  if (address - start >= entry.size) return std::nullopt;
  return PerfMapHit{entry.name, address - start, entry.size};
}

std::unique_ptr<PerfMap> PerfMap::of_process(pid_t host_pid, uint32_t own_pid) {
  const std::string proc = "/proc/" + std::to_string(host_pid);
  struct stat process {};
  const uid_t uid = ::stat(proc.c_str(), &process) == 0 ? process.st_uid : ::geteuid();
  const std::string tmp = proc + "/root/tmp";
  auto map = std::unique_ptr<PerfMap>(
      new PerfMap(::open(tmp.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC),
                  "perf-" + std::to_string(own_pid) + ".map", own_pid, uid));
  map->host_pid_ = host_pid;
  // Held from the start: the dump may be read once the process is gone.
  map->cwd_fd_ = ::open((proc + "/cwd").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  return map;
}

PerfMap::PerfMap(const std::string& directory, std::string file_name, uint32_t own_pid)
    : PerfMap(::open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC), std::move(file_name),
              own_pid, ::geteuid()) {}

PerfMap::PerfMap(int directory_fd, std::string file_name, uint32_t own_pid, uid_t process_uid)
    : directory_fd_(directory_fd),
      file_name_(std::move(file_name)),
      label_("[JIT] tid " + std::to_string(own_pid)),
      process_uid_(process_uid),
      own_pid_(own_pid) {}

PerfMap::~PerfMap() {
  if (directory_fd_ >= 0) ::close(directory_fd_);
  if (jitdump_fd_ >= 0) ::close(jitdump_fd_);
  if (cwd_fd_ >= 0) ::close(cwd_fd_);
}

std::optional<PerfMapHit> PerfMap::find(uint64_t address) {
  std::lock_guard lock(mutex_);
  if (auto hit = table_.find(address)) return hit;
  const auto now = std::chrono::steady_clock::now();
  if (now - looked_ < kLookInterval) return std::nullopt;
  looked_ = now;
  refresh_locked();
  return table_.find(address);
}

void PerfMap::refresh() {
  std::lock_guard lock(mutex_);
  looked_ = std::chrono::steady_clock::now();
  refresh_locked();
}

namespace {

// Whether a map file may be believed: a regular file (no device or fifo to
// block on), owned by dprobe's user, root or the process's. perf asks the
// same: a file someone else could write would name code as they like.
bool trustworthy(const struct stat& file, uid_t process_uid) {
  return S_ISREG(file.st_mode) &&
         (file.st_uid == ::geteuid() || file.st_uid == 0 || file.st_uid == process_uid);
}

}  // namespace

void PerfMap::refresh_locked() {
  refresh_map_locked();
  refresh_jitdump_locked();
}

void PerfMap::refresh_map_locked() {
  if (directory_fd_ < 0) return;
  const int fd =
      ::openat(directory_fd_, file_name_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return;  // not written (yet): what was read stays true
  struct stat file {};
  if (::fstat(fd, &file) != 0 || !trustworthy(file, process_uid_)) {
    ::close(fd);
    return;
  }
  // Another file (written anew, as jcmd Compiler.perfmap does), or one cut
  // short: read from its start.
  const auto size = static_cast<uint64_t>(file.st_size);
  if (file.st_dev != device_ || file.st_ino != inode_ || size < taken_) {
    table_.clear();
    taken_ = 0;
    device_ = file.st_dev;
    inode_ = file.st_ino;
  }
  std::string text;
  text.resize(std::min(size, kMaxMapBytes) - std::min(taken_, std::min(size, kMaxMapBytes)));
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n =
        ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(taken_ + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  taken_ += table_.add_lines(text);
}

namespace {

// Bytes [from, to) of `fd`; fewer at its end or on an error.
std::string read_range(int fd, uint64_t from, uint64_t to) {
  std::string bytes;
  bytes.resize(to > from ? to - from : 0);
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n =
        ::pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(from + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

constexpr auto kJitDumpLookInterval = std::chrono::milliseconds(100);

}  // namespace

bool PerfMap::use_jitdump(const std::string& path) {
  std::lock_guard lock(mutex_);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  struct stat file {};
  if (fd < 0 || ::fstat(fd, &file) != 0 || !trustworthy(file, process_uid_)) {
    if (fd >= 0) ::close(fd);
    return false;
  }
  if (jitdump_fd_ >= 0) ::close(jitdump_fd_);
  jitdump_fd_ = fd;
  jit_taken_ = 0;
  refresh_jitdump_locked();
  return true;
}

// The jitdump the process writes (perf's rule: a file named jit-PID.dump
// it maps): in its working directory, where node puts it, or wherever its
// mappings say, reached through its root; looked for at most every 100 ms.
void PerfMap::find_jitdump_locked() {
  const auto now = std::chrono::steady_clock::now();
  if (host_pid_ <= 0 || now - jit_looked_ < kJitDumpLookInterval) return;
  jit_looked_ = now;
  const std::string name = "jit-" + std::to_string(own_pid_) + ".dump";
  if (cwd_fd_ >= 0) {
    const int fd = ::openat(cwd_fd_, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat file {};
    if (fd >= 0 && ::fstat(fd, &file) == 0 && trustworthy(file, process_uid_)) {
      jitdump_fd_ = fd;
      return;
    }
    if (fd >= 0) ::close(fd);
  }
  const std::string proc = "/proc/" + std::to_string(host_pid_);
  std::ifstream maps(proc + "/maps");
  const std::string wanted = "/" + name;
  for (std::string line; std::getline(maps, line);) {
    if (!line.ends_with(wanted)) continue;
    const size_t path = line.find('/');
    if (path == std::string::npos) continue;
    const int fd = ::open((proc + "/root" + line.substr(path)).c_str(),
                          O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat file {};
    if (fd >= 0 && ::fstat(fd, &file) == 0 && trustworthy(file, process_uid_)) {
      jitdump_fd_ = fd;
      return;
    }
    if (fd >= 0) ::close(fd);
  }
}

void PerfMap::refresh_jitdump_locked() {
  if (jitdump_fd_ < 0) find_jitdump_locked();
  if (jitdump_fd_ < 0) return;
  struct stat file {};
  if (::fstat(jitdump_fd_, &file) != 0) return;
  const auto size = std::min(static_cast<uint64_t>(file.st_size), kMaxMapBytes);
  if (jit_taken_ == 0) {
    jit_taken_ = jitdump_header_size(read_range(jitdump_fd_, 0, 64));
    if (jit_taken_ == 0) {  // no jitdump: not looked at again
      ::close(jitdump_fd_);
      jitdump_fd_ = -1;
      host_pid_ = 0;
      return;
    }
  }
  jit_taken_ += add_jitdump_records(read_range(jitdump_fd_, jit_taken_, size), table_);
}

}  // namespace dprobe::cli
