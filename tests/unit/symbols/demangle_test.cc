// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// demangle_name: C++ by the C++ runtime, Rust by libiberty, legacy names
// without rustc's hash; the names are rustc's own (1.63 and 1.95, both
// manglings) and what rustc-demangle prints for them in its alternate form.
#include <gtest/gtest.h>

#include "symbols/symbol_table.h"

namespace dprobe::symbols {
namespace {

TEST(DemangleName, RustLegacyNamesLoseTheirHash) {
  EXPECT_EQ(demangle_name("_ZN5calls3fib17he9767bfd74d842a4E"), "calls::fib");
  EXPECT_EQ(demangle_name("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$.."
                          "$u7b$$u7b$closure$u7d$$u7d$$GT$17h0123456789abcdefE"),
            "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
}

TEST(DemangleName, RustV0Names) {
  EXPECT_EQ(demangle_name("_RNvCs83NsFMusk0o_5calls3fib"), "calls::fib");
  EXPECT_EQ(demangle_name("_RNvCs6oUY55l0vfu_5calls3fib"), "calls::fib");
}

TEST(DemangleName, CxxNamesAsTheCxxRuntimeWritesThem) {
  EXPECT_EQ(demangle_name("_ZN3foo3barEv"), "foo::bar()");
  EXPECT_EQ(demangle_name("_ZNK3geo5Shape4areaEi"), "geo::Shape::area(int) const");
  // A C++ name that ends like a Rust hash is still C++ when it has
  // parameters after it.
  EXPECT_EQ(demangle_name("_ZN2ns17h0123456789abcdefEv"), "ns::h0123456789abcdef()");
}

TEST(DemangleName, PlainNamesHaveNone) {
  EXPECT_EQ(demangle_name("malloc"), "");
  EXPECT_EQ(demangle_name("_Rbogus"), "");
  EXPECT_EQ(demangle_name("_Znotmangled"), "");
}

}  // namespace
}  // namespace dprobe::symbols
