// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/dwarf_types.h"

#include <dwarf.h>

namespace dprobe::symbols {
namespace {

using Kind = ValueShape::Kind;

uint64_t unsigned_attr(Dwarf_Die* die, unsigned name, uint64_t otherwise = 0) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr_integrate(die, name, &attr) == nullptr || dwarf_formudata(&attr, &value) != 0) {
    return otherwise;
  }
  return value;
}

bool is_qualifier(int tag) {
  return tag == DW_TAG_typedef || tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
         tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type;
}

bool is_char(Dwarf_Die& base) {
  const uint64_t encoding = unsigned_attr(&base, DW_AT_encoding);
  if (encoding == DW_ATE_signed_char || encoding == DW_ATE_unsigned_char) return true;
  // C++'s char8_t, and a plain "char" some producers encode as signed.
  const char* name = dwarf_diename(&base);
  return name != nullptr && unsigned_attr(&base, DW_AT_byte_size) == 1 &&
         (std::string_view(name) == "char" || std::string_view(name) == "char8_t");
}

Kind base_kind(Dwarf_Die& base) {
  switch (unsigned_attr(&base, DW_AT_encoding)) {
    case DW_ATE_signed:
    case DW_ATE_signed_char:
      return Kind::kSigned;
    case DW_ATE_unsigned:
    case DW_ATE_unsigned_char:
    case DW_ATE_UTF:
      return Kind::kUnsigned;
    case DW_ATE_boolean:
      return Kind::kBool;
    case DW_ATE_float:
      return Kind::kFloat;
    default:
      return Kind::kOther;
  }
}

std::string record_keyword(int tag) {
  switch (tag) {
    case DW_TAG_structure_type:
      return "struct ";
    case DW_TAG_union_type:
      return "union ";
    case DW_TAG_class_type:
      return "class ";
    case DW_TAG_enumeration_type:
      return "enum ";
    default:
      return "";
  }
}

// A scalar's shape (base types, pointers, enums), kOther for the rest.
ValueShape scalar_shape(std::optional<Dwarf_Die> type) {
  ValueShape shape;
  const std::optional<Dwarf_Die> bare = peeled(type);
  if (!bare) return shape;
  Dwarf_Die die = *bare;
  const int tag = dwarf_tag(&die);
  shape.size = static_cast<uint32_t>(type_size(bare));
  if (tag == DW_TAG_base_type) {
    shape.kind = base_kind(die);
  } else if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
             tag == DW_TAG_rvalue_reference_type || tag == DW_TAG_ptr_to_member_type) {
    shape.kind = Kind::kPointer;
    if (shape.size == 0) shape.size = 8;
    std::optional<Dwarf_Die> target = peeled(type_of(&die));
    if (tag == DW_TAG_pointer_type && target && dwarf_tag(&*target) == DW_TAG_base_type) {
      Dwarf_Die pointee = *target;
      if (is_char(pointee)) shape.kind = Kind::kString;
    }
  } else if (tag == DW_TAG_enumeration_type) {
    shape.kind = Kind::kEnum;
  } else if (is_record(tag)) {
    shape.kind = Kind::kRecord;
  }
  return shape;
}

uint64_t subrange_count(Dwarf_Die& subrange) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr(&subrange, DW_AT_count, &attr) != nullptr && dwarf_formudata(&attr, &value) == 0) {
    return value;
  }
  if (dwarf_attr(&subrange, DW_AT_upper_bound, &attr) != nullptr &&
      dwarf_formudata(&attr, &value) == 0) {
    const uint64_t lower = unsigned_attr(&subrange, DW_AT_lower_bound, 0);
    return value + 1 - lower;
  }
  return 0;
}

// A member's offset: a constant, or DWARF 2's DW_OP_plus_uconst expression.
std::optional<uint64_t> member_location(Dwarf_Die& member) {
  Dwarf_Attribute attr;
  if (dwarf_attr(&member, DW_AT_data_member_location, &attr) == nullptr) return 0;  // a union's
  Dwarf_Word value = 0;
  if (dwarf_formudata(&attr, &value) == 0) return value;
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  if (dwarf_getlocation(&attr, &ops, &count) == 0 && count == 1 &&
      ops[0].atom == DW_OP_plus_uconst) {
    return ops[0].number;
  }
  return std::nullopt;
}

// A bitfield's place: the byte offset of the storage unit of its type's
// size that holds it, and its lowest bit there (little-endian numbering).
bool place_bitfield(Dwarf_Die& die, Member& member) {
  const uint64_t width = unsigned_attr(&die, DW_AT_bit_size);
  if (width == 0) return true;  // not a bitfield
  uint64_t unit = type_size(type_of(&die));
  if (unit == 0 || unit > 8 || width > unit * 8) return false;
  uint64_t first_bit = 0;  // from the start of the record
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr(&die, DW_AT_data_bit_offset, &attr) != nullptr &&
      dwarf_formudata(&attr, &value) == 0) {
    first_bit = value;
  } else {
    // DWARF 2 and 3: DW_AT_bit_offset counts from the unit's most
    // significant bit, the unit at DW_AT_data_member_location.
    const auto location = member_location(die);
    const uint64_t from_top = unsigned_attr(&die, DW_AT_bit_offset);
    if (!location || from_top + width > unit * 8) return false;
    first_bit = *location * 8 + unit * 8 - from_top - width;
  }
  // The naturally aligned unit holding the first bit; a field that runs
  // past it is read from a unit that starts where it starts.
  uint64_t unit_start = first_bit / (unit * 8) * unit;
  if (first_bit + width > (unit_start + unit) * 8) unit_start = first_bit / 8;
  member.offset = unit_start;
  member.bit_size = static_cast<uint8_t>(width);
  member.bit_offset = static_cast<uint8_t>(first_bit - unit_start * 8);
  return member.bit_offset + width <= unit * 8;
}

}  // namespace

