// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Finds the file the dynamic loader would map for an object named in a probe
// (`libc.so.6:malloc`): by path, or by soname or basename among the
// executable's DT_NEEDED closure, searched in ld.so's order.
//
//   ObjectResolver resolver("/usr/bin/sqlite3");
//   Result<std::string, LookupError> lib = resolver.resolve("libsqlite3.so.0");
//   // *lib == "/lib/x86_64-linux-gnu/libsqlite3.so.0"
#ifndef DPROBE_SYMBOLS_OBJECT_RESOLVER_H_
#define DPROBE_SYMBOLS_OBJECT_RESOLVER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "symbols/lookup_error.h"
#include "symbols/search_paths.h"

namespace dprobe::symbols {

class ObjectResolver {
 public:
  // `executable` may be empty: then only the search directories are used.
  // An executable under a process's root (/proc/PID/root/...) has its
  // objects found in that root, as its loader found them.
  explicit ObjectResolver(std::string executable);
  ObjectResolver(std::string executable, SearchPaths paths);

  // A name with a '/' is taken as a path (it must be a regular file).
  // Otherwise the first object of the executable's load order whose
  // DT_NEEDED name, soname or file basename equals `object`; failing that
  // (a library loaded later by dlopen) a file of that name in the
  // executable's search directories.
  Result<std::string, LookupError> resolve(std::string_view object) const;

  // The soname and path of each library of the executable's DT_NEEDED
  // closure, in load order (the loader's own included); empty without one.
  std::vector<std::pair<std::string, std::string>> libraries() const;

  const std::string& executable() const { return executable_; }
  const SearchPaths& search_paths() const { return paths_; }

 private:
  std::string executable_;
  std::string root_;  // the process's root the executable is named in (rooted_path.h)
  SearchPaths paths_;
};

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_OBJECT_RESOLVER_H_
