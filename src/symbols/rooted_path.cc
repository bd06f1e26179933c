// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/rooted_path.h"

#include <limits.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <filesystem>
#include <vector>

namespace dprobe::symbols {
namespace {

// Linux's own bound on the links one lookup follows.
constexpr int kMaxLinks = 40;

std::vector<std::string> parts_of(std::string_view path) {
  std::vector<std::string> parts;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (!part.empty() && part != ".") parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

}  // namespace

std::string root_of(std::string_view path) {
  constexpr std::string_view kProc = "/proc/";
  if (!path.starts_with(kProc)) return {};
  size_t end = kProc.size();
  while (end < path.size() && std::isdigit(static_cast<unsigned char>(path[end])) != 0) ++end;
  if (end == kProc.size()) return {};
  const std::string_view root = path.substr(0, end + 5);  // "/proc/PID/root"
  if (path.substr(end, 5) != "/root" || (path.size() > root.size() && path[root.size()] != '/')) {
    return {};
  }
  return std::string(root);
}

std::string under_root(std::string_view root, std::string_view path) {
  if (root.empty() || !path.starts_with('/')) return std::string(path);
  if (path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/')) {
    return std::string(path);
  }
  return std::string(root) + std::string(path);
}

std::string canonical_under(std::string_view root, const std::string& path) {
  if (root.empty()) {
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
    return ec ? path : canonical.string();
  }
  const std::string rooted = under_root(root, path);
  std::vector<std::string> pending = parts_of(std::string_view(rooted).substr(root.size()));
  std::vector<std::string> done;  // resolved parts below root
  int links = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    const std::string& part = pending[i];
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    std::string here(root);
    for (const std::string& each : done) here += "/" + each;
    here += "/" + part;
    char target[PATH_MAX];
    const ssize_t size = ::readlink(here.c_str(), target, sizeof(target) - 1);
    if (size < 0) {
      if (errno != EINVAL) return rooted;  // missing, or unreadable: as given
      done.push_back(part);
      continue;
    }
    if (++links > kMaxLinks) return rooted;
    const std::string_view link(target, static_cast<size_t>(size));
    if (link.starts_with('/')) done.clear();
    std::vector<std::string> rest = parts_of(link);
    rest.insert(rest.end(), pending.begin() + static_cast<std::ptrdiff_t>(i) + 1, pending.end());
    pending = std::move(rest);
    i = static_cast<size_t>(-1);
  }
  std::string canonical(root);
  for (const std::string& each : done) canonical += "/" + each;
  return canonical;
}

}  // namespace dprobe::symbols
