// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/debug_info.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace dprobe::symbols {
namespace {

bool init_libelf() {
  static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
  return ok;
}

// An ELF file opened for reading; closed unless released.
struct OpenElf {
  int fd = -1;
  Elf* elf = nullptr;

  OpenElf() = default;
  OpenElf(const OpenElf&) = delete;
  OpenElf& operator=(const OpenElf&) = delete;
  OpenElf(OpenElf&& other) noexcept
      : fd(std::exchange(other.fd, -1)), elf(std::exchange(other.elf, nullptr)) {}
  ~OpenElf() {
    if (elf != nullptr) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }
};

bool open_elf(const std::string& path, OpenElf& out) {
  out.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (out.fd < 0) return false;
  out.elf = elf_begin(out.fd, ELF_C_READ_MMAP, nullptr);
  return out.elf != nullptr && elf_kind(out.elf) == ELF_K_ELF;
}

// A .debug_info (or .zdebug_info) with contents: a stripped object keeps
// none, a --only-keep-debug file keeps it and empties the rest (NOBITS).
bool has_dwarf(Elf* elf) {
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    const char* name = elf_strptr(elf, names, header.sh_name);
    if (name == nullptr || header.sh_type == SHT_NOBITS) continue;
    if (std::strcmp(name, ".debug_info") == 0 || std::strcmp(name, ".zdebug_info") == 0) {
      return true;
    }
  }
  return false;
}

std::string build_id_of(Elf* elf) {
  const void* bytes = nullptr;
  const ssize_t size = dwelf_elf_gnu_build_id(elf, &bytes);
  std::string hex;
  for (ssize_t i = 0; i < size; ++i) {
    static constexpr char kDigits[] = "0123456789abcdef";
    const auto byte = static_cast<const unsigned char*>(bytes)[i];
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xf];
  }
  return hex;
}

bool file_crc32(const std::string& path, uint32_t& crc) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  crc = 0;
  std::array<char, 65536> buffer;
  ssize_t got = 0;
  while ((got = ::read(fd, buffer.data(), buffer.size())) > 0) {
    crc = debuglink_crc32(std::string_view(buffer.data(), static_cast<size_t>(got)), crc);
  }
  ::close(fd);
  return got == 0;
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

}  // namespace

uint32_t debuglink_crc32(std::string_view bytes, uint32_t crc) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (const char ch : bytes)
    crc = table[(crc ^ static_cast<unsigned char>(ch)) & 0xff] ^ (crc >> 8);
  return ~crc;
}

DebugInfoPaths DebugInfoPaths::from_host() {
  DebugInfoPaths paths;
  paths.debug_roots.push_back("/usr/lib/debug");
  std::string cache;
  if (const char* env = std::getenv("DEBUGINFOD_CACHE_PATH"); env != nullptr && *env != '\0') {
    cache = env;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    cache = std::string(xdg) + "/debuginfod_client";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    cache = std::string(home) + "/.cache/debuginfod_client";
  }
  std::error_code ec;
  if (!cache.empty() && std::filesystem::is_directory(cache, ec)) {
    paths.debuginfod_caches.push_back(cache);
  }
  return paths;
}

std::vector<std::string> separate_debug_candidates(const std::string& object_path,
                                                   std::string_view build_id,
                                                   std::string_view debuglink,
                                                   const DebugInfoPaths& paths) {
  std::vector<std::string> out;
  if (build_id.size() > 2) {
    const std::string id(build_id);
    for (const std::string& root : paths.debug_roots) {
      out.push_back(root + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug");
    }
    for (const std::string& cache : paths.debuginfod_caches) {
      out.push_back(cache + "/" + id + "/debuginfo");
    }
  }
  if (!debuglink.empty()) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(object_path, ec);
    if (ec) absolute = object_path;
    const std::string dir = absolute.parent_path().string();
    const std::string link(debuglink);
    out.push_back(dir + "/" + link);
    out.push_back(dir + "/.debug/" + link);
    for (const std::string& root : paths.debug_roots) out.push_back(root + dir + "/" + link);
  }
  return out;
}

