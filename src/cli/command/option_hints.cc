// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/option_hints.h"

#include <CLI/CLI.hpp>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "cli/output/terminal_text.h"

namespace dprobe::cli {
namespace {

constexpr size_t kNear = 2;

// The closest of `names` to `word`, within kNear edits; "" for none.
std::string closest(std::string_view word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = kNear + 1;
  for (const std::string& name : names) {
    const size_t distance = edit_distance(word, name, kNear);
    if (distance < best_distance && distance > 0) {
      best = name;
      best_distance = distance;
    }
  }
  return best;
}

std::vector<std::string> long_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back(name);
  }
  return names;
}

CLI::App* subcommand_named(CLI::App& app, const std::string& name) {
  for (CLI::App* command : app.get_subcommands({})) {
    if (command->get_name() == name) return command;
  }
  return nullptr;
}

}  // namespace

std::string option_hint(CLI::App& app, int argc, char** argv) {
  if (argc < 2) return {};
  const std::string first = argv[1];
  CLI::App* command = subcommand_named(app, first);
  if (command == nullptr) {
    std::vector<std::string> names;
    for (const CLI::App* each : app.get_subcommands({})) names.push_back(each->get_name());
    const std::string near = first.starts_with("-") ? "" : closest(first, names);
    return near.empty() ? "" : "  did you mean " + near + "?\n";
  }
  const std::vector<std::string> names = long_names(*command);
  std::string hints;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--") || arg.size() < 3) continue;
    const std::string_view name = arg.substr(
        2, arg.find('=') == std::string_view::npos ? std::string_view::npos : arg.find('=') - 2);
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (const std::string near = closest(name, names); !near.empty()) {
      hints += "  " + printable(std::string(arg)) + ": did you mean --" + near + "?\n";
    }
  }
  return hints;
}

}  // namespace dprobe::cli
