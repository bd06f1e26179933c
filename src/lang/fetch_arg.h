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

struct ArgContext {
  arch::Isa isa;
  bool is_return;
  // $argN needs the calling convention's view of the registers, which holds
  // at a function's first instruction (and, saved there, for its return).
  bool at_function_entry;
};

// `previous` are the arguments before this one, whose names it may not
// take; their count names an unnamed argument: arg<N+1>.
Parsed<trace::EventArg> parse_fetch_arg(std::string_view word, size_t column,
                                        std::span<const trace::EventArg> previous,
                                        const ArgContext& context);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_FETCH_ARG_H_
