// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the agent could not arm, reported like any bad definition: the
// definition, a caret under its probe point, the code, and the agent's
// reason (and, for a probe inside an instruction, the listing) below.
// The functions a wildcard matched are not errors one by one: those the
// agent refuses are counted in one summary per wildcard, like perf probe's.
//
//   RefusalReport refusals(set);
//   for (const auto& result : report.results) refusals.add(result);
//   errors << refusals.render();
//   if (refusals.fatal()) ...   // a probe written on its own was refused
#ifndef DPROBE_CLI_PLAN_ARM_ERRORS_H_
#define DPROBE_CLI_PLAN_ARM_ERRORS_H_

#include <map>
#include <string>
#include <vector>

#include "lang/definition_set.h"
#include "lang/probe_error.h"
#include "protocol/messages.h"

namespace dprobe::cli {

lang::ErrorCode error_code_for(arch::ArmStatus status);
lang::ProbeError arm_error(const protocol::ArmResult& result, const lang::DefinitionSite& site);

class RefusalReport {
 public:
  explicit RefusalReport(const lang::DefinitionSet& set);

  void add(const protocol::ArmResult& result);
  bool fatal() const { return !errors_.empty(); }
  std::string render() const;

 private:
  // The refusals of one wildcard, by error code: the functions refused.
  struct Wildcard {
    std::map<lang::ErrorCode, std::vector<std::string>> refused;
    size_t functions = 0;  // how many the wildcard matched
  };

  const lang::DefinitionSet& set_;
  std::map<uint16_t, size_t> index_of_;  // event id -> definition index
  std::vector<lang::ProbeError> errors_;
  std::map<std::string, Wildcard> wildcards_;  // by origin and command
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_ARM_ERRORS_H_
