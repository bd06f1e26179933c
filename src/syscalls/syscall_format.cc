// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The format files of the kernel's syscall events, as tracefs prints them
// (kernel/trace/trace_syscalls.c sets the fields and the print format;
// trace_events.c prints the file): the common fields every event has, a
// blank line, the event's own fields, a blank line, the print format.
#include <string>

#include "syscalls/syscall_table.h"

namespace dprobe::syscalls {
namespace {

struct Field {
  std::string_view declaration;  // "TYPE NAME"
  unsigned offset;
  unsigned size;
  bool is_signed;
};

void append_field(std::string& out, const Field& field) {
  out += "\tfield:";
  out += field.declaration;
  out += ";\toffset:" + std::to_string(field.offset);
  out += ";\tsize:" + std::to_string(field.size);
  out += field.is_signed ? ";\tsigned:1;\n" : ";\tsigned:0;\n";
}

// Up to the event's own fields: name, ID, and the common fields.
std::string format_head(std::string_view event, uint32_t id) {
  std::string out = "name: ";
  out += event;
  out += "\nID: " + std::to_string(id) + "\nformat:\n";
  append_field(out, {"unsigned short common_type", 0, 2, false});
  append_field(out, {"unsigned char common_flags", 2, 1, false});
  append_field(out, {"unsigned char common_preempt_count", 3, 1, false});
  append_field(out, {"int common_pid", 4, 4, true});
  out += "\n";
  return out;
}

void append_print_fmt(std::string& out, std::string_view print_fmt) {
  out += "\nprint fmt: ";
  out += print_fmt;
  out += "\n";
}

// Every argument shown as a hex number: "dfd: 0x%08lx, ..." with
// ((unsigned long)(REC->dfd)) for each. Without arguments, just "".
std::string enter_print_fmt(const SyscallInfo& info) {
  std::string format;
  std::string values;
  for (uint8_t i = 0; i < info.arg_count; ++i) {
    const std::string name = info.args[i].name;
    format += (i ? ", " : "") + name + ": 0x%08lx";
    values += ", ((unsigned long)(REC->" + name + "))";
  }
  return "\"" + format + "\"" + values;
}

// Each argument is saved as an unsigned long, whatever its C type.
void append_enter_fields(std::string& out, const SyscallInfo& info) {
  for (uint8_t i = 0; i < info.arg_count; ++i) {
    const std::string declaration = std::string(info.args[i].type) + " " + info.args[i].name;
    append_field(out, {declaration, 16u + 8u * i, 8, false});
  }
}

}  // namespace

std::string syscall_format(const SyscallInfo& info, bool exit, uint32_t id) {
  std::string out = format_head((exit ? "sys_exit_" : "sys_enter_") + std::string(info.name), id);
  append_field(out, {"int __syscall_nr", 8, 4, true});
  if (exit) {
    append_field(out, {"long ret", 16, 8, true});
    append_print_fmt(out, "\"0x%lx\", REC->ret");
  } else {
    append_enter_fields(out, info);
    append_print_fmt(out, enter_print_fmt(info));
  }
  return out;
}

std::string raw_syscall_format(bool exit, uint32_t id) {
  std::string out = format_head(exit ? "sys_exit" : "sys_enter", id);
  append_field(out, {"long id", 8, 8, true});
  if (exit) {
    append_field(out, {"long ret", 16, 8, true});
    append_print_fmt(out, "\"NR %ld = %ld\", REC->id, REC->ret");
  } else {
    append_field(out, {"unsigned long args[6]", 16, 48, false});
    append_print_fmt(out,
                     "\"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, REC->args[0], "
                     "REC->args[1], REC->args[2], REC->args[3], REC->args[4], REC->args[5]");
  }
  return out;
}

}  // namespace dprobe::syscalls
