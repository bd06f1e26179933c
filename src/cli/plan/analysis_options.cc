// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/analysis_options.h"

#include <algorithm>
#include <memory>
#include <ostream>

#include "cli/output/terminal_text.h"
#include "lang/event_filter.h"
#include "lang/hist_trigger.h"
#include "trace/event_analysis.h"
#include "trace/hit/hist_table.h"
#include "trace/record_fields.h"

namespace dprobe::cli {
namespace {

// An option split at its event: "GRP/EVENT:REST" (or "EVENT:REST").
struct EventOption {
  std::string group;
  std::string event;
  std::string rest;
  size_t rest_column = 0;  // where REST starts in the option's text
};

EventOption split_option(const std::string& text, bool has_rest) {
  EventOption option;
  const size_t colon = has_rest ? text.find(':') : std::string::npos;
  const std::string name = text.substr(0, colon);
  if (colon != std::string::npos) {
    option.rest = text.substr(colon + 1);
    option.rest_column = colon + 1;
  }
  const size_t slash = name.find('/');
  option.group = slash == std::string::npos ? "" : name.substr(0, slash);
  option.event = slash == std::string::npos ? name : name.substr(slash + 1);
  return option;
}

// The indices of the events the option names (several where only EVENT
// is given and groups share it).
std::vector<size_t> matching_events(const EventOption& option, const lang::DefinitionSet& set) {
  std::vector<size_t> found;
  for (size_t i = 0; i < set.specs().size(); ++i) {
    const trace::EventDesc& event = set.specs()[i].event;
    if (event.name == option.event && (option.group.empty() || event.group == option.group)) {
      found.push_back(i);
    }
  }
  return found;
}

// The kernel's error_log shape: the message, the text, a caret.
void report(std::ostream* errors, const std::string& message, const std::string& what,
            const std::string& text, size_t column) {
  if (errors == nullptr) return;
  constexpr std::string_view kLabel = "  Command: ";
  *errors << "dprobe: error: " << printable(message) << " (" << what << ")\n"
          << kLabel << printable(text) << "\n"
          << std::string(kLabel.size() + column, ' ') << "^\n";
}

// The event's analysis, a copy to change: events share nothing.
trace::EventAnalysis& analysis_of(trace::EventDesc& event) {
  auto copy = event.analysis ? std::make_shared<trace::EventAnalysis>(*event.analysis)
                             : std::make_shared<trace::EventAnalysis>();
  trace::EventAnalysis& analysis = *copy;
  event.analysis = std::move(copy);
  return analysis;
}

// Each kind of option, applied to one event; false (reported) if it does
// not compile for that event.
using Apply = bool (*)(const std::string& text, const EventOption& option, trace::EventDesc& event,
                       std::ostream* errors);

bool apply_filter(const std::string& text, const EventOption& option, trace::EventDesc& event,
                  std::ostream* errors) {
  auto program = lang::compile_filter(option.rest, trace::record_fields(event));
  if (!program) {
    report(errors, program.error().message, "--filter", text,
           option.rest_column + program.error().column);
    return false;
  }
  analysis_of(event).filter = std::move(*program);
  return true;
}

bool apply_trigger(const std::string& text, const EventOption& option, trace::EventDesc& event,
                   std::ostream* errors) {
  const auto fields = trace::record_fields(event);
  auto spec = lang::parse_hist_trigger(option.rest, fields);
  if (!spec) {
    report(errors, spec.error().message, "--trigger", text,
           option.rest_column + spec.error().column);
    return false;
  }
  trace::HistTrigger hist;
  if (!spec->filter.empty()) {
    auto program = lang::compile_filter(spec->filter, fields);
    if (!program) {
      const size_t at = option.rest.rfind(spec->filter);
      report(errors, program.error().message, "--trigger", text,
             option.rest_column + (at == std::string::npos ? 0 : at) + program.error().column);
      return false;
    }
    hist.filter = std::move(*program);
  }
  hist.spec = std::move(*spec);
  hist.table_bytes = trace::hist_table_bytes(hist.spec);
  analysis_of(event).hists.push_back(std::move(hist));
  return true;
}

bool apply_stacktrace(const std::string&, const EventOption&, trace::EventDesc& event,
                      std::ostream*) {
  trace::add_stack_field(event);
  analysis_of(event);  // the agent looks at events with an analysis only
  return true;
}

bool apply_all(const std::vector<std::string>& texts, bool has_rest, const char* what, Apply apply,
               lang::DefinitionSet& set, std::ostream* errors) {
  bool ok = true;
  for (const std::string& text : texts) {
    const EventOption option = split_option(text, has_rest);
    const std::vector<size_t> events = matching_events(option, set);
    if (events.empty() || (has_rest && option.rest.empty())) {
      if (errors != nullptr) {
        *errors << "dprobe: error: " << what << " " << printable(text)
                << (events.empty() ? ": no such event" : ": nothing after the event") << "\n";
        ok = false;
      }
      continue;
    }
    for (size_t index : events) {
      trace::EventDesc& event = set.event_at(index);
      if (!apply(text, option, event, errors)) ok = false;
    }
  }
  return ok;
}

// Gives every hist table its place in a slot's tables, event by event.
void place_hist_tables(lang::DefinitionSet& set) {
  uint64_t offset = 0;
  for (size_t i = 0; i < set.specs().size(); ++i) {
    trace::EventDesc& event = set.event_at(i);
    if (!event.analysis || event.analysis->hists.empty()) continue;
    trace::EventAnalysis& analysis = analysis_of(event);
    for (trace::HistTrigger& hist : analysis.hists) {
      hist.table_offset = offset;
      offset += (hist.table_bytes + 63) & ~uint64_t{63};
    }
  }
}

}  // namespace

bool apply_analysis(const AnalysisSources& sources, lang::DefinitionSet& set,
                    std::ostream* errors) {
  // The stack field first: it changes the record's layout, which the
  // filters and triggers then see whole.
  bool ok = apply_all(sources.stacktraces, false, "--stacktrace", apply_stacktrace, set, errors);
  ok = apply_all(sources.filters, true, "--filter", apply_filter, set, errors) && ok;
  ok = apply_all(sources.triggers, true, "--trigger", apply_trigger, set, errors) && ok;
  place_hist_tables(set);
  return ok;
}

uint64_t hist_slot_bytes(const lang::DefinitionSet& set) {
  uint64_t end = 0;
  for (const trace::ProbeSpec& spec : set.specs()) {
    if (!spec.event.analysis) continue;
    for (const trace::HistTrigger& hist : spec.event.analysis->hists) {
      end = std::max(end, hist.table_offset + hist.table_bytes);
    }
  }
  return end;
}

}  // namespace dprobe::cli
