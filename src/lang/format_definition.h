// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A compiled probe printed back the way `cat kprobe_events` prints it, with
// the group filled in and every argument named and typed:
//
//   format_definition(spec);  // "p:dprobes/p_malloc_0 libc.so.6:malloc size=%di:x64"
#ifndef DPROBE_LANG_FORMAT_DEFINITION_H_
#define DPROBE_LANG_FORMAT_DEFINITION_H_

#include <string>

#include "trace/event.h"

namespace dprobe::lang {

std::string format_target(const core::ProbeTarget& target);
std::string format_definition(const trace::ProbeSpec& spec);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_FORMAT_DEFINITION_H_
