// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The fault-safe memory copies (arch/runtime/safe_memory.h) fail instead of
// crashing only where a SIGSEGV/SIGBUS handler hands the fault to
// fixup_memory_fault, as the agent's does. The tests that use them
// install this handler: a fault inside a safe copy makes the copy fail, any
// other aborts (a bug of the test).
//
//   class RegistryTest : public MemoryFaultTest {};        // for a whole suite
//   { MemoryFaultHandler handler; ASSERT_TRUE(handler.installed()); ... }   // for a scope
#ifndef DPROBE_TESTS_SUPPORT_MEMORY_FAULTS_H_
#define DPROBE_TESTS_SUPPORT_MEMORY_FAULTS_H_

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>

#include "arch/runtime/safe_memory.h"

namespace dprobe::support {

inline void on_memory_fault(int, siginfo_t*, void* ucontext) {
  if (arch::fixup_memory_fault(ucontext)) return;
  std::abort();  // a fault outside the safe copies is a bug of the test
}

// SIGSEGV and SIGBUS go to fixup_memory_fault for as long as it lives; the
// actions before it come back after.
class MemoryFaultHandler {
 public:
  MemoryFaultHandler() {
    struct sigaction action = {};
    action.sa_sigaction = on_memory_fault;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    installed_ =
        sigaction(SIGSEGV, &action, &old_segv_) == 0 && sigaction(SIGBUS, &action, &old_bus_) == 0;
  }
  ~MemoryFaultHandler() {
    sigaction(SIGSEGV, &old_segv_, nullptr);
    sigaction(SIGBUS, &old_bus_, nullptr);
  }
  MemoryFaultHandler(const MemoryFaultHandler&) = delete;
  MemoryFaultHandler& operator=(const MemoryFaultHandler&) = delete;

  bool installed() const { return installed_; }

 private:
  struct sigaction old_segv_ = {};
  struct sigaction old_bus_ = {};
  bool installed_ = false;
};

// A suite whose tests all read or write through the safe copies: the
// handler is in place from the suite's first test to its last.
class MemoryFaultTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    handler_ = new MemoryFaultHandler;
    ASSERT_TRUE(handler_->installed());
  }
  static void TearDownTestSuite() {
    delete handler_;
    handler_ = nullptr;
  }

 private:
  static inline MemoryFaultHandler* handler_ = nullptr;
};

}  // namespace dprobe::support

#endif  // DPROBE_TESTS_SUPPORT_MEMORY_FAULTS_H_
