// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/check_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <ostream>

#include "cli/command/trace_options.h"
#include "cli/process/executable.h"
#include "lang/format_definition.h"
#include "syscalls/syscall_table.h"
#include "trace/event_format.h"

namespace dprobe::cli {
namespace {

// A system call event's format is the kernel's own (its fields at the
// kernel's offsets); an event probe's, like any probe event's, is ours.
std::string format_of(const trace::EventDesc& event) {
  if (!trace::is_syscall_source(event.source) || event.event_probe) {
    return trace::format_description(event);
  }
  const bool exit = trace::is_syscall_exit(event.source);
  if (event.source == trace::EventSource::kRawSyscallEnter ||
      event.source == trace::EventSource::kRawSyscallExit) {
    return syscalls::raw_syscall_format(exit, event.id);
  }
  const syscalls::SyscallInfo* info = syscalls::syscall_by_nr(arch::host_isa(), event.syscall_nr);
  return info != nullptr ? syscalls::syscall_format(*info, exit, event.id) : std::string();
}

}  // namespace

int run_check(const CheckOptions& options, std::ostream& out, std::ostream& errors) {
  auto set = load_definitions(options.sources, errors);
  if (!set) return kExitBadDefinition;
  for (const trace::ProbeSpec& spec : set->specs()) {
    out << lang::format_definition(spec) << "\n";
    if (options.show_format) out << format_of(spec.event) << "\n";
  }
  return 0;
}

Subcommand add_check_command(CLI::App& app) {
  auto check = std::make_shared<CheckOptions>();
  CLI::App* command = app.add_subcommand(
      "check", "Parse and check definitions; print them as kprobe_events lists them");
  command->add_option("-x,--exec", check->sources.executable,
                      "Executable whose objects and symbols the definitions name");
  const DefinitionOptions definitions = add_definition_options(command, check->sources);
  command->add_flag("--format", check->show_format,
                    "Also print each event's record layout (events/GRP/EVENT/format)");
  return {command, [check, definitions] {
            record_order(definitions, check->sources);
            check->sources.executable = find_executable(check->sources.executable);
            return run_check(*check, std::cout, std::cerr);
          }};
}

}  // namespace dprobe::cli
