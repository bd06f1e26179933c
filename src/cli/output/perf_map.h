// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The names of JIT code, from the map file perf reads: /tmp/perf-PID.map,
// PID the process's own (its PID namespace's), one line per piece of code,
// "START SIZE NAME" with START and SIZE in hex without 0x and NAME the rest
// of the line (spaces included); the JVM writes the numbers with 0x, as
// perf reads them too. node writes it as it compiles
// (--perf-basic-prof), the JVM at its exit (-XX:+DumpPerfMapAtExit) or on
// `jcmd PID Compiler.perfmap`, CPython 3.12 with -X perf. Code moves: a
// later line covering an address replaces what earlier ones said of it.
// The jitdump a process writes (node --perf-prof: cli/output/jit_dump.h)
// goes into the same table.
//
//   std::unique_ptr<PerfMap> map = PerfMap::of_process(host_pid, own_pid);
//   if (auto hit = map->find(pc)) ... hit->name, hit->offset
//   map->label()   // "[JIT] tid 42": the object column perf shows for it
#ifndef DPROBE_CLI_OUTPUT_PERF_MAP_H_
#define DPROBE_CLI_OUTPUT_PERF_MAP_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace dprobe::cli {

struct PerfMapLine {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string_view name;
};

// One line of a map ("3ef414c0 398 RegExp:[{(]", "0x00007f3600ec8540
// 0x00000000000001c8 int Hot.hot(int)"), or nullopt for one that is none:
// no hex start or size, no name, a size of 0, a range past the end of the
// address space.
std::optional<PerfMapLine> parse_perf_map_line(std::string_view line);

struct PerfMapHit {
  std::string_view name;  // valid as long as the table
  uint64_t offset = 0;    // address - start
  uint64_t size = 0;
};

// The entries of a map, by address; a later one replaces the earlier ones
// it overlaps (that code is gone).
class PerfMapTable {
 public:
  void add(const PerfMapLine& line);
  // Each complete line of `text` (up to its last newline); returns the
  // bytes taken. Lines that are no entry are skipped.
  size_t add_lines(std::string_view text);
  std::optional<PerfMapHit> find(uint64_t address) const;
  size_t size() const { return entries_.size(); }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    uint64_t size;
    std::string_view name;
  };
  std::map<uint64_t, Entry> entries_;  // by start, disjoint
  // Every name ever read: a replaced entry's name may still be held by a
  // caller (a trace file's symbol log keeps the views it was given).
  std::set<std::string, std::less<>> names_;
};

// A process's map file, read again when it has grown or been replaced.
// Thread-safe.
class PerfMap {
 public:
  // The map of the process `host_pid` (dprobe's id of it), whose own id is
  // `own_pid`: /tmp/perf-OWN_PID.map in its mount namespace, reached
  // through /proc/HOST_PID/root/tmp, held open so that the file is still
  // found after the process is gone (the JVM writes it at its exit).
  static std::unique_ptr<PerfMap> of_process(pid_t host_pid, uint32_t own_pid);
  // The map `file_name` in the directory `directory` (tests).
  PerfMap(const std::string& directory, std::string file_name, uint32_t own_pid);
  ~PerfMap();
  PerfMap(const PerfMap&) = delete;
  PerfMap& operator=(const PerfMap&) = delete;

  // The entry covering `address`. The file is looked at again when the
  // address is in none and it was not looked at in the last millisecond:
  // a stack of many JIT frames costs one look, not one per frame.
  std::optional<PerfMapHit> find(uint64_t address);
  // Reads what the file holds now, however recently it was looked at.
  void refresh();
  // What perf names the object of such code: "[JIT] tid OWN_PID".
  std::string_view label() const { return label_; }
  // Names from the jitdump file at `path` too (cli/output/jit_dump.h): the
  // one a process maps is found by itself (of_process); false when the
  // file cannot be opened or trusted.
  bool use_jitdump(const std::string& path);

 private:
  PerfMap(int directory_fd, std::string file_name, uint32_t own_pid, uid_t process_uid);
  void refresh_locked();
  void refresh_map_locked();
  void refresh_jitdump_locked();
  void find_jitdump_locked();

  int directory_fd_ = -1;
  std::string file_name_;
  std::string label_;
  uid_t process_uid_;  // who may own the file, besides root and dprobe's user
  std::mutex mutex_;
  PerfMapTable table_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  uint64_t taken_ = 0;  // bytes of the file read into the table
  std::chrono::steady_clock::time_point looked_{};
  // The jitdump the process maps (node --perf-prof: jit-OWN_PID.dump),
  // held open once found.
  pid_t host_pid_ = 0;
  uint32_t own_pid_ = 0;
  int cwd_fd_ = -1;  // the process's working directory, where node writes it
  int jitdump_fd_ = -1;
  uint64_t jit_taken_ = 0;  // its bytes read: the header, then whole records
  std::chrono::steady_clock::time_point jit_looked_{};
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_PERF_MAP_H_
