// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The hist triggers' tables (--trigger), read back at the end: every ring
// slot's table of each trigger, in every traced process, merged into one
// hist per trigger and printed in the kernel's hist file layout. A process
// is read when its session ends (its memory goes with it) or at the end;
// the addresses its hists will print (.sym keys, stack frames) are named
// then, while its objects are known.
//
//   HistCollector hists;
//   hists.add(session.memory(), set, session.symbolizer());   // per process
//   out << hists.render();
#ifndef DPROBE_CLI_OUTPUT_HIST_COLLECTOR_H_
#define DPROBE_CLI_OUTPUT_HIST_COLLECTOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lang/definition_set.h"
#include "trace/hist_spec.h"
#include "trace/hit/hist_table.h"
#include "trace/symbolizer.h"
#include "trace/trace_memory.h"

namespace dprobe::cli {

// Names kept from the processes' own symbolizers, for printing after they
// are gone.
class KeptSymbols : public trace::Symbolizer {
 public:
  void keep(uint64_t address, const trace::Symbolizer& from);
  std::optional<trace::SymbolHit> symbolize(uint64_t address) const override;
  std::string_view object_name(uint64_t address) const override;

 private:
  struct Name {
    bool known = false;
    std::string name;
    uint64_t offset = 0;
    uint64_t size = 0;
    std::string object;
  };
  std::map<uint64_t, Name> names_;
};

class HistCollector {
 public:
  // Adds the tables of every trigger of `set`'s events in `memory`.
  void add(const trace::TraceMemory& memory, const lang::DefinitionSet& set,
           const trace::Symbolizer& symbols);
  bool empty() const { return hists_.empty(); }
  // Every trigger's hist, in the order first seen, one after another.
  std::string render() const;

 private:
  struct Hist {
    std::string event;  // GRP/EVENT
    trace::HistSpec spec;
    trace::HistResult result;
  };
  Hist& hist_for(const std::string& event, const trace::HistSpec& spec);
  void keep_names(const trace::HistSpec& spec, const trace::HistResult& result,
                  const trace::Symbolizer& symbols);

  std::vector<Hist> hists_;
  KeptSymbols symbols_;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_HIST_COLLECTOR_H_
