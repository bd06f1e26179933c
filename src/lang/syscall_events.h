// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The kernel's system call events, by their names: syscalls:sys_enter_NAME
// and syscalls:sys_exit_NAME (one per system call, with the argument names
// of the kernel's own tables, src/syscalls), raw_syscalls:sys_enter and
// raw_syscalls:sys_exit (every call), and the event probes (e:) attached to
// them. Their fields are registers at the moment of the call: a system
// call's arguments, its number, its return value.
//
//   if (is_tracepoint_selector("syscalls:sys_enter_open*"))
//     auto defs = parse_tracepoint_selector("syscalls:sys_enter_open*");  // open, openat, ...
#ifndef DPROBE_LANG_SYSCALL_EVENTS_H_
#define DPROBE_LANG_SYSCALL_EVENTS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "lang/definition.h"
#include "lang/fetch_arg.h"

namespace dprobe::lang {

inline constexpr std::string_view kSyscallsGroup = "syscalls";
inline constexpr std::string_view kRawSyscallsGroup = "raw_syscalls";

// GRP:EVENT naming syscalls or raw_syscalls events (EVENT may be a glob),
// as perf and bpftrace name tracepoints.
bool is_tracepoint_selector(std::string_view text);

// The events a selector names, in the kernel's order (by number, enter
// before exit). Nothing matched, or no such group: NO_TRACEPOINT with the
// caret under the event name.
Result<std::vector<Definition>, ProbeError> parse_tracepoint_selector(
    std::string_view text, const ParseOptions& options = {});

// An event an event probe attaches to (SYSTEM/EVENT or SYSTEM.EVENT), with
// its fields as registers; nullopt for no such event.
struct AttachedEvent {
  trace::EventSource source = trace::EventSource::kSyscallEnter;
  int32_t nr = -1;  // -1: every system call (raw_syscalls)
  std::string syscall_name;
  std::vector<std::string> field_names;
  std::vector<uint16_t> field_regs;

  void add_field(std::string name, std::string_view reg, arch::Isa isa);
  // For ArgContext::fields: views into this object, valid while it lives.
  std::vector<EventField> fields() const;
};
std::optional<AttachedEvent> find_attached_event(std::string_view system, std::string_view event,
                                                 arch::Isa isa);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_SYSCALL_EVENTS_H_
