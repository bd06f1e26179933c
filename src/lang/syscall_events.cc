// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/syscall_events.h"

#include <array>

#include "base/strings.h"
#include "syscalls/syscall_table.h"

namespace dprobe::lang {
namespace {

constexpr std::string_view kEnterPrefix = "sys_enter_";
constexpr std::string_view kExitPrefix = "sys_exit_";

// Where a system call's number, arguments and result are at the moment of
// the call: the kernel's calling convention of each ISA.
struct SyscallRegisters {
  std::string_view nr;
  std::string_view ret;
  std::array<std::string_view, 6> args;
};

const SyscallRegisters& syscall_registers(arch::Isa isa) {
  static constexpr SyscallRegisters kX86_64{"orig_ax", "ax", {"di", "si", "dx", "r10", "r8", "r9"}};
  static constexpr SyscallRegisters kArm64{"x8", "x0", {"x0", "x1", "x2", "x3", "x4", "x5"}};
  return isa == arch::Isa::kX86_64 ? kX86_64 : kArm64;
}

// A field of a system call event and the register it is in at the call.
struct RegisterField {
  std::string name;
  std::string_view reg;
};

// The fields the kernel's event records, in its order: a system call's
// arguments, or its result (`info`); raw_syscalls' id and six arguments,
// or id and result (`info` null).
std::vector<RegisterField> event_fields(const syscalls::SyscallInfo* info, bool exit,
                                        arch::Isa isa) {
  const SyscallRegisters& regs = syscall_registers(isa);
  std::vector<RegisterField> fields;
  if (info == nullptr) fields.push_back({"id", regs.nr});
  if (exit) {
    fields.push_back({"ret", regs.ret});
  } else if (info == nullptr) {
    for (size_t i = 0; i < regs.args.size(); ++i) {
      fields.push_back({"args" + std::to_string(i), regs.args[i]});
    }
  } else {
    for (size_t i = 0; i < info->arg_count; ++i)
      fields.push_back({info->args[i].name, regs.args[i]});
  }
  return fields;
}

// One field compiled as the kernel stores a syscall event's: the register,
// 8 bytes, printed by the line's own format.
trace::EventArg register_field(std::string_view name, std::string_view reg, arch::Isa isa,
                               size_t index) {
  std::vector<trace::EventArg> previous;
  const std::string word = std::string(name) + "=%" + std::string(reg) + ":x64";
  const ArgContext context{isa, false, true};
  auto arg = parse_fetch_arg(word, 0, previous, context);
  // The names come from the kernel's tables and are C identifiers; one the
  // language refuses (a reserved name) is stored under a plain one.
  if (!arg)
    arg = parse_fetch_arg("arg" + std::to_string(index + 1) + "=%" + std::string(reg) + ":x64", 0,
                          previous, context);
  return std::move(*arg);
}

// The event's fields compiled, each as the kernel stores a syscall event's.
void add_register_fields(trace::EventDesc& event, const syscalls::SyscallInfo* info, bool exit,
                         arch::Isa isa) {
  const std::vector<RegisterField> fields = event_fields(info, exit, isa);
  for (size_t i = 0; i < fields.size(); ++i) {
    event.args.push_back(register_field(fields[i].name, fields[i].reg, isa, i));
  }
  trace::layout_event(event);
}

Definition syscall_definition(std::string group, std::string name, trace::EventSource source) {
  Definition def;
  def.spec.point.target.kind = core::TargetKind::kSyscall;
  def.spec.point.target.symbol = name;
  def.spec.event.group = std::move(group);
  def.spec.event.name = std::move(name);
  def.spec.event.source = source;
  def.event_named = true;
  return def;
}

Definition syscall_event(const syscalls::SyscallInfo& info, bool exit, arch::Isa isa) {
  const std::string name = std::string(exit ? kExitPrefix : kEnterPrefix) + info.name;
  Definition def = syscall_definition(
      std::string(kSyscallsGroup), name,
      exit ? trace::EventSource::kSyscallExit : trace::EventSource::kSyscallEnter);
  trace::EventDesc& event = def.spec.event;
  event.syscall_nr = info.nr;
  event.syscall_name = info.name;
  add_register_fields(event, &info, exit, isa);
  return def;
}

Definition raw_syscall_event(bool exit, arch::Isa isa) {
  Definition def = syscall_definition(
      std::string(kRawSyscallsGroup), exit ? "sys_exit" : "sys_enter",
      exit ? trace::EventSource::kRawSyscallExit : trace::EventSource::kRawSyscallEnter);
  add_register_fields(def.spec.event, nullptr, exit, isa);
  return def;
}

ProbeError selector_error(ErrorCode code, std::string_view text, size_t column) {
  return ProbeError{code, std::string(text), column, {}, {}, {}};
}

void add_syscall_matches(std::string_view glob, arch::Isa isa, std::vector<Definition>& out) {
  for (const syscalls::SyscallInfo& info : syscalls::syscall_table(isa)) {
    for (const bool exit : {false, true}) {
      const std::string name = std::string(exit ? kExitPrefix : kEnterPrefix) + info.name;
      if (glob_match(glob, name)) out.push_back(syscall_event(info, exit, isa));
    }
  }
}

void add_raw_matches(std::string_view glob, arch::Isa isa, std::vector<Definition>& out) {
  for (const bool exit : {false, true}) {
    if (glob_match(glob, exit ? "sys_exit" : "sys_enter"))
      out.push_back(raw_syscall_event(exit, isa));
  }
}

}  // namespace

bool is_tracepoint_selector(std::string_view text) {
  const std::string_view trimmed = trim(text);
  const size_t colon = trimmed.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view group = trimmed.substr(0, colon);
  return group == kSyscallsGroup || group == kRawSyscallsGroup;
}

Result<std::vector<Definition>, ProbeError> parse_tracepoint_selector(std::string_view text,
                                                                      const ParseOptions& options) {
  const std::string_view trimmed = trim(text);
  const size_t colon = trimmed.find(':');
  const std::string_view group = trimmed.substr(0, colon);
  const std::string_view glob = trimmed.substr(colon + 1);
  std::vector<Definition> found;
  if (group == kSyscallsGroup) {
    if (syscalls::syscall_table(options.isa).empty()) {
      return unexpected(selector_error(ErrorCode::NO_SYSCALL_TABLE, trimmed, 0));
    }
    add_syscall_matches(glob, options.isa, found);
  } else {
    add_raw_matches(glob, options.isa, found);
  }
  if (found.empty())
    return unexpected(selector_error(ErrorCode::NO_TRACEPOINT, trimmed, colon + 1));
  for (Definition& def : found) {
    def.command = std::string(trimmed);
    def.event_column = colon + 1;
    def.expanded = found.size() > 1;
  }
  return found;
}

std::optional<AttachedEvent> find_attached_event(std::string_view system, std::string_view event,
                                                 arch::Isa isa) {
  AttachedEvent attached;
  if (system == kRawSyscallsGroup && (event == "sys_enter" || event == "sys_exit")) {
    const bool exit = event == "sys_exit";
    attached.source =
        exit ? trace::EventSource::kRawSyscallExit : trace::EventSource::kRawSyscallEnter;
    for (RegisterField& field : event_fields(nullptr, exit, isa)) {
      attached.add_field(std::move(field.name), field.reg, isa);
    }
    return attached;
  }
  if (system != kSyscallsGroup) return std::nullopt;
  const bool exit = event.starts_with(kExitPrefix);
  if (!exit && !event.starts_with(kEnterPrefix)) return std::nullopt;
  const std::string_view name = event.substr(exit ? kExitPrefix.size() : kEnterPrefix.size());
  const syscalls::SyscallInfo* info = syscalls::find_syscall(isa, name);
  if (info == nullptr) return std::nullopt;
  attached.source = exit ? trace::EventSource::kSyscallExit : trace::EventSource::kSyscallEnter;
  attached.nr = info->nr;
  attached.syscall_name = info->name;
  attached.add_field("__syscall_nr", syscall_registers(isa).nr, isa);
  for (RegisterField& field : event_fields(info, exit, isa)) {
    attached.add_field(std::move(field.name), field.reg, isa);
  }
  return attached;
}

void AttachedEvent::add_field(std::string name, std::string_view reg, arch::Isa isa) {
  field_names.push_back(std::move(name));
  field_regs.push_back(arch::register_index(isa, reg).value_or(0));
}

std::vector<EventField> AttachedEvent::fields() const {
  std::vector<EventField> out;
  for (size_t i = 0; i < field_names.size(); ++i) out.push_back({field_names[i], field_regs[i]});
  return out;
}

}  // namespace dprobe::lang
