// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The stand-ins of link_seams.cc that tests look at.
#ifndef DPROBE_TESTS_UNIT_AGENT_LINK_SEAMS_H_
#define DPROBE_TESTS_UNIT_AGENT_LINK_SEAMS_H_

#include <cstdint>

namespace dprobe::agent::test {

// What dispatch_restorer() returns in the tests.
void* dispatch_restorer_stand_in() noexcept;

// What signal_restorer_address() returns in the tests: a page of its own.
uint64_t signal_restorer_stand_in() noexcept;

}  // namespace dprobe::agent::test

#endif  // DPROBE_TESTS_UNIT_AGENT_LINK_SEAMS_H_
