// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/held_directories.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "arch/runtime/agent_descriptors.h"
#include "arch/runtime/raw_syscall.h"

namespace dprobe::agent {
namespace {

using arch::raw_syscall;

constexpr std::string_view kFdPrefix = "/proc/self/fd/";
constexpr int kMaxDirectories = 4;
constexpr int kMaxPreloads = 4;
constexpr size_t kMaxName = 255;

// A file in a held directory: the directory's slot, and its name there.
struct HeldFile {
  int directory = -1;
  char name[kMaxName + 1] = {};
};

struct Held {
  arch::AgentDescriptor directories[kMaxDirectories];
  int count = 0;
  HeldFile preload[kMaxPreloads];  // the agent's libraries, then the agent
  int preloads = 0;
  HeldFile control;
  bool inherited = false;  // the agent came in through them
  bool follow = false;
  std::string agent;  // its path at start, to tell whether it still reaches
  std::string control_path;
};

Held& held() {
  static Held& state = *new Held;  // read by exec, in forked children, to the end
  return state;
}

// The slot holding number `fd`, or -1.
int slot_of_number(int fd) {
  Held& h = held();
  for (int i = 0; i < h.count; ++i) {
    if (h.directories[i].fd() == fd) return i;
  }
  return -1;
}

// The slot of the directory `path` is in: one handed over ("/proc/self/
// fd/N/NAME"), one held already (the same directory), or a new one.
int slot_for(const std::string& directory) {
  Held& h = held();
  if (directory.starts_with(kFdPrefix)) {
    return slot_of_number(std::atoi(directory.c_str() + kFdPrefix.size()));
  }
  struct stat wanted {};
  if (::stat(directory.c_str(), &wanted) != 0) return -1;
  for (int i = 0; i < h.count; ++i) {
    struct stat st {};
    if (::fstat(h.directories[i].fd(), &st) == 0 && st.st_dev == wanted.st_dev &&
        st.st_ino == wanted.st_ino) {
      return i;
    }
  }
  if (h.count == kMaxDirectories) return -1;
  const int fd = ::open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || !h.directories[h.count].adopt(fd)) return -1;
  return h.count++;
}

bool hold_file(const std::string& path, HeldFile& file) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || path.size() - slash - 1 > kMaxName) return false;
  file.directory = slot_for(slash == 0 ? "/" : path.substr(0, slash));
  std::strcpy(file.name, path.c_str() + slash + 1);
  return file.directory >= 0;
}

// DPROBE_DIRS: the numbers the exec that started this program left open.
void take_handed_over() {
  const char* list = std::getenv(kDirsEnv);
  if (list == nullptr) return;
  Held& h = held();
  for (const char* at = list; *at != '\0' && h.count < kMaxDirectories;) {
    char* end = nullptr;
    const long fd = std::strtol(at, &end, 10);
    if (end == at) break;
    if (h.directories[h.count].adopt_in_place(static_cast<int>(fd))) ++h.count;
    at = *end == ',' ? end + 1 : end;
  }
  h.inherited = h.count > 0;
}

// The agent's own DT_NEEDED libraries, but the C library and its loader
// (every program has those): where this process loaded each from.
struct NeededQuery {
  const void* agent_base;
  std::vector<std::string> sonames;
  std::vector<std::string> paths;
};

int find_agent(dl_phdr_info* info, size_t, void* data) {
  auto* query = static_cast<NeededQuery*>(data);
  if (reinterpret_cast<const void*>(info->dlpi_addr) != query->agent_base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    const auto* dynamic =
        reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    uintptr_t strtab = 0;
    for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
      if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
    }
    // The loader made it an address (x86_64, arm64); an offset otherwise.
    if (strtab != 0 && strtab < info->dlpi_addr) strtab += info->dlpi_addr;
    for (const ElfW(Dyn)* d = dynamic; strtab != 0 && d->d_tag != DT_NULL; ++d) {
      if (d->d_tag != DT_NEEDED) continue;
      const std::string_view name(reinterpret_cast<const char*>(strtab + d->d_un.d_val));
      if (!name.starts_with("libc.so") && !name.starts_with("ld-linux")) {
        query->sonames.emplace_back(name);
      }
    }
  }
  return 1;
}

int find_needed(dl_phdr_info* info, size_t, void* data) {
  auto* query = static_cast<NeededQuery*>(data);
  if (info->dlpi_name == nullptr) return 0;
  const std::string_view path(info->dlpi_name);
  const std::string_view base = path.substr(path.rfind('/') + 1);
  for (size_t i = 0; i < query->sonames.size(); ++i) {
    if (base == query->sonames[i] && query->paths[i].empty()) query->paths[i] = path;
  }
  return 0;
}

