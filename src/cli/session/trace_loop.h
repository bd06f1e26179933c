// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What `dprobe run` and `dprobe attach` share around their sessions: the
// switch that pauses and resumes events (SIGUSR2 and SIGUSR1 to dprobe, as
// writing 0 or 1 to the kernel's tracing_on), the output file, and
// --buffer-size.
//
//   EventSwitch events(session.memory(), disabled, set);
//   if (int request = take_tracing_request()) events.apply(request == 1);
#ifndef DPROBE_CLI_SESSION_TRACE_LOOP_H_
#define DPROBE_CLI_SESSION_TRACE_LOOP_H_

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "cli/output/trace_reader.h"
#include "lang/definition_set.h"
#include "trace/trace_memory.h"

namespace dprobe::cli {

// SIGUSR1 resumes every event, SIGUSR2 pauses them.
void listen_for_pause_and_resume();
// The last request since the previous call: 0 none, 1 resume, 2 pause.
int take_tracing_request();

// Which events of one process run: those not disabled with --disable; all
// of them paused while tracing is off.
class EventSwitch {
 public:
  EventSwitch(const trace::TraceMemory& memory, std::vector<uint16_t> disabled,
              const lang::DefinitionSet& set);
  void apply(bool on);

 private:
  const trace::TraceMemory& memory_;
  std::vector<uint16_t> disabled_;
  std::vector<uint16_t> ids_;
};

// --disable names: [GRP/]EVENT, each of which must name an event.
Result<std::vector<uint16_t>> disabled_ids(const std::vector<std::string>& names,
                                           const lang::DefinitionSet& set);

// -o OUT, or stdout.
struct OutputFile {
  std::FILE* file = stdout;
  ~OutputFile() {
    if (file != stdout) std::fclose(file);
  }
};

// "4M", "512K", "65536" -> bytes, rounded up to a power of two >= 4096;
// at most 1G.
std::optional<uint64_t> parse_buffer_size(const std::string& text);

// Decimal digits only, at most `max` (never wrapped around).
std::optional<uint64_t> parse_count(std::string_view text, uint64_t max);

// --max-threads: threads that can trace at once, 1 to kMaxThreadsLimit.
inline constexpr uint64_t kMaxThreadsLimit = 32768;
std::optional<uint32_t> parse_max_threads(const std::string& text);

// --duration: a finite number of seconds above 0 ("0.5", "10"), or with a
// unit ("500ms", "2s", "5m", "1h"), at most a year; never negative, nan or
// inf.
inline constexpr double kMaxSeconds = 365.0 * 24 * 3600;
std::optional<double> parse_seconds(const std::string& text);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_SESSION_TRACE_LOOP_H_
