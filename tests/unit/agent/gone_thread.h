// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A thread that did something and is gone: what the agent's tables must
// recognize as gone (a thread cancelled in a call, or that left a signal
// handler by longjmp, then exited).
#ifndef DPROBE_TESTS_UNIT_AGENT_GONE_THREAD_H_
#define DPROBE_TESTS_UNIT_AGENT_GONE_THREAD_H_

#include <chrono>
#include <cstdint>
#include <thread>

#include "arch/runtime/raw_syscall.h"
#include "support/patience.h"

namespace dprobe::agent::test {

// Runs `work` on a new thread and returns its id once the kernel finds it
// no more (join returns when its id is cleared, a little before the kernel
// lets go of the thread); 0 if it stays findable for a patience().
template <typename Work>
uint32_t run_on_a_thread_gone_after(Work work) {
  uint32_t tid = 0;
  std::thread([&] {
    tid = arch::raw_gettid();
    work();
  }).join();
  const auto deadline = std::chrono::steady_clock::now() + support::patience();
  while (arch::raw_thread_alive(arch::raw_getpid(), tid)) {
    if (std::chrono::steady_clock::now() > deadline) return 0;
    std::this_thread::yield();
  }
  return tid;
}

}  // namespace dprobe::agent::test

#endif  // DPROBE_TESTS_UNIT_AGENT_GONE_THREAD_H_
