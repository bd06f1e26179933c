// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// --trigger on tests/programs/analysis.c: every hist's counts per key equal
// what the program's known distribution of take(size, tag) calls gives
// (computed here), with one thread and with four (each thread's table
// merged): .log2, .buckets=N, string keys, .execname, two keys, vals= sums,
// sort orders, a size= bound with its exact Dropped count, a trigger's own
// `if` filter, common_pid per thread, stacktrace keys, the $duration.log2
// latency histogram of nap, where the hist is printed (stdout, -o FILE,
// stderr beside record), and bad triggers refused with a caret.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "integration/analysis_support.h"
#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using analysis::analysis_path;
using analysis::calls_of;
using analysis::Hist;
using analysis::HistEntry;
using analysis::hitcounts_by_key;
using analysis::kSizes;
using analysis::log2_key;
using analysis::parse_hists;
using analysis::program_finished;
using analysis::tag_of;
using analysis::take_probe;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The one hist of a run of analysis_O2 with `threads` threads and `trigger`
// on take; a failed expectation (and an empty hist) if there is not
// exactly one.
Hist take_hist(const std::string& trigger, int threads,
               const std::vector<std::string>& more_options = {}) {
  std::vector<std::string> options{"--trigger", "a/take:" + trigger};
  options.insert(options.end(), more_options.begin(), more_options.end());
  const RunResult run =
      run_traced({take_probe()}, {analysis_path("O2"), std::to_string(threads)}, options);
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_TRUE(program_finished(run)) << run;
  EXPECT_TRUE(parse_trace(run.out).empty()) << "an event with a trigger writes no line: " << run;
  std::vector<Hist> hists = parse_hists(run.out);
  EXPECT_EQ(hists.size(), 1u) << run;
  if (hists.size() != 1) return {};
  EXPECT_EQ(hists[0].event, "a/take");
  return hists[0];
}

// Hits: is the sum of the hitcounts shown, Entries: their number.
void expect_consistent_totals(const Hist& hist) {
  uint64_t sum = 0;
  for (const HistEntry& entry : hist.entries) sum += entry.hitcount();
  EXPECT_EQ(hist.hits, sum) << hist;
  EXPECT_EQ(hist.entry_count, hist.entries.size()) << hist;
}

// What one thread's calls give, by a key of the size (and the tag).
template <typename KeyOf>
std::map<std::string, uint64_t> expected_counts(int threads, KeyOf key_of) {
  std::map<std::string, uint64_t> counts;
  for (uint64_t size = 1; size <= kSizes; ++size) {
    counts[key_of(size)] += calls_of(size) * static_cast<uint64_t>(threads);
  }
  return counts;
}

uint64_t all_calls(int threads) {
  return analysis::take_calls_per_thread() * static_cast<uint64_t>(threads);
}

class AnalysisHistThreads : public ::testing::TestWithParam<int> {};

TEST_P(AnalysisHistThreads, Log2Key) {
  const int threads = GetParam();
  const Hist hist = take_hist("hist:keys=size.log2", threads);
  EXPECT_EQ(hist.trigger_info,
            "hist:keys=size.log2:vals=hitcount:sort=hitcount:size=2048 [active]");
  EXPECT_EQ(hitcounts_by_key(hist), expected_counts(threads, log2_key)) << hist;
  EXPECT_EQ(hist.hits, all_calls(threads));
  EXPECT_EQ(hist.dropped, 0u);
  expect_consistent_totals(hist);
}

TEST_P(AnalysisHistThreads, BucketsKey) {
  const int threads = GetParam();
  const Hist hist = take_hist("hist:keys=size.buckets=50", threads);
  const auto bucket = [](uint64_t size) {
    const uint64_t low = size / 50 * 50;
    return "~ " + std::to_string(low) + "-" + std::to_string(low + 49);
  };
  EXPECT_EQ(hitcounts_by_key(hist), expected_counts(threads, bucket)) << hist;
  expect_consistent_totals(hist);
}

TEST_P(AnalysisHistThreads, StringKey) {
  const int threads = GetParam();
  const Hist hist = take_hist("hist:keys=tag", threads);
  EXPECT_EQ(hitcounts_by_key(hist), expected_counts(threads, tag_of)) << hist;
  expect_consistent_totals(hist);
}

