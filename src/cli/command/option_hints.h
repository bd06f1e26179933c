// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// "did you mean" for a command line CLI11 refused: a subcommand or a long
// option one or two characters off one dprobe has.
//
//   std::cerr << option_hint(app, argc, argv);   // "  did you mean --duration?\n"
#ifndef DPROBE_CLI_COMMAND_OPTION_HINTS_H_
#define DPROBE_CLI_COMMAND_OPTION_HINTS_H_

#include <string>

namespace CLI {
class App;
}

namespace dprobe::cli {

// Lines for each word before `--` that names no subcommand or option but
// is near one; "" when none is.
std::string option_hint(CLI::App& app, int argc, char** argv);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_OPTION_HINTS_H_
