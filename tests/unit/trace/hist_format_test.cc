// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/hist_format.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "lang/hist_trigger.h"

namespace dprobe::trace {
namespace {

// main at 0x401000 (0x40 bytes) in prog, malloc at 0x7f0000 in libc.so.6.
class FakeSymbols : public Symbolizer {
 public:
  std::optional<SymbolHit> symbolize(uint64_t a) const override {
    if (a >= 0x401000 && a < 0x401040) return SymbolHit{"main", a - 0x401000, 0x40};
    if (a >= 0x7f0000 && a < 0x7f0100) return SymbolHit{"malloc", a - 0x7f0000, 0x100};
    return std::nullopt;
  }
  std::string_view object_name(uint64_t a) const override {
    if (a >= 0x401000 && a < 0x401040) return "prog";
    if (a >= 0x7f0000 && a < 0x7f0100) return "libc.so.6";
    return {};
  }
};

class HistFormatTest : public ::testing::Test {
 protected:
  HistFormatTest() {
    EventDesc event;
    event.is_return = true;
    for (auto [name, type] : {std::pair{"size", TypeId::kU64}, std::pair{"fd", TypeId::kS32},
                              std::pair{"name", TypeId::kString}, std::pair{"id", TypeId::kS64}}) {
      EventArg a;
      a.name = name;
      a.type = type;
      event.args.push_back(a);
    }
    layout_event(event);
    fields_ = record_fields(event);
  }

  HistSpec compile(std::string_view trigger) const {
    auto spec = lang::parse_hist_trigger(trigger, fields_);
    EXPECT_TRUE(spec) << trigger << ": " << spec.error().message;
    return spec ? *spec : HistSpec{};
  }

  // An entry of number keys.
  static HistEntry entry(std::vector<uint64_t> keys, uint64_t hitcount,
                         std::vector<uint64_t> vals = {}) {
    HistEntry e;
    for (uint64_t k : keys) e.keys.push_back(HistKeyValue{k, {}, {}});
    e.hitcount = hitcount;
    e.vals = std::move(vals);
    return e;
  }
  static HistResult result(std::vector<HistEntry> entries, uint64_t dropped = 0) {
    HistResult r;
    for (const HistEntry& e : entries) r.hits += e.hitcount;
    r.entries = std::move(entries);
    r.dropped = dropped;
    return r;
  }

  // The entry lines only, between the header and the totals.
  static std::string body(const std::string& text) {
    const size_t begin = text.find("#\n\n") + 3;
    const size_t end = text.find("\nTotals:");
    return text.substr(begin, end - begin);
  }

