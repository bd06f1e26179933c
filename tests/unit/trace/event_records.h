// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Events and records built by hand for the trace tests: an event of the
// arguments named, a record of it laid out as the agent writes one, and a
// symbolizer that knows a few symbols of `ls`.
#ifndef DPROBE_TESTS_UNIT_TRACE_EVENT_RECORDS_H_
#define DPROBE_TESTS_UNIT_TRACE_EVENT_RECORDS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event.h"
#include "trace/hit/fetch_type.h"
#include "trace/record.h"
#include "trace/symbolizer.h"

namespace dprobe::trace::test_support {

struct ArgSpec {
  std::string name;
  TypeId type;
  uint32_t count = 0;
  std::string type_text = {};  // "b4@0/8" for a bitfield
};

// An event of `args`, laid out as the CLI lays it out.
inline EventDesc make_event(std::string name, bool is_return, const std::vector<ArgSpec>& args,
                            uint16_t id = 7) {
  EventDesc ev;
  ev.id = id;
  ev.group = "test";
  ev.name = std::move(name);
  ev.is_return = is_return;
  for (const ArgSpec& spec : args) {
    EventArg arg;
    arg.name = spec.name;
    arg.type = spec.type;
    arg.count = spec.count;
    arg.type_text =
        spec.type_text.empty() ? std::string(fetch_type(spec.type).name) : spec.type_text;
    ev.args.push_back(std::move(arg));
  }
  layout_event(ev);
  return ev;
}

// Lays out one record as the agent would: header, ip fields, argument
// fields, then the strings the __data_loc words point to.
class RecordBuilder {
 public:
  explicit RecordBuilder(const EventDesc& ev) : ev_(ev), bytes_(ev.fixed_size) {
    header(0, 1880, 1882, 86566478123);
  }

  RecordBuilder& header(uint32_t cpu, uint32_t pid, uint32_t tid, uint64_t ts) {
    RecordHeader h{ev_.id, 0, cpu, pid, tid, ts};
    store_field(bytes_.data(), 0, h);
    return *this;
  }
  RecordBuilder& ip(uint64_t ip) { return word(EventDesc::kIpOffset, ip); }
  RecordBuilder& func(uint64_t func) { return word(EventDesc::kFuncOffset, func); }
  RecordBuilder& ret_ip(uint64_t ret_ip) { return word(EventDesc::kRetIpOffset, ret_ip); }

  RecordBuilder& value(size_t arg, uint64_t value, uint32_t element = 0) {
    const uint32_t size = fetch_type(ev_.args[arg].type).size;
    const uint32_t offset = ev_.args[arg].offset + element * size;
    switch (size) {
      case 1:
        store_field(bytes_.data(), offset, static_cast<uint8_t>(value));
        break;
      case 2:
        store_field(bytes_.data(), offset, static_cast<uint16_t>(value));
        break;
      case 4:
        store_field(bytes_.data(), offset, static_cast<uint32_t>(value));
        break;
      default:
        store_field(bytes_.data(), offset, value);
        break;
    }
    return *this;
  }
  RecordBuilder& signed_value(size_t arg, int64_t value) {
    return this->value(arg, static_cast<uint64_t>(value));
  }

  // Appends `text` and a NUL to the dynamic area and points the field at it.
  RecordBuilder& string(size_t arg, std::string_view text, uint32_t element = 0) {
    const auto start = static_cast<uint32_t>(bytes_.size());
    for (char c : text) bytes_.push_back(static_cast<std::byte>(c));
    bytes_.push_back(std::byte{0});
    const auto length = static_cast<uint32_t>(text.size() + 1);
    return value(arg, make_data_loc(start, length), element);
  }
  RecordBuilder& fault(size_t arg, uint32_t element = 0) {
    return value(arg, make_data_loc(0, 0), element);
  }

  std::vector<std::byte> build() {
    store_field(bytes_.data(), 2, static_cast<uint16_t>(bytes_.size()));
    return bytes_;
  }

 private:
  RecordBuilder& word(uint32_t offset, uint64_t value) {
    store_field(bytes_.data(), offset, value);
    return *this;
  }

  const EventDesc& ev_;
  std::vector<std::byte> bytes_;
};

// A few symbols of `ls`, found by linear search.
class FakeSymbolizer : public Symbolizer {
 public:
  std::optional<SymbolHit> symbolize(uint64_t address) const override {
    for (const Symbol& s : symbols_) {
      if (address >= s.start && address < s.start + s.size) {
        return SymbolHit{s.name, address - s.start, s.size};
      }
    }
    return std::nullopt;
  }
  std::string_view object_name(uint64_t address) const override {
    return address >= 0x7f0000000000 ? "libc.so.6" : "ls";
  }

 private:
  struct Symbol {
    uint64_t start;
    uint64_t size;
    std::string_view name;
  };
  std::vector<Symbol> symbols_ = {
      {0x7fdc221d4e90, 0x9a, "opendir"},
      {0x561ea4b8e000, 0x120, "main"},
      {0x7fdc22200000, 0x10, "we\"ird"},
  };
};

inline constexpr uint64_t kOpendir = 0x7fdc221d4e90;
inline constexpr uint64_t kMainPlus5a = 0x561ea4b8e05a;

}  // namespace dprobe::trace::test_support

#endif  // DPROBE_TESTS_UNIT_TRACE_EVENT_RECORDS_H_
