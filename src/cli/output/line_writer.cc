// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/line_writer.h"

#include <limits.h>
#include <unistd.h>

#include <cerrno>

namespace dprobe::cli {
namespace {

// The longest run of whole lines at the front of `text` that fits one
// write; a first line longer than PIPE_BUF, whole.
size_t next_chunk(std::string_view text) {
  if (text.size() <= PIPE_BUF) return text.size();
  const size_t last = text.rfind('\n', PIPE_BUF - 1);
  if (last != std::string_view::npos) return last + 1;
  const size_t first = text.find('\n');
  return first == std::string_view::npos ? text.size() : first + 1;
}

}  // namespace

bool write_whole_lines(int fd, std::string_view text) {
  while (!text.empty()) {
    const size_t size = next_chunk(text);
    const ssize_t written = ::write(fd, text.data(), size);
    if (written < 0 && errno == EINTR) continue;
    if (written == 0) errno = EIO;  // a file that takes nothing, and says no error
    if (written <= 0) return false;
    text.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

}  // namespace dprobe::cli
