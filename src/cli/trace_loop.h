// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What `dprobe run` and `dprobe attach` share once a session is on: the
// drain thread, the switch that pauses and resumes events (SIGUSR2 and
// SIGUSR1 to dprobe, as writing 0 or 1 to the kernel's tracing_on), the
// output file and the profile at the end.
//
//   EventSwitch events(session.memory(), disabled, set);
//   { Drainer drainer(reader, events); wait_for_the_end(); }
//   print_profile(set, session.memory(), stdout);
#ifndef DPROBE_CLI_TRACE_LOOP_H_
#define DPROBE_CLI_TRACE_LOOP_H_

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "cli/trace_reader.h"
#include "lang/definition_set.h"
#include "trace/trace_memory.h"

namespace dprobe::cli {

// SIGUSR1 resumes every event, SIGUSR2 pauses them.
void listen_for_pause_and_resume();

// Which events run: those not disabled with --disable; all of them paused
// while tracing is off.
class EventSwitch {
 public:
  EventSwitch(const trace::TraceMemory& memory, std::vector<uint16_t> disabled,
              const lang::DefinitionSet& set);
  void poll();

 private:
  void apply(bool on);
  const trace::TraceMemory& memory_;
  std::vector<uint16_t> disabled_;
  std::vector<uint16_t> ids_;
};

// --disable names: [GRP/]EVENT, each of which must name an event.
Result<std::vector<uint16_t>> disabled_ids(const std::vector<std::string>& names,
                                           const lang::DefinitionSet& set);

// Drains while the program runs; a pass that finds nothing waits a little.
class Drainer {
 public:
  Drainer(TraceReader& reader, EventSwitch& events);
  ~Drainer();
  Drainer(const Drainer&) = delete;
  Drainer& operator=(const Drainer&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// -o OUT, or stdout.
struct OutputFile {
  std::FILE* file = stdout;
  ~OutputFile() {
    if (file != stdout) std::fclose(file);
  }
};

// Each event's hits and misses, as the kernel's kprobe_profile.
void print_profile(const lang::DefinitionSet& set, const trace::TraceMemory& memory,
                   std::FILE* out);

// "4M", "512K", "65536" -> bytes, rounded up to a power of two >= 4096.
std::optional<uint64_t> parse_buffer_size(const std::string& text);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_TRACE_LOOP_H_
