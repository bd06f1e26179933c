// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Test support for the symbols layer: paths of the host's own binaries, and
// the hermetic fixtures (fixtures/*.c) compiled with `cc` once per test run
// into a temporary directory:
//
//   <root>/lib/libfix.so.1.0     libfix, soname libfix.so.1, with .symtab
//   <root>/lib/libfix.so.1       symlink to it, as ldconfig would make
//   <root>/app                   NEEDs libfix.so.1, DT_RUNPATH=$ORIGIN/lib
//   <root>/rp/app                the same with DT_RPATH=$ORIGIN/../lib
//   <root>/plain/app             the same with neither
//   <root>/decoy/libfix.so.1     libfix stripped (.dynsym only)
//   <root>/wrongarch/libfix.so.1 libfix with a foreign e_machine
//   <root>/plugins/libplugin.so  needed by nobody
//   <root>/sdt                   SDT probe points (fixtures/sdt.c, gcc's operands)
//
//   const Fixture& fx = fixture();
//   ASSERT_TRUE(fx.ok) << fx.error;
#ifndef DPROBE_TESTS_UNIT_SYMBOLS_FIXTURE_BUILD_H_
#define DPROBE_TESTS_UNIT_SYMBOLS_FIXTURE_BUILD_H_

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "symbols/search_paths.h"

namespace dprobe::symbols::test_support {

inline std::string host_libc() { return "/lib/" + std::string(host_multiarch()) + "/libc.so.6"; }

inline const char* const kSqlite3 = "/usr/bin/sqlite3";

struct Fixture {
  bool ok = false;
  std::string error;
  std::string root;
  std::string lib;        // lib/libfix.so.1.0
  std::string lib_link;   // lib/libfix.so.1
  std::string app;        // DT_RUNPATH=$ORIGIN/lib
  std::string app_rpath;  // DT_RPATH=$ORIGIN/../lib
  std::string app_plain;  // no search path of its own
  std::string stripped;   // decoy/libfix.so.1
  std::string wrong_arch;
  std::string plugin;
  std::string sdt;

  ~Fixture() {
    std::error_code ec;
    if (!root.empty()) std::filesystem::remove_all(root, ec);
  }
};

namespace detail {

inline std::string fixture_source(const char* name) {
  return (std::filesystem::path(__FILE__).parent_path() / "fixtures" / name).string();
}

inline bool run(const std::string& command, std::string& error) {
  const int status = std::system((command + " 2>&1").c_str());
  if (status == 0) return true;
  error = "failed (" + std::to_string(status) + "): " + command;
  return false;
}

// Sets e_machine to EM_RISCV (243): a file ld.so must skip.
inline bool patch_machine(const std::string& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(18);
  const char riscv[2] = {static_cast<char>(243), 0};
  file.write(riscv, 2);
  return file.good();
}

inline void build(Fixture& fx) {
  char dir_template[] = "/tmp/dprobe-symbols-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) {
    fx.error = "mkdtemp failed";
    return;
  }
  fx.root = dir_template;
  const std::string r = fx.root;
  for (const char* sub : {"/lib", "/rp", "/plain", "/decoy", "/wrongarch", "/plugins"}) {
    std::filesystem::create_directory(r + sub);
  }
  fx.lib = r + "/lib/libfix.so.1.0";
  fx.lib_link = r + "/lib/libfix.so.1";
  fx.app = r + "/app";
  fx.app_rpath = r + "/rp/app";
  fx.app_plain = r + "/plain/app";
  fx.stripped = r + "/decoy/libfix.so.1";
  fx.wrong_arch = r + "/wrongarch/libfix.so.1";
  fx.plugin = r + "/plugins/libplugin.so";
  fx.sdt = r + "/sdt";
  const std::string lib_sources = fixture_source("fix_a.c") + " " + fixture_source("fix_b.c");
  const std::string shared = "cc -O0 -shared -fPIC -Wl,-soname,libfix.so.1 ";
  const std::string link_app =
      "cc -O0 " + fixture_source("app.c") + " -L" + r + "/lib -l:libfix.so.1.0 ";
  std::filesystem::create_symlink("libfix.so.1.0", fx.lib_link);
  fx.ok =
      run(shared + "-o " + fx.lib + " " + lib_sources, fx.error) &&
      run(shared + "-s -o " + fx.stripped + " " + lib_sources, fx.error) &&
      run("cp " + fx.stripped + " " + fx.wrong_arch, fx.error) && patch_machine(fx.wrong_arch) &&
      run("cc -O0 -shared -fPIC -o " + fx.plugin + " " + fixture_source("plugin.c"), fx.error) &&
      run(link_app + "-Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -o " + fx.app, fx.error) &&
      run(link_app + "-Wl,--disable-new-dtags,-rpath,'$ORIGIN/../lib' -o " + fx.app_rpath,
          fx.error) &&
      run(link_app + "-o " + fx.app_plain, fx.error) &&
      run("cc -O2 -o " + fx.sdt + " " + fixture_source("sdt.c"), fx.error);
}

}  // namespace detail

// Built on first use, removed when the test binary exits.
inline const Fixture& fixture() {
  static Fixture fx;
  static const bool built = (detail::build(fx), true);
  (void)built;
  return fx;
}

// Search paths that see only what a test names, not the host's libraries.
inline SearchPaths hermetic_paths(std::vector<std::string> library_path = {},
                                  std::vector<std::string> system_dirs = {}) {
  return SearchPaths{std::move(library_path), std::move(system_dirs)};
}

}  // namespace dprobe::symbols::test_support

#endif  // DPROBE_TESTS_UNIT_SYMBOLS_FIXTURE_BUILD_H_
