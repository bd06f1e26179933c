// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The directories the dynamic loader searches for a library named without a
// '/', apart from the per-object DT_RPATH/DT_RUNPATH. from_host() reads them
// the way ld.so and ldconfig would; tests build their own for hermeticity.
//
//   SearchPaths paths = SearchPaths::from_host();
//   SearchPaths fake{.library_path = {"/tmp/x/lib"}, .system_dirs = {}};
#ifndef DPROBE_SYMBOLS_SEARCH_PATHS_H_
#define DPROBE_SYMBOLS_SEARCH_PATHS_H_

#include <string>
#include <string_view>
#include <vector>

namespace dprobe::symbols {

struct SearchPaths {
  std::vector<std::string> library_path;  // LD_LIBRARY_PATH, searched before DT_RUNPATH
  std::vector<std::string> system_dirs;   // ld.so.conf, then the built-in defaults

  // LD_LIBRARY_PATH of this process, /etc/ld.so.conf and default_library_dirs().
  static SearchPaths from_host();
  // A process's root (symbols/rooted_path.h): its ld.so.conf and the
  // default directories, as it names them (not below `root`). The
  // process's LD_LIBRARY_PATH is not known here.
  static SearchPaths from_root(const std::string& root);
};

// "x86_64-linux-gnu" or "aarch64-linux-gnu": the Debian multiarch tuple of
// the ISA dprobe was built for.
std::string_view host_multiarch();

// /lib/<multiarch>, /usr/lib/<multiarch>, /lib64, /usr/lib64, /lib, /usr/lib.
std::vector<std::string> default_library_dirs();

// Splits LD_LIBRARY_PATH on ':' and ';' as ld.so does; an empty entry means
// the current directory.
std::vector<std::string> parse_library_path(std::string_view value);

// The directories an ld.so.conf lists, following `include` globs (relative
// ones from the including file's directory) and skipping comments. A missing
// file yields no directories.
std::vector<std::string> read_ld_so_conf(const std::string& path);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_SEARCH_PATHS_H_
