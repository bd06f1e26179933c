// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The names of JIT code from a jitdump file, the binary form perf reads
// (tools/perf/Documentation/jitdump-specification.txt): a header (magic
// 0x4A695444, "JiTD"), then records, each `id, total size, timestamp` and
// its body. node writes one with --perf-prof (jit-PID.dump in its working
// directory, which it maps so that a tracer finds it), the JVM through an
// agent. Code loads name a range; code moves carry a name to new code.
//
//   size_t header = jitdump_header_size(first_bytes);   // 0: no jitdump
//   size_t taken = add_jitdump_records(bytes_after_header, table);
#ifndef DPROBE_CLI_OUTPUT_JIT_DUMP_H_
#define DPROBE_CLI_OUTPUT_JIT_DUMP_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cli/output/perf_map.h"

namespace dprobe::cli {

inline constexpr uint32_t kJitDumpMagic = 0x4A695444;

// The size of the file's header (where its records begin), or 0 when
// `bytes` (the file's first bytes) are no jitdump's.
size_t jitdump_header_size(std::string_view bytes);

// The entries of the records in `bytes` (which begin at a record) into
// `table`; returns how many bytes were whole records: the rest is a record
// still being written, or, after a broken one, nothing to believe.
size_t add_jitdump_records(std::string_view bytes, PerfMapTable& table);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_JIT_DUMP_H_
