// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The types a fetch argument can have, one table for the language (which
// checks them), the record layout (sizes) and the formatter (how to print).
// Names, sizes, signedness and print formats are the kernel's.
//
//   const FetchType* t = find_fetch_type("x32");  // size 4, prints 0x%x
#ifndef DPROBE_TRACE_FETCH_TYPE_H_
#define DPROBE_TRACE_FETCH_TYPE_H_

#include <cstdint>
#include <string_view>

namespace dprobe::trace {

enum class TypeClass : uint8_t {
  kUnsigned,  // u8..u64, and bitfields
  kSigned,    // s8..s64
  kHex,       // x8..x64
  kChar,      // one byte printed as 'c'
  kString,    // string, ustring: a __data_loc into the record's dynamic area
  kSymbol,    // an address printed as sym+off/size
  kSymStr,    // an address printed as "sym+off/size"
  kFloat,     // f32, f64: IEEE 754 bits, printed as the shortest decimal that reads back
};

enum class TypeId : uint8_t {
  kU8,
  kU16,
  kU32,
  kU64,
  kS8,
  kS16,
  kS32,
  kS64,
  kX8,
  kX16,
  kX32,
  kX64,
  kChar,
  kString,
  kUString,
  kSymbol,
  kSymStr,
  // dprobe's own, after the kernel's (the kernel's tracer has no floats).
  kF32,
  kF64,
  kCount
};

struct FetchType {
  TypeId id;
  std::string_view name;  // as written in a definition
  TypeClass cls;
  uint8_t size;                 // bytes the field takes in the record
  bool is_signed;               // as the format description reports it
  std::string_view field_type;  // C type in the format description
  std::string_view print_fmt;   // printf format in the format description
};

// The type a fetch argument gets when none is written (x64 on 64-bit ISAs).
inline constexpr TypeId kDefaultType = TypeId::kX64;

const FetchType& fetch_type(TypeId id);
// Looks a type up by its name; bitfields (b<W>@<O>/<C>) are not names and
// are handled by the language, which maps them to u<C>.
const FetchType* find_fetch_type(std::string_view name);

inline bool is_string_class(TypeClass c) { return c == TypeClass::kString; }

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_FETCH_TYPE_H_
