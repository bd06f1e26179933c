// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/arming.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "agent/agent_state.h"
#include "agent/hit/hit_analysis.h"
#include "agent/hit/return_probes.h"
#include "agent/ifunc.h"
#include "agent/semaphores.h"
#include "agent/syscall_dispatch.h"
#include "agent/unsafe_code.h"
#include "trace/event_analysis.h"
#include "trace/hit/fetch_exec.h"
#include "trace/record.h"

namespace dprobe::agent {
namespace {

// The highest $argN an event fetches (return events fetch them at entry).
uint32_t highest_arg(const trace::EventDesc& event) {
  uint32_t highest = 0;
  for (const trace::EventArg& arg : event.args) {
    for (const trace::FetchInsn& insn : arg.code) {
      if (insn.op == trace::FetchOp::kArg) highest = std::max(highest, insn.param + 1);
    }
  }
  return highest;
}

// Room for a record: its fixed part, plus each string at its longest.
uint32_t max_record_size(const trace::EventDesc& event) {
  uint64_t size = event.fixed_size;
  for (const trace::EventArg& arg : event.args) {
    if (trace::is_string_class(trace::fetch_type(arg.type).cls)) {
      size += uint64_t{trace::kMaxStringSize} * (arg.count ? arg.count : 1);
    }
  }
  size += stack_record_bytes(event);
  return static_cast<uint32_t>(std::min<uint64_t>(size, trace::kMaxRecordSize));
}

// Whether a fetch reads a register a trampoline does not save (arch::kFirstFixedSlot).
bool reads_fixed_slots(const trace::EventDesc& event) {
  for (const trace::EventArg& arg : event.args) {
    for (const trace::FetchInsn& insn : arg.code) {
      if (insn.op == trace::FetchOp::kReg && insn.param >= arch::kFirstFixedSlot) return true;
    }
  }
  return false;
}

// Whether a fetch reads the floating-point return register ($retval:f64).
bool reads_float_return(const trace::EventDesc& event) {
  for (const trace::EventArg& arg : event.args) {
    for (const trace::FetchInsn& insn : arg.code) {
      if (insn.op == trace::FetchOp::kFloatRetval) return true;
    }
  }
  return false;
}

// An event comes once; a library loaded again brings its probes again.
const AgentEvent* keep_event(const trace::ProbeSpec& spec, AgentState& state) {
  if (const AgentEvent* kept = state.events.find(spec.event.id)) return kept;
  trace::EventDesc event = spec.event;
  // A return record's entry time goes where the CLI laid it out, inside
  // the fixed part past the function and return address; anywhere else
  // it is not written at all.
  const bool entry_time_fits = event.is_return &&
                               event.entry_time_offset >= trace::first_arg_offset(true) &&
                               event.entry_time_offset + 8ull <= event.fixed_size;
  if (!entry_time_fits) event.entry_time_offset = 0;
  if (event.analysis) event.analysis = trace::plan_analysis(*event.analysis);
  if (reads_fixed_slots(event)) state.fixed_slots_read.store(true, std::memory_order_relaxed);
  if (reads_float_return(event)) want_float_return();
  state.events.add(std::make_unique<AgentEvent>(AgentEvent{
      event, max_record_size(event), spec.point.maxactive, event.is_return ? highest_arg(event) : 0,
      trace::plan_register_fields(event, arch::host_isa(),
                                  event.is_return ? core::kMaxEntryArgs : 0),
      event.analysis && event.analysis->needs_stack(event)}));
  return state.events.find(event.id);
}

constexpr const char* kIfuncNotRelocated =
    "an IFUNC of an object the loader has just mapped: its resolver cannot run "
    "before the object is relocated (name the implementation, or probe "
    "PATH:0xOFFSET)";
constexpr const char* kIfuncNowhere = "its IFUNC resolver returned no address in a loaded object";

// Where the request's probe goes (an IFUNC's at the implementation its
// resolver picks for this process, found by calling it), or why nowhere.
struct Placement {
  core::ProbeSite site;
  const char* refusal = nullptr;
};

Placement place(const protocol::ProbeRequest& request, Objects objects) {
  if (!request.ifunc) {
    return {{request.address, request.function_address, request.function_size}};
  }
  if (objects == Objects::kJustMapped) return {{}, kIfuncNotRelocated};
  const auto implementation = resolve_ifunc(request.address);
  if (!implementation) return {{}, kIfuncNowhere};
  return {{implementation->address, implementation->function_begin, implementation->function_size}};
}

}  // namespace

protocol::ArmReport add_probes(const protocol::Probes& probes, Objects objects) {
  AgentState& state = agent_state();
  protocol::ArmReport report;
  std::lock_guard lock(state.registry_writer);
  for (const protocol::ProbeRequest& request : probes.probes) {
    // Counters exist for the ids the session started with, and only those.
    if (request.spec.event.id >= state.memory->event_slots()) {
      report.results.push_back({request.spec.event.id, arch::ArmStatus::kPatchFailed,
                                "event id beyond the session's counters"});
      continue;
    }
    if (!analysis_fits(request.spec.event, *state.memory)) {
      report.results.push_back({request.spec.event.id, arch::ArmStatus::kPatchFailed,
                                "its filter, trigger or stack field does not fit the event"});
      continue;
    }
    if (request.spec.event.is_return) {
      if (const char* why = return_probe_refusal(request.address)) {
        report.results.push_back({request.spec.event.id, arch::ArmStatus::kBlacklisted, why});
        continue;
      }
    }
    const Placement placement = place(request, objects);
    if (placement.refusal != nullptr) {
      report.results.push_back(
          {request.spec.event.id, arch::ArmStatus::kRejected, placement.refusal});
      continue;
    }
    const core::ProbeSite& site = placement.site;
    if (request.spec.event.is_return && request.ifunc) {
      if (const char* why = return_probe_refusal(site.address)) {
        report.results.push_back({request.spec.event.id, arch::ArmStatus::kBlacklisted, why});
        continue;
      }
    }
    keep_event(request.spec, state);
    auto added = state.registry->add(site, request.spec.event.id);
    const uint64_t implementation = request.ifunc ? site.address : 0;
    if (added) {
      count_semaphore_up(request.semaphore, site.address);
      report.results.push_back(
          {request.spec.event.id, arch::ArmStatus::kArmed, {}, implementation});
    } else {
      report.results.push_back(
          {request.spec.event.id, added.error().status, added.error().message, implementation});
    }
  }
  return report;
}

void add_syscall_events(const protocol::Probes& probes, protocol::ArmReport& report) {
  if (probes.syscall_events.empty() && !probes.syscall_summary) return;
  AgentState& state = agent_state();
  const int unavailable = syscall_dispatch_unavailable();
  std::vector<const AgentEvent*> events;
  for (const trace::ProbeSpec& spec : probes.syscall_events) {
    const uint16_t id = spec.event.id;
    if (id >= state.memory->event_slots()) {
      report.results.push_back(
          {id, arch::ArmStatus::kPatchFailed, "event id beyond the session's counters"});
    } else if (!analysis_fits(spec.event, *state.memory)) {
      report.results.push_back({id, arch::ArmStatus::kPatchFailed,
                                "its filter, trigger or stack field does not fit the event"});
    } else if (unavailable != 0) {
      report.results.push_back(
          {id, arch::ArmStatus::kRejected,
           std::string("system calls cannot be traced here: this kernel "
                       "has no Syscall User Dispatch (Linux 5.11 or later): ") +
               std::strerror(unavailable)});
    } else {
      events.push_back(keep_event(spec, state));
      report.results.push_back({id, arch::ArmStatus::kArmed, {}});
    }
  }
  if (unavailable == 0) {
    configure_syscall_tracing(events, probes.syscall_summary, probes.optimize);
  }
}

}  // namespace dprobe::agent
