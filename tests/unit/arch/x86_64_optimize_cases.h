// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The x86_64 jump optimizer's tests share these: a function at kFunction
// analyzed for a jump, and functions whose last displaced instruction is a
// branch (as the comments over each disassemble them).
#ifndef DPROBE_TESTS_UNIT_ARCH_X86_64_OPTIMIZE_CASES_H_
#define DPROBE_TESTS_UNIT_ARCH_X86_64_OPTIMIZE_CASES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "arch/x86_64/optimize.h"

namespace dprobe::arch::x86_64 {

using Bytes = std::vector<uint8_t>;

inline constexpr uint64_t kFunction = 0x401000;

inline Result<OptimizePlan, std::string> analyze(const Bytes& code, uint64_t probe,
                                                 std::vector<uint64_t> pads = {}) {
  return can_optimize(code, kFunction, probe, pads);
}

// 0x401000: 55                   push rbp
// 0x401001: 48 89 e5             mov rbp, rsp
// 0x401004: 48 83 ec 10          sub rsp, 0x10
// 0x401008: 31 c0                xor eax, eax
// 0x40100a: c9                   leave
// 0x40100b: c3                   ret
inline const Bytes kClassicEntry = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83,
                                    0xec, 0x10, 0x31, 0xc0, 0xc9, 0xc3};

// 0x401000: 85 ff                test edi, edi
// 0x401002: 89 f8                mov eax, edi
// 0x401004: 74 03                jz 0x401009        <- the last displaced instruction
// 0x401006: 83 c0 01             add eax, 1
// 0x401009: c3                   ret
inline const Bytes kJzRel8 = {0x85, 0xff, 0x89, 0xf8, 0x74, 0x03, 0x83, 0xc0, 0x01, 0xc3};

// 0x401000: 85 ff                test edi, edi
// 0x401002: 0f 84 08 00 00 00    jz 0x401010        <- the last displaced instruction
// 0x401008: 89 f8                mov eax, edi
// 0x40100a: 83 c0 01             add eax, 1
// 0x40100d: c3                   ret
// 0x40100e: 66 90                nop
// 0x401010: 31 c0                xor eax, eax
// 0x401012: c3                   ret
inline const Bytes kJzRel32 = {0x85, 0xff, 0x0f, 0x84, 0x08, 0x00, 0x00, 0x00, 0x89, 0xf8,
                               0x83, 0xc0, 0x01, 0xc3, 0x66, 0x90, 0x31, 0xc0, 0xc3};

// 0x401000: 89 f8                mov eax, edi
// 0x401002: 01 f0                add eax, esi
// 0x401004: eb 01                jmp 0x401007       <- the last displaced instruction
// 0x401006: 90                   nop
// 0x401007: c3                   ret
inline const Bytes kJmpRel8 = {0x89, 0xf8, 0x01, 0xf0, 0xeb, 0x01, 0x90, 0xc3};

// 0x401000: 31 c0                xor eax, eax
// 0x401002: e9 f9 1f 00 00       jmp 0x403000       <- a tail call, the last displaced
inline const Bytes kJmpRel32 = {0x31, 0xc0, 0xe9, 0xf9, 0x1f, 0x00, 0x00};

// 0x401000: 55                   push rbp
// 0x401001: e8 fa 1f 00 00       call 0x403000      <- the last displaced instruction
// 0x401006: 5d                   pop rbp
// 0x401007: c3                   ret
inline const Bytes kCallRel32 = {0x55, 0xe8, 0xfa, 0x1f, 0x00, 0x00, 0x5d, 0xc3};

}  // namespace dprobe::arch::x86_64

#endif  // DPROBE_TESTS_UNIT_ARCH_X86_64_OPTIMIZE_CASES_H_
