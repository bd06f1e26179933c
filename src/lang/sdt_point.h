// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Probe points a program was compiled with (SystemTap's SDT, DTrace's
// USDT: <sys/sdt.h>'s DTRACE_PROBE), in perf probe's spelling:
//
//   [OBJ:]%sdt_PROVIDER:NAME      every site of PROVIDER:NAME in OBJ
//
// PROVIDER and NAME may hold '*' and '?'. Such a point's $argN are the
// note's operands at each site (cli/plan/sdt_points.cc); its event is
// sdt_PROVIDER/NAME unless named.
//
//   auto sdt = parse_sdt_point("/usr/bin/python3.11:%sdt_python:line", 9);
//   (*sdt)->provider == "python", (*sdt)->name == "line"
#ifndef DPROBE_LANG_SDT_POINT_H_
#define DPROBE_LANG_SDT_POINT_H_

#include <optional>
#include <string>
#include <string_view>

#include "lang/parse_fault.h"

namespace dprobe::lang {

inline constexpr std::string_view kSdtPrefix = "%sdt_";

struct SdtPoint {
  std::string provider;
  std::string name;
  bool group_written = false;  // GRP was written: not sdt_PROVIDER
};

struct ParsedSdtPoint {
  std::string object;  // OBJ, empty for the executable
  SdtPoint point;
  size_t point_column = 0;  // where "%sdt_" starts
};

// nullopt when the word names no SDT point; a fault when it names one
// badly (no provider, no name, a %return).
std::optional<Parsed<ParsedSdtPoint>> parse_sdt_point(std::string_view word, size_t column);

// "%sdt_PROVIDER:NAME", as written.
std::string format_sdt_point(const SdtPoint& point);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_SDT_POINT_H_
