// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The C++ exception landing pads of the functions around an address, read
// from a loaded object's unwind tables in memory. An optimized probe
// replaces at least five bytes by a jump: were a landing pad inside them,
// the unwinder would resume in the middle of that jump. So before it
// optimizes a probe the agent asks for the pads of the replaced range:
//
//   auto tables = unwind_tables_for(site);
//   auto pads = tables ? landing_pads(*tables, site, site + length) : no tables at all;
//   if (!pads) refuse("unreadable unwind tables: " + pads.error());
//   else if (any pad in (site, site + length)) refuse("landing pad in range");
//
// The path: PT_GNU_EH_FRAME (.eh_frame_hdr) and its sorted search table →
// the FDEs covering the range → each FDE's LSDA (its CIE's 'L' augmentation)
// → the LSDA's call-site table, whose landing pads are the answer.
#ifndef DPROBE_CORE_LANDING_PADS_H_
#define DPROBE_CORE_LANDING_PADS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace dprobe::core {

// Where an object's unwind tables are in memory: the address of its
// PT_GNU_EH_FRAME segment (.eh_frame_hdr) as mapped, e.g. from
// dl_iterate_phdr (dlpi_addr + p_vaddr).
struct UnwindTables {
  uint64_t eh_frame_hdr = 0;
};

// The landing pads (absolute addresses, sorted, each once) of the functions
// whose FDEs cover any byte of [begin, end), from their LSDA call-site
// tables; an empty list when there are none (no FDE, no LSDA, or an LSDA
// without landing pads). An error (a short reason) when the tables cannot be
// read or use an encoding not supported: the caller then refuses to
// optimize ("unreadable unwind tables"). Reads memory directly: called by the
// agent outside any hit path, on mapped, readable objects; it never writes
// and never takes a lock.
Result<std::vector<uint64_t>, std::string> landing_pads(const UnwindTables& tables, uint64_t begin,
                                                        uint64_t end);

// The code an FDE covers, the one that covers `address`: a function's
// extent, where no symbol says it (the agent reads no symbol table).
struct FunctionExtent {
  uint64_t begin = 0;
  uint64_t size = 0;
};
Result<FunctionExtent, std::string> function_extent(const UnwindTables& tables, uint64_t address);

// The PT_GNU_EH_FRAME of the loaded object holding `address` (a PT_LOAD
// segment of it covers the address), if it has one. Uses dl_iterate_phdr,
// which takes the dynamic loader's lock: never from a signal handler.
std::optional<UnwindTables> unwind_tables_for(uint64_t address);

}  // namespace dprobe::core

#endif  // DPROBE_CORE_LANDING_PADS_H_