// vals= sums the field over each key's hits; two keys make one entry per
// pair.
TEST_P(AnalysisHistThreads, TwoKeysAndASum) {
  const int threads = GetParam();
  const Hist hist = take_hist("hist:keys=tag,size.buckets=100:vals=size", threads);
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> expected;
  for (uint64_t size = 1; size <= kSizes; ++size) {
    const uint64_t low = size / 100 * 100;
    auto& [hits, sum] =
        expected[{tag_of(size), "~ " + std::to_string(low) + "-" + std::to_string(low + 99)}];
    hits += calls_of(size) * static_cast<uint64_t>(threads);
    sum += calls_of(size) * size * static_cast<uint64_t>(threads);
  }
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> actual;
  for (const HistEntry& entry : hist.entries) {
    ASSERT_EQ(entry.keys.size(), 2u) << entry;
    ASSERT_EQ(entry.keys[0].first, "tag") << entry;
    ASSERT_EQ(entry.keys[1].first, "size") << entry;
    ASSERT_EQ(entry.values.count("size"), 1u) << entry;
    actual[{entry.keys[0].second, entry.keys[1].second}] = {entry.hitcount(),
                                                            entry.values.at("size")};
  }
  EXPECT_EQ(actual, expected) << hist;
  expect_consistent_totals(hist);
}

// The trigger's own filter: only the hits that pass it are counted.
TEST_P(AnalysisHistThreads, TriggerFilter) {
  const int threads = GetParam();
  const Hist hist = take_hist("hist:keys=tag if size > 100", threads);
  std::map<std::string, uint64_t> expected;
  for (uint64_t size = 101; size <= kSizes; ++size) {
    expected[tag_of(size)] += calls_of(size) * static_cast<uint64_t>(threads);
  }
  EXPECT_EQ(hitcounts_by_key(hist), expected) << hist;
  EXPECT_EQ(hist.trigger_info,
            "hist:keys=tag:vals=hitcount:sort=hitcount:size=2048 if size > 100 [active]");
  expect_consistent_totals(hist);
}

// size=128 with 300 distinct sizes: 128 entries, and every other hit
// counted as dropped. Each thread's table keeps the first 128 sizes it
// sees (1..128: the calls go up), so the merged hist does too.
TEST_P(AnalysisHistThreads, BoundedTableCountsDropped) {
  const int threads = GetParam();
  const Hist hist = take_hist("hist:keys=size:size=128:sort=size", threads);
  EXPECT_EQ(hist.entry_count, 128u) << hist;
  ASSERT_TRUE(hist.hits && hist.dropped) << hist;
  EXPECT_EQ(*hist.hits + *hist.dropped, all_calls(threads)) << hist;
  std::map<std::string, uint64_t> expected;
  for (uint64_t size = 1; size <= 128; ++size) {
    expected[std::to_string(size)] = calls_of(size) * static_cast<uint64_t>(threads);
  }
  EXPECT_EQ(hitcounts_by_key(hist), expected) << hist;
  uint64_t dropped = 0;
  for (uint64_t size = 129; size <= kSizes; ++size) {
    dropped += calls_of(size) * static_cast<uint64_t>(threads);
  }
  EXPECT_EQ(hist.dropped, dropped);
  expect_consistent_totals(hist);
}

// common_pid is the thread's id, as the kernel's (current->pid): one entry
// per thread, each with every call that thread made, keyed by the tids
// the trace lines show.
TEST_P(AnalysisHistThreads, CommonPidIsTheThread) {
  const int threads = GetParam();
  const RunResult run =
      run_traced({take_probe(), "p:a/take_seen analysis_O2:take size=%di:u64"},
                 {analysis_path("O2"), std::to_string(threads)},
                 {"--trigger", "a/take:hist:keys=common_pid", "--filter", "a/take_seen:size == 1"});
  ASSERT_EQ(run.status, 0) << run;
  std::set<std::string> tids;
  for (const TraceLine& line : lines_of(parse_trace(run.out), "take_seen")) {
    tids.insert(std::to_string(line.tid));
  }
  ASSERT_EQ(tids.size(), static_cast<size_t>(threads)) << run;
  const std::vector<Hist> hists = parse_hists(run.out);
  ASSERT_EQ(hists.size(), 1u) << run;
  std::map<std::string, uint64_t> expected;
  for (const std::string& tid : tids) expected[tid] = analysis::take_calls_per_thread();
  EXPECT_EQ(hitcounts_by_key(hists[0]), expected) << hists[0];
}

