// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/event_format.h"

#include <fmt/format.h>

#include <iterator>
#include <string_view>

#include "trace/hit/fetch_type.h"
#include "trace/record.h"

namespace dprobe::trace {
namespace {

struct Field {
  std::string_view type;
  std::string_view name;
  uint32_t offset;
  uint32_t size;
  bool is_signed;
};

// RecordHeader's members, under the names and C types a format parser
// expects of common fields.
constexpr Field kCommonFields[] = {
    {"unsigned short", "common_type", 0, 2, false},
    {"unsigned short", "common_size", 2, 2, false},
    {"unsigned int", "common_cpu", 4, 4, false},
    {"int", "common_pid", 8, 4, true},
    {"int", "common_tid", 12, 4, true},
    {"unsigned long long", "common_ts", 16, 8, false},
};
static_assert(sizeof(RecordHeader) == 24, "kCommonFields mirrors RecordHeader");

// One "\tfield:..." line, as the kernel's f_show writes it: an array type
// such as "u32[4]" prints as "u32 name[]" (probe fields carry no length),
// while a __data_loc type, array or not, prints whole.
void append_field(std::string& out, const Field& field) {
  std::string_view type = field.type;
  std::string_view brackets;
  const size_t bracket = type.find('[');
  if (bracket != std::string_view::npos && !type.starts_with("__data_loc")) {
    type = type.substr(0, bracket);
    brackets = "[]";
  }
  fmt::format_to(std::back_inserter(out), "\tfield:{} {}{};\toffset:{};\tsize:{};\tsigned:{};\n",
                 type, field.name, brackets, field.offset, field.size, field.is_signed ? 1 : 0);
}

void append_arg_field(std::string& out, const EventArg& arg) {
  const FetchType& type = fetch_type(arg.type);
  std::string array_type;  // "u32[4]": an array's type, as the kernel defines it
  if (arg.count != 0) array_type = fmt::format("{}[{}]", type.field_type, arg.count);
  append_field(out, {arg.count != 0 ? std::string_view(array_type) : type.field_type, arg.name,
                     arg.offset, arg.field_size(), type.is_signed});
}

// The printf half of the kernel's __set_print_fmt: "(%lx) a=0x%Lx b={%u,%u}".
void append_print_format(std::string& out, const EventDesc& ev) {
  out.append(ev.is_return ? "\"(%lx <- %lx)" : "\"(%lx)");
  for (const EventArg& arg : ev.args) {
    const std::string_view print_fmt = fetch_type(arg.type).print_fmt;
    fmt::format_to(std::back_inserter(out), " {}=", arg.name);
    if (arg.count == 0) {
      out.append(print_fmt);
      continue;
    }
    out.push_back('{');
    for (uint32_t i = 0; i < arg.count; ++i) {
      if (i != 0) out.push_back(',');
      out.append(print_fmt);
    }
    out.push_back('}');
  }
  out.push_back('"');
}

// The argument half: ", REC->a, __get_str(s), REC->b[0], REC->b[1]".
void append_print_args(std::string& out, const EventDesc& ev) {
  out.append(ev.is_return ? ", REC->__probe_func, REC->__probe_ret_ip" : ", REC->__probe_ip");
  for (const EventArg& arg : ev.args) {
    const bool is_string = is_string_class(fetch_type(arg.type).cls);
    const std::string_view open = is_string ? ", __get_str(" : ", REC->";
    const std::string_view close = is_string ? ")" : "";
    if (arg.count == 0) {
      fmt::format_to(std::back_inserter(out), "{}{}{}", open, arg.name, close);
      continue;
    }
    for (uint32_t i = 0; i < arg.count; ++i) {
      fmt::format_to(std::back_inserter(out), "{}{}[{}]{}", open, arg.name, i, close);
    }
  }
}

}  // namespace

std::string format_description(const EventDesc& ev) {
  std::string out;
  fmt::format_to(std::back_inserter(out), "name: {}\nID: {}\nformat:\n", ev.name, ev.id);
  for (const Field& field : kCommonFields) append_field(out, field);
  out.push_back('\n');
  if (ev.is_return) {
    append_field(out, {"unsigned long", "__probe_func", EventDesc::kFuncOffset, 8, false});
    append_field(out, {"unsigned long", "__probe_ret_ip", EventDesc::kRetIpOffset, 8, false});
  } else {
    append_field(out, {"unsigned long", "__probe_ip", EventDesc::kIpOffset, 8, false});
  }
  for (const EventArg& arg : ev.args) append_arg_field(out, arg);
  out.append("\nprint fmt: ");
  append_print_format(out, ev);
  append_print_args(out, ev);
  out.push_back('\n');
  return out;
}

}  // namespace dprobe::trace
