// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The semaphores of the SDT sites the agent has armed. A program built
// with semaphores tests a 16-bit counter before it reaches a site (and
// before it computes the site's operands): the site fires only while the
// counter is above zero. The agent adds one for each armed probe and takes
// them all back when it disarms, as the kernel does for a uprobe's
// ref_ctr_offset. Called under the registry's writer lock.
#ifndef DPROBE_AGENT_SEMAPHORES_H_
#define DPROBE_AGENT_SEMAPHORES_H_

#include <cstdint>

namespace dprobe::agent {

// The probe at `site` was armed: its semaphore counts one more.
void count_semaphore_up(uint64_t semaphore, uint64_t site);

// Every count added goes back (disarming, at detach, in a child).
void release_semaphores();

// The loader is about to unmap an object (which one, it does not say): the
// counts of the sites in [begin, end) go back while their memory is there,
// and come up again for the objects that stayed.
void lower_semaphores_of_sites(uint64_t begin, uint64_t end);
void raise_semaphores_of_sites(uint64_t begin, uint64_t end);

// The object holding the sites in [begin, end) went away, and its
// semaphores with it: nothing to give back there.
void forget_semaphores_of_sites(uint64_t begin, uint64_t end);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_SEMAPHORES_H_
