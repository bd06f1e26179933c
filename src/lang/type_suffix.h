// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The `:TYPE[N]` part of a fetch argument: split off, checked, and looked up
// in the type table. Bitfields (b<W>@<O>/<C>) take the u<C> type; their
// width and offset are checked later, after the expression, as the kernel
// does.
#ifndef DPROBE_LANG_TYPE_SUFFIX_H_
#define DPROBE_LANG_TYPE_SUFFIX_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "lang/parse_fault.h"
#include "trace/hit/fetch_type.h"

namespace dprobe::lang {

struct TypeSuffix {
  std::string_view expr;  // the fetch expression, before the ':'
  std::string_view type;  // the type without [N]; empty when none was written
  bool has_type = false;
  size_t column = 0;   // column of the type (of the expression when none)
  uint32_t count = 0;  // array length; 0 for a scalar
};

Parsed<TypeSuffix> parse_type_suffix(std::string_view body, size_t body_column);

struct ArgType {
  trace::TypeId id;
  std::string text;  // as it is printed back: "x64", "b4@2/32", ...
};
Parsed<ArgType> resolve_arg_type(const TypeSuffix& suffix);

struct Bitfield {
  uint8_t width;
  uint8_t offset;
};
// The width and offset of a bitfield type, which must fit its container.
Parsed<Bitfield> parse_bitfield(std::string_view type, uint8_t container_bytes, size_t column);

inline bool is_bitfield_type(std::string_view type) { return !type.empty() && type[0] == 'b'; }

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_TYPE_SUFFIX_H_
