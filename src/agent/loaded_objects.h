// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The objects the dynamic loader has mapped into this process, with their
// load bias and file identity, as the agent reports them to the CLI (which
// resolves symbols in the files and sends back run-time addresses).
#ifndef DPROBE_AGENT_LOADED_OBJECTS_H_
#define DPROBE_AGENT_LOADED_OBJECTS_H_

#include <cstdint>
#include <vector>

#include "protocol/messages.h"

namespace dprobe::agent {

// The [begin, end) of executable mappings.
struct TextRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct MappedObject {
  protocol::LoadedObject object;
  std::vector<TextRange> text;  // its executable segments, run-time
};

std::vector<MappedObject> mapped_objects();
std::vector<protocol::LoadedObject> loaded_objects();

// The [begin, end) covering the executable mappings of the object holding
// `address`.
TextRange text_range_of(const void* address);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_LOADED_OBJECTS_H_
