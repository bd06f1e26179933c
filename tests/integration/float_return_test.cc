// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// $retval of a float or a double function: the ABIs (x86_64's psABI,
// AAPCS64) return those in the first vector register, xmm0 or v0, which a
// $retval of type f32 or f64 reads. Names no register: it runs in the
// arm64 guest too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dprobe_run.h"

namespace dprobe::integration {
namespace {

// A float or a double comes back in the first vector register (xmm0, v0):
// $retval with one of these types reads it, at either level (O0 keeps the
// value on the stack too; O2 only in the register).
TEST(FloatReturn, ValuesFromTheVectorRegister) {
  for (const char* level : {"float_values_O0", "float_values_O2"}) {
    const RunResult run =
        run_traced({"r:fv/sum float_values rv=$retval:f64", "r:fv/half float_half rv=$retval:f32"},
                   {program(level)});
    ASSERT_EQ(run.status, 0) << run;
    std::vector<std::string> sums;
    std::vector<std::string> halves;
    for (const TraceLine& line : parse_trace(run.out)) {
      if (line.event == "sum") sums.push_back(line.arg("rv"));
      if (line.event == "half") halves.push_back(line.arg("rv"));
    }
    // 1.5 + 0.25, -0.1 + 3.0f, 1e300 + -1e-30f, inf + -inf (a NaN whose
    // sign the ISA chooses), nan + 2.5.
    EXPECT_THAT(sums,
                ::testing::ElementsAre("1.75", "2.9", "1e+300", ::testing::EndsWith("nan"), "nan"))
        << run;
    EXPECT_THAT(halves, ::testing::ElementsAre("0.125", "1.5", "-5e-31", "-inf", "1.25")) << run;
  }
}

// Without a type written, the DWARF's signature decides: a double's
// $retval comes from the vector register, printed as one; $argN counts the
// integer arguments alone (n, the second argument, is the first integer);
// a double argument, in a vector register, is refused with the reason.
TEST(FloatReturn, TheDebugInfoSaysWhereTheValuesAre) {
  for (const char* level : {"float_values_O0", "float_values_O2"}) {
    const RunResult run = run_traced({"r:fv/scale float_scale rv=$retval",
                                      "p:fv/args float_scale n=$arg2:s32 tag=+0($arg3):string",
                                      "p:fv/plain float_scale n=$arg2 tag=$arg3"},
                                     {program(level)});
    ASSERT_EQ(run.status, 0) << run;
    std::vector<std::string> values;
    std::vector<std::string> plain;
    std::vector<std::string> typed;
    for (const TraceLine& line : parse_trace(run.out)) {
      if (line.event == "scale") values.push_back(line.arg("rv"));
      if (line.event == "plain") plain.push_back(line.arg("n"));
      if (line.event == "args") typed.push_back(line.arg("n") + " " + line.arg("tag"));
    }
    EXPECT_THAT(typed, ::testing::ElementsAre("2 \"two\"", "7 \"seven\"")) << run;
    // 0.5 * 2 + 't', -3.0 * 7 + 's'.
    EXPECT_THAT(values, ::testing::ElementsAre("117", "94")) << run;
    EXPECT_THAT(plain, ::testing::ElementsAre("0x2", "0x7")) << "untyped, in the kernel's hex";
    const RunResult refused = run_traced({"p:fv/x float_scale x=$arg1"}, {program(level)});
    EXPECT_EQ(refused.status, 2) << refused;
    EXPECT_THAT(refused.err, ::testing::HasSubstr("VAR_UNSUPPORTED")) << refused;
    EXPECT_THAT(refused.err, ::testing::HasSubstr("$arg1 of float_scale is a double (f64)"))
        << refused;
  }
}

}  // namespace
}  // namespace dprobe::integration
