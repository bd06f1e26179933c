// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// For code that runs on a hit: a compiler may turn a byte loop into a call
// to memset or memcpy, which are libc, which the traced program may be
// running (or probing) when the hit comes. Functions with such loops opt
// out of that:
//
//   DPROBE_NO_LIBC_CALLS void zero(std::byte* p, uint32_t n) { ... }
#ifndef DPROBE_BASE_NO_LIBC_CALLS_H_
#define DPROBE_BASE_NO_LIBC_CALLS_H_

#if defined(__clang__)
#define DPROBE_NO_LIBC_CALLS __attribute__((no_builtin))
#elif defined(__GNUC__)
#define DPROBE_NO_LIBC_CALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define DPROBE_NO_LIBC_CALLS
#endif

#endif  // DPROBE_BASE_NO_LIBC_CALLS_H_
