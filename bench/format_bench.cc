// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Lines per second of the trace formatter on a typical event: an entry
// probe with two hex arguments, a string and a symbol, formatted into one
// reused string as the CLI does. Target: 2 M text lines/s on one core.
//
//   build/bench/format_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/event.h"
#include "trace/formatter.h"
#include "trace/record.h"
#include "trace/symbolizer.h"

namespace dprobe::trace {
namespace {

constexpr uint64_t kTextBase = 0x7f0000001000;
constexpr uint64_t kSymbolSpacing = 0x100;
constexpr size_t kSymbolCount = 1000;

// What the CLI's symbolizer does per lookup: a binary search over the
// symbols of the objects loaded in the process, sorted by address.
class SortedSymbolizer : public Symbolizer {
 public:
  SortedSymbolizer() {
    for (size_t i = 0; i < kSymbolCount; ++i) {
      names_.push_back("function_number_" + std::to_string(i));
      symbols_.push_back({kTextBase + i * kSymbolSpacing, 0x80 + i % 0x40, i});
    }
  }

  std::optional<SymbolHit> symbolize(uint64_t address) const override {
    auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                  [](uint64_t a, const Symbol& s) { return a < s.start; });
    if (after == symbols_.begin()) return std::nullopt;
    const Symbol& s = *(after - 1);
    if (address - s.start >= s.size) return std::nullopt;
    return SymbolHit{names_[s.name], address - s.start, s.size};
  }

 private:
  struct Symbol {
    uint64_t start;
    uint64_t size;
    size_t name;
  };
  std::vector<std::string> names_;
  std::vector<Symbol> symbols_;
};

EventDesc typical_event() {
  EventDesc ev;
  ev.id = 1;
  ev.group = "dprobes";
  ev.name = "p_do_open_0";
  const TypeId types[] = {TypeId::kX64, TypeId::kX64, TypeId::kString, TypeId::kSymbol};
  const char* names[] = {"fd", "flags", "path", "caller"};
  for (size_t i = 0; i < 4; ++i) {
    EventArg arg;
    arg.name = names[i];
    arg.type = types[i];
    ev.args.push_back(std::move(arg));
  }
  layout_event(ev);
  return ev;
}

// ip = function_number_500+0x10, path = "/usr/lib/x86_64-linux-gnu/libc.so.6".
std::vector<std::byte> typical_record(const EventDesc& ev) {
  const std::string path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  std::vector<std::byte> record(ev.fixed_size + path.size() + 1);
  const auto size = static_cast<uint16_t>(record.size());
  store_field(record.data(), 0, RecordHeader{ev.id, size, 3, 41230, 41236, 123456789012345});
  store_field(record.data(), EventDesc::kIpOffset, kTextBase + 500 * kSymbolSpacing + 0x10);
  store_field(record.data(), ev.args[0].offset, uint64_t{0x3});
  store_field(record.data(), ev.args[1].offset, uint64_t{0x80000});
  store_field(record.data(), ev.args[2].offset,
              make_data_loc(ev.fixed_size, static_cast<uint32_t>(path.size() + 1)));
  store_field(record.data(), ev.args[3].offset, kTextBase + 123 * kSymbolSpacing + 0x2a);
  for (size_t i = 0; i < path.size(); ++i) {
    record[ev.fixed_size + i] = static_cast<std::byte>(path[i]);
  }
  return record;
}

template <bool kJson>
void format_lines(benchmark::State& state) {
  const SortedSymbolizer symbols;
  const TraceFormatter formatter(&symbols);
  const EventDesc ev = typical_event();
  const std::vector<std::byte> record = typical_record(ev);
  std::string out;
  for (auto _ : state) {
    out.clear();
    if constexpr (kJson) {
      formatter.format_json(ev, record, "worker", out);
    } else {
      formatter.format_text(ev, record, "worker", out);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_FormatText(benchmark::State& state) { format_lines<false>(state); }
void BM_FormatJson(benchmark::State& state) { format_lines<true>(state); }

BENCHMARK(BM_FormatText);
BENCHMARK(BM_FormatJson);

}  // namespace
}  // namespace dprobe::trace
