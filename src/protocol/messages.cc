// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "protocol/messages.h"

#include "protocol/analysis_wire.h"
#include "protocol/wire.h"

namespace dprobe::protocol {
namespace {

// Smallest encodings, to refuse counts a message could not hold.
constexpr size_t kMinObjectBytes = 4 + 8 * 3 + 1;
constexpr size_t kMinProbeBytes = 8 * 3 + 1 + 8 + 4;
constexpr size_t kMinArgBytes = 4 * 6;
constexpr size_t kMinSpecBytes = 1 + 4 + 2 + 4 + 4 + 4;
constexpr size_t kMinResultBytes = 2 + 1 + 4 + 8;  // id, status, message length, implementation
constexpr size_t kMinStateBytes = 8 + 1 + 4;       // address, optimized, reason length

void put_arg(WireWriter& w, const trace::EventArg& arg) {
  w.str(arg.name);
  w.str(arg.expr);
  w.str(arg.type_text);
  w.u8(static_cast<uint8_t>(arg.type));
  w.u32(arg.count);
  w.u32(arg.offset);
  w.values(arg.code);
  w.str(arg.data);
}

trace::EventArg get_arg(WireReader& r) {
  trace::EventArg arg;
  arg.name = r.str();
  arg.expr = r.str();
  arg.type_text = r.str();
  const uint8_t type = r.u8();
  arg.type = type < static_cast<uint8_t>(trace::TypeId::kCount) ? static_cast<trace::TypeId>(type)
                                                                : trace::kDefaultType;
  arg.count = r.u32();
  arg.offset = r.u32();
  arg.code = r.values<trace::FetchInsn>();
  arg.data = r.str();
  return arg;
}

void put_spec(WireWriter& w, const trace::ProbeSpec& spec) {
  w.boolean(spec.point.is_return);
  w.u32(spec.point.maxactive);
  const trace::EventDesc& ev = spec.event;
  w.u16(ev.id);
  w.str(ev.group);
  w.str(ev.name);
  w.u32(ev.fixed_size);
  w.list(ev.args, put_arg);
  w.u8(static_cast<uint8_t>(ev.source));
  w.u32(static_cast<uint32_t>(ev.syscall_nr));
  w.str(ev.syscall_name);
  w.boolean(ev.event_probe);
  w.u32(ev.stack_offset);
  w.u32(ev.entry_time_offset);
  put_analysis(w, ev.analysis.get());
}

trace::ProbeSpec get_spec(WireReader& r) {
  trace::ProbeSpec spec;
  spec.point.is_return = r.boolean();
  spec.point.maxactive = r.u32();
  trace::EventDesc& ev = spec.event;
  ev.is_return = spec.point.is_return;
  ev.id = r.u16();
  ev.group = r.str();
  ev.name = r.str();
  ev.fixed_size = r.u32();
  ev.args = r.list(kMinArgBytes, get_arg);
  const uint8_t source = r.u8();
  ev.source = source <= static_cast<uint8_t>(trace::EventSource::kRawSyscallExit)
                  ? static_cast<trace::EventSource>(source)
                  : trace::EventSource::kProbe;
  ev.syscall_nr = static_cast<int32_t>(r.u32());
  ev.syscall_name = r.str();
  ev.event_probe = r.boolean();
  ev.stack_offset = r.u32();
  ev.entry_time_offset = r.u32();
  ev.analysis = get_analysis(r);
  return spec;
}

template <typename T>
Result<T> finish(const WireReader& r, T value, const char* what) {
  if (!r.ok() || !r.at_end()) return fail(std::string("malformed ") + what + " message");
  return value;
}

void put_object(WireWriter& w, const LoadedObject& object) {
  w.str(object.path);
  w.u64(object.bias);
  w.u64(object.dev);
  w.u64(object.ino);
  w.boolean(object.is_main);
}

LoadedObject get_object(WireReader& r) {
  LoadedObject object;
  object.path = r.str();
  object.bias = r.u64();
  object.dev = r.u64();
  object.ino = r.u64();
  object.is_main = r.boolean();
  return object;
}

void put_probe(WireWriter& w, const ProbeRequest& probe) {
  w.u64(probe.address);
  w.u64(probe.function_address);
  w.u64(probe.function_size);
  w.boolean(probe.ifunc);
  w.u64(probe.semaphore);
  put_spec(w, probe.spec);
}

ProbeRequest get_probe(WireReader& r) {
  ProbeRequest probe;
  probe.address = r.u64();
  probe.function_address = r.u64();
  probe.function_size = r.u64();
  probe.ifunc = r.boolean();
  probe.semaphore = r.u64();
  probe.spec = get_spec(r);
  return probe;
}

void put_result(WireWriter& w, const ArmResult& result) {
  w.u16(result.event_id);
  w.u8(static_cast<uint8_t>(result.status));
  w.str(result.message);
  w.u64(result.implementation);
}

ArmResult get_result(WireReader& r) {
  ArmResult result;
  result.event_id = r.u16();
  const uint8_t status = r.u8();
  if (status > static_cast<uint8_t>(arch::kLastArmStatus)) r.refuse();
  result.status = static_cast<arch::ArmStatus>(status);
  result.message = r.str();
  result.implementation = r.u64();
  return result;
}

void put_state(WireWriter& w, const core::ProbeState& state) {
  w.u64(state.address);
  w.boolean(state.optimized);
  w.str(state.reason);
}

core::ProbeState get_state(WireReader& r) {
  core::ProbeState state;
  state.address = r.u64();
  state.optimized = r.boolean();
  state.reason = r.str();
  return state;
}

}  // namespace

std::vector<std::byte> encode(const Hello& hello) {
  WireWriter w;
  w.u32(hello.version);
  w.u32(hello.pid);
  w.list(hello.objects, put_object);
  return w.take();
}

Result<Hello> decode_hello(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  Hello hello;
  hello.version = r.u32();
  hello.pid = r.u32();
  hello.objects = r.list(kMinObjectBytes, get_object);
  return finish(r, std::move(hello), "hello");
}

std::vector<std::byte> encode(const ObjectsChanged& changed) {
  WireWriter w;
  w.list(changed.loaded, put_object);
  w.list(changed.unloaded, put_object);
  return w.take();
}

Result<ObjectsChanged> decode_objects_changed(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  ObjectsChanged changed;
  changed.loaded = r.list(kMinObjectBytes, get_object);
  changed.unloaded = r.list(kMinObjectBytes, get_object);
  return finish(r, std::move(changed), "objects changed");
}

std::vector<std::byte> encode(const Probes& probes) {
  WireWriter w;
  w.u32(probes.ring_data_bytes);
  w.u32(probes.max_threads);
  w.boolean(probes.return_probes);
  w.u32(probes.event_slots);
  w.boolean(probes.optimize);
  w.boolean(probes.cycle_clock);
  w.list(probes.probes, put_probe);
  w.list(probes.syscall_events, put_spec);
  w.boolean(probes.syscall_summary);
  w.u64(probes.hist_slot_bytes);
  w.boolean(probes.entry_times);
  w.values(probes.caller_places);
  w.boolean(probes.holds_threads);
  w.boolean(probes.hold_exit);
  return w.take();
}

std::vector<std::byte> encode_abort_status(uint8_t status) {
  return {static_cast<std::byte>(status)};
}

std::optional<uint8_t> decode_abort_status(std::span<const std::byte> bytes) {
  if (bytes.size() != 1) return std::nullopt;
  return static_cast<uint8_t>(bytes[0]);
}

std::vector<std::byte> encode(const HoldThreads& hold) {
  WireWriter w;
  w.values(hold.running);
  return w.take();
}

Result<HoldThreads> decode_hold_threads(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  HoldThreads hold;
  hold.running = r.values<uint32_t>();
  return finish(r, std::move(hold), "hold threads");
}

Result<Probes> decode_probes(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  Probes probes;
  probes.ring_data_bytes = r.u32();
  probes.max_threads = r.u32();
  probes.return_probes = r.boolean();
  probes.event_slots = r.u32();
  probes.optimize = r.boolean();
  probes.cycle_clock = r.boolean();
  probes.probes = r.list(kMinProbeBytes, get_probe);
  probes.syscall_events = r.list(kMinSpecBytes, get_spec);
  probes.syscall_summary = r.boolean();
  probes.hist_slot_bytes = r.u64();
  probes.entry_times = r.boolean();
  probes.caller_places = r.values<uint64_t>();
  probes.holds_threads = r.boolean();
  probes.hold_exit = r.boolean();
  return finish(r, std::move(probes), "probes");
}

std::vector<std::byte> encode(const ArmReport& report) {
  WireWriter w;
  w.u64(report.trace_memory_bytes);
  w.list(report.results, put_result);
  w.list(report.states, put_state);
  return w.take();
}

Result<ArmReport> decode_arm_report(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  ArmReport report;
  report.trace_memory_bytes = r.u64();
  report.results = r.list(kMinResultBytes, get_result);
  report.states = r.list(kMinStateBytes, get_state);
  return finish(r, std::move(report), "arm report");
}

}  // namespace dprobe::protocol
