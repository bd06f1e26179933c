// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One fetch argument, `[NAME=]FETCHARG[:TYPE]`, compiled into a fetch
// program (trace/fetch.h). Errors carry the column of the offending
// character within the command.
//
//   ArgContext ctx{arch::Isa::kX86_64, /*is_return=*/false, /*at_entry=*/true};
//   auto arg = parse_fetch_arg("size=%di:u64", /*column=*/24, /*previous=*/{}, ctx);
#ifndef DPROBE_LANG_FETCH_ARG_H_
#define DPROBE_LANG_FETCH_ARG_H_

#include <span>
#include <string_view>

#include "arch/isa.h"
#include "lang/parse_fault.h"
#include "trace/event.h"

namespace dprobe::lang {

// A field of the event an event probe (e:) is attached to, which its
// arguments name as $FIELD: a system call's argument, or its return value,
// is a register at the moment of the call.
struct EventField {
  std::string_view name;
  uint16_t reg;  // the saved-frame slot (arch::register_index)
};

struct ArgContext {
  arch::Isa isa;
  bool is_return;
  // $argN needs the calling convention's view of the registers, which holds
  // at a function's first instruction (and, saved there, for its return).
  bool at_function_entry;
  // Event probes: the attached event's fields. Empty otherwise, where a
  // $NAME that is not a variable of the language is BAD_VAR.
  std::span<const EventField> fields = {};
  bool event_probe = false;
  // An SDT point: $argN are its note's operands, wherever it is.
  bool sdt = false;
};

// `previous` are the arguments before this one, whose names it may not
// take; their count names an unnamed argument: arg<N+1>.
Parsed<trace::EventArg> parse_fetch_arg(std::string_view word, size_t column,
                                        std::span<const trace::EventArg> previous,
                                        const ArgContext& context);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_FETCH_ARG_H_
