// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C++ names as source (issue 14, item 5): targets written as the demangler
// prints them, overloads told apart by their parameter list, a name without
// one listing its overloads, and demangled names in trace lines, stack
// traces and `dprobe list`. tests/programs/cxx_names.cc is the program.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class CxxNames : public ::testing::TestWithParam<const char*> {
 protected:
  std::string binary() const { return program(GetParam()); }
};

TEST_P(CxxNames, MethodByItsSourceNameShowsTheDemangledLocation) {
  const RunResult run =
      run_dprobe({"run", "-e", "p:app/m ns::Klass::method(int) x=%di", "--", binary(), "3"});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<TraceLine> hits = lines_of(parse_trace(run.out), "m");
  ASSERT_EQ(hits.size(), 3u) << run.out;
  for (const TraceLine& line : hits) {
    EXPECT_THAT(line.location, testing::StartsWith("ns::Klass::method(int)+0x0/0x")) << line;
  }
}

TEST_P(CxxNames, OverloadsAreToldApartByTheirParameterLists) {
  // Unnamed events: the default names come from the source names.
  const RunResult run = run_dprobe({"run", "-e", "p ns::f(int)", "-e", "p ns::f( double )", "-e",
                                    "r ns::twice<int>(int)", "--", binary(), "2"});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<TraceLine> trace = parse_trace(run.out);
  const std::vector<TraceLine> ints = lines_of(trace, "p_f_int_0");
  const std::vector<TraceLine> doubles = lines_of(trace, "p_f_double_0");
  const std::vector<TraceLine> twice = lines_of(trace, "r_twice_int_0");
  ASSERT_EQ(ints.size(), 2u) << run.out;
  ASSERT_EQ(doubles.size(), 2u) << run.out;
  ASSERT_EQ(twice.size(), 2u) << run.out;
  EXPECT_THAT(ints[0].location, testing::StartsWith("ns::f(int)+0x0/"));
  EXPECT_THAT(doubles[0].location, testing::StartsWith("ns::f(double)+0x0/"));
  EXPECT_THAT(twice[0].location, HasSubstr(" <- int ns::twice<int>(int)"));
}

TEST_P(CxxNames, ANameWithoutParametersListsTheOverloads) {
  const RunResult run = run_dprobe({"run", "-e", "p ns::Klass::method", "--", binary()});
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_THAT(run.err, AllOf(HasSubstr("NON_UNIQ_SYMBOL"), HasSubstr("ns::Klass::method(int) ["),
                             HasSubstr("ns::Klass::method(double) [")));
  EXPECT_EQ(run.out, "");
}

TEST_P(CxxNames, OperatorsWithSpacesAndObjectPrefixes) {
  const std::string object = std::string(GetParam());
  const RunResult run = run_dprobe(
      {"run", "-e", "p:app/plus " + object + ":ns::operator+(ns::Vec const&, ns::Vec const&)", "--",
       binary(), "2"});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<TraceLine> hits = lines_of(parse_trace(run.out), "plus");
  ASSERT_EQ(hits.size(), 2u) << run.out;
  EXPECT_THAT(hits[0].location,
              testing::StartsWith("ns::operator+(ns::Vec const&, ns::Vec const&)+0x0/"));
}

TEST_P(CxxNames, StackTracesShowSourceNames) {
  const RunResult run = run_dprobe(
      {"run", "--stacktrace", "app/h", "-e", "p:app/h ns::inner::helper", "--", binary(), "1"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(" => ns::inner::helper(long)+0x0/"));
}

TEST_P(CxxNames, WildcardsMatchSourceNames) {
  const RunResult run = run_dprobe({"run", "-e", "p ns::Klass::*", "--", binary(), "1"});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<TraceLine> trace = parse_trace(run.out);
  EXPECT_EQ(lines_of(trace, "p_method_int_0").size(), 1u) << run.out;
  EXPECT_EQ(lines_of(trace, "p_method_double_0").size(), 1u) << run.out;
}

TEST_P(CxxNames, ListShowsDemangledNames) {
  const RunResult run = run_dprobe({"list", binary() + ":ns::*"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(
      run.out,
      AllOf(HasSubstr(" ns::Klass::method(int)\n"), HasSubstr(" ns::Klass::method(double)\n"),
            HasSubstr(" ns::f(int)\n"), HasSubstr(" int ns::twice<int>(int)\n"),
            HasSubstr(" ns::operator+(ns::Vec const&, ns::Vec const&)\n"), Not(HasSubstr("_ZN"))));
  // The linker's names still find them.
  const RunResult mangled = run_dprobe({"list", binary() + ":_ZN2ns1fE*"});
  ASSERT_EQ(mangled.status, 0) << mangled.err;
  EXPECT_THAT(mangled.out, AllOf(HasSubstr(" ns::f(int)\n"), HasSubstr(" ns::f(double)\n")));
}

INSTANTIATE_TEST_SUITE_P(Levels, CxxNames, ::testing::Values("cxx_names_O0", "cxx_names_O2"));

}  // namespace
}  // namespace dprobe::integration