bool is_record(int tag) {
  return tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type;
}

std::optional<Dwarf_Die> type_of(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  Dwarf_Die type;
  if (dwarf_attr_integrate(die, DW_AT_type, &attr) == nullptr ||
      dwarf_formref_die(&attr, &type) == nullptr) {
    return std::nullopt;
  }
  return type;
}

std::optional<Dwarf_Die> peeled(std::optional<Dwarf_Die> type) {
  for (int depth = 0; type && depth < 64; ++depth) {
    if (!is_qualifier(dwarf_tag(&*type))) return type;
    type = type_of(&*type);
  }
  return std::nullopt;
}

uint64_t type_size(std::optional<Dwarf_Die> type) {
  const std::optional<Dwarf_Die> bare = peeled(type);
  if (!bare) return 0;
  Dwarf_Die die = *bare;
  const int tag = dwarf_tag(&die);
  if (tag == DW_TAG_array_type) {
    const ArrayInfo array = array_info(die);
    return array.count * type_size(array.element);
  }
  if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
      tag == DW_TAG_rvalue_reference_type) {
    return unsigned_attr(&die, DW_AT_byte_size, 8);
  }
  return unsigned_attr(&die, DW_AT_byte_size);
}

ArrayInfo array_info(Dwarf_Die& array) {
  ArrayInfo info;
  info.element = type_of(&array);
  Dwarf_Die child;
  if (dwarf_child(&array, &child) != 0) return info;
  // int a[2][3] has two subranges: an array of 2 arrays of 3; only the
  // outer one is this array's.
  if (dwarf_tag(&child) == DW_TAG_subrange_type) info.count = subrange_count(child);
  return info;
}

std::string type_name(std::optional<Dwarf_Die> type) {
  if (!type) return "void";
  Dwarf_Die die = *type;
  const int tag = dwarf_tag(&die);
  const char* name = dwarf_diename(&die);
  switch (tag) {
    case DW_TAG_const_type:
      return "const " + type_name(type_of(&die));
    case DW_TAG_volatile_type:
      return "volatile " + type_name(type_of(&die));
    case DW_TAG_pointer_type:
      return type_name(type_of(&die)) + " *";
    case DW_TAG_reference_type:
      return type_name(type_of(&die)) + " &";
    case DW_TAG_rvalue_reference_type:
      return type_name(type_of(&die)) + " &&";
    case DW_TAG_array_type: {
      const ArrayInfo array = array_info(die);
      return type_name(array.element) + "[" +
             (array.count != 0 ? std::to_string(array.count) : std::string()) + "]";
    }
    case DW_TAG_subroutine_type:
      return "function";
    default:
      break;
  }
  if (name == nullptr) return record_keyword(tag) + "(anonymous)";
  return record_keyword(tag) + name;
}

ValueShape describe_type(std::optional<Dwarf_Die> type) {
  std::optional<Dwarf_Die> bare = peeled(type);
  ValueShape shape;
  if (bare && dwarf_tag(&*bare) == DW_TAG_array_type) {
    Dwarf_Die die = *bare;
    const ArrayInfo array = array_info(die);
    const ValueShape element = scalar_shape(array.element);
    shape = element;
    shape.count = static_cast<uint32_t>(array.count);
    shape.element = element.kind;
    shape.kind = Kind::kArray;
    std::optional<Dwarf_Die> element_bare = peeled(array.element);
    if (element_bare && dwarf_tag(&*element_bare) == DW_TAG_base_type) {
      Dwarf_Die base = *element_bare;
      if (is_char(base)) shape.kind = Kind::kCharArray;
    }
  } else {
    shape = scalar_shape(type);
  }
  shape.type_name = type_name(type);
  return shape;
}

std::optional<Member> find_member(Dwarf_Die& record, std::string_view name) {
  Dwarf_Die child;
  if (dwarf_child(&record, &child) != 0) return std::nullopt;
  do {
    const int tag = dwarf_tag(&child);
    if (tag != DW_TAG_member && tag != DW_TAG_inheritance) continue;
    const char* child_name = dwarf_diename(&child);
    const auto location = member_location(child);
    if (!location) continue;
    if (tag == DW_TAG_member && child_name != nullptr) {
      if (name != child_name) continue;
      Member member{child, *location, 0, 0};
      if (!place_bitfield(child, member)) return std::nullopt;
      return member;
    }
    // An anonymous struct or union member, or a base class: its members
    // are this record's, further in.
    std::optional<Dwarf_Die> inner = peeled(type_of(&child));
    if (!inner || !is_record(dwarf_tag(&*inner))) continue;
    if (auto found = find_member(*inner, name)) {
      found->offset += *location;
      return found;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return std::nullopt;
}

}  // namespace dprobe::symbols
