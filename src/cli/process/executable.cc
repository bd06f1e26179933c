// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/executable.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace dprobe::cli {

std::string find_executable(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

namespace {

// The kernel reads this much of a file to find its #! line (BINPRM_BUF_SIZE)
// and follows interpreters this deep.
constexpr size_t kScriptHead = 256;
constexpr int kMaxInterpreterDepth = 4;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// The #! line of `path`, without the "#!", or nullopt if it has none.
std::optional<std::string> shebang_line(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char head[kScriptHead];
  ssize_t got;
  do {
    got = ::read(fd, head, sizeof(head));
  } while (got < 0 && errno == EINTR);
  ::close(fd);
  if (got < 2 || head[0] != '#' || head[1] != '!') return std::nullopt;
  std::string_view line(head + 2, static_cast<size_t>(got) - 2);
  line = line.substr(0, line.find('\n'));
  return std::string(line);
}

}  // namespace

Result<ExecTarget> resolve_interpreter(const std::string& executable,
                                       const std::vector<std::string>& argv) {
  ExecTarget target{executable, argv};
  for (int depth = 0; depth <= kMaxInterpreterDepth; ++depth) {
    const std::optional<std::string> line = shebang_line(target.executable);
    if (!line) return target;
    std::string_view rest(*line);
    while (!rest.empty() && is_blank(rest.front())) rest.remove_prefix(1);
    while (!rest.empty() && (is_blank(rest.back()) || rest.back() == '\r')) rest.remove_suffix(1);
    size_t end = 0;
    while (end < rest.size() && !is_blank(rest[end])) ++end;
    const std::string interpreter(rest.substr(0, end));
    rest.remove_prefix(end);
    while (!rest.empty() && is_blank(rest.front())) rest.remove_prefix(1);
    if (interpreter.empty()) return fail(target.executable + ": its #! line names no interpreter");
    std::vector<std::string> args{interpreter};
    if (!rest.empty()) args.emplace_back(rest);
    args.push_back(target.executable);
    if (target.argv.size() > 1) args.insert(args.end(), target.argv.begin() + 1, target.argv.end());
    target = {interpreter, std::move(args)};
  }
  return fail(executable + ": too many levels of #! interpreters");
}

}  // namespace dprobe::cli
