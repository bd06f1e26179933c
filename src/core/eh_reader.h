// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Reads the unwind tables of a loaded object straight from this process's
// memory: fixed-size fields, LEB128 numbers and the DW_EH_PE_* pointer
// encodings of .eh_frame_hdr, .eh_frame and the LSDA (LSB, "DWARF Extensions",
// and the Itanium C++ ABI's exception-handling tables).
//
//   EhReader reader(address);
//   auto lsda = reader.pointer(lsda_encoding, {.func = pc_begin});
//
// Every read of a number that could be malformed is a Result; a string says
// why the tables cannot be used. The reader does not know where the tables
// end: the caller hands it addresses inside mapped, readable objects.
#ifndef DPROBE_CORE_EH_READER_H_
#define DPROBE_CORE_EH_READER_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "base/result.h"

namespace dprobe::core {

template <typename T>
using EhResult = Result<T, std::string>;

// DW_EH_PE_*: the low four bits are the format, the next three what the
// value is relative to, the top bit a read through the pointer.
namespace dw_eh_pe {
inline constexpr uint8_t kAbsptr = 0x00;
inline constexpr uint8_t kUleb128 = 0x01;
inline constexpr uint8_t kUdata2 = 0x02;
inline constexpr uint8_t kUdata4 = 0x03;
inline constexpr uint8_t kUdata8 = 0x04;
inline constexpr uint8_t kSleb128 = 0x09;
inline constexpr uint8_t kSdata2 = 0x0a;
inline constexpr uint8_t kSdata4 = 0x0b;
inline constexpr uint8_t kSdata8 = 0x0c;
inline constexpr uint8_t kFormatMask = 0x0f;

inline constexpr uint8_t kPcrel = 0x10;
inline constexpr uint8_t kTextrel = 0x20;
inline constexpr uint8_t kDatarel = 0x30;
inline constexpr uint8_t kFuncrel = 0x40;
inline constexpr uint8_t kAligned = 0x50;
inline constexpr uint8_t kApplicationMask = 0x70;

inline constexpr uint8_t kIndirect = 0x80;
inline constexpr uint8_t kOmit = 0xff;
}  // namespace dw_eh_pe

// What a relative pointer is relative to, where the caller knows it; the
// field's own address (pcrel) the reader knows. textrel is never known on
// x86_64 (libgcc does not support it either).
struct EhBases {
  std::optional<uint64_t> data;  // datarel: the start of .eh_frame_hdr
  std::optional<uint64_t> func;  // funcrel: the start of the function
};

class EhReader {
 public:
  explicit EhReader(uint64_t address) : at_(address) {}

  uint64_t at() const { return at_; }
  void skip(uint64_t bytes) { at_ += bytes; }

  template <typename T>
  T fixed() {
    T value;
    std::memcpy(&value, reinterpret_cast<const void*>(static_cast<uintptr_t>(at_)), sizeof value);
    at_ += sizeof value;
    return value;
  }
  uint8_t u8() { return fixed<uint8_t>(); }

  EhResult<uint64_t> uleb128();
  EhResult<int64_t> sleb128();

  // A value in the format part of `encoding` only, with no base applied:
  // an FDE's pc_range, a call-site entry, a table's count.
  EhResult<uint64_t> value(uint8_t encoding);

  // A pointer in `encoding`: the base applied, then read through when
  // indirect. A stored zero stays 0, "no pointer", as libgcc reads it.
  EhResult<uint64_t> pointer(uint8_t encoding, const EhBases& bases);

  // Steps over a pointer in `encoding` without using it (a personality
  // routine): nothing is read through it.
  EhResult<void> skip_pointer(uint8_t encoding);

 private:
  EhResult<uint64_t> raw(uint8_t encoding);

  uint64_t at_;
};

// Whether `encoding` names a format this reader knows (omit excluded).
bool known_format(uint8_t encoding);

// The size in bytes of a fixed-size format, 0 for LEB128 or unknown ones.
uint64_t fixed_size(uint8_t encoding);

}  // namespace dprobe::core

#endif  // DPROBE_CORE_EH_READER_H_
