// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The cost of one record on the producer's hot path, and what one producer
// and one consumer thread move together. Report medians:
//
//   build/ring_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstring>
#include <span>
#include <thread>

#include "trace/hit/ring_buffer.h"
#include "trace/shared_memory.h"

namespace dprobe::trace {
namespace {

// 1 MiB of records: one thread's ring, and it fits in L2.
constexpr size_t kDataBytes = size_t{1} << 20;
// How often the single-thread benchmarks let their stand-in consumer run.
constexpr uint64_t kConsumeEvery = 1024;

// A ring in a memfd, as the agent's are.
class Ring {
 public:
  Ring()
      : shm_(SharedMemory::create("ring-bench", ring_bytes_for(kDataBytes)).value()),
        ring_(*RingBuffer::initialize(shm_.data(), shm_.size(), 1, 2, "bench")) {}
  const RingBuffer& get() const { return ring_; }
  // A consumer that gives everything back unread: the writer's cost alone.
  void discard() const {
    RingControl* control = ring_.control();
    control->tail.store(control->head.load(std::memory_order_acquire), std::memory_order_release);
  }

 private:
  SharedMemory shm_;
  RingBuffer ring_;
};

// What a probe hit does after fetching: a header and `kSize - 24` bytes of
// arguments into the reserved slot. The agent knows an event's fixed size,
// so the copies here are of constant size too.
template <uint32_t kSize>
bool write_event(RingWriter& writer, uint64_t seq, const std::byte* args) {
  auto* slot = static_cast<std::byte*>(writer.reserve(kSize));
  if (slot == nullptr) return false;
  const RecordHeader header{1, static_cast<uint16_t>(kSize), 0, 1, 2, seq};
  std::memcpy(slot, &header, sizeof(header));
  std::memcpy(slot + sizeof(header), args, kSize - sizeof(header));
  writer.commit();
  return true;
}

template <uint32_t kSize>
void BM_RingWrite(benchmark::State& state) {
  Ring ring;
  RingWriter writer(ring.get());
  std::byte args[kSize] = {};
  uint64_t seq = 0;
  uint64_t lost = 0;
  for (auto _ : state) {
    lost += !write_event<kSize>(writer, seq, args);
    if (++seq % kConsumeEvery == 0) ring.discard();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * kSize);
  state.counters["lost"] = static_cast<double>(lost);
}

void BM_RingWrite32(benchmark::State& state) { BM_RingWrite<32>(state); }
BENCHMARK(BM_RingWrite32);

void BM_RingWrite128(benchmark::State& state) { BM_RingWrite<128>(state); }
BENCHMARK(BM_RingWrite128);

// Writer and a real reader on one thread: what a record costs end to end.
void BM_RingWriteAndDrain32(benchmark::State& state) {
  Ring ring;
  RingWriter writer(ring.get());
  RingReader reader(ring.get());
  std::byte args[8] = {};
  uint64_t seq = 0;
  uint64_t seen = 0;
  auto count = [&](const RecordHeader* header, std::span<const std::byte>) {
    seen += header->timestamp;
  };
  for (auto _ : state) {
    write_event<32>(writer, seq, args);
    if (++seq % kConsumeEvery == 0) reader.drain(count);
  }
  benchmark::DoNotOptimize(seen);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RingWriteAndDrain32);

// A consumer thread that drains until told to stop, then drains the rest.
class DrainThread {
 public:
  explicit DrainThread(const RingBuffer& ring) : reader_(ring), thread_([this] { run(); }) {}
  uint64_t stop() {
    stop_.store(true, std::memory_order_release);
    thread_.join();
    return delivered_;
  }
  const RingReader& reader() const { return reader_; }

 private:
  void run() {
    auto touch = [&](const RecordHeader* header, std::span<const std::byte>) {
      last_seq_ = header->timestamp;
    };
    while (!stop_.load(std::memory_order_acquire)) delivered_ += reader_.drain(touch);
    delivered_ += reader_.drain(touch);
  }

  RingReader reader_;
  std::atomic<bool> stop_{false};
  uint64_t delivered_ = 0;
  uint64_t last_seq_ = 0;
  std::thread thread_;
};

// One producer and one consumer thread, 32-byte records. With retry the
// producer waits while the ring is full (the lossless transfer rate); without
// it, it drops as a probe hit would, and `lost` says how many.
void ring_throughput(benchmark::State& state, bool retry) {
  Ring ring;
  RingWriter writer(ring.get());
  DrainThread consumer(ring.get());
  std::byte args[8] = {};
  uint64_t seq = 0;
  for (auto _ : state) {
    // Yielding, not spinning: on a busy machine the consumer may need this CPU.
    while (!write_event<32>(writer, seq, args) && retry) std::this_thread::yield();
    ++seq;
  }
  const uint64_t delivered = consumer.stop();
  state.SetItemsProcessed(static_cast<int64_t>(delivered));
  if (!retry) {
    state.counters["lost_pct"] =
        100.0 * static_cast<double>(consumer.reader().lost()) / static_cast<double>(seq);
  }
}

void BM_RingThroughputLossless(benchmark::State& state) { ring_throughput(state, true); }
BENCHMARK(BM_RingThroughputLossless)->UseRealTime();

void BM_RingThroughputDropping(benchmark::State& state) { ring_throughput(state, false); }
BENCHMARK(BM_RingThroughputDropping)->UseRealTime();

}  // namespace
}  // namespace dprobe::trace
