// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/record_fields.h"

#include <cstddef>

namespace dprobe::trace {
namespace {

RecordField header_number(std::string name, uint32_t offset, uint8_t size, bool is_signed,
                          TypeId type) {
  RecordField field;
  field.name = std::move(name);
  field.offset = offset;
  field.size = size;
  field.is_signed = is_signed;
  field.type = type;
  return field;
}

RecordField special(std::string name, FieldSource source, TypeId type) {
  RecordField field;
  field.name = std::move(name);
  field.source = source;
  field.type = type;
  return field;
}

void add_common_fields(std::vector<RecordField>& fields) {
  // common_pid is an int in the kernel's format; cpu is its special field
  // for the CPU the event happened on.
  // The kernel's common_pid is the task: the thread, not the process.
  fields.push_back(header_number("common_pid", offsetof(RecordHeader, tid), 4, true, TypeId::kS32));
  for (const char* name : {"cpu", "CPU", "common_cpu"}) {
    fields.push_back(header_number(name, offsetof(RecordHeader, cpu), 4, true, TypeId::kS32));
  }
  for (const char* name : {"comm", "COMM"}) {
    fields.push_back(special(name, FieldSource::kComm, TypeId::kString));
  }
}

void add_ip_fields(const EventDesc& event, std::vector<RecordField>& fields) {
  if (is_syscall_source(event.source)) return;
  if (event.is_return) {
    fields.push_back(header_number("__probe_func", EventDesc::kFuncOffset, 8, false, TypeId::kX64));
    fields.push_back(
        header_number("__probe_ret_ip", EventDesc::kRetIpOffset, 8, false, TypeId::kX64));
  } else {
    fields.push_back(header_number("__probe_ip", EventDesc::kIpOffset, 8, false, TypeId::kX64));
  }
}

// A system call's result, and raw_syscalls' number, are longs in the
// kernel's format (signed: `ret < 0` finds the failed calls); its
// arguments are unsigned words.
void mark_signed_syscall_fields(const EventDesc& event, std::vector<RecordField>& fields) {
  if (!is_syscall_source(event.source) || event.event_probe) return;
  for (RecordField& field : fields) {
    if (field.source != FieldSource::kNumber || field.offset < first_arg_offset(false)) continue;
    const bool result = is_syscall_exit(event.source) && field.name == "ret";
    const bool number = event.syscall_name.empty() && field.name == "id";  // raw_syscalls
    if (result || number) {
      field.is_signed = true;
      field.type = TypeId::kS64;
    }
  }
}

}  // namespace

std::vector<RecordField> record_fields(const EventDesc& event) {
  std::vector<RecordField> fields;
  add_common_fields(fields);
  add_ip_fields(event, fields);
  for (const EventArg& arg : event.args) {
    if (arg.count != 0) continue;  // arrays: no field to compare
    // Floats: no field either; filters and hists compare integers.
    if (fetch_type(arg.type).cls == TypeClass::kFloat) continue;
    const FetchType& type = fetch_type(arg.type);
    RecordField field;
    field.name = arg.name;
    field.offset = arg.offset;
    field.type = arg.type;
    if (type.cls == TypeClass::kString) {
      field.source = FieldSource::kString;
      field.size = 4;
    } else {
      field.size = type.size;
      field.is_signed = type.cls == TypeClass::kSigned;
    }
    fields.push_back(std::move(field));
  }
  mark_signed_syscall_fields(event, fields);
  if (event.is_return && !is_syscall_source(event.source)) {
    fields.push_back(special("$duration", FieldSource::kDuration, TypeId::kU64));
  }
  return fields;
}

const RecordField* find_record_field(const std::vector<RecordField>& fields,
                                     std::string_view name) {
  for (const RecordField& field : fields) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

}  // namespace dprobe::trace
