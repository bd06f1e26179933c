// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe list -V PLACE -x BINARY`: the variables a probe at PLACE can name
// (any probe point: FUNC, FUNC:RLN, SRC:ALN, FUNC@SRC, SYM+OFFS), with their
// types, at each address the place becomes, as `perf probe -V` lists them:
//
//   Available variables at visit
//           @<visit+15>
//                   struct node *   it
//                   int     depth
//                   int     score   (optimized out here)
#ifndef DPROBE_CLI_COMMAND_VARIABLE_LISTING_H_
#define DPROBE_CLI_COMMAND_VARIABLE_LISTING_H_

#include <iosfwd>

#include "cli/command/list_command.h"

namespace dprobe::cli {

// options.variables_place in options.executable; 0, or 2 after an error.
int run_list_variables(const ListOptions& options, std::ostream& out, std::ostream& errors);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_VARIABLE_LISTING_H_
