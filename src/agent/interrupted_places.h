// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Where the program's signal handlers that run now will return to: the
// interrupted pc of each (signal_thread.cc notes it as it calls the
// handler, and forgets it when the handler's frame is gone). A jump may
// not be written over such a place (thread_census.cc): sigreturn would
// resume the thread in the middle of it. No thread's pc shows it; it is in
// the signal frame on the thread's stack.
//
//   const uint32_t place = note_interrupted(pc);   // before the handler
//   forget_interrupted(place);                      // its frame is gone
//   if (interrupted_inside(begin, end)) ...         // the census
#ifndef DPROBE_AGENT_INTERRUPTED_PLACES_H_
#define DPROBE_AGENT_INTERRUPTED_PLACES_H_

#include <cstdint>

namespace dprobe::agent {

// Notes the calling thread's interrupted `pc`; what to forget it by.
uint32_t note_interrupted(uint64_t pc) noexcept;
void forget_interrupted(uint32_t place) noexcept;

// Whether a handler of a live thread of this process will return into
// (begin, end) (the first byte itself takes a breakpoint or the jump, and
// either is right there). Also true while a place could not be noted (the
// table was full): then no range is known to be clear.
bool interrupted_inside(uint64_t begin, uint64_t end) noexcept;

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_INTERRUPTED_PLACES_H_
