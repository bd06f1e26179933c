// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The messages between the CLI and the agent, in the order they go:
//
//   agent -> cli   Hello      who it is and which objects are loaded where
//   cli -> agent   Probes     what to probe: run-time addresses, compiled events
//   agent -> cli   ArmReport  per probe: armed, or why not; with the trace
//                             memory's file descriptor alongside
//   cli -> agent   Go | Abort let the program run, or disarm and stop
//
// and then, while the program runs:
//
//   agent -> cli   ObjectsChanged  the loader mapped or unmapped objects
//   cli -> agent   Probes          the probes of the new objects (maybe none)
//   agent -> cli   ArmReport       as above, without a descriptor
//   cli -> agent   Detach          disarm everything and let go
//   agent -> cli   Detached        done: every patched byte is restored
//
//   auto bytes = encode(hello);
//   auto back = decode_hello(bytes);
#ifndef DPROBE_PROTOCOL_MESSAGES_H_
#define DPROBE_PROTOCOL_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/refusal.h"
#include "base/result.h"
#include "core/probe_point.h"
#include "trace/event.h"

namespace dprobe::protocol {

inline constexpr uint32_t kProtocolVersion = 7;

enum class MessageType : uint8_t {
  kHello = 1,
  kProbes,
  kArmReport,
  kGo,
  kAbort,
  kObjectsChanged,
  kDetach,
  kDetached,
  // attach: the thread the CLI borrowed to load the agent runs the
  // program's own code again (its registers restored, ptrace gone).
  kResumed,
  // attach, agent to CLI, just before it arms and when it detaches
  // (protocol::HoldThreads): stop every thread of the program but these,
  // while the probes go from breakpoints to jumps (or jumps go back), so
  // that none of them reaches a breakpoint with every signal blocked
  // (thread exit, posix_spawn's child).
  kHoldThreads,
  // The CLI's answer (one byte: 1 held, 0 not). Held for arming, they run
  // again once the CLI has the arm report; for detach, at kReleaseThreads
  // (or Detached). After some seconds whatever happens.
  kThreadsHeld,
  // Agent to CLI, detaching: every byte is back, let the threads go.
  kReleaseThreads,
  // `run`, agent to CLI (Probes::hold_exit): the program is exiting; its
  // thread waits until the CLI has written the trace out and says
  // kExitGo, or closes the channel.
  kExiting,
  kExitGo,
};

// kAbort's payload at `run`: the exit status the program ends with, before
// any code of its own runs (the CLI said why). Empty at `attach`: the
// agent lets the program go on untraced.
std::vector<std::byte> encode_abort_status(uint8_t status);
std::optional<uint8_t> decode_abort_status(std::span<const std::byte> bytes);

struct HoldThreads {
  std::vector<uint32_t> running;  // the agent's own threads, which arm
};

struct LoadedObject {
  std::string path;   // as the dynamic loader names it; the executable's real path
  uint64_t bias = 0;  // run-time address minus link-time address
  uint64_t dev = 0;   // st_dev and st_ino, to match files whatever the path
  uint64_t ino = 0;
  bool is_main = false;
};

struct Hello {
  uint32_t version = kProtocolVersion;
  uint32_t pid = 0;
  std::vector<LoadedObject> objects;
};

struct ObjectsChanged {
  std::vector<LoadedObject> loaded;
  std::vector<LoadedObject> unloaded;
};

struct ProbeRequest {
  uint64_t address = 0;           // the probed instruction, run-time
  uint64_t function_address = 0;  // start of its function, to check the boundary from
  uint64_t function_size = 0;
  trace::ProbeSpec spec;  // fetch symbols and file offsets already made addresses
  // `address` is an IFUNC's resolver: the agent probes the implementation
  // it picks, where the program's calls go (function_* unknown then).
  bool ifunc = false;
  // An SDT site's semaphore, run-time: counted up while the probe is armed
  // (so that the program's `if (PROVIDER_NAME_ENABLED())` lets it reach
  // the site), down when it is disarmed; 0 for none.
  uint64_t semaphore = 0;
};

struct Probes {
  uint32_t ring_data_bytes = 0;  // per thread, a power of two
  uint32_t max_threads = 0;      // ring slots
  bool return_probes = false;    // some definition, maybe pending, is a return probe
  uint32_t event_slots = 0;      // event ids are below this, pending ones included
  bool optimize = true;          // jump-optimize where safe (--no-optimize: breakpoints only)
  bool cycle_clock = false;      // stamp records with the CPU's counter (trace/trace_clock.h)
  std::vector<ProbeRequest> probes;
  // The system call events (trace::is_syscall_source), which need no
  // address: the agent sees every call the program makes.
  std::vector<trace::ProbeSpec> syscall_events;
  bool syscall_summary = false;  // --summary: count every call, by number
  // Each slot's hist tables (--trigger), every event's together, pending
  // ones included: the trace memory is laid out for them at the start.
  uint64_t hist_slot_bytes = 0;
  // Return records carry their entry's time ($duration, trace files,
  // --perfetto); without them a return probe's entry reads no clock.
  bool entry_times = true;
  // `attach`: where the thread that loads the agent goes back to once it
  // has (the place it was stopped at, and the system call it restarts).
  // No jump goes over one while that thread has not gone on.
  std::vector<uint64_t> caller_places{};
  // `attach`: the CLI can hold the program's threads (MessageType::kHoldThreads).
  bool holds_threads = false;
  // `run`, the process dprobe started: its exit waits for the trace to be
  // written (MessageType::kExiting), so that whoever waits for the program
  // finds the trace complete.
  bool hold_exit = false;
};

struct ArmResult {
  uint16_t event_id = 0;
  arch::ArmStatus status = arch::ArmStatus::kArmed;
  std::string message;          // the reason, and for kNotBoundary the listing
  uint64_t implementation = 0;  // an IFUNC probe's: where it was placed
};

struct ArmReport {
  uint64_t trace_memory_bytes = 0;  // the shared trace memory sent as a descriptor
  std::vector<ArmResult> results;
  std::vector<core::ProbeState> states;  // one per probed address placed by this report
};

std::vector<std::byte> encode(const Hello& hello);
std::vector<std::byte> encode(const Probes& probes);
std::vector<std::byte> encode(const ArmReport& report);
std::vector<std::byte> encode(const ObjectsChanged& changed);

Result<Hello> decode_hello(std::span<const std::byte> bytes);
std::vector<std::byte> encode(const HoldThreads& hold);
Result<HoldThreads> decode_hold_threads(std::span<const std::byte> bytes);
Result<Probes> decode_probes(std::span<const std::byte> bytes);
Result<ArmReport> decode_arm_report(std::span<const std::byte> bytes);
Result<ObjectsChanged> decode_objects_changed(std::span<const std::byte> bytes);

}  // namespace dprobe::protocol

#endif  // DPROBE_PROTOCOL_MESSAGES_H_
