// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A single-producer single-consumer ring of variable-length event records,
// laid out entirely inside one shared memory block so that the producer (a
// traced thread, through the agent) and the consumer (the CLI) may be in
// different processes. The block holds byte counts, never pointers.
//
//   | control page (4096 bytes) | data area (a power of two, >= 4096) |
//
//   auto shm = SharedMemory::create("ring", ring_bytes_for(1 << 20));
//   auto ring = RingBuffer::initialize(shm->data(), shm->size(), pid, tid, "worker");
//   RingWriter writer(*ring);                       // the traced thread
//   if (void* p = writer.reserve(size)) { fill(p); writer.commit(); }
//
//   auto seen = RingBuffer::attach(peer.data(), peer.size());
//   RingReader reader(*seen);                       // the CLI's thread
//   reader.drain([&](const RecordHeader* h, std::span<const std::byte> r) { print(h, r); });
//   if (reader.corrupt()) warn(reader.corruption());
#ifndef DPROBE_TRACE_RING_BUFFER_H_
#define DPROBE_TRACE_RING_BUFFER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "base/result.h"
#include "trace/record.h"

namespace dprobe::trace {

inline constexpr uint32_t kRingMagic = 0x474e5244;  // "DRNG" in memory order
inline constexpr uint32_t kRingVersion = 3;         // 3: per-ring filtered counts
inline constexpr size_t kRingControlBytes = 4096;
inline constexpr size_t kMinRingDataBytes = 4096;
// Events with an id below this count their hits, ring-full misses and
// filtered hits in the ring of the thread that hit them (the profile adds
// the rings up); the others in the trace memory's shared counters.
inline constexpr uint32_t kRingCountedEvents = 128;

// The control page. head, tail and the counters each get a cache line so
// that the producer's stores never invalidate the line the consumer writes.
struct RingControl {
  uint32_t magic;
  uint32_t version;
  uint64_t data_bytes;
  uint32_t pid;
  uint32_t tid;
  char comm[16];  // the owning thread's name, NUL-padded, maybe unterminated
  alignas(64) std::atomic<uint64_t> head;     // bytes ever written; producer
  alignas(64) std::atomic<uint64_t> tail;     // bytes ever consumed; consumer
  alignas(64) std::atomic<uint64_t> lost;     // records dropped; producer
  alignas(64) std::atomic<uint64_t> written;  // records committed; producer
  // Hits per event id, the profile's: written by the producer alone, with
  // plain stores, so that threads hitting one probe share no cache line.
  alignas(64) std::atomic<uint64_t> hits[kRingCountedEvents];
  std::atomic<uint64_t> misses[kRingCountedEvents];    // records that found the ring full
  std::atomic<uint64_t> filtered[kRingCountedEvents];  // hits its filter turned away
};
// Two processes share these atomics, so they must be plain memory words.
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::is_standard_layout_v<RingControl>);
static_assert(sizeof(RingControl) <= kRingControlBytes);

// The shared memory a ring with `data_bytes` of records needs.
constexpr size_t ring_bytes_for(size_t data_bytes) { return kRingControlBytes + data_bytes; }

// Why a block is not a ring, as a value: the hit path builds no message
// (RingBuffer::initialize and attach, the reader's, say it in words).
enum class RingFault : uint8_t {
  kNone,
  kNullMemory,
  kMisaligned,
  kTooSmall,
  kNotPowerOfTwo,
  kBadMagic,
  kBadVersion,
  kSizeMismatch,
};

// A validated view of a ring block; it owns nothing.
class RingBuffer {
 public:
  // Formats `bytes` at `mem` (64-byte aligned) as an empty ring.
  // bytes - kRingControlBytes must be a power of two >= kMinRingDataBytes.
  static Result<RingBuffer> initialize(void* mem, size_t bytes, uint32_t pid, uint32_t tid,
                                       std::string_view comm);
  // Checks a block another process formatted; trusts nothing in it.
  static Result<RingBuffer> attach(void* mem, size_t bytes);
  // initialize and attach for the hit path (trace/ring_reader.cc has the
  // others): nullopt where those would fail.
  static std::optional<RingBuffer> create(void* mem, size_t bytes, uint32_t pid, uint32_t tid,
                                          std::string_view comm) noexcept;
  static std::optional<RingBuffer> open(void* mem, size_t bytes) noexcept;

