// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/event.h"

#include "trace/record.h"

namespace dprobe::trace {

void layout_event(EventDesc& event) {
  uint32_t offset = kRecordHeaderSize + (event.is_return ? 16u : 8u);
  for (EventArg& arg : event.args) {
    arg.offset = offset;
    offset += arg.field_size();
  }
  event.fixed_size = offset;
}

}  // namespace dprobe::trace
