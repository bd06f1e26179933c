// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The language's limits. Those the kernel has are the kernel's values, so a
// definition accepted by uprobe_events is accepted here too.
#ifndef DPROBE_LANG_LIMITS_H_
#define DPROBE_LANG_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace dprobe::lang {

inline constexpr size_t kMaxEventNameLen = 63;  // MAX_EVENT_NAME_LEN, NUL excluded
inline constexpr size_t kMaxArgNameLen = 32;    // MAX_ARG_NAME_LEN
inline constexpr size_t kMaxArgExprLen = 63;    // MAX_ARGSTR_LEN
inline constexpr size_t kMaxArgs = 128;         // MAX_TRACE_ARGS
inline constexpr uint32_t kMaxArrayLen = 64;    // MAX_ARRAY_LEN
// $argN beyond this is surely a typo; ABIs pass the rest on the stack anyway.
inline constexpr uint64_t kMaxArgNumber = 128;
// A return probe fetches $argN at entry and keeps it until the return: up
// to this N (core::kMaxEntryArgs).
inline constexpr uint64_t kMaxReturnProbeArgs = 16;
// $stackN words above the stack pointer: 8 MiB, the default stack limit.
inline constexpr uint64_t kMaxStackWords = uint64_t{1} << 20;
// The fixed part of a record must leave room in 64 KiB for its strings.
inline constexpr uint32_t kMaxFixedRecordSize = 32 * 1024;

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_LIMITS_H_