// "DIR/SONAME" of each library the agent needs, as loaded here.
std::vector<std::string> needed_libraries() {
  Dl_info self{};
  if (::dladdr(reinterpret_cast<void*>(&needed_libraries), &self) == 0) return {};
  NeededQuery query{self.dli_fbase, {}, {}};
  ::dl_iterate_phdr(find_agent, &query);
  query.paths.resize(query.sonames.size());
  ::dl_iterate_phdr(find_needed, &query);
  std::vector<std::string> found;
  for (size_t i = 0; i < query.paths.size(); ++i) {
    if (query.paths[i].empty()) continue;
    found.push_back(query.paths[i].substr(0, query.paths[i].rfind('/') + 1) + query.sonames[i]);
  }
  return found;
}

char* write_number(char* text, int value) {
  char digits[12];
  int n = 0;
  auto left = static_cast<unsigned>(value < 0 ? 0 : value);
  do {
    digits[n++] = static_cast<char>('0' + left % 10);
    left /= 10;
  } while (left != 0);
  while (n > 0) *text++ = digits[--n];
  *text = '\0';
  return text;
}

void set_close_on_exec(bool close) {
  const Held& h = held();
  for (int i = 0; i < h.count; ++i) {
    const int fd = h.directories[i].fd();
    if (fd >= 0) raw_syscall(SYS_fcntl, fd, F_SETFD, close ? FD_CLOEXEC : 0);
  }
}

// "/proc/self/fd/N/NAME" into `text`.
char* write_file(char* text, const HeldFile& file) {
  text = ::stpcpy(text, kFdPrefix.data());
  text = write_number(text, held().directories[file.directory].fd());
  *text++ = '/';
  return ::stpcpy(text, file.name);
}

}  // namespace

void prepare_held_directories(const std::string& agent, const std::string& control, bool follow) {
  Held& h = held();
  h.follow = follow;
  h.agent = agent;
  h.control_path = control;
  take_handed_over();
  // Handed over: the agent's own paths go through them already.
  if (h.inherited) hold_directories_now();
  // With --follow, children started by the program's own paths
  // (posix_spawn) find them through the environment they inherit.
  if (h.inherited && follow) set_close_on_exec(false);
}

void hold_directories_now() {
  Held& h = held();
  if (h.preloads > 0 || h.agent.empty() || h.control_path.empty()) return;
  for (const std::string& library : needed_libraries()) {
    if (h.preloads < kMaxPreloads - 1 && hold_file(library, h.preload[h.preloads])) ++h.preloads;
  }
  if (hold_file(h.agent, h.preload[h.preloads])) ++h.preloads;
  if (!hold_file(h.control_path, h.control)) h.control.directory = -1;
}

bool exec_needs_held_directories() {
  const Held& h = held();
  if (h.preloads == 0 || h.control.directory < 0) return false;
  if (h.inherited) return true;
  // From a root of its own (chroot, pivot_root), the path reaches nothing,
  // or another file.
  return arch::raw_failed(
      raw_syscall(SYS_faccessat, AT_FDCWD, arch::raw_arg(h.agent.c_str()), R_OK));
}

bool held_directories_reach() {
  const Held& h = held();
  char path[kFdPrefix.size() + 12 + kMaxName + 2];
  write_file(path, h.preload[h.preloads - 1]);
  return !arch::raw_failed(raw_syscall(SYS_faccessat, AT_FDCWD, arch::raw_arg(path), R_OK));
}

size_t held_entries_size() {
  constexpr size_t kNumber = 11;
  const size_t per_file = kFdPrefix.size() + kNumber + 1 + kMaxName + 1;
  return std::strlen("LD_PRELOAD=") + (kMaxPreloads + 1) * per_file +
         std::strlen("DPROBE_CONTROL=") + std::strlen(kDirsEnv) + 1 +
         kMaxDirectories * (kNumber + 1) + 3;
}

char* write_held_preload(char* text) {
  const Held& h = held();
  text = ::stpcpy(text, "LD_PRELOAD=");
  for (int i = 0; i < h.preloads; ++i) {
    if (i > 0) *text++ = ':';
    text = write_file(text, h.preload[i]);
  }
  return text;
}

char* write_held_control(char* text) {
  return write_file(::stpcpy(text, "DPROBE_CONTROL="), held().control);
}

char* write_held_list(char* text) {
  const Held& h = held();
  text = ::stpcpy(::stpcpy(text, kDirsEnv), "=");
  for (int i = 0; i < h.count; ++i) {
    if (i > 0) *text++ = ',';
    text = write_number(text, h.directories[i].fd());
  }
  return text;
}

void open_held_for_exec() { set_close_on_exec(false); }

void rest_held_after_failed_exec() {
  const Held& h = held();
  set_close_on_exec(!(h.inherited && h.follow));
}

}  // namespace dprobe::agent
