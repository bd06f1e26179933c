// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent opens a few files for a moment, on its own thread (the thread
// census reads /proc/self/task and /proc/self/task/TID/syscall), and each
// open takes the lowest free descriptor, which a program that closed its
// descriptors counts on getting from its own next open. While the agent
// sees the program's system calls (syscall_dispatch.h), the two never
// overlap: a program's call that takes a descriptor waits out an open of
// the agent's (a few microseconds), and the agent gives up its open, for
// now, when the program's lasts (a FIFO's open may wait for ever).
//
//   if (!enter_agent_open()) return unknown;   // the program is opening
//   fd = open(...); read; close(fd);
//   leave_agent_open();
#ifndef DPROBE_AGENT_DESCRIPTOR_GATE_H_
#define DPROBE_AGENT_DESCRIPTOR_GATE_H_

#include <cstddef>

namespace dprobe::agent {

// False after about 100 ms of the program's opens: the caller does without
// the file.
bool enter_agent_open() noexcept;
void leave_agent_open() noexcept;

// Around a call of the program's that takes a descriptor.
void enter_program_open() noexcept;
void leave_program_open() noexcept;

// Whether system call `nr` gives the program a new descriptor.
bool takes_descriptor(long nr) noexcept;

// The start of a small file (of /proc) into `buffer`, through the gate,
// with raw system calls (every function of libc may carry a probe): the
// bytes read, 0 when it cannot be read, -1 when the program's opens kept
// it from opening. `failure`, if given, gets the open's or the read's
// error (-errno; 0 when neither failed): a file that is not there is not
// the same as one that could not be opened now (EMFILE, ENOMEM).
long read_file_through_gate(const char* path, char* buffer, size_t capacity,
                            long* failure = nullptr) noexcept;

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_DESCRIPTOR_GATE_H_