// .execname prints the thread's name beside its id.
TEST_P(AnalysisHistThreads, ExecnameKey) {
  const int threads = GetParam();
  const Hist hist = take_hist("hist:keys=common_pid.execname", threads);
  ASSERT_FALSE(hist.entries.empty()) << hist;
  for (const HistEntry& entry : hist.entries) {
    EXPECT_THAT(entry.key("common_pid"), ::testing::MatchesRegex("analysis_O2 +\\[ *[0-9]+\\]"))
        << entry;
  }
  EXPECT_EQ(hist.hits, all_calls(threads)) << hist;
  expect_consistent_totals(hist);
}

INSTANTIATE_TEST_SUITE_P(AnalysisThreads, AnalysisHistThreads, ::testing::Values(1, 4));

// ---- Sort orders ---------------------------------------------------------------------

std::vector<uint64_t> hitcounts_in_order(const Hist& hist) {
  std::vector<uint64_t> counts;
  for (const HistEntry& entry : hist.entries) counts.push_back(entry.hitcount());
  return counts;
}

std::vector<uint64_t> keys_in_order(const Hist& hist, const std::string& name) {
  std::vector<uint64_t> keys;
  for (const HistEntry& entry : hist.entries) keys.push_back(std::stoull(entry.key(name)));
  return keys;
}

TEST(AnalysisHist, SortOrders) {
  // Default: hitcount, ascending.
  Hist hist = take_hist("hist:keys=size.log2", 1);
  std::vector<uint64_t> counts = hitcounts_in_order(hist);
  EXPECT_TRUE(std::is_sorted(counts.begin(), counts.end())) << hist;
  EXPECT_EQ(counts.size(), 10u) << hist;

  hist = take_hist("hist:keys=size.log2:sort=hitcount.descending", 4);
  counts = hitcounts_in_order(hist);
  EXPECT_TRUE(std::is_sorted(counts.rbegin(), counts.rend())) << hist;
  EXPECT_EQ(hist.entries.front().key("size"), "~ 2^8") << hist;  // 129..256: the most calls

  hist = take_hist("hist:keys=size:sort=size", 1);
  std::vector<uint64_t> keys = keys_in_order(hist, "size");
  std::vector<uint64_t> all(kSizes);
  for (uint64_t i = 0; i < kSizes; ++i) all[i] = i + 1;
  EXPECT_EQ(keys, all) << hist;

  hist = take_hist("hist:keys=size:sort=size.descending", 1);
  keys = keys_in_order(hist, "size");
  std::reverse(all.begin(), all.end());
  EXPECT_EQ(keys, all) << hist;

  // By a value, then by the key.
  hist = take_hist("hist:keys=tag:vals=size:sort=size.descending", 1);
  ASSERT_EQ(hist.entries.size(), 2u) << hist;
  EXPECT_EQ(hist.entries[0].key("tag"), "alpha") << hist;  // 91208 > 90596
  EXPECT_GT(hist.entries[0].values.at("size"), hist.entries[1].values.at("size")) << hist;

  hist = take_hist("hist:keys=size.log2:sort=hitcount.descending,size", 1);
  counts = hitcounts_in_order(hist);
  EXPECT_TRUE(std::is_sorted(counts.rbegin(), counts.rend())) << hist;
}

// ---- Stacks and latency -----------------------------------------------------------------

