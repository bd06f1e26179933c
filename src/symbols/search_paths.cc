// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/search_paths.h"

#include <glob.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>

#include "arch/host.h"
#include "base/strings.h"
#include "symbols/rooted_path.h"

namespace dprobe::symbols {
namespace {

// include loops (a.conf includes itself) must end somewhere.
constexpr int kMaxIncludeDepth = 8;

std::vector<std::string> expand_glob(const std::string& pattern) {
  glob_t matches{};
  std::vector<std::string> out;
  if (::glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
    const std::span<char*> paths(matches.gl_pathv, matches.gl_pathc);
    out.assign(paths.begin(), paths.end());
  }
  ::globfree(&matches);
  return out;
}

std::string strip_trailing_slashes(std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  return std::string(dir);
}

// `root`: the file system the configuration belongs to (empty: ours); an
// absolute include is looked up in it.
void read_conf(const std::string& root, const std::filesystem::path& path, int depth,
               std::vector<std::string>& dirs);

void include_pattern(const std::string& root, const std::filesystem::path& conf,
                     std::string_view pattern, int depth, std::vector<std::string>& dirs) {
  std::filesystem::path full(pattern);
  full = full.is_relative() ? conf.parent_path() / full
                            : std::filesystem::path(under_root(root, full.string()));
  for (const std::string& file : expand_glob(full.string())) {
    read_conf(root, file, depth + 1, dirs);
  }
}

void read_conf(const std::string& root, const std::filesystem::path& path, int depth,
               std::vector<std::string>& dirs) {
  if (depth > kMaxIncludeDepth) return;
  std::ifstream in(path);
  for (std::string raw; std::getline(in, raw);) {
    const std::string_view line = trim(std::string_view(raw).substr(0, raw.find('#')));
    if (line.empty()) continue;
    if (line.starts_with("include") && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
      include_pattern(root, path, trim(line.substr(7)), depth, dirs);
    } else if (!line.starts_with("hwcap")) {
      dirs.push_back(strip_trailing_slashes(line));
    }
  }
}

void append_unique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const std::string& dir : from) {
    if (std::find(to.begin(), to.end(), dir) == to.end()) to.push_back(dir);
  }
}

}  // namespace

std::string_view host_multiarch() { return arch::kHostMultiarch; }

std::vector<std::string> default_library_dirs() {
  const std::string multiarch(host_multiarch());
  return {"/lib/" + multiarch, "/usr/lib/" + multiarch, "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
}

std::vector<std::string> parse_library_path(std::string_view value) {
  std::vector<std::string> dirs;
  if (value.empty()) return dirs;
  for (;;) {
    const size_t end = value.find_first_of(":;");
    const std::string_view entry = value.substr(0, end);
    dirs.push_back(entry.empty() ? "." : strip_trailing_slashes(entry));
    if (end == std::string_view::npos) break;
    value.remove_prefix(end + 1);
  }
  return dirs;
}

std::vector<std::string> read_ld_so_conf(const std::string& path) {
  std::vector<std::string> dirs;
  read_conf({}, path, 0, dirs);
  return dirs;
}

SearchPaths SearchPaths::from_host() {
  SearchPaths paths;
  const char* env = std::getenv("LD_LIBRARY_PATH");
  paths.library_path = parse_library_path(env != nullptr ? env : "");
  append_unique(paths.system_dirs, read_ld_so_conf("/etc/ld.so.conf"));
  append_unique(paths.system_dirs, default_library_dirs());
  return paths;
}

SearchPaths SearchPaths::from_root(const std::string& root) {
  SearchPaths paths;
  std::vector<std::string> configured;
  read_conf(root, under_root(root, "/etc/ld.so.conf"), 0, configured);
  append_unique(paths.system_dirs, configured);
  append_unique(paths.system_dirs, default_library_dirs());
  return paths;
}

}  // namespace dprobe::symbols
