// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/elf_file.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

namespace dprobe::symbols {
namespace {

Unexpected<LookupError> error(LookupError::Kind kind, std::string detail) {
  return unexpected(LookupError{kind, std::move(detail), {}});
}

std::string errno_text(const std::string& path) {
  return path + ": " + std::generic_category().message(errno);
}

// libelf keeps global state that must be initialized once per process.
bool init_libelf() {
  static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
  return ok;
}

// $ORIGIN counts only as a whole token: "$ORIGINAL" is not expanded.
size_t origin_token_length(std::string_view rest) {
  if (rest.starts_with("${ORIGIN}")) return 9;
  if (!rest.starts_with("$ORIGIN")) return 0;
  if (rest.size() > 7) {
    const char next = rest[7];
    const bool ident = (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') ||
                       (next >= '0' && next <= '9') || next == '_';
    if (ident) return 0;
  }
  return 7;
}

std::string expand_origin(std::string_view entry, std::string_view origin) {
  std::string out;
  for (size_t i = 0; i < entry.size();) {
    const size_t token = entry[i] == '$' ? origin_token_length(entry.substr(i)) : 0;
    if (token > 0) {
      out += origin;
      i += token;
    } else {
      out += entry[i++];
    }
  }
  return out;
}

std::string directory_of(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) absolute = path;
  return absolute.lexically_normal().parent_path().string();
}

}  // namespace

std::vector<std::string> expand_search_path(std::string_view value, std::string_view origin) {
  std::vector<std::string> dirs;
  while (!value.empty()) {
    const size_t colon = value.find(':');
    const std::string_view entry = value.substr(0, colon);
    if (!entry.empty()) dirs.push_back(expand_origin(entry, origin));
    if (colon == std::string_view::npos) break;
    value.remove_prefix(colon + 1);
  }
  return dirs;
}

Result<ElfFile, LookupError> ElfFile::open(std::string path) {
  using Kind = LookupError::Kind;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return error(Kind::kFileNotFound, errno_text(path));
  if (!S_ISREG(st.st_mode)) return error(Kind::kNotRegularFile, path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return error(Kind::kFileNotFound, errno_text(path));
  Elf* elf = init_libelf() ? elf_begin(fd, ELF_C_READ_MMAP, nullptr) : nullptr;
  ElfFile file(std::move(path), fd, elf);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) return error(Kind::kNotElf, file.path_);
  if (auto ok = file.read_headers(); !ok) return unexpected(std::move(ok.error()));
  return file;
}

ElfFile::ElfFile(std::string path, int fd, Elf* elf) : path_(std::move(path)), fd_(fd), elf_(elf) {}

ElfFile::ElfFile(ElfFile&& other) noexcept { *this = std::move(other); }

ElfFile& ElfFile::operator=(ElfFile&& other) noexcept {
  if (this == &other) return *this;
  release();
  path_ = std::move(other.path_);
  fd_ = std::exchange(other.fd_, -1);
  elf_ = std::exchange(other.elf_, nullptr);
  machine_ = other.machine_;
  is_dynamic_ = other.is_dynamic_;
  is_64bit_ = other.is_64bit_;
  has_runpath_ = other.has_runpath_;
  soname_ = std::move(other.soname_);
  needed_ = std::move(other.needed_);
  rpath_ = std::move(other.rpath_);
  runpath_ = std::move(other.runpath_);
  interpreter_ = std::move(other.interpreter_);
  segments_ = std::move(other.segments_);
  return *this;
}

ElfFile::~ElfFile() { release(); }

void ElfFile::release() {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
  elf_ = nullptr;
  fd_ = -1;
}

Result<void, LookupError> ElfFile::read_headers() {
  GElf_Ehdr ehdr;
  size_t phnum = 0;
  if (gelf_getehdr(elf_, &ehdr) == nullptr || elf_getphdrnum(elf_, &phnum) != 0) {
    return error(LookupError::Kind::kNotElf, path_ + ": " + elf_errmsg(-1));
  }
  machine_ = ehdr.e_machine;
  is_dynamic_ = ehdr.e_type == ET_DYN;
  is_64bit_ = gelf_getclass(elf_) == ELFCLASS64;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr) continue;
    if (phdr.p_type == PT_LOAD) {
      segments_.push_back({phdr.p_vaddr, phdr.p_offset, phdr.p_filesz, phdr.p_memsz,
                           (phdr.p_flags & PF_X) != 0, (phdr.p_flags & PF_W) != 0});
    } else if (phdr.p_type == PT_INTERP) {
      Elf_Data* data = elf_getdata_rawchunk(elf_, static_cast<int64_t>(phdr.p_offset),
                                            phdr.p_filesz, ELF_T_BYTE);
      if (data != nullptr && data->d_buf != nullptr) {
        const std::string_view raw(static_cast<const char*>(data->d_buf), data->d_size);
        interpreter_ = std::string(raw.substr(0, raw.find('\0')));
      }
    }
  }
  read_dynamic();
  return {};
}

void ElfFile::read_dynamic() {
  const std::string origin = directory_of(path_);
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf_, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_DYNAMIC) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    const size_t entry_size = gelf_fsize(elf_, ELF_T_DYN, 1, EV_CURRENT);
    if (data == nullptr || entry_size == 0) return;
    for (size_t i = 0; i < data->d_size / entry_size; ++i) {
      GElf_Dyn dyn;
      if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr || dyn.d_tag == DT_NULL) break;
      const char* text = elf_strptr(elf_, shdr.sh_link, dyn.d_un.d_val);
      if (text == nullptr) continue;
      switch (dyn.d_tag) {
        case DT_NEEDED:
          needed_.emplace_back(text);
          break;
        case DT_SONAME:
          soname_ = text;
          break;
        case DT_RPATH:
          rpath_ = expand_search_path(text, origin);
          break;
        case DT_RUNPATH:
          runpath_ = expand_search_path(text, origin);
          has_runpath_ = true;
          break;
        default:
          break;
      }
    }
    return;
  }
}

std::optional<uint64_t> ElfFile::file_offset_of(uint64_t vaddr) const {
  for (const LoadSegment& s : segments_) {
    if (vaddr >= s.vaddr && vaddr - s.vaddr < s.file_size) return s.offset + (vaddr - s.vaddr);
  }
  return std::nullopt;
}

std::optional<uint64_t> ElfFile::vaddr_of_file_offset(uint64_t offset) const {
  for (const LoadSegment& s : segments_) {
    if (offset >= s.offset && offset - s.offset < s.file_size) return s.vaddr + (offset - s.offset);
  }
  return std::nullopt;
}

bool ElfFile::is_executable_vaddr(uint64_t vaddr) const {
  for (const LoadSegment& s : segments_) {
    if (s.executable && vaddr >= s.vaddr && vaddr - s.vaddr < s.mem_size) return true;
  }
  return false;
}

}  // namespace dprobe::symbols