// The stack as a key: every call of leaf comes through level1, level2,
// level3 and work; each call site in work is a key of its own (three at
// -O2, where the loop is unrolled; one at -O0), and the hits add up.
TEST(AnalysisHist, StacktraceKey) {
  for (const char* level : {"O0", "O2"}) {
    SCOPED_TRACE(level);
    constexpr int kThreads = 4;
    const std::string name = analysis::analysis_name(level);
    const RunResult run =
        run_traced({"p:a/leaf " + name + ":leaf"}, {analysis_path(level), std::to_string(kThreads)},
                   {"--trigger", "a/leaf:hist:keys=stacktrace"});
    ASSERT_EQ(run.status, 0) << run;
    const std::vector<Hist> hists = parse_hists(run.out);
    ASSERT_EQ(hists.size(), 1u) << run;
    const Hist& hist = hists[0];
    EXPECT_EQ(hist.hits, kThreads * analysis::kLeafCallsPerThread) << hist;
    std::set<std::string> call_sites;
    for (const HistEntry& entry : hist.entries) {
      ASSERT_EQ(entry.keys.size(), 1u) << entry;
      EXPECT_EQ(entry.keys[0].first, "common_stacktrace") << entry;
      std::vector<std::string> frames;
      std::istringstream lines(entry.keys[0].second);
      for (std::string frame; std::getline(lines, frame);) frames.push_back(frame);
      ASSERT_GE(frames.size(), 5u) << entry;
      EXPECT_THAT(frames[0], StartsWith("leaf+0x0/")) << entry;
      EXPECT_THAT(frames[1], StartsWith("level1+0x")) << entry;
      EXPECT_THAT(frames[2], StartsWith("level2+0x")) << entry;
      EXPECT_THAT(frames[3], StartsWith("level3+0x")) << entry;
      EXPECT_THAT(frames[4], StartsWith("work+0x")) << entry;
      for (size_t i = 0; i < 5; ++i) EXPECT_THAT(frames[i], HasSubstr(" [" + name + "]")) << entry;
      call_sites.insert(frames[4]);
      EXPECT_EQ(entry.hitcount() % kThreads, 0u) << "every thread takes each call site: " << entry;
    }
    EXPECT_EQ(call_sites.size(), hist.entries.size()) << hist;
    EXPECT_EQ(call_sites.size(), std::string(level) == "O2" ? 3u : 1u) << hist;
    expect_consistent_totals(hist);
  }
}

// The latency histogram of nap (10, 10 and 40 ms): 10 ms is in 2^24 ns
// (16.8 ms), 40 ms in 2^26 (67 ms).
TEST(AnalysisHist, DurationLatencyHistogram) {
  const RunResult run = run_traced({"r:a/nap analysis_O2:nap"}, {analysis_path("O2")},
                                   {"--trigger", "a/nap:hist:keys=$duration.log2"});
  ASSERT_EQ(run.status, 0) << run;
  const std::vector<Hist> hists = parse_hists(run.out);
  ASSERT_EQ(hists.size(), 1u) << run;
  EXPECT_EQ(hists[0].event, "a/nap");
  const std::map<std::string, uint64_t> expected{{"~ 2^24", 2}, {"~ 2^26", 1}};
  EXPECT_EQ(hitcounts_by_key(hists[0]), expected) << hists[0];
  EXPECT_EQ(hists[0].hits, 3u);
  // $duration as a value: the sum of the naps, at least 60 ms, and no more
  // than the whole run took (measured here, however busy the machine).
  const auto started = std::chrono::steady_clock::now();
  const RunResult sum = run_traced({"r:a/nap analysis_O2:nap"}, {analysis_path("O2")},
                                   {"--trigger", "a/nap:hist:keys=common_pid:vals=$duration"});
  const auto run_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::steady_clock::now() - started)
                                                .count());
  ASSERT_EQ(sum.status, 0) << sum;
  const std::vector<Hist> sums = parse_hists(sum.out);
  ASSERT_EQ(sums.size(), 1u) << sum;
  ASSERT_EQ(sums[0].entries.size(), 1u) << sums[0];
  ASSERT_EQ(sums[0].entries[0].values.count("$duration"), 1u) << sums[0];
  EXPECT_GE(sums[0].entries[0].values.at("$duration"), 60000000u) << sums[0];
  EXPECT_LE(sums[0].entries[0].values.at("$duration"), run_ns) << sums[0];
}

// ---- Where the hist goes ------------------------------------------------------------------

// With -o FILE the hist is in the file, after the trace's lines; stdout
// has the program's output only.
TEST(AnalysisHist, OutputFileHasTheHistAfterTheLines) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string file = dir.file("trace.txt");
  const RunResult run =
      run_traced({take_probe(), "p:a/nap analysis_O2:nap ms=%di:s64"}, {analysis_path("O2")},
                 {"--trigger", "a/take:hist:keys=tag", "-o", file});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_EQ(run.out, "analysis: ok\n") << run;
  const std::string text = read_file(file);
  const auto lines = parse_trace(text);
  ASSERT_EQ(lines.size(), 3u) << text;
  for (const TraceLine& line : lines) EXPECT_EQ(line.event, "nap") << line;
  const size_t last_line = text.rfind(": (nap+");
  const size_t hist_at = text.find("# events/a/take/hist\n");
  ASSERT_NE(hist_at, std::string::npos) << text;
  EXPECT_GT(hist_at, last_line) << text;
  const std::vector<Hist> hists = parse_hists(text);
  ASSERT_EQ(hists.size(), 1u) << text;
  EXPECT_EQ(hitcounts_by_key(hists[0]), expected_counts(1, tag_of)) << hists[0];
}

