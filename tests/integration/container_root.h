// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the container tests share (attach_container_test.cc,
// follow_root_test.cc): a root of its own for busy_loop_O2, built from the
// machine's files, and the check that each of a run's events was hit.
//
//   ASSERT_TRUE(make_root(dir.file("root")));   // ROOT/app, its libraries, /proc, /tmp
//   expect_hits(run, {"busy", "nap"});
#ifndef DPROBE_TESTS_INTEGRATION_CONTAINER_ROOT_H_
#define DPROBE_TESTS_INTEGRATION_CONTAINER_ROOT_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {

// What `ldd` says `program` loads: the libraries' and the loader's paths.
inline std::vector<std::string> loaded_files(const std::string& program) {
  const RunResult ldd = run_program({"/usr/bin/ldd", program});
  std::vector<std::string> files;
  std::istringstream lines(ldd.out);
  for (std::string word; lines >> word;) {
    if (word.starts_with('/') && std::filesystem::exists(word)) files.push_back(word);
  }
  return files;
}

// `file` and what it loads, at their own paths below `root`.
inline bool copy_with_libraries(const std::string& root, const std::string& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files = loaded_files(file);
  if (files.empty()) return false;
  files.push_back(file);
  for (const std::string& each : files) {
    fs::create_directories(root + fs::path(each).parent_path().string(), ec);
    fs::copy_file(fs::canonical(each), root + each, fs::copy_options::skip_existing, ec);
    if (ec) return false;
  }
  return true;
}

// busy_loop_O2 as ROOT/app, the files it loads at their own paths below
// ROOT, `programs` (a shell, sleep) with theirs, and an empty /proc and
// /tmp.
inline bool make_root(const std::string& root, const std::vector<std::string>& programs = {}) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(root + "/proc", ec);
  fs::create_directories(root + "/tmp", ec);
  fs::copy_file(program("busy_loop_O2"), root + "/app", ec);
  if (ec || loaded_files(program("busy_loop_O2")).empty()) return false;
  if (!copy_with_libraries(root, program("busy_loop_O2"))) return false;
  fs::remove(root + program("busy_loop_O2"), ec);  // it is /app there
  for (const std::string& each : programs) {
    if (!copy_with_libraries(root, each)) return false;
  }
  return true;
}

// Each of `events` is in the run's profile, with hits.
inline void expect_hits(const RunResult& run, std::initializer_list<const char*> events) {
  const std::vector<ProfileRow> profile = parse_profile(run.err);
  for (const char* event : events) {
    const auto row = profile_row(profile, event);
    ASSERT_TRUE(row) << event << ": " << run;
    EXPECT_GT(row->hits, 0u) << event << ": " << run;
  }
}

}  // namespace dprobe::integration

#endif  // DPROBE_TESTS_INTEGRATION_CONTAINER_ROOT_H_
