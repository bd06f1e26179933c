// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/arm_errors.h"

#include <sstream>

#include "cli/output/terminal_text.h"

namespace dprobe::cli {
namespace {

// A summary names this many functions per reason, then counts the rest.
constexpr size_t kNamesShown = 6;

std::string wildcard_key(const lang::DefinitionSite& site) {
  return site.origin.empty() ? site.command : site.origin + ": " + site.command;
}

void render_names(std::ostream& out, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size() && i < kNamesShown; ++i) {
    out << (i ? ", " : " ") << names[i];
  }
  if (names.size() > kNamesShown) out << " and " << names.size() - kNamesShown << " more";
}

}  // namespace

lang::ErrorCode error_code_for(arch::ArmStatus status) {
  switch (status) {
    case arch::ArmStatus::kNotBoundary:
      return lang::ErrorCode::BAD_INSN_BNDRY;
    case arch::ArmStatus::kRejected:
      return lang::ErrorCode::BAD_INSN;
    case arch::ArmStatus::kBlacklisted:
      return lang::ErrorCode::BLACKLISTED;
    case arch::ArmStatus::kNoSlot:
      return lang::ErrorCode::NO_OOL_SLOT;
    case arch::ArmStatus::kNotMapped:
      return lang::ErrorCode::NOT_TEXT_ADDR;
    case arch::ArmStatus::kArmed:
    case arch::ArmStatus::kPatchFailed:
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

RefusalReport::RefusalReport(const lang::DefinitionSet& set) : set_(set) {
  for (size_t i = 0; i < set.specs().size(); ++i) index_of_[set.specs()[i].event.id] = i;
}

void RefusalReport::add(const protocol::ArmResult& result) {
  if (result.status == arch::ArmStatus::kArmed) return;
  const auto found = index_of_.find(result.event_id);
  if (found == index_of_.end()) return;
  const lang::DefinitionSite& site = set_.sites()[found->second];
  if (!site.expanded) {
    errors_.push_back(arm_error(result, site));
    return;
  }
  const std::string key = wildcard_key(site);
  Wildcard& wildcard = wildcards_[key];
  if (wildcard.functions == 0) {
    for (const lang::DefinitionSite& other : set_.sites()) {
      if (other.expanded && wildcard_key(other) == key) ++wildcard.functions;
    }
  }
  wildcard.refused[error_code_for(result.status)].push_back(
      set_.specs()[found->second].point.target.symbol);
}

std::string RefusalReport::render() const {
  std::ostringstream out;
  for (const lang::ProbeError& error : errors_) out << render_error_safely(error);
  for (const auto& [key, wildcard] : wildcards_) {
    size_t refused = 0;
    for (const auto& [code, names] : wildcard.refused) refused += names.size();
    out << "dprobe: " << printable(key) << ": " << refused << " of " << wildcard.functions
        << " functions not probed:\n";
    for (const auto& [code, names] : wildcard.refused) {
      out << "  " << names.size() << " " << lang::error_message(code) << " ("
          << lang::error_name(code) << "):";
      render_names(out, names);
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace dprobe::cli