// Beside record's binary file, the hist goes to stderr.
TEST(AnalysisHist, RecordPrintsTheHistOnStderr) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const RunResult run =
      run_dprobe({"record", "-e", take_probe(), "--trigger", "a/take:hist:keys=tag", "-o",
                  dir.file("trace.dat"), "--", analysis_path("O2")});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_EQ(run.out, "analysis: ok\n") << run;
  const std::vector<Hist> hists = parse_hists(run.err);
  ASSERT_EQ(hists.size(), 1u) << run;
  EXPECT_EQ(hitcounts_by_key(hists[0]), expected_counts(1, tag_of)) << hists[0];
}

// Two triggers on one event, and one on each of two events: each hist
// printed, each with its own counts.
TEST(AnalysisHist, SeveralTriggers) {
  const RunResult run =
      run_traced({take_probe(), "r:a/nap analysis_O2:nap"}, {analysis_path("O2"), "2"},
                 {"--trigger", "a/take:hist:keys=tag", "--trigger", "a/take:hist:keys=size.log2",
                  "--trigger", "a/nap:hist:keys=common_pid:vals=hitcount"});
  ASSERT_EQ(run.status, 0) << run;
  const std::vector<Hist> hists = parse_hists(run.out);
  ASSERT_EQ(hists.size(), 3u) << run;
  std::map<std::string, std::map<std::string, uint64_t>> by_trigger;
  for (const Hist& hist : hists)
    by_trigger[hist.event + " " + hist.trigger_info] = hitcounts_by_key(hist);
  EXPECT_EQ(by_trigger["a/take hist:keys=tag:vals=hitcount:sort=hitcount:size=2048 [active]"],
            expected_counts(2, tag_of));
  EXPECT_EQ(by_trigger["a/take hist:keys=size.log2:vals=hitcount:sort=hitcount:size=2048 [active]"],
            expected_counts(2, log2_key));
  uint64_t naps = 0;
  for (const Hist& hist : hists) {
    if (hist.event == "a/nap") naps = hist.hits.value_or(0);
  }
  EXPECT_EQ(naps, 3u) << run;
}

// ---- Bad triggers -----------------------------------------------------------------------

struct BadTrigger {
  std::string trigger;  // after "a/take:"
  std::string message;
  std::string at;  // the caret is under the first character of its last place in `trigger`
};

const BadTrigger kBadTriggers[] = {
    {"hist:keys=sise", "Couldn't find field", "sise"},
    {"hist:keys=size:vals=sise", "Couldn't find field", "sise"},
    {"hist:keys=size,tag,common_pid,comm", "Too many keys (Max = 3)", "comm"},
    {"hist:keys=size.bogus", "Invalid field modifier", "bogus"},
    {"hist:keys=size:sort=bogus", "Sort field must be a key or a val", "bogus"},
    {"hist:keys=size if sise > 3", "Field not found", "> 3"},  // the kernel's column, one past
};

TEST(AnalysisHist, BadTriggersAreRefusedWithACaret) {
  for (const BadTrigger& bad : kBadTriggers) {
    SCOPED_TRACE(bad.trigger);
    const std::string option = "a/take:" + bad.trigger;
    const RunResult run = run_traced({take_probe()}, {analysis_path("O2")}, {"--trigger", option});
    EXPECT_EQ(run.status, 2) << run;
    const size_t column = 7 + bad.trigger.rfind(bad.at);
    const std::string expected = "dprobe: error: " + bad.message +
                                 " (--trigger)\n  Command: " + option + "\n" +
                                 std::string(11 + column, ' ') + "^\n";
    EXPECT_THAT(run.err, HasSubstr(expected)) << run;
    EXPECT_FALSE(program_finished(run)) << "the program ran: " << run;
    EXPECT_EQ(run.out, "") << run;
  }
}

}  // namespace
}  // namespace dprobe::integration
