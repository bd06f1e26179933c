// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/arm_errors.h"

#include <sstream>

namespace dprobe::cli {

lang::ErrorCode error_code_for(protocol::ArmStatus status) {
  switch (status) {
    case protocol::ArmStatus::kNotBoundary:
      return lang::ErrorCode::BAD_INSN_BNDRY;
    case protocol::ArmStatus::kRejected:
      return lang::ErrorCode::BAD_INSN;
    case protocol::ArmStatus::kBlacklisted:
      return lang::ErrorCode::BLACKLISTED;
    case protocol::ArmStatus::kNoSlot:
      return lang::ErrorCode::NO_OOL_SLOT;
    case protocol::ArmStatus::kNotMapped:
      return lang::ErrorCode::NOT_TEXT_ADDR;
    case protocol::ArmStatus::kArmed:
    case protocol::ArmStatus::kPatchFailed:
      break;
  }
  return lang::ErrorCode::FAIL_REG_PROBE;
}

// The agent's message: a first line of reason, then maybe a listing.
lang::ProbeError arm_error(const protocol::ArmResult& result, const lang::DefinitionSite& site) {
  lang::ProbeError error{
      error_code_for(result.status), site.command, site.symbol_column, {}, {}, site.origin};
  std::istringstream lines(result.message);
  std::string line;
  if (std::getline(lines, line)) error.detail = line;
  while (std::getline(lines, line)) error.notes.push_back(line);
  return error;
}

}  // namespace dprobe::cli
