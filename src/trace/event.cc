// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/event.h"

#include "trace/record.h"

namespace dprobe::trace {

void layout_event(EventDesc& event) {
  static_assert(first_arg_offset(false) == kRecordHeaderSize + 8);
  static_assert(first_arg_offset(true) == kRecordHeaderSize + 16);
  uint32_t offset = first_arg_offset(event.is_return);
  for (EventArg& arg : event.args) {
    arg.offset = offset;
    offset += arg.field_size();
  }
  if (event.is_return) {
    event.entry_time_offset = offset;
    offset += sizeof(uint64_t);
  }
  event.fixed_size = offset;
  event.stack_offset = 0;
}

void add_stack_field(EventDesc& event) {
  if (event.stack_offset != 0) return;
  event.stack_offset = event.fixed_size;
  event.fixed_size += sizeof(uint32_t);
}

}  // namespace dprobe::trace
