// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Files a test writes and reads back: a private directory removed with
// everything in it at the end of scope, and a file's whole content.
//
//   TempDir dir;
//   ASSERT_TRUE(dir.ok());
//   ... write dir.file("trace") ...
//   EXPECT_EQ(read_file(dir.file("trace")), "...");
#ifndef DPROBE_TESTS_SUPPORT_FILES_H_
#define DPROBE_TESTS_SUPPORT_FILES_H_

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>

namespace dprobe::support {

// The file's bytes, or what could be read of them: never an exception (the
// C++ stream throws when a read fails, as one of /proc/PID/stat does once
// PID has exited, ESRCH).
inline std::string read_file(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[65536];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

// A private directory, removed with everything in it at the end of scope.
class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/dprobe-test-XXXXXX";
    if (::mkdtemp(name) != nullptr) path_ = name;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

}  // namespace dprobe::support

#endif  // DPROBE_TESTS_SUPPORT_FILES_H_