  std::vector<RecordField> fields_;
  FakeSymbols symbols_;
};

TEST_F(HistFormatTest, PrintsTheKernelsHistFile) {
  const HistSpec spec = compile("hist:keys=size");
  EXPECT_EQ(format_hist(spec, "", result({entry({10}, 2), entry({20}, 1)}), nullptr),
            "# event histogram\n"
            "#\n"
            "# trigger info: hist:keys=size:vals=hitcount:sort=hitcount:size=2048 [active]\n"
            "#\n"
            "\n"
            "{ size:         20 } hitcount:          1\n"
            "{ size:         10 } hitcount:          2\n"
            "\n"
            "Totals:\n"
            "    Hits: 3\n"
            "    Entries: 2\n"
            "    Dropped: 0\n");
}

TEST_F(HistFormatTest, NamesTheEventAndCountsDropped) {
  const HistSpec spec = compile("hist:keys=size:size=128");
  const std::string text = format_hist(spec, "m/malloc", result({entry({1}, 4)}, 9), nullptr);
  EXPECT_EQ(text.substr(0, text.find('\n') + 1), "# events/m/malloc/hist\n");
  EXPECT_NE(text.find("# trigger info: hist:keys=size:vals=hitcount:sort=hitcount:size=128 "
                      "[active]\n"),
            std::string::npos);
  EXPECT_EQ(text.substr(text.find("\nTotals:")),
            "\nTotals:\n    Hits: 4\n    Entries: 1\n    Dropped: 9\n");
}

TEST_F(HistFormatTest, EmptyTableHasOnlyHeaderAndTotals) {
  const HistSpec spec = compile("hist:keys=size");
  EXPECT_EQ(body(format_hist(spec, "", HistResult{}, nullptr)), "");
}

TEST_F(HistFormatTest, Log2KeysSortedByHitcountDescending) {
  const HistSpec spec = compile("hist:keys=size.log2:sort=hitcount.descending");
  const std::string text =
      format_hist(spec, "", result({entry({5}, 3), entry({12}, 12), entry({0}, 1)}), nullptr);
  EXPECT_NE(text.find("# trigger info: "
                      "hist:keys=size.log2:vals=hitcount:sort=hitcount.descending:size=2048 "
                      "[active]\n"),
            std::string::npos);
  EXPECT_EQ(body(text),
            "{ size: ~ 2^12 } hitcount:         12\n"
            "{ size: ~ 2^5  } hitcount:          3\n"
            "{ size: ~ 2^0  } hitcount:          1\n");
}

TEST_F(HistFormatTest, BucketsHexAndValues) {
  const HistSpec spec = compile("hist:keys=size.buckets=1024,fd.hex:vals=size.hex,id");
  EXPECT_EQ(spec.text,
            "hist:keys=size.buckets=1024,fd.hex:vals=hitcount,size.hex,id:sort=hitcount:size=2048");
  const HistResult r = result({entry({2048, static_cast<uint64_t>(-1)}, 5, {0x1000, 42})});
  EXPECT_EQ(body(format_hist(spec, "", r, nullptr)),
            "{ size: ~ 2048-3071, fd: ffffffffffffffff } hitcount:          5  size:       1000"
            "  id:         42\n");
}

TEST_F(HistFormatTest, ExecnameShowsTheCommOfTheFirstHit) {
  const HistSpec spec = compile("hist:keys=common_pid.execname");
  HistEntry e = entry({4242}, 7);
  e.comm = "python3";
  EXPECT_EQ(body(format_hist(spec, "", result({e}), nullptr)),
            "{ common_pid: python3         [      4242] } hitcount:          7\n");
}

TEST_F(HistFormatTest, SymAndSymOffsetAsPsAndPS) {
  const HistSpec spec = compile("hist:keys=__probe_func.sym,__probe_ret_ip.sym-offset");
  const HistResult r = result({entry({0x401010, 0x7f0020}, 1), entry({0x1234, 0x5678}, 2)});
  EXPECT_EQ(body(format_hist(spec, "", r, &symbols_)),
            "{ __probe_func: [401010] main [prog]" + std::string(34, ' ') +
                ", __probe_ret_ip: [7f0020] malloc+0x20/0x100 [libc.so.6]" + std::string(26, ' ') +
                " } hitcount:          1\n" + "{ __probe_func: [1234] 0x1234" +
                std::string(39, ' ') + ", __probe_ret_ip: [5678] 0x5678" + std::string(49, ' ') +
                " } hitcount:          2\n");
  // No symbolizer: every address raw.
  EXPECT_NE(format_hist(spec, "", r, nullptr).find("[401010] 0x401010 "), std::string::npos);
}

TEST_F(HistFormatTest, StringKeysPadToFifty) {
  const HistSpec spec = compile("hist:keys=name,fd");
  HistEntry e;
  e.keys = {HistKeyValue{0, "libc.so.6", {}}, HistKeyValue{4, {}, {}}};
  e.hitcount = 3;
  EXPECT_EQ(
      body(format_hist(spec, "", result({e}), nullptr)),
      "{ name: libc.so.6" + std::string(41, ' ') + ", fd:          4 } hitcount:          3\n");
  const HistSpec comm = compile("hist:keys=comm");
  EXPECT_EQ(comm.text, "hist:keys=common_comm:vals=hitcount:sort=hitcount:size=2048");
  e.keys = {HistKeyValue{0, "python3", {}}};
  EXPECT_EQ(body(format_hist(comm, "", result({e}), nullptr)),
            "{ comm: python3" + std::string(43, ' ') + " } hitcount:          3\n");
}

TEST_F(HistFormatTest, StacktraceKeysAreMultiline) {
  const HistSpec spec = compile("hist:keys=stacktrace,size");
  EXPECT_EQ(spec.text, "hist:keys=common_stacktrace,size:vals=hitcount:sort=hitcount:size=2048");
  HistEntry e;
  e.keys = {HistKeyValue{0, {}, {0x401010, 0x7f0000, 0x99}}, HistKeyValue{10, {}, {}}};
  e.hitcount = 2;
  EXPECT_EQ(body(format_hist(spec, "", result({e}), &symbols_)),
            "{ common_stacktrace:\n"
            "         main+0x10/0x40 [prog]\n"
            "         malloc+0x0/0x100 [libc.so.6]\n"
            "         0x99\n"
            ", size:         10} hitcount:          2\n");
}

TEST_F(HistFormatTest, SyscallNamesComeFromTheCallback) {
  const HistSpec spec = compile("hist:keys=id.syscall");
  HistNames names;
  names.syscall_name = [](uint64_t nr) { return nr == 257 ? std::string("openat") : ""; };
  const HistResult r = result({entry({257}, 2), entry({1}, 1)});
  EXPECT_EQ(body(format_hist(spec, "", r, names)),
            "{ id: unknown_syscall" + std::string(15, ' ') + "[  1] } hitcount:          1\n" +
                "{ id: openat" + std::string(24, ' ') + "[257] } hitcount:          2\n");
}

TEST_F(HistFormatTest, SortsByKeysAsTheirType) {
  const HistSpec spec = compile("hist:keys=fd:sort=fd");
  const auto neg = [](int64_t v) { return static_cast<uint64_t>(v); };
  const HistResult r = result({entry({3}, 1), entry({neg(-5)}, 1), entry({neg(-1)}, 1)});
  EXPECT_EQ(body(format_hist(spec, "", r, nullptr)),
            "{ fd: 18446744073709551611 } hitcount:          1\n"
            "{ fd: 18446744073709551615 } hitcount:          1\n"
            "{ fd:          3 } hitcount:          1\n");
}

TEST_F(HistFormatTest, SecondSortKeyOrdersTies) {
  const HistSpec spec = compile("hist:keys=size,id:sort=size,id.descending");
  EXPECT_EQ(spec.text, "hist:keys=size,id:vals=hitcount:sort=size,id.descending:size=2048");
  const HistResult r =
      result({entry({2, 1}, 1), entry({1, 1}, 1), entry({2, 3}, 1), entry({1, 2}, 1)});
  EXPECT_EQ(hist_sort_order(spec, r), (std::vector<size_t>{3, 1, 2, 0}));
}

TEST_F(HistFormatTest, SortsByValuesAndKeepsTiesInMergeOrder) {
  const HistSpec spec = compile("hist:keys=fd:vals=size:sort=size.descending");
  const HistResult r = result({entry({1}, 1, {5}), entry({2}, 9, {7}), entry({3}, 1, {5})});
  EXPECT_EQ(hist_sort_order(spec, r), (std::vector<size_t>{1, 0, 2}));
  // The default: hitcount ascending, ties in merge order.
  const HistSpec by_hits = compile("hist:keys=fd");
  EXPECT_EQ(hist_sort_order(by_hits, r), (std::vector<size_t>{0, 2, 1}));
}

TEST_F(HistFormatTest, SortsStringsBytewiseAndStacksNot) {
  const HistSpec spec = compile("hist:keys=name:sort=name.descending");
  HistResult r;
  for (const char* name : {"b", "a", "\xc3\xa9", "ab"}) {
    HistEntry e;
    e.keys = {HistKeyValue{0, name, {}}};
    e.hitcount = 1;
    r.entries.push_back(e);
  }
  EXPECT_EQ(hist_sort_order(spec, r), (std::vector<size_t>{2, 0, 3, 1}));
}

TEST_F(HistFormatTest, DurationUsecsAndCpu) {
  const HistSpec spec = compile("hist:keys=cpu,$duration.usecs:vals=$duration");
  EXPECT_EQ(spec.text,
            "hist:keys=common_cpu,$duration.usecs:vals=hitcount,$duration:sort=hitcount:size=2048");
  EXPECT_EQ(body(format_hist(spec, "", result({entry({3, 125}, 2, {250999})}), nullptr)),
            "{ cpu:          3, $duration:        125 } hitcount:          2"
            "  $duration:     250999\n");
}

}  // namespace
}  // namespace dprobe::trace
