// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C++ names in the symbol table: demangled once when the table is built,
// found by source name (one overload by its parameter list, every overload
// without one), matched by globs, and listed as candidates.
#include "base/cxx_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "symbols/lookup.h"
#include "symbols/symbol_table.h"

namespace dprobe::symbols {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> shown(const std::vector<const FunctionSymbol*>& functions) {
  std::vector<std::string> out;
  for (const FunctionSymbol* f : functions) out.emplace_back(f->display_name());
  return out;
}

SymbolTable cxx_table() {
  return SymbolTable({
      {"main", 0x1000, 0x10, false, true},
      {"_ZN2ns5Klass6methodEi", 0x1100, 0x10, false, true},       // ns::Klass::method(int)
      {"_ZN2ns5Klass6methodEd", 0x1200, 0x10, false, true},       // ns::Klass::method(double)
      {"_ZNK2ns5Klass5valueEv", 0x1300, 0x10, false, true},       // ns::Klass::value() const
      {"_ZN2ns5twiceIiEET_S1_", 0x1400, 0x10, false, true},       // int ns::twice<int>(int)
      {"_ZN2nsplERKNS_3VecES2_", 0x1500, 0x10, false, true},      // ns::operator+(...)
      {"_ZN2ns1fEi", 0x1600, 0x10, false, true},                  // ns::f(int)
      {"_ZN2ns1fEi.cold", 0x1700, 0x10, false, false},            // ns::f(int) [clone .cold]
      {"_ZThn8_N2ns5Klass6methodEi", 0x1800, 0x10, false, true},  // a thunk
      {"_Zbogus", 0x1900, 0x10, false, true},                     // not demangled
  });
}

TEST(CxxNames, TheTableDemanglesOnceAndKeepsTheLinkerName) {
  const SymbolTable table = cxx_table();
  const auto hit = table.symbolize(0x1104);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->function->name, "_ZN2ns5Klass6methodEi");
  EXPECT_EQ(hit->function->demangled, "ns::Klass::method(int)");
  EXPECT_EQ(hit->function->display_name(), "ns::Klass::method(int)");
  EXPECT_EQ(table.symbolize(0x1000)->function->display_name(), "main");
  EXPECT_EQ(table.symbolize(0x1900)->function->display_name(), "_Zbogus");
  EXPECT_EQ(table.symbolize(0x1700)->function->display_name(), "ns::f(int) [clone .cold]");
}

TEST(CxxNames, ParameterListsTellOverloadsApart) {
  const SymbolTable table = cxx_table();
  EXPECT_THAT(shown(table.find_source("ns::Klass::method(int)")),
              ElementsAre("ns::Klass::method(int)"));
  EXPECT_THAT(shown(table.find_source("ns::Klass::method( double )")),
              ElementsAre("ns::Klass::method(double)"));
  EXPECT_THAT(shown(table.find_source("ns::Klass::method")),
              ElementsAre("ns::Klass::method(int)", "ns::Klass::method(double)"));
  EXPECT_THAT(shown(table.find_source("ns::Klass::value() const")),
              ElementsAre("ns::Klass::value() const"));
  EXPECT_TRUE(table.find_source("ns::Klass::method(long)").empty());
  EXPECT_TRUE(table.find_source("Klass::method").empty());  // names are whole
}

TEST(CxxNames, TemplatesOperatorsClonesAndThunks) {
  const SymbolTable table = cxx_table();
  EXPECT_THAT(shown(table.find_source("ns::twice<int>(int)")),
              ElementsAre("int ns::twice<int>(int)"));
  EXPECT_THAT(shown(table.find_source("int ns::twice<int>(int)")),
              ElementsAre("int ns::twice<int>(int)"));
  EXPECT_THAT(shown(table.find_source("ns::twice<int>")), ElementsAre("int ns::twice<int>(int)"));
  EXPECT_THAT(shown(table.find_source("ns::operator+(ns::Vec const&,ns::Vec const&)")),
              ElementsAre("ns::operator+(ns::Vec const&, ns::Vec const&)"));
  // The cold part and the thunk are not found by the source name.
  EXPECT_THAT(shown(table.find_source("ns::f")), ElementsAre("ns::f(int)"));
}

TEST(CxxNames, LookupTakesTheLinkerNameFirst) {
  const SymbolTable table = cxx_table();
  EXPECT_THAT(shown(table.lookup("_ZN2ns1fEi")), ElementsAre("ns::f(int)"));
  EXPECT_THAT(shown(table.lookup("ns::f(int)")), ElementsAre("ns::f(int)"));
  EXPECT_THAT(shown(table.lookup("main")), ElementsAre("main"));
}

