// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The control channel of `dprobe attach` carries messages from two of the
// CLI's threads at once: the one that serves the agent answers the
// loader's questions (the probes of a library just loaded) while the main
// one says Resumed or Detach. A message's header and payload interleaved
// with another's put the agent out of step: it read a length out of a
// payload and waited for 32 MiB that never came, and the detach was not
// confirmed. Many short attaches to a program that loads and unloads a
// library without pause make the two meet.
#include <gtest/gtest.h>

#include <string>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

TEST(AttachChannel, EveryDetachIsConfirmedWhileTheLoaderAsksForProbes) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string plugins = DPROBE_PROGRAMS_DIR;
  LiveProcess host({program("dl_host_O2"), plugins, "100000000", "main"}, dir.file("host.out"),
                   dir.file("host.err"));
  ASSERT_TRUE(host.started());
  const std::string pid = std::to_string(host.pid());
  ASSERT_TRUE(eventually_mapped(host.pid(), "libdprobe_test_plugin", patience())) << host.err();
  const std::string probe = "p:g/f " + plugins + "/libdprobe_test_plugin.so:plugin_func";
  for (int i = 0; i < 80; ++i) {
    const RunResult run = run_dprobe(
        {"attach", "-p", pid, "-e", probe, "--duration", "0.02", "-o", dir.file("trace")});
    ASSERT_EQ(run.status, 0) << "attach " << i << ": " << run;
    ASSERT_EQ(run.err.find("did not confirm"), std::string::npos) << "attach " << i << ": " << run;
  }
  EXPECT_TRUE(process_running(host.pid())) << host.err();
}

}  // namespace
}  // namespace dprobe::integration
