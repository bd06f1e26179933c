// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The fetch interpreter's tests share this fixture: a definition compiled
// by the language, run against a fake register frame and a fake memory,
// the record it stores and the trace line the formatter prints from it.
#ifndef DPROBE_TESTS_UNIT_TRACE_FETCH_EXEC_FIXTURE_H_
#define DPROBE_TESTS_UNIT_TRACE_FETCH_EXEC_FIXTURE_H_

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "arch/x86_64/regs.h"
#include "lang/definition.h"
#include "trace/formatter.h"
#include "trace/hit/fetch_exec.h"
#include "trace/record.h"

namespace dprobe::trace::test_support {

using arch::Isa;
namespace x86 = arch::x86_64;

// The traced program's memory: mapped bytes read, anything else faults.
class FakeMemory {
 public:
  void put(uint64_t address, const void* data, size_t size) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < size; ++i) bytes_[address + i] = bytes[i];
  }
  void put_u64(uint64_t address, uint64_t value) { put(address, &value, sizeof(value)); }
  void put_u32(uint64_t address, uint32_t value) { put(address, &value, sizeof(value)); }
  // The text and its NUL.
  void put_string(uint64_t address, std::string_view text) {
    put(address, text.data(), text.size());
    bytes_[address + text.size()] = 0;
  }
  void unmap(uint64_t address, size_t size) {
    for (size_t i = 0; i < size; ++i) bytes_.erase(address + i);
  }

  MemoryReader reader() { return {&FakeMemory::read, &FakeMemory::read_string, this}; }

 private:
  static bool read(void* context, void* dst, uint64_t src, size_t size) {
    const auto& bytes = static_cast<FakeMemory*>(context)->bytes_;
    for (size_t i = 0; i < size; ++i) {
      const auto it = bytes.find(src + i);
      if (it == bytes.end()) return false;
      static_cast<uint8_t*>(dst)[i] = it->second;
    }
    return true;
  }

  // As arch::safe_read_string.
  static int64_t read_string(void* context, char* dst, uint64_t src, size_t capacity) {
    const auto& bytes = static_cast<FakeMemory*>(context)->bytes_;
    if (capacity == 0) return 0;
    size_t n = 0;
    for (; n + 1 < capacity; ++n) {
      const auto it = bytes.find(src + n);
      if (it == bytes.end()) return -1;
      dst[n] = static_cast<char>(it->second);
      if (it->second == 0) return static_cast<int64_t>(n + 1);
    }
    dst[n] = '\0';
    return static_cast<int64_t>(n + 1);
  }

  std::map<uint64_t, uint8_t> bytes_;
};

// One probe hit, done: the record and its trace line.
struct Hit {
  EventDesc event;
  std::vector<std::byte> record;  // `size` bytes
  uint32_t size = 0;
  std::string args;  // the line after the ip fields: " a=1 b=2"

  uint64_t field(size_t arg, uint32_t element = 0) const {
    const uint32_t size_of = fetch_type(event.args[arg].type).size;
    const uint32_t offset = event.args[arg].offset + element * size_of;
    uint64_t value = 0;
    for (uint32_t i = 0; i < size_of; ++i) {
      value |= uint64_t{std::to_integer<uint8_t>(record[offset + i])} << (8 * i);
    }
    return value;
  }
  uint32_t data_loc(size_t arg, uint32_t element = 0) const {
    return load_field<uint32_t>(record.data(), event.args[arg].offset + element * 4);
  }
};

inline constexpr uint64_t kProbeIp = 0x401000;
inline constexpr uint64_t kReturnIp = 0x401234;
inline constexpr uint64_t kStackTop = 0x7ffd0000;
inline constexpr uint64_t kData = 0x10000;
inline constexpr std::byte kPoison{0xa5};

class FetchExecTest : public ::testing::Test {
 protected:
  // Compiles "KIND:test/ev libc.so.6:open ARGS", runs it and formats it.
  Hit run(const std::string& args, Isa isa = Isa::kX86_64, char kind = 'p',
          uint32_t capacity = kMaxRecordSize) {
    auto def =
        lang::parse_definition(std::string(1, kind) + ":test/ev libc.so.6:open " + args, {isa});
    EXPECT_TRUE(def) << (def ? "" : lang::render_error(def.error()));
    if (!def) return {};
    return run_event(def->spec.event, isa, capacity);
  }

  Hit run_event(EventDesc event, Isa isa = Isa::kX86_64, uint32_t capacity = kMaxRecordSize) {
    Hit hit;
    hit.event = std::move(event);
    hit.event.id = 3;
    // Poison everything: every argument byte must be written, nothing past
    // the capacity may be.
    std::vector<std::byte> buffer(capacity + 64, kPoison);
    const RecordHeader header{hit.event.id, 0, 1, 100, 101, 5'000'000'000};
    store_field(buffer.data(), 0, header);
    if (hit.event.is_return) {
      store_field(buffer.data(), EventDesc::kFuncOffset, kProbeIp);
      store_field(buffer.data(), EventDesc::kRetIpOffset, kReturnIp);
    } else {
      store_field(buffer.data(), EventDesc::kIpOffset, kProbeIp);
    }
    const FetchEnv env{regs_.data(),
                       isa,
                       entry_args_.empty() ? nullptr : entry_args_.data(),
                       static_cast<uint32_t>(entry_args_.size()),
                       comm_,
                       memory_.reader(),
                       duration_ns_,
                       float_retval_};
    hit.size = store_event_args(hit.event, env, buffer.data(), capacity);
    for (uint32_t i = capacity; i < buffer.size(); ++i) {
      EXPECT_EQ(buffer[i], kPoison) << "written past the capacity at " << i;
    }
    if (hit.size == 0) return hit;
    store_field(buffer.data(), 2, static_cast<uint16_t>(hit.size));
    hit.record.assign(buffer.begin(), buffer.begin() + hit.size);
    hit.args = format_args(hit);
    return hit;
  }

  static std::string format_args(const Hit& hit) {
    std::string line;
    TraceFormatter().format_text(hit.event, hit.record, "worker", line);
    const std::string ip = hit.event.is_return ? "(0x401234 <- 0x401000)" : "(0x401000)";
    const size_t start = line.find(ip);
    EXPECT_NE(start, std::string::npos) << line;
    if (start == std::string::npos) return line;
    return line.substr(start + ip.size(), line.size() - start - ip.size() - 1);
  }

  uint64_t& x86_reg(x86::Reg reg) { return regs_[reg]; }
  uint64_t& a64_reg(unsigned reg) { return regs_[reg]; }

  std::array<uint64_t, 40> regs_{};
  FakeMemory memory_;
  std::vector<uint64_t> entry_args_;
  char comm_[16] = "worker";
  uint64_t duration_ns_ = 0;
  uint64_t float_retval_ = 0;
};

}  // namespace dprobe::trace::test_support

#endif  // DPROBE_TESTS_UNIT_TRACE_FETCH_EXEC_FIXTURE_H_
