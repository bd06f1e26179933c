// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A compiled event: its names, its fetch arguments (each a fetch program
// and a type) and the layout of its records. Produced by the language,
// executed by the agent, read back by the formatter.
//
//   EventDesc ev = ...;          // from lang::parse_definition
//   layout_event(ev);            // assigns every field its record offset
//   ev.args[0].offset;           // where the first argument lands
#ifndef DPROBE_TRACE_EVENT_H_
#define DPROBE_TRACE_EVENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/probe_point.h"
#include "trace/fetch.h"
#include "trace/hit/fetch_type.h"

namespace dprobe::trace {

// An @[OBJ:]SYM reference inside a fetch program, resolved when armed.
struct SymbolRef {
  std::string object;
  std::string symbol;
};

struct EventAnalysis;  // trace/event_analysis.h

struct EventArg {
  std::string name;
  std::string expr;       // the fetch expression as written, e.g. "+0(%si)"
  std::string type_text;  // the type as written, "b4@2/32" for a bitfield
  TypeId type = kDefaultType;
  uint32_t count = 0;   // array elements; 0 for a scalar
  uint32_t offset = 0;  // field offset in the record
  std::vector<FetchInsn> code;
  std::string data;                // the immediate string of \"..."
  std::vector<SymbolRef> symbols;  // indexed by kSymbolAddr's param
  // A source variable (VAR, VAR->MEMBER, VAR.MEMBER, VAR[N]; $params,
  // $vars, $arg*) that the debug information turns into a fetch once the
  // probe's address is known (cli/plan/variable_args.h); `code` is empty until
  // then. `source_type` is the type written after it, empty for the DWARF's.
  std::string source_expr;
  std::string source_type;
  // A :TYPE was written. Where none was, an SDT operand's $argN takes the
  // operand's own size and sign (cli/plan/sdt_points.cc).
  bool type_written = false;

  uint32_t field_size() const { return fetch_type(type).size * (count ? count : 1); }
  bool is_bitfield() const { return !type_text.empty() && type_text[0] == 'b'; }
};

// Field names the record header and the ip fields take; an argument may not
// use them (the kernel's reserved_field_names).
inline constexpr const char* kReservedFieldNames[] = {
    "common_type", "common_size",    "common_cpu",   "common_pid",
    "common_tid",  "common_ts",      "common_flags", "common_preempt_count",
    "__probe_ip",  "__probe_ret_ip", "__probe_func"};

// What makes an event happen: a probe on an instruction, or a system call
// (the kernel's syscalls:sys_enter_NAME / sys_exit_NAME and
// raw_syscalls:sys_enter / sys_exit events, and event probes on them).
enum class EventSource : uint8_t {
  kProbe,
  kSyscallEnter,
  kSyscallExit,
  kRawSyscallEnter,
  kRawSyscallExit,
};

inline bool is_syscall_source(EventSource source) { return source != EventSource::kProbe; }
inline bool is_syscall_exit(EventSource source) {
  return source == EventSource::kSyscallExit || source == EventSource::kRawSyscallExit;
}

struct EventDesc {
  uint16_t id = 0;
  std::string group;
  std::string name;
  bool is_return = false;
  std::vector<EventArg> args;
  uint32_t fixed_size = 0;  // header, ip fields and argument fields
  // Return events: where the call's entry time is, after the arguments (a
  // field of dprobe's own, which the kernel's format does not show, for
  // timelines: the call's duration); 0 where a record has none.
  uint32_t entry_time_offset = 0;

  // Syscall events: which call (kSyscallEnter/Exit), its name for the
  // line ("openat" prints as sys_openat), and whether this is an event
  // probe (e:) on it, printed as a probe event that names the event it is
  // attached to: "open: (syscalls.sys_enter_openat) path=...".
  EventSource source = EventSource::kProbe;
  int32_t syscall_nr = -1;
  std::string syscall_name;
  bool event_probe = false;

  // --stacktrace: the __data_loc field of the user stack at the hit (its
  // return addresses, 8 bytes each, innermost first), after the other
  // fixed fields; 0 when the event records none (add_stack_field).
  uint32_t stack_offset = 0;

  // --filter, --trigger: what the agent does with a hit before (or
  // instead of) writing its record; null for none.
  std::shared_ptr<const EventAnalysis> analysis;

  // Offsets of the ip fields: entry events have __probe_ip; return events
  // have __probe_func and __probe_ret_ip.
  static constexpr uint32_t kIpOffset = 24;
  static constexpr uint32_t kFuncOffset = 24;
  static constexpr uint32_t kRetIpOffset = 32;
};

// Where the first argument field goes: after the header and the ip fields.
inline constexpr uint32_t first_arg_offset(bool is_return) { return is_return ? 40u : 32u; }

// Assigns argument offsets (packed, in order, after the ip fields) and
// fixed_size, as the kernel lays out a probe event.
void layout_event(EventDesc& event);

// Gives a laid-out event its user stack field (--stacktrace), once.
void add_stack_field(EventDesc& event);

// A whole compiled definition: where the probe goes and what it records.
struct ProbeSpec {
  core::ProbePoint point;
  EventDesc event;
};

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_EVENT_H_
