// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/list_command.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "base/strings.h"
#include "cli/command/line_listing.h"
#include "cli/command/variable_listing.h"
#include "cli/plan/target_resolver.h"
#include "cli/process/executable.h"
#include "cli/process/process_root.h"
#include "lang/sdt_point.h"
#include "lang/target.h"
#include "symbols/lookup_error.h"

namespace dprobe::cli {
namespace {

struct Pattern {
  std::string object;
  std::string glob;
};

Pattern split_pattern(const std::string& text) {
  // "[OBJ:]%sdt_PROVIDER:NAME": its own ':' is no object's.
  if (const size_t sdt = text.find(lang::kSdtPrefix);
      sdt != std::string::npos && (sdt == 0 || text[sdt - 1] == ':')) {
    return {text.substr(0, sdt == 0 ? 0 : sdt - 1), text.substr(sdt)};
  }
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

// `%sdt_PROVIDER:NAME` globs: the SDT points of the object, a line per
// site: its address, the point, its operands and its semaphore.
bool is_sdt_pattern(const std::string& glob) { return glob.starts_with(lang::kSdtPrefix); }

std::string list_sdt_points(const LoadedObject& object, const std::string& glob) {
  const std::string pattern = glob.substr(lang::kSdtPrefix.size());
  std::string text;
  for (const symbols::SdtNote& note : object.elf.sdt_notes()) {
    if (!glob_match(pattern, note.provider + ":" + note.name)) continue;
    fmt::format_to(std::back_inserter(text), "0x{:016x} {}{}:{} {}", note.address, lang::kSdtPrefix,
                   note.provider, note.name, note.arguments);
    if (note.semaphore != 0)
      fmt::format_to(std::back_inserter(text), " [semaphore 0x{:x}]", note.semaphore);
    text += "\n";
  }
  return text;
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
  if (is_sdt_pattern(pattern.glob)) {
    out << list_sdt_points(**object, pattern.glob);
    return 0;
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

Subcommand add_list_command(CLI::App& app) {
  auto list = std::make_shared<ListOptions>();
  CLI::App* command = app.add_subcommand("list", "List the functions of an ELF object");
  CLI::Option* exec =
      command->add_option("-x,--exec", list->executable, "Executable to list (or to find OBJ for)");
  command
      ->add_option("-p,--pid", list->pid,
                   "The program of a running process, its objects found as it sees them (in a "
                   "container: in its root)")
      ->excludes(exec);
  command->add_option("pattern", list->pattern,
                      "[OBJ:]GLOB, e.g. 'libc.so.6:str*'; [OBJ:]%sdt_GLOB lists the SDT probe "
                      "points, e.g. '%sdt_python:*'");
  CLI::Option* lines =
      command->add_option("-L,--line", list->line_function,
                          "Show FUNC[@SRC]'s source with its probe-able lines numbered, as perf "
                          "probe -L");
  command
      ->add_option("-V,--vars", list->variables_place,
                   "Show the variables a probe at PLACE can fetch, with their types, as perf "
                   "probe -V (FUNC, FUNC:RLN, SRC:ALN, FUNC@SRC)")
      ->excludes(lines);
  return {command, [list] {
            if (list->pid != 0) {
              list->executable = program_of(list->pid);
              if (list->executable.empty()) {
                std::cerr << "dprobe: error: no such process: " << list->pid << "\n";
                return 2;
              }
            }
            list->executable = find_executable(list->executable);
            if (!list->line_function.empty()) return run_list_lines(*list, std::cout, std::cerr);
            if (!list->variables_place.empty()) {
              return run_list_variables(*list, std::cout, std::cerr);
            }
            return run_list(*list, std::cout, std::cerr);
          }};
}

}  // namespace dprobe::cli
