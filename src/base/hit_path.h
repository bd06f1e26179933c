// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The hit path: the code a probe hit runs on the program's thread, entered
// from a trampoline that saved the general registers only (docs/design.md,
// "The hit path"). It lives in the hit/ folders, which are built without
// FP/SIMD code and without exceptions, and each of its functions carries
// DPROBE_HIT_PATH, which puts it in the ELF section `dprobe_hit`.
// tests/integration/hit_path_test.cc disassembles the agent and requires of
// that section: no FP, vector or x87 state touched, no call to the C
// library's copies, the entry points inside it, and every direct call or
// jump landing inside it. So a function called on the hit path without the
// marker fails that test, and so does one that calls out of it.
//
//   DPROBE_HIT_PATH bool filter_matches(const FilterProgram& program, ...);
#ifndef DPROBE_BASE_HIT_PATH_H_
#define DPROBE_BASE_HIT_PATH_H_

#define DPROBE_HIT_PATH __attribute__((section("dprobe_hit")))

#endif  // DPROBE_BASE_HIT_PATH_H_
