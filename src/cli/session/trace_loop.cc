// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/session/trace_loop.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace dprobe::cli {
namespace {

// Set by SIGUSR1 (1: resume) and SIGUSR2 (2: pause), applied by the drainer.
std::atomic<int> g_tracing_request{0};

void request_tracing(int sig) { g_tracing_request = sig == SIGUSR1 ? 1 : 2; }

}  // namespace

void listen_for_pause_and_resume() {
  struct sigaction sa {};
  sa.sa_handler = request_tracing;
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGUSR1, SIGUSR2}) ::sigaction(sig, &sa, nullptr);
}

int take_tracing_request() { return g_tracing_request.exchange(0); }

EventSwitch::EventSwitch(const trace::TraceMemory& memory, std::vector<uint16_t> disabled,
                         const lang::DefinitionSet& set)
    : memory_(memory), disabled_(std::move(disabled)) {
  for (const trace::ProbeSpec& spec : set.specs()) ids_.push_back(spec.event.id);
  apply(true);
}

void EventSwitch::apply(bool on) {
  for (uint16_t id : ids_) {
    const bool off = !on || std::find(disabled_.begin(), disabled_.end(), id) != disabled_.end();
    memory_.counter(id).disabled.store(off ? 1 : 0, std::memory_order_relaxed);
  }
}

Result<std::vector<uint16_t>> disabled_ids(const std::vector<std::string>& names,
                                           const lang::DefinitionSet& set) {
  std::vector<uint16_t> ids;
  for (const std::string& name : names) {
    const size_t slash = name.find('/');
    const std::string group = slash == std::string::npos ? "" : name.substr(0, slash);
    const std::string event = slash == std::string::npos ? name : name.substr(slash + 1);
    bool found = false;
    for (const trace::ProbeSpec& spec : set.specs()) {
      if (spec.event.name == event && (group.empty() || spec.event.group == group)) {
        ids.push_back(spec.event.id);
        found = true;
      }
    }
    if (!found) return fail("--disable " + name + ": no such event");
  }
  return ids;
}

std::optional<uint64_t> parse_count(std::string_view text, uint64_t max) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  uint64_t value = 0;
  for (const char digit : text) {
    const auto d = static_cast<uint64_t>(digit - '0');
    if (d > max || value > (max - d) / 10) return std::nullopt;  // past max: no wrap around
    value = value * 10 + d;
  }
  return value;
}

std::optional<uint32_t> parse_max_threads(const std::string& text) {
  const std::optional<uint64_t> count = parse_count(text, kMaxThreadsLimit);
  if (!count || *count == 0) return std::nullopt;
  return static_cast<uint32_t>(*count);
}

std::optional<double> parse_seconds(const std::string& text) {
  // A unit as bpftrace and timeout(1) write them: 500ms, 2s, 5m, 1h.
  std::string number = text;
  double unit = 1;
  for (const auto& [suffix, scale] :
       {std::pair<std::string_view, double>{"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}}) {
    if (number.size() > suffix.size() && number.ends_with(suffix)) {
      number.resize(number.size() - suffix.size());
      unit = scale;
      break;
    }
  }
  if (number.empty() || number.find_first_not_of("0123456789.") != std::string::npos) {
    return std::nullopt;  // no sign, exponent, "nan" or "inf": plain seconds
  }
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(number.c_str(), &end) * unit;
  if (errno != 0 || end != number.c_str() + number.size() || !std::isfinite(value) || value <= 0 ||
      value > kMaxSeconds) {
    return std::nullopt;
  }
  return value;
}

std::optional<uint64_t> parse_buffer_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  uint64_t scale = 1;
  std::string digits = text;
  switch (digits.back()) {
    case 'k':
    case 'K':
      scale = 1u << 10;
      digits.pop_back();
      break;
    case 'm':
    case 'M':
      scale = 1u << 20;
      digits.pop_back();
      break;
    case 'g':
    case 'G':
      scale = 1u << 30;
      digits.pop_back();
      break;
    default:
      break;
  }
  const std::optional<uint64_t> count = parse_count(digits, (uint64_t{1} << 30) / scale);
  if (!count || *count == 0) return std::nullopt;
  const uint64_t value = *count * scale;
  uint64_t size = 4096;
  while (size < value) size <<= 1;
  return size;
}

}  // namespace dprobe::cli
