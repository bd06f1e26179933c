// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A C++ name with spaces outside its brackets ('ns::C::f(int) const') is
// written in single quotes, as bpftrace takes it: read as one word, and
// printed back the same way. Only names that can be nothing else are
// quotable: a C++ name, printable, beginning as a name does, no quote,
// '%' or single ':' of its own (an object goes before the quotes:
// OBJ:'...', %return after them), brackets closed.
#ifndef DPROBE_LANG_QUOTED_NAME_H_
#define DPROBE_LANG_QUOTED_NAME_H_

#include <string_view>

namespace dprobe::lang {

bool quotable_name(std::string_view name);

// Whether `name` must be quoted to be read back as one word: quotable,
// with a space outside its parameter and template brackets.
bool needs_quotes(std::string_view name);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_QUOTED_NAME_H_
