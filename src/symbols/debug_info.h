// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The DWARF of one ELF object, read with elfutils' libdw, wherever it is:
// the object's own sections (DWARF 4 or 5, compressed or not), or a separate
// debug file found as gdb finds one, by build-id then by .gnu_debuglink:
//
//   ROOT/.build-id/xx/yyyy.debug      Debian's -dbgsym packages (ROOT is
//                                     /usr/lib/debug unless told otherwise)
//   CACHE/BUILDID/debuginfo           a debuginfod client's cache (read only:
//                                     nothing is ever downloaded)
//   DIR/LINK, DIR/.debug/LINK, ROOT/DIR/LINK
//                                     the debuglink, DIR the object's directory
//
// A separate file is taken only when its build-id matches the object's (or,
// without one, its CRC matches the debuglink's). Addresses in the DWARF are
// the object's link-time addresses either way.
//
//   auto info = DebugInfo::open("/usr/bin/app", DebugInfoPaths::from_host());
//   if (!info) return info.error();  // "no debug information for ...: looked in ..."
//   Dwarf* dwarf = info->dwarf();
#ifndef DPROBE_SYMBOLS_DEBUG_INFO_H_
#define DPROBE_SYMBOLS_DEBUG_INFO_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

struct Dwarf;  // libdw's handle; callers need not include <elfutils/libdw.h>
struct Elf;

namespace dprobe::symbols {

// Where separate debug files are looked for.
struct DebugInfoPaths {
  std::vector<std::string> debug_roots;        // "/usr/lib/debug"
  std::vector<std::string> debuginfod_caches;  // directories of BUILDID/debuginfo

  // /usr/lib/debug, and the debuginfod cache as libdebuginfod places it:
  // $DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client, else
  // ~/.cache/debuginfod_client (those that exist).
  static DebugInfoPaths from_host();
};

class DebugInfo {
 public:
  static Result<DebugInfo> open(const std::string& object_path, const DebugInfoPaths& paths);

  DebugInfo(DebugInfo&& other) noexcept;
  DebugInfo& operator=(DebugInfo&& other) noexcept;
  DebugInfo(const DebugInfo&) = delete;
  DebugInfo& operator=(const DebugInfo&) = delete;
  ~DebugInfo();

  const std::string& object_path() const { return object_path_; }
  // The file the DWARF was read from: object_path() when it has its own.
  const std::string& debug_path() const { return debug_path_; }
  bool is_separate() const { return debug_path_ != object_path_; }
  // The object's build-id in lowercase hex; empty when it has none.
  const std::string& build_id() const { return build_id_; }
  Dwarf* dwarf() const { return dwarf_; }
  // The object itself, whose .eh_frame holds its call frame information
  // (a separate debug file keeps only an empty copy of that section).
  Elf* object_elf() const { return object_elf_ != nullptr ? object_elf_ : elf_; }

 private:
  DebugInfo() = default;
  void release();

  std::string object_path_;
  std::string debug_path_;
  std::string build_id_;
  int fd_ = -1;
  Elf* elf_ = nullptr;
  Dwarf* dwarf_ = nullptr;
  int object_fd_ = -1;  // separate debug file: the object, open too
  Elf* object_elf_ = nullptr;
};

// The places open() tries for a separate debug file, in its order: by
// build-id (hex, may be empty) then by debuglink (may be empty).
std::vector<std::string> separate_debug_candidates(const std::string& object_path,
                                                   std::string_view build_id,
                                                   std::string_view debuglink,
                                                   const DebugInfoPaths& paths);

// The CRC-32 .gnu_debuglink records of a debug file's bytes.
uint32_t debuglink_crc32(std::string_view bytes, uint32_t crc = 0);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_DEBUG_INFO_H_
