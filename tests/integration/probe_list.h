// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What `dprobe run/attach --probes` says of each probe, on stderr, in the
// shape of the kernel's kprobes/list:
//   "00007f3a2c8a1120  malloc+0x0/0x317  [OPTIMIZED]"
//   "00007f3a2c8e8e90  opendir+0x0/0x31  [BREAKPOINT: cannot displace jz at 0x...]"
//
//   const std::map<ProbeSite, std::string> states = parse_probe_list(run.err);
//   states.at({"malloc", 0})   // "[OPTIMIZED]"
#ifndef DPROBE_TESTS_INTEGRATION_PROBE_LIST_H_
#define DPROBE_TESTS_INTEGRATION_PROBE_LIST_H_

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace dprobe::integration {

using ProbeSite = std::pair<std::string, uint64_t>;  // symbol, offset

inline constexpr std::string_view kOptimized = "[OPTIMIZED]";

// The bracketed state of every probe listed, by symbol and offset; other
// lines of `err` are skipped.
inline std::map<ProbeSite, std::string> parse_probe_list(const std::string& err) {
  std::map<ProbeSite, std::string> states;
  std::istringstream lines(err);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t name = line.find("  ");
    if (name != 16 || line.find_first_not_of("0123456789abcdef") != 16) continue;
    const size_t plus = line.find("+0x", name);
    const size_t slash = line.find('/', plus);
    const size_t bracket = line.find("  [", slash);
    if (plus == std::string::npos || slash == std::string::npos || bracket == std::string::npos)
      continue;
    const std::string symbol = line.substr(name + 2, plus - name - 2);
    const uint64_t offset = std::stoull(line.substr(plus + 3, slash - plus - 3), nullptr, 16);
    states[{symbol, offset}] = line.substr(bracket + 2);
  }
  return states;
}

}  // namespace dprobe::integration

#endif  // DPROBE_TESTS_INTEGRATION_PROBE_LIST_H_
