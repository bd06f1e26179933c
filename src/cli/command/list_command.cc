// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/list_command.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <optional>
#include <ostream>
#include <string>

#include "base/strings.h"
#include "cli/plan/target_resolver.h"
#include "lang/target.h"
#include "symbols/lookup_error.h"

namespace dprobe::cli {
namespace {

struct Pattern {
  std::string object;
  std::string glob;
};

Pattern split_pattern(const std::string& text) {
  const size_t colon = lang::object_separator(text);
  if (colon == std::string::npos) return {{}, text.empty() ? "*" : text};
  const std::string glob = text.substr(colon + 1);
  return {text.substr(0, colon), glob.empty() ? "*" : glob};
}

// What the IFUNC `function` of `elf` resolves to on this machine, when the
// library is loaded in dprobe itself (the C library is): the loader asked
// the resolver then, and dlsym answers with its choice. A program run with
// other GLIBC_TUNABLES may choose otherwise; `run --probes` shows its own.
std::optional<uint64_t> implementation_here(const symbols::ElfFile& elf,
                                            const symbols::FunctionSymbol& function) {
  void* library = ::dlopen(elf.path().c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return std::nullopt;
  std::optional<uint64_t> vaddr;
  link_map* map = nullptr;
  void* chosen = ::dlsym(library, function.name.c_str());
  Dl_info info{};
  if (chosen != nullptr && ::dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 &&
      ::dladdr(chosen, &info) != 0 && info.dli_fbase == reinterpret_cast<void*>(map->l_addr)) {
    vaddr = reinterpret_cast<uint64_t>(chosen) - map->l_addr;
  }
  ::dlclose(library);  // only drops the reference RTLD_NOLOAD took
  return vaddr;
}

// "[ifunc: ...]": what a probe on the name reaches, and how the resolver
// itself is probed.
std::string ifunc_note(const LoadedObject& object, const symbols::FunctionSymbol& function) {
  std::string chosen = "the implementation its resolver picks at run time";
  if (const auto vaddr = implementation_here(object.elf, function)) {
    const auto named = object.table.symbolize(*vaddr);
    chosen = named && named->offset == 0 ? named->function->name : hex(*vaddr);
  }
  const auto resolver = object.elf.file_offset_of(function.address);
  return " [ifunc: calls go to " + chosen +
         (resolver ? "; its resolver is " + object.elf.path() + ":" + hex(*resolver) : "") + "]";
}

}  // namespace

int run_list(const ListOptions& options, std::ostream& out, std::ostream& errors) {
  const Pattern pattern = split_pattern(options.pattern);
  if (pattern.object.empty() && options.executable.empty()) {
    errors << "dprobe: error: nothing to list: give -x BINARY or OBJ:PATTERN\n";
    return 2;
  }
  TargetResolver resolver(options.executable);
  auto object = resolver.load(pattern.object);
  if (!object) {
    const symbols::LookupError& error = object.error();
    errors << "dprobe: error: " << symbols::describe(error.kind);
    if (!error.detail.empty()) errors << ": " << error.detail;
    errors << "\n";
    return 2;
  }
  std::string text;
  for (const symbols::FunctionSymbol* function : (*object)->table.match(pattern.glob)) {
    fmt::format_to(std::back_inserter(text), "0x{:016x} {:8} {}{}\n", function->address,
                   function->size, function->display_name(),
                   function->is_ifunc ? ifunc_note(**object, *function) : "");
  }
  out << text;
  return 0;
}

}  // namespace dprobe::cli
