// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A subcommand as main() sees it. Each subcommand adds itself and its
// options to the command line (a CLI11 app) in its own file, beside what
// it does, and hands back what runs when the parse chooses it; main() only
// adds them, parses and runs the one chosen. The values its options are
// parsed into are owned by `run`, so they live as long as the Subcommand.
//
//   std::vector<Subcommand> subcommands{add_check_command(app), add_list_command(app)};
//   app.parse(argc, argv);
//   for (const Subcommand& sub : subcommands) if (sub.command->parsed()) return sub.run();
#ifndef DPROBE_CLI_COMMAND_SUBCOMMAND_H_
#define DPROBE_CLI_COMMAND_SUBCOMMAND_H_

#include <functional>

// Set by the build: 0 where there is no probe engine for the target ISA
// (all but x86_64 and arm64). The subcommands that trace (run, attach,
// record) are on the command line all the same, and say so.
#ifndef DPROBE_ENGINE
#define DPROBE_ENGINE 1
#endif

namespace CLI {
class App;
}  // namespace CLI

namespace dprobe::cli {

struct Subcommand {
  const CLI::App* command = nullptr;  // what CLI11 parses it into
  std::function<int()> run;           // its exit status, once the parse chose it
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_SUBCOMMAND_H_
