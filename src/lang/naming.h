// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Default event names, by the kernel's rules: p_<sym>_<off> and
// r_<sym>_<off> for symbols (kprobes), p_0x<addr> for addresses, and
// p_<object>_0x<offset> for object offsets (uprobes, which keep the object's
// basename up to its first '.', '-' or '_'). Characters that cannot be in a
// C identifier become '_'; names are cut to the longest the kernel allows.
// A C++ name (lang/target.h) gives its unqualified name and the words of
// its parameter list, as perf probe names C++ events by the function:
// "ns::Klass::method(int)" -> p_method_int_0, "ns::f" -> p_f_0.
//
//   default_event_name(point);  // "p_malloc_0"
#ifndef DPROBE_LANG_NAMING_H_
#define DPROBE_LANG_NAMING_H_

#include <string>
#include <string_view>

#include "core/probe_point.h"
#include "lang/source_place.h"

namespace dprobe::lang {

std::string default_event_name(const core::ProbePoint& point);
std::string sanitize_event_name(std::string_view name);
// A point named by source, as perf probe names it: p_visit_L3 for
// visit:3, p_prog_L42 for prog.c:42, p_visit_0 for visit@prog.c.
std::string source_event_name(const core::ProbePoint& point, const SourcePlace& place);
// "method_int" for "ns::Klass::method(int)": runs of other characters
// become one '_'.
std::string cxx_event_stem(std::string_view name);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_NAMING_H_
