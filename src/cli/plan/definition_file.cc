// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/definition_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "base/strings.h"

namespace dprobe::cli {
namespace {

// A '#' that starts a word begins a comment (as lang's definition files).
std::string_view strip_comment(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    const bool word_start = i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t';
    if (line[i] == '#' && word_start) return line.substr(0, i);
  }
  return line;
}

// Reads at most max_bytes + 1 bytes: one more says the file is too big.
Result<std::string> read_capped(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(path + ": " + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  while (text.size() <= max_bytes) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      return fail(path + ": " + std::strerror(error));
    }
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  if (text.size() > max_bytes) {
    return fail(path + ": more than " + std::to_string(max_bytes) +
                " bytes: not a file of definitions");
  }
  return text;
}

}  // namespace

Result<std::vector<lang::SourceLine>> read_definition_lines(const std::string& path,
                                                            size_t max_bytes) {
  auto text = read_capped(path, max_bytes);
  if (!text) return unexpected(text.error());
  std::vector<lang::SourceLine> lines;
  std::string_view rest(*text);
  for (size_t number = 1; !rest.empty(); ++number) {
    const size_t end = rest.find('\n');
    const std::string_view line = trim(strip_comment(rest.substr(0, end)));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    if (!line.empty()) lines.push_back({std::string(line), path + ":" + std::to_string(number)});
  }
  return lines;
}

}  // namespace dprobe::cli