  RingControl* control() const { return control_; }
  std::byte* data() const { return data_; }
  uint64_t data_bytes() const { return data_bytes_; }

 private:
  RingBuffer(void* mem, uint64_t data_bytes) noexcept;
  // The block's size (data_bytes: its data area); check_formatted, then
  // its control block too.
  static RingFault check(const void* mem, size_t bytes, uint64_t& data_bytes) noexcept;
  static RingFault check_formatted(const void* mem, size_t bytes, uint64_t& data_bytes) noexcept;

  RingControl* control_;
  std::byte* data_;
  uint64_t data_bytes_;
};

// The producer side, owned by one thread. reserve and commit are inline and
// make no system call, take no lock and allocate nothing, so a probe handler
// may call them from a signal handler. They are not reentrant: a nested hit
// on the same thread must be turned away by the caller's recursion guard, as
// the kernel's kprobe_running() turns one away.
class RingWriter {
 public:
  explicit RingWriter(const RingBuffer& ring) noexcept;
  RingWriter(const RingWriter&) = delete;  // a second writer would corrupt the ring
  RingWriter& operator=(const RingWriter&) = delete;

  // `size` contiguous bytes, 8-byte aligned, for one record whose header
  // starts the block; nullptr when it does not fit, counted once in lost.
  // An uncommitted reservation is simply abandoned by the next reserve.
  [[nodiscard, gnu::always_inline]] void* reserve(uint32_t size) noexcept {
    // One unsigned compare rejects sizes below the header and beyond what
    // the header's uint16 size can say.
    if (size - kRecordHeaderSize > kMaxRecordSize - kRecordHeaderSize) [[unlikely]] {
      return drop();
    }
    const uint64_t len = align_record(size);
    const uint64_t offset = head_ & mask_;
    const uint64_t to_end = mask_ + 1 - offset;
    // Records never wrap: one that would is placed at the start, and the
    // space up to the end is given up to a padding marker.
    const uint64_t need = len <= to_end ? len : to_end + len;
    if (head_ + need - cached_tail_ > mask_ + 1) [[unlikely]] {
      if (!has_room(need)) return drop();
    }
    std::byte* record = data_ + offset;
    if (len > to_end) [[unlikely]] {
      record = pad_to_end(record, to_end);
    }
    reserved_ = record;
    reserved_size_ = static_cast<uint16_t>(size);
    reserved_end_ = head_ + need;
    return record;
  }

  // Publishes the record the last successful reserve returned. The ring
  // stamps the reserved size into the header itself, so the consumer's
  // framing never depends on what the caller wrote there.
  void commit() noexcept { commit(reserved_size_); }

  // Publishes the record with `size` (at most what was reserved) bytes:
  // a record whose strings turned out shorter than their bound gives the
  // rest of its reservation back.
  [[gnu::always_inline]] void commit(uint32_t size) noexcept {
    const uint64_t unused = align_record(reserved_size_) - align_record(size);
    store_field<uint16_t>(reserved_, kSizeFieldOffset, static_cast<uint16_t>(size));
    head_ = reserved_end_ - unused;
    // Relaxed: the release store of head below orders it for the reader.
    control_->written.store(++written_, std::memory_order_relaxed);
    control_->head.store(head_, std::memory_order_release);
  }

  // Counts a hit of event `id` in this thread's ring; false when the id is
  // past the ring's counters (the caller counts it elsewhere). A nested hit
  // on the same thread is turned away before it counts, so the load and the
  // store cannot interleave with another.
  bool count_hit(uint32_t id) noexcept { return bump(control_->hits, id); }
  // The same for a miss: a record of event `id` that found the ring full.
  bool count_miss(uint32_t id) noexcept { return bump(control_->misses, id); }
  bool count_filtered(uint32_t id) noexcept { return bump(control_->filtered, id); }

  // Copies a whole record (header included) in; false when it was lost.
  bool write(const void* record, uint32_t size) noexcept {
    void* slot = reserve(size);
    if (slot == nullptr) return false;
    std::memcpy(slot, record, size);
    commit();
    return true;
  }

