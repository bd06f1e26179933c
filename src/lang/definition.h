// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The probe definition language (the kernel's kprobe_events grammar, with
// uprobe_events' file offsets):
//
//   p[:[GRP/][EVENT]] TARGET [FETCHARGS]
//   p[:[GRP/][EVENT]] [OBJ:]%sdt_PROVIDER:NAME [FETCHARGS] (lang/sdt_point.h)
//   r[MAXACTIVE][:[GRP/][EVENT]] TARGET [FETCHARGS]     (or TARGET%return)
//   e[:[GRP/][EVENT]] SYSTEM/EVENT [FETCHARGS]           (an event probe on a
//                                                       syscall event; $FIELD)
//   -:[GRP/][EVENT]
//
//   auto def = parse_definition("p:dprobes/open libc.so.6:open path=+0(%di):string");
//   if (!def) std::cerr << render_error(def.error());
//   def->spec.event.args[0].code;   // the compiled fetch program
#ifndef DPROBE_LANG_DEFINITION_H_
#define DPROBE_LANG_DEFINITION_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/isa.h"
#include "base/result.h"
#include "lang/probe_error.h"
#include "lang/sdt_point.h"
#include "lang/source_place.h"
#include "trace/event.h"

namespace dprobe::lang {

inline constexpr std::string_view kDefaultGroup = "dprobes";
inline constexpr std::string_view kEventProbeGroup = "eprobes";

struct ParseOptions {
  arch::Isa isa = arch::host_isa();
};

struct Definition {
  enum class Kind : uint8_t { kAdd, kRemove };
  Kind kind = Kind::kAdd;

  // kAdd: the compiled probe.
  trace::ProbeSpec spec;
  bool event_named = false;  // EVENT was written, not made by the default rule
  bool wildcard = false;     // SYM holds '*' or '?': expands to many probes
  bool expanded = false;     // one of a wildcard's probes: a refusal is summarized
  // A point named by source (FUNC:RLN, SRC:ALN, FUNC@SRC): the DWARF gives
  // its addresses, and the target becomes SYM+OFFS (or OBJ:0xADDR) then.
  std::optional<SourcePlace> source;
  // A point the program was compiled with (%sdt_PROVIDER:NAME): its notes
  // give its sites and its $argN (cli/plan/sdt_points.h).
  std::optional<SdtPoint> sdt;
  // The link-time address the DWARF was read at, once resolved: a source
  // place's, and any probe's with source variables (past the prologue).
  uint64_t link_address = 0;

  // kRemove: the events to remove; an empty part matches every name.
  std::string remove_group;
  std::string remove_event;

  // Where things are, for errors reported after parsing.
  std::string command;              // the words joined by single spaces
  size_t event_column = 0;          // the event name, or the header word
  size_t target_column = 0;         // the target word
  size_t symbol_column = 0;         // SYM (or the address) inside the target word
  std::vector<size_t> arg_columns;  // each fetch argument's word
};

Result<Definition, ProbeError> parse_definition(std::string_view line,
                                                const ParseOptions& options = {});

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_DEFINITION_H_
