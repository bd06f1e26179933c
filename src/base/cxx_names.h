// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The parts of a C++ function name as the demangler prints it, or as a user
// writes it in a probe target: an optional return type (template functions
// have one), the qualified name, and the parameter list with the function's
// qualifiers.
//
//   split_cxx_name("int ns::add<int>(int, int)");
//       // {.qualified = "ns::add<int>", .params = "(int, int)"}
//   split_cxx_name("ns::Klass::method");  // {"ns::Klass::method", ""}
//   unqualified_name("ns::Klass<int>::get"); // "get"
//   cxx_match_key("ns::f(int, double)");  // "ns::f(int,double)"
#ifndef DPROBE_BASE_CXX_NAMES_H_
#define DPROBE_BASE_CXX_NAMES_H_

#include <string>
#include <string_view>

namespace dprobe {

// A probe target in C++ source form rather than a linker symbol: it holds
// "::" or a parameter list. Mangled and C names hold neither.
bool is_cxx_name(std::string_view name);

struct CxxName {
  std::string_view qualified;  // "ns::Klass::method", no return type
  std::string_view params;     // "(int) const", or empty when none was given
};
// Also drops the " [clone .cold]" tails GCC's outlined parts demangle with.
CxxName split_cxx_name(std::string_view name);

// The last component of a qualified name without its template arguments:
// "ns::Klass<int>::method" -> "method", "ns::operator<" -> "operator<".
std::string_view unqualified_name(std::string_view qualified);

// The text with every space removed: "f(int, char const*)" and the
// "f(int,char const *)" a user may type compare equal.
std::string cxx_match_key(std::string_view text);

// A '*' or '?' glob outside brackets and operator names: "ns::*" is one,
// "ns::f(char const*)", "ns::g<int*>" and "ns::operator*" are not.
bool cxx_has_wildcard(std::string_view name);

// Counts the '(' and '<' (outside operator names) not yet closed: > 0 while
// a target is cut inside its parameter or template argument list.
int cxx_open_brackets(std::string_view text);

}  // namespace dprobe

#endif  // DPROBE_BASE_CXX_NAMES_H_