 private:
  static constexpr uint32_t kSizeFieldOffset = offsetof(RecordHeader, size);
  static bool bump(std::atomic<uint64_t> (&counts)[kRingCountedEvents], uint32_t id) noexcept {
    if (id >= kRingCountedEvents) [[unlikely]] {
      return false;
    }
    counts[id].store(counts[id].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return true;
  }

  // The rare paths, kept out of line so reserve stays a few instructions.
  bool has_room(uint64_t need) noexcept;
  void* drop() noexcept;
  [[gnu::returns_nonnull]] std::byte* pad_to_end(std::byte* marker, uint64_t to_end) noexcept;

  RingControl* control_;
  std::byte* data_;
  uint64_t mask_;
  uint64_t head_;         // authoritative: only this writer moves head
  uint64_t cached_tail_;  // the consumer's tail when last read
  uint64_t written_;
  std::byte* reserved_ = nullptr;
  uint64_t reserved_end_ = 0;
  uint16_t reserved_size_ = 0;
};

// A non-owning reference to any callable taking one record, so that drain
// is one compiled function and calls through a plain function pointer.
class RecordCallback {
 public:
  template <typename F,
            typename = std::enable_if_t<
                !std::is_same_v<std::decay_t<F>, RecordCallback> &&
                std::is_invocable_v<F&, const RecordHeader*, std::span<const std::byte>>>>
  // NOLINTNEXTLINE(google-explicit-constructor): passed as a lambda at the call
  RecordCallback(F&& callable)
      : context_(const_cast<void*>(static_cast<const void*>(std::addressof(callable)))),
        invoke_(&call<std::remove_reference_t<F>>) {}

  void operator()(const RecordHeader* header, std::span<const std::byte> record) const {
    invoke_(context_, header, record);
  }

 private:
  template <typename F>
  static void call(void* context, const RecordHeader* header, std::span<const std::byte> record) {
    (*static_cast<F*>(context))(header, record);
  }

  void* context_;
  void (*invoke_)(void*, const RecordHeader*, std::span<const std::byte>);
};

// The consumer side. It trusts nothing the producer wrote: a record that
// cannot be framed stops draining for good and is reported, never followed.
class RingReader {
 public:
  explicit RingReader(const RingBuffer& ring);
  RingReader(const RingReader&) = delete;  // two readers would skip each other's records
  RingReader& operator=(const RingReader&) = delete;

  // Delivers, in order, every record committed before the call, skipping
  // padding. `record` spans the whole record, header included, and stays
  // valid until the callback returns; only later is its space given back,
  // in chunks of a sixteenth of the ring and at the end of the drain.
  // Returns the number of records delivered.
  size_t drain(RecordCallback callback);

  bool corrupt() const { return !corruption_.empty(); }
  // What was wrong and where, once corrupt() is true.
  const std::string& corruption() const { return corruption_; }

  uint64_t lost() const { return control_->lost.load(std::memory_order_acquire); }
  uint64_t written() const { return control_->written.load(std::memory_order_acquire); }
  // The hits the producer counted for event `id` (0 past kRingCountedEvents).
  uint64_t hits(uint32_t id) const {
    return id < kRingCountedEvents ? control_->hits[id].load(std::memory_order_relaxed) : 0;
  }
  uint64_t misses(uint32_t id) const {
    return id < kRingCountedEvents ? control_->misses[id].load(std::memory_order_relaxed) : 0;
  }
  uint64_t filtered(uint32_t id) const {
    return id < kRingCountedEvents ? control_->filtered[id].load(std::memory_order_relaxed) : 0;
  }
  uint32_t pid() const { return control_->pid; }
  uint32_t tid() const { return control_->tid; }
  std::string_view comm() const;

 private:
  // One framed entry at tail_: a record, or padding up to the end.
  struct Entry {
    const std::byte* start;
    uint32_t size;   // the record's bytes; 0 for padding
    uint64_t bytes;  // what consuming it advances tail by
  };
  bool next_entry(uint64_t available, Entry& entry);
  void publish_tail();
  bool report(std::string what);

  RingControl* control_;
  const std::byte* data_;
  uint64_t mask_;
  uint64_t tail_;
  uint64_t published_tail_;  // what the writer can see of tail_
  std::string corruption_;
};

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_RING_BUFFER_H_