TEST(CxxNames, GlobsMatchLinkerAndSourceNames) {
  const SymbolTable table = cxx_table();
  EXPECT_THAT(
      shown(table.match("ns::Klass::*")),
      ElementsAre("ns::Klass::method(double)", "ns::Klass::method(int)", "ns::Klass::value() const",
                  "non-virtual thunk to ns::Klass::method(int)"));
  EXPECT_THAT(shown(table.match("ns::tw*")), ElementsAre("int ns::twice<int>(int)"));
  EXPECT_THAT(shown(table.match("_ZN2ns1fEi*")),
              ElementsAre("ns::f(int)", "ns::f(int) [clone .cold]"));
  EXPECT_THAT(shown(table.match("m*")), ElementsAre("main"));
}

// Of the names at one address, the one an event and a trace line take: a
// global name, then a default version over a compatibility one, then the
// fewest leading underscores.
TEST(Aliases, TheBestNameOfAnAddress) {
  const FunctionSymbol free_default{"free", 0x2000, 0x40, false, true};
  const FunctionSymbol cfree_compat{"cfree", 0x2000, 0x40, false, true, true};
  const FunctionSymbol libc_free{"__libc_free", 0x2000, 0x40, false, true};
  const FunctionSymbol local{"free_local", 0x2000, 0x40, false, false};
  EXPECT_TRUE(is_better_alias(free_default, cfree_compat));
  EXPECT_FALSE(is_better_alias(cfree_compat, free_default));
  EXPECT_TRUE(is_better_alias(free_default, libc_free));
  EXPECT_TRUE(is_better_alias(libc_free, cfree_compat)) << "a default version first";
  EXPECT_TRUE(is_better_alias(cfree_compat, local)) << "a global name first";
  const SymbolTable table({libc_free, cfree_compat, free_default, local});
  const auto where = table.symbolize(0x2010);
  ASSERT_TRUE(where);
  EXPECT_EQ(where->function->name, "free");
  EXPECT_EQ(where->offset, 0x10u);
}

TEST(CxxNames, ResolveListsOverloadsAsCandidates) {
  const SymbolTable table = cxx_table();
  const auto hits = table.find_source("ns::Klass::method");
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(candidate_line(*hits[0]),
            "ns::Klass::method(int) [_ZN2ns5Klass6methodEi@0x1100 (size 0x10)]");
  EXPECT_EQ(candidate_line(*table.lookup("main")[0]), "main@0x1000 (size 0x10)");
}

TEST(CxxNameParts, SplitsReturnTypeNameAndParameters) {
  const CxxName plain = split_cxx_name("ns::Klass::method(int) const");
  EXPECT_EQ(plain.qualified, "ns::Klass::method");
  EXPECT_EQ(plain.params, "(int) const");
  const CxxName templ = split_cxx_name("std::vector<int, std::allocator<int> > ns::g<int>(int)");
  EXPECT_EQ(templ.qualified, "ns::g<int>");
  EXPECT_EQ(templ.params, "(int)");
  EXPECT_EQ(split_cxx_name("bool ns::operator<(ns::V const&, ns::V const&)").qualified,
            "ns::operator<");
  EXPECT_EQ(split_cxx_name("ns::K::operator()(int)").params, "(int)");
  EXPECT_EQ(split_cxx_name("ns::K::operator()").qualified, "ns::K::operator()");
  EXPECT_EQ(split_cxx_name("ns::K::operator int() const").qualified, "ns::K::operator int");
  EXPECT_EQ(split_cxx_name("operator new(unsigned long)").qualified, "operator new");
  EXPECT_EQ(split_cxx_name("(anonymous namespace)::f(int)").qualified, "(anonymous namespace)::f");
  EXPECT_EQ(split_cxx_name("f(int)::Local::get()").qualified, "f(int)::Local::get");
  EXPECT_EQ(split_cxx_name("ns::f(int) [clone .cold]").params, "(int)");
  EXPECT_EQ(split_cxx_name("ns::f").params, "");
}

TEST(CxxNameParts, UnqualifiedNamesAndKeys) {
  EXPECT_EQ(unqualified_name("ns::Klass<int>::method"), "method");
  EXPECT_EQ(unqualified_name("ns::twice<int>"), "twice");
  EXPECT_EQ(unqualified_name("ns::operator<"), "operator<");
  EXPECT_EQ(unqualified_name("ns::operator<< <int>"), "operator<<");
  EXPECT_EQ(unqualified_name("main"), "main");
  EXPECT_EQ(cxx_match_key("f(int, char const *)"), "f(int,charconst*)");
  EXPECT_TRUE(is_cxx_name("ns::f"));
  EXPECT_TRUE(is_cxx_name("f(int)"));
  EXPECT_FALSE(is_cxx_name("_ZN2ns1fEi"));
  EXPECT_EQ(cxx_open_brackets("ns::f(int,"), 1);
  EXPECT_EQ(cxx_open_brackets("ns::operator<(V"), 1);
  EXPECT_EQ(cxx_open_brackets("ns::g<std::pair<int,"), 2);
  EXPECT_EQ(cxx_open_brackets("ns::f(int, double)"), 0);
}

}  // namespace
}  // namespace dprobe::symbols
