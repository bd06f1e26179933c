// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/clock/kvm_clock.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "arch/host.h"

namespace dprobe::cli {
namespace {

// struct pvclock_vcpu_time_info (include/uapi/asm/pvclock-abi.h on x86):
// the fields this needs, at their offsets.
constexpr size_t kRecordSize = 32;
constexpr size_t kVersionOffset = 0;
constexpr size_t kMulOffset = 24;
constexpr size_t kShiftOffset = 28;
constexpr size_t kFlagsOffset = 29;
constexpr uint8_t kTscStableBit = 1u << 0;
constexpr uint64_t kPageSize = 4096;

template <typename T>
T field(std::span<const std::byte> record, size_t offset) {
  T value;
  std::memcpy(&value, record.data() + offset, sizeof(value));
  return value;
}

// Where this process has the page the vDSO reads the record from: its
// mapping's start, and which page of it.
std::optional<uint64_t> pvclock_page() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::optional<uint64_t> vvar_page;
  while (std::getline(maps, line)) {
    uint64_t begin = 0;
    uint64_t end = 0;
    char dash = 0;
    std::istringstream fields(line);
    if (!(fields >> std::hex >> begin >> dash >> end)) continue;
    if (line.ends_with("[vvar_vclock]")) return begin;
    // Before 6.13 the vclock pages followed the data page in [vvar]:
    // data, pvclock, hvclock, time namespace.
    if (line.ends_with("[vvar]") && end - begin == 4 * kPageSize) vvar_page = begin + kPageSize;
  }
  return vvar_page;
}

using Record = std::array<std::byte, kRecordSize>;

uint32_t version_at(const volatile std::byte* page) {
  uint32_t version = 0;
  for (size_t i = 0; i < sizeof(version); ++i) {
    version |= static_cast<uint32_t>(page[kVersionOffset + i]) << (8 * i);
  }
  return version;
}

// A copy taken between two equal, even readings of the version, as the
// vDSO reads it (the host makes it odd while it updates the record).
Record consistent_copy(const volatile std::byte* page) {
  Record copy;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const uint32_t before = version_at(page);
    std::atomic_thread_fence(std::memory_order_acquire);
    for (size_t i = 0; i < copy.size(); ++i) copy[i] = page[i];
    std::atomic_thread_fence(std::memory_order_acquire);
    if (before == version_at(page) && (before & 1) == 0) break;
  }
  return copy;
}

// The record's bytes, copied by a child: the page faults with SIGBUS
// where kvm-clock is not the vDSO's clock, and the child dies of it alone.
std::optional<Record> read_record(uint64_t address) {
  int pipe_ends[2];
  if (::pipe2(pipe_ends, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_ends[0]);
    const Record copy = consistent_copy(reinterpret_cast<const volatile std::byte*>(address));
    const bool whole =
        ::write(pipe_ends[1], copy.data(), copy.size()) == static_cast<ssize_t>(copy.size());
    ::_exit(whole ? 0 : 1);
  }
  ::close(pipe_ends[1]);
  Record record;
  ssize_t got = -1;
  if (child > 0) {
    do {
      got = ::read(pipe_ends[0], record.data(), record.size());
    } while (got < 0 && errno == EINTR);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(pipe_ends[0]);
  if (got != static_cast<ssize_t>(record.size())) return std::nullopt;
  return record;
}

bool clocksource_is_paravirtual() {
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return !arch::kParavirtCycleClocksource.empty() && (in >> name) &&
         name == arch::kParavirtCycleClocksource;
}

}  // namespace

std::optional<trace::CycleConversion> pvclock_slope(std::span<const std::byte> record) {
  if (record.size() < kRecordSize) return std::nullopt;
  const auto version = field<uint32_t>(record, kVersionOffset);
  const auto mul = field<uint32_t>(record, kMulOffset);
  const auto shift = field<int8_t>(record, kShiftOffset);
  const auto flags = field<uint8_t>(record, kFlagsOffset);
  if ((version & 1) != 0 || (flags & kTscStableBit) == 0 || mul == 0) return std::nullopt;
  // (delta << shift) * mul >> 32 is delta * mul >> (32 - shift).
  if (shift < -31 || shift > 31) return std::nullopt;
  trace::CycleConversion slope;
  slope.mult = mul;
  slope.shift = static_cast<uint16_t>(32 - shift);
  // A billion cycles take 0.05 to 10 s from a 20 GHz to a 0.1 GHz counter.
  const uint64_t ns = trace::cycles_to_ns(1'000'000'000u, slope);
  if (ns < 50'000'000u || ns > 10'000'000'000u) return std::nullopt;
  return slope;
}

std::optional<trace::CycleConversion> kvm_clock_slope() {
  static const std::optional<trace::CycleConversion> slope =
      []() -> std::optional<trace::CycleConversion> {
    if (!clocksource_is_paravirtual()) return std::nullopt;
    const std::optional<uint64_t> page = pvclock_page();
    if (!page) return std::nullopt;
    const auto record = read_record(*page);
    if (!record) return std::nullopt;
    return pvclock_slope(*record);
  }();
  return slope;
}

}  // namespace dprobe::cli
