// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The fetch interpreter: runs an event's compiled fetch programs (fetch.h)
// on a probe hit and writes the argument fields of its record, the way the
// kernel's process_fetch_insn and store_trace_args do.
//
//   bool read(void*, void* dst, uint64_t src, size_t n) { return arch::safe_read(dst, src, n); }
//   int64_t read_string(void*, char* dst, uint64_t src, size_t n) {
//     return arch::safe_read_string(dst, src, n);
//   }
//
//   FetchEnv env{frame.slot, arch::host_isa(), nullptr, 0, comm, {&read, &read_string, nullptr},
//   0};
//   // `record`: header and ip fields written, `capacity` bytes writable.
//   uint32_t size = store_event_args(event, env, record, capacity);
//   if (size == 0) { /* not even the fixed fields fit: count a lost event */ }
//   header->size = static_cast<uint16_t>(size);
//
// It runs inside the traced program, in a signal handler or a trampoline,
// maybe while that program is inside libc: it allocates nothing, calls no
// libc function and throws nothing. Every read of the program's memory
// goes through `FetchEnv::memory`, which must be fault-safe.
//
// Faults are values, as in the kernel: a faulted scalar field is 0, a
// faulted string has length 0 and prints as (fault), and a faulted array
// element is one of those while the other elements are fetched. A program
// that does not have the shape the language emits stores a zeroed field.
#ifndef DPROBE_TRACE_FETCH_EXEC_H_
#define DPROBE_TRACE_FETCH_EXEC_H_

#include <cstddef>
#include <cstdint>

#include "arch/isa.h"
#include "trace/event.h"

namespace dprobe::trace {

// Memory the programs read, fault-safe. In the agent: arch::safe_read and
// arch::safe_read_string; in tests a fake.
struct MemoryReader {
  // Copies `size` bytes from `src`; false if any byte faults.
  bool (*read)(void* context, void* dst, uint64_t src, size_t size);
  // As arch::safe_read_string: length with the NUL (1..capacity), or -1.
  int64_t (*read_string)(void* context, char* dst, uint64_t src, size_t capacity);
  void* context;
};

// What one hit sees.
struct FetchEnv {
  const uint64_t* regs;  // the ISA's saved register frame (arch/*/regs.h order)
  arch::Isa isa;
  const uint64_t* entry_args;  // return probes: $arg1.. fetched at entry (index = N-1), or nullptr
  uint32_t entry_arg_count;
  const char* comm;  // the thread's name, 16 bytes, NUL-padded
  MemoryReader memory;
  uint64_t duration_ns;  // return events: nanoseconds since the entry ($duration)
  // Return events: the low 64 bits of the floating-point return register
  // (xmm0, d0), read as the return began, where some event asked for it.
  uint64_t float_retval;
};

// The kernel's MAX_STRING_SIZE: longer strings are cut to this many bytes,
// the NUL included.
inline constexpr uint32_t kMaxStringSize = 4096;
// $comm is at most this long, NUL included (TASK_COMM_LEN).
inline constexpr uint32_t kCommSize = 16;

// Fills the argument fields of `event` into `record` (which already holds
// the header and ip fields) and appends the strings after
// event.fixed_size, never writing at or past `capacity` (nor past the 64 KiB
// a record's size and __data_loc offsets can express). Returns the record's
// total size, or 0 when even the fixed fields do not fit. A string that
// does not fit in the space left is stored as faulted (length 0); only
// kMaxStringSize truncates one. The header's size field is the caller's.
uint32_t store_event_args(const EventDesc& event, const FetchEnv& env, std::byte* record,
                          uint32_t capacity) noexcept;

// The common case planned once per event instead of interpreted per hit:
// every argument a saved register stored whole or truncated (%di, $arg1 in
// a register, $retval; no dereference, bitfield or array), or for a return
// event a $argN kept from its entry. A hit copies them in one loop with no
// branch on the program's shape.
struct RegisterFields {
  static constexpr uint32_t kMax = 16;
  struct Field {
    uint16_t slot;    // in the saved register frame, or the entry argument's index
    uint16_t offset;  // in the record
    uint16_t size;    // 1, 2, 4 or 8 bytes, the low ones of the register
    bool from_entry;  // a return event's $argN, kept from its entry
  };
  bool usable = false;  // false: the event needs the interpreter
  uint32_t count = 0;
  Field fields[kMax];
};
// `entry_args`: how many arguments a return event's entry keeps (the
// FetchEnv::entry_arg_count its hits will have); 0 for an entry event.
RegisterFields plan_register_fields(const EventDesc& event, arch::Isa isa, uint32_t entry_args = 0);

// Writes the planned fields from `regs`; the same bytes store_event_args
// writes for such an event. Returns the record's size (its fixed size).
inline uint32_t store_register_fields(const RegisterFields& plan, const EventDesc& event,
                                      const uint64_t* regs, std::byte* record,
                                      const uint64_t* entry_args = nullptr) noexcept {
  for (uint32_t i = 0; i < plan.count; ++i) {
    const RegisterFields::Field& f = plan.fields[i];
    // Little-endian: the low `size` bytes of the register are its first.
    // A constant size each, so no call to the C library's memcpy (which
    // the program may be probing) is made.
    std::byte* field = record + f.offset;
    const uint64_t value = f.from_entry ? entry_args[f.slot] : regs[f.slot];
    if (f.size == 8) {
      __builtin_memcpy(field, &value, 8);
    } else if (f.size == 4) {
      __builtin_memcpy(field, &value, 4);
    } else if (f.size == 2) {
      __builtin_memcpy(field, &value, 2);
    } else {
      __builtin_memcpy(field, &value, 1);
    }
  }
  return event.fixed_size;
}

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_FETCH_EXEC_H_
