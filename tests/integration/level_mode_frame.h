// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The parameters of the return-probe suites that run a test program at
// each optimization level, in each of its modes, with a frame of each size
// between the probed function and the one that catches or jumps, and the
// name ctest lists each case by.
//
//   INSTANTIATE_TEST_SUITE_P(Modes, ReturnJumps, ::testing::Combine(...), level_mode_frame_name);
//   // Modes/ReturnJumps.Case/O2_longjmp_frame65536
#ifndef DPROBE_TESTS_INTEGRATION_LEVEL_MODE_FRAME_H_
#define DPROBE_TESTS_INTEGRATION_LEVEL_MODE_FRAME_H_

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace dprobe::integration {

using LevelModeFrame = std::tuple<std::string, std::string, std::string>;  // "O2", mode, "0"

inline std::string level_mode_frame_name(const ::testing::TestParamInfo<LevelModeFrame>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_frame" +
         std::get<2>(info.param);
}

}  // namespace dprobe::integration

#endif  // DPROBE_TESTS_INTEGRATION_LEVEL_MODE_FRAME_H_
