// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/object_resolver.h"

#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "arch/host.h"
#include "symbols/elf_file.h"
#include "symbols/rooted_path.h"

namespace dprobe::symbols {
namespace {

using Kind = LookupError::Kind;

constexpr uint16_t kHostMachine = arch::kHostElfMachine;

Unexpected<LookupError> error(Kind kind, std::string detail) {
  return unexpected(LookupError{kind, std::move(detail), {}});
}

std::string_view basename_of(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Whether `name` is `stem` with a shared object's suffix: "libc.so.6",
// "libssl.so.3" for "libc", "libssl".
bool versioned_name_of(std::string_view name, std::string_view stem) {
  return !stem.empty() && name.size() > stem.size() + 3 && name.starts_with(stem) &&
         name.substr(stem.size()).starts_with(".so");
}

struct Loaded {
  ElfFile elf;
  std::string name;       // the DT_NEEDED name it was loaded for; empty for roots
  std::string path;       // where the loader found it
  std::string canonical;  // symlinks resolved: the file actually mapped
  int loader;             // index of the object that needed it; -1 for roots
};

bool answers_to(const Loaded& object, std::string_view name) {
  return object.name == name || object.elf.soname() == name || basename_of(object.path) == name ||
         basename_of(object.canonical) == name;
}

// The executable's DT_NEEDED closure in ld.so's breadth-first order, built
// only as far as a lookup needs.
class LoadOrder {
 public:
  // `root`: the process's root the files are found in (empty: ours).
  LoadOrder(const SearchPaths& paths, const std::string& root) : paths_(paths), root_(root) {}

  Result<void, LookupError> add_executable(const std::string& path);
  const Loaded* find(std::string_view object);
  std::optional<Loaded> search(const std::string& name, int loader) const;
  // The objects of the whole closure whose name is `stem` and a version:
  // "libc" -> libc.so.6, as bpftrace takes a library's name.
  std::vector<std::string> with_stem(std::string_view stem);
  // Every object of the whole closure, the executable first.
  const std::vector<Loaded>& all() {
    (void)find("/");
    return loaded_;
  }

 private:
  std::vector<std::string> directories_for(int loader) const;
  std::optional<Loaded> try_file(std::string path, const std::string& name, int loader) const;
  bool already_loaded(std::string_view needed) const;
  const Loaded* same_file(const std::string& canonical) const;

  const SearchPaths& paths_;
  const std::string& root_;
  std::vector<Loaded> loaded_;
  uint16_t machine_ = kHostMachine;
  bool is_64bit_ = true;
};

Result<void, LookupError> LoadOrder::add_executable(const std::string& path) {
  // ld.so takes $ORIGIN of the executable from /proc/self/exe: symlinks resolved.
  const std::string canonical = canonical_under(root_, path);
  auto exe = ElfFile::open(canonical);
  if (!exe) return unexpected(std::move(exe.error()));
  machine_ = exe->machine();
  is_64bit_ = exe->is_64bit();
  const std::string interpreter = exe->interpreter();
  loaded_.push_back({std::move(*exe), "", path, canonical, -1});
  if (!interpreter.empty()) {
    if (auto rtld = try_file(under_root(root_, interpreter), "", -1))
      loaded_.push_back(std::move(*rtld));
  }
  return {};
}

const Loaded* LoadOrder::find(std::string_view object) {
  for (const Loaded& root : loaded_) {
    if (answers_to(root, object)) return &root;
  }
  for (size_t next = 0; next < loaded_.size(); ++next) {
    const std::vector<std::string> needed = loaded_[next].elf.needed();
    for (const std::string& name : needed) {
      if (already_loaded(name)) continue;
      std::optional<Loaded> found = search(name, static_cast<int>(next));
      if (!found) continue;  // ld.so would fail here; the rest may still resolve
      if (const Loaded* same = same_file(found->canonical)) {
        if (name == object) return same;
        continue;
      }
      loaded_.push_back(std::move(*found));
      if (answers_to(loaded_.back(), object)) return &loaded_.back();
    }
  }
  return nullptr;
}

std::vector<std::string> LoadOrder::with_stem(std::string_view stem) {
  (void)find("/");  // no object answers to it: the whole closure loads
  std::vector<std::string> paths;
  for (const Loaded& object : loaded_) {
    const std::string soname(object.elf.soname());
    if (versioned_name_of(soname, stem) &&
        std::find(paths.begin(), paths.end(), object.path) == paths.end()) {
      paths.push_back(object.path);
    }
  }
  return paths;
}

std::optional<Loaded> LoadOrder::search(const std::string& name, int loader) const {
  if (name.find('/') != std::string::npos) return try_file(under_root(root_, name), name, loader);
  for (const std::string& dir : directories_for(loader)) {
    if (auto found = try_file(under_root(root_, dir) + "/" + name, name, loader)) return found;
  }
  return std::nullopt;
}

// ld.so's order: DT_RPATH of the loader and its loaders (unless the loader
// has DT_RUNPATH), LD_LIBRARY_PATH, the loader's DT_RUNPATH, system dirs.
std::vector<std::string> LoadOrder::directories_for(int loader) const {
  std::vector<std::string> dirs;
  const auto append = [&dirs](const std::vector<std::string>& more) {
    dirs.insert(dirs.end(), more.begin(), more.end());
  };
  const bool use_rpath = loader >= 0 && !loaded_[static_cast<size_t>(loader)].elf.has_runpath();
  for (int i = use_rpath ? loader : -1; i >= 0; i = loaded_[static_cast<size_t>(i)].loader) {
    const ElfFile& elf = loaded_[static_cast<size_t>(i)].elf;
    if (!elf.has_runpath()) append(elf.rpath());
  }
  append(paths_.library_path);
  if (loader >= 0) append(loaded_[static_cast<size_t>(loader)].elf.runpath());
  append(paths_.system_dirs);
  return dirs;
}

// Like ld.so, skips files of another ISA or ELF class (a 32-bit libc in
// /usr/lib32 is not a match for a 64-bit program) and keeps searching.
std::optional<Loaded> LoadOrder::try_file(std::string path, const std::string& name,
                                          int loader) const {
  auto elf = ElfFile::open(path);
  if (!elf || elf->machine() != machine_ || elf->is_64bit() != is_64bit_) return std::nullopt;
  std::string canonical = canonical_under(root_, path);
  return Loaded{std::move(*elf), name, std::move(path), std::move(canonical), loader};
}

bool LoadOrder::already_loaded(std::string_view needed) const {
  for (const Loaded& object : loaded_) {
    if (object.name == needed || object.elf.soname() == needed) return true;
  }
  return false;
}

const Loaded* LoadOrder::same_file(const std::string& canonical) const {
  for (const Loaded& object : loaded_) {
    if (object.canonical == canonical) return &object;
  }
  return nullptr;
}

// A path names the file in the process's root first, then in ours (the
// host's path to the same file).
Result<std::string, LookupError> resolve_path(const std::string& root, std::string_view object) {
  std::string path(object);
  if (struct stat st{}; !root.empty() && ::stat(under_root(root, path).c_str(), &st) == 0) {
    path = under_root(root, path);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return error(Kind::kFileNotFound, path);
  if (!S_ISREG(st.st_mode)) return error(Kind::kNotRegularFile, path);
  return path;
}

// The files of the search path named `stem` with a version ("libc" ->
// .../libc.so.6), one per soname, of this host's ISA and class.
std::vector<std::string> versioned_in(const SearchPaths& paths, const std::string& root,
                                      std::string_view stem) {
  std::vector<std::string> found;
  std::vector<std::string> sonames;
  std::vector<std::string> dirs = paths.library_path;
  dirs.insert(dirs.end(), paths.system_dirs.begin(), paths.system_dirs.end());
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(under_root(root, dir), ec)) {
      const std::string file = entry.path().filename().string();
      if (!versioned_name_of(file, stem) || file.size() == stem.size() + 3) continue;
      auto elf = ElfFile::open(entry.path().string());
      if (!elf || elf->machine() != kHostMachine || !elf->is_64bit()) continue;
      const std::string soname(elf->soname().empty() ? file : elf->soname());
      if (std::find(sonames.begin(), sonames.end(), soname) != sonames.end()) continue;
      sonames.push_back(soname);
      found.push_back(entry.path().string());
    }
  }
  return found;
}

}  // namespace

ObjectResolver::ObjectResolver(std::string executable)
    : ObjectResolver(executable, root_of(executable).empty()
                                     ? SearchPaths::from_host()
                                     : SearchPaths::from_root(root_of(executable))) {}

ObjectResolver::ObjectResolver(std::string executable, SearchPaths paths)
    : executable_(std::move(executable)), root_(root_of(executable_)), paths_(std::move(paths)) {}

std::vector<std::pair<std::string, std::string>> ObjectResolver::libraries() const {
  std::vector<std::pair<std::string, std::string>> libraries;
  if (executable_.empty()) return libraries;
  LoadOrder order(paths_, root_);
  if (!order.add_executable(executable_)) return libraries;
  const std::vector<Loaded>& all = order.all();
  for (size_t i = 1; i < all.size(); ++i) {
    const std::string soname(all[i].elf.soname());
    libraries.emplace_back(soname.empty() ? std::string(basename_of(all[i].path)) : soname,
                           all[i].path);
  }
  return libraries;
}

Result<std::string, LookupError> ObjectResolver::resolve(std::string_view object) const {
  if (object.empty()) return error(Kind::kObjectNotFound, "empty object name");
  if (object.find('/') != std::string_view::npos) return resolve_path(root_, object);
  const std::string name(object);
  LoadOrder order(paths_, root_);
  int executable_index = -1;
  if (!executable_.empty()) {
    if (auto ok = order.add_executable(executable_); !ok) return unexpected(std::move(ok.error()));
    if (const Loaded* hit = order.find(name)) return hit->path;
    executable_index = 0;
  }
  // Not in the closure: a library the program may dlopen later.
  if (auto found = order.search(name, executable_index)) return found->path;
  // A library by its name alone ("libc"): the program's one of it, or
  // the search path's only versioned file of it.
  if (name.find(".so") == std::string::npos) {
    const std::vector<std::string> matches =
        executable_.empty() ? versioned_in(paths_, root_, name) : order.with_stem(name);
    if (matches.size() == 1) return matches.front();
  }
  const std::string where =
      executable_.empty() ? "the library search path" : executable_ + "'s libraries or search path";
  return error(Kind::kObjectNotFound, "'" + name + "' is not in " + where);
}

}  // namespace dprobe::symbols
