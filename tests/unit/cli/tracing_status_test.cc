// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "cli/output/progress.h"

namespace dprobe::cli {
namespace {

TEST(TracingStatus, CountsReadAtAGlance) {
  EXPECT_EQ(tracing_status(12, 4242, 0), "tracing 12 probes in pid 4242, 0 hits, Ctrl-C to end");
  EXPECT_EQ(tracing_status(1, 7, 1), "tracing 1 probe in pid 7, 1 hit, Ctrl-C to end");
  EXPECT_EQ(tracing_status(2, 7, 9999), "tracing 2 probes in pid 7, 9999 hits, Ctrl-C to end");
  EXPECT_EQ(tracing_status(2, 7, 12345), "tracing 2 probes in pid 7, 12.3 K hits, Ctrl-C to end");
  EXPECT_EQ(tracing_status(2, 7, 1234567), "tracing 2 probes in pid 7, 1.2 M hits, Ctrl-C to end");
  EXPECT_EQ(tracing_status(2, 7, 3000000000),
            "tracing 2 probes in pid 7, 3.0 G hits, Ctrl-C to end");
}

}  // namespace
}  // namespace dprobe::cli