Result<DebugInfo> DebugInfo::open(const std::string& object_path, const DebugInfoPaths& paths) {
  if (!init_libelf()) return fail("libelf: " + std::string(elf_errmsg(-1)));
  OpenElf object;
  if (!open_elf(object_path, object)) {
    if (object.fd < 0) {
      return fail("cannot open " + object_path + ": " + std::generic_category().message(errno));
    }
    return fail(object_path + ": not an ELF file");
  }
  DebugInfo info;
  info.object_path_ = object_path;
  info.build_id_ = build_id_of(object.elf);
  std::vector<std::string> looked;

  auto adopt = [&info](OpenElf& file, const std::string& path) -> bool {
    Dwarf* dwarf = dwarf_begin_elf(file.elf, DWARF_C_READ, nullptr);
    if (dwarf == nullptr) return false;
    info.dwarf_ = dwarf;
    info.debug_path_ = path;
    info.fd_ = std::exchange(file.fd, -1);
    info.elf_ = std::exchange(file.elf, nullptr);
    return true;
  };

  if (has_dwarf(object.elf) && adopt(object, object_path)) return info;
  looked.push_back("its own sections");

  GElf_Word link_crc = 0;
  const char* link = dwelf_elf_gnu_debuglink(object.elf, &link_crc);
  const std::string debuglink = link != nullptr ? link : "";
  std::error_code ec;
  const auto canonical_object = std::filesystem::weakly_canonical(object_path, ec);
  for (const std::string& candidate :
       separate_debug_candidates(object_path, info.build_id_, debuglink, paths)) {
    looked.push_back(candidate);
    if (!is_file(candidate)) continue;
    if (std::filesystem::weakly_canonical(candidate, ec) == canonical_object) continue;
    OpenElf file;
    if (!open_elf(candidate, file) || !has_dwarf(file.elf)) continue;
    const std::string id = build_id_of(file.elf);
    if (!info.build_id_.empty() || !id.empty()) {
      if (id != info.build_id_) continue;
    } else {
      uint32_t crc = 0;
      if (!file_crc32(candidate, crc) || crc != link_crc) continue;
    }
    if (adopt(file, candidate)) {
      // The object's own .eh_frame is the call frame information there is.
      info.object_fd_ = std::exchange(object.fd, -1);
      info.object_elf_ = std::exchange(object.elf, nullptr);
      return info;
    }
  }
  return fail("no debug information for " + object_path + ": looked in " + join(looked));
}

DebugInfo::DebugInfo(DebugInfo&& other) noexcept
    : object_path_(std::move(other.object_path_)),
      debug_path_(std::move(other.debug_path_)),
      build_id_(std::move(other.build_id_)),
      fd_(std::exchange(other.fd_, -1)),
      elf_(std::exchange(other.elf_, nullptr)),
      dwarf_(std::exchange(other.dwarf_, nullptr)),
      object_fd_(std::exchange(other.object_fd_, -1)),
      object_elf_(std::exchange(other.object_elf_, nullptr)) {}

DebugInfo& DebugInfo::operator=(DebugInfo&& other) noexcept {
  if (this != &other) {
    release();
    object_path_ = std::move(other.object_path_);
    debug_path_ = std::move(other.debug_path_);
    build_id_ = std::move(other.build_id_);
    fd_ = std::exchange(other.fd_, -1);
    elf_ = std::exchange(other.elf_, nullptr);
    dwarf_ = std::exchange(other.dwarf_, nullptr);
    object_fd_ = std::exchange(other.object_fd_, -1);
    object_elf_ = std::exchange(other.object_elf_, nullptr);
  }
  return *this;
}

DebugInfo::~DebugInfo() { release(); }

void DebugInfo::release() {
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
  if (object_elf_ != nullptr) elf_end(object_elf_);
  if (object_fd_ >= 0) ::close(object_fd_);
  dwarf_ = nullptr;
  elf_ = nullptr;
  fd_ = -1;
  object_elf_ = nullptr;
  object_fd_ = -1;
}

}  // namespace dprobe::symbols
