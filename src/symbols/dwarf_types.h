// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C types as the DWARF describes them (libdw DIEs), for dwarf_variables.cc:
// what a value of the type is (a ValueShape), its name as C writes it, and
// its members. Internal to the symbols layer: it speaks libdw.
#ifndef DPROBE_SYMBOLS_DWARF_TYPES_H_
#define DPROBE_SYMBOLS_DWARF_TYPES_H_

#include <elfutils/libdw.h>

#include <optional>
#include <string>
#include <string_view>

#include "symbols/dwarf_variables.h"

namespace dprobe::symbols {

// The DIE's DW_AT_type, or nullopt (void).
std::optional<Dwarf_Die> type_of(Dwarf_Die* die);

// `type` without typedefs and qualifiers; nullopt for void.
std::optional<Dwarf_Die> peeled(std::optional<Dwarf_Die> type);

// The type's name as C writes it ("const char *", "struct item[3]").
std::string type_name(std::optional<Dwarf_Die> type);

// What a value of `type` is. A pointer to a char type is a string.
ValueShape describe_type(std::optional<Dwarf_Die> type);

// The element type and count of an array type (count 0: unknown).
struct ArrayInfo {
  std::optional<Dwarf_Die> element;
  uint64_t count = 0;
};
ArrayInfo array_info(Dwarf_Die& array);

// The byte size of `type`, 0 when unknown (void, incomplete).
uint64_t type_size(std::optional<Dwarf_Die> type);

// A member of a struct, union or class, found through anonymous members
// and base classes; `offset` from the start of `record`.
struct Member {
  Dwarf_Die die;
  uint64_t offset = 0;
  uint8_t bit_size = 0;    // a bitfield: its width,
  uint8_t bit_offset = 0;  // and its lowest bit within its type's bytes
};
std::optional<Member> find_member(Dwarf_Die& record, std::string_view name);

bool is_record(int tag);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_DWARF_TYPES_H_
