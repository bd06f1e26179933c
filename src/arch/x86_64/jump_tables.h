// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Internal to arch/x86_64's optimizer: where a function's jump table sends
// it. A `switch` compiles to a bound check and an indirect jmp through a
// table in .rodata; a jump may replace a probe's bytes only if no target of
// the table lands inside them. The table is read where the compilers put
// it, recognized by their patterns only, with the bound its check gives:
//
//   cmp $N, %ecx ; ja default      (jae: N entries, ja: N + 1)
//   [mov %ecx, %eax]               (the index, zero-extended, may move)
//   lea T(%rip), %rdx              ; position-independent: 32-bit offsets
//   movslq (%rdx,%rax,4), %rax     ;   from T
//   add %rdx, %rax
//   [notrack] jmp *%rax
// or
//   [notrack] jmp *T(,%rax,8)      ; at fixed addresses: 64-bit targets
//
// Anything else (a bound not found, an index changed after its check) is
// not guessed at: the caller keeps the probe a breakpoint.
#ifndef DPROBE_ARCH_X86_64_JUMP_TABLES_H_
#define DPROBE_ARCH_X86_64_JUMP_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "arch/memory_access.h"
#include "base/result.h"

namespace dprobe::arch::x86_64 {

// The most entries a table may have: a bound beyond it is no switch's.
inline constexpr uint64_t kMaxJumpTableEntries = 4096;

// Whether the indirect jmp at `starts[jump]` goes through one pointer
// loaded from memory (`jmp *0x18(%rax)`, or `mov 0x18(%r12),%rax` then
// `jmp *%rax` with no other way in between): a tail call through a
// vtable, a struct's function pointer, a GOT entry, not a table. Its
// target is a function, as an indirect call's is: what the optimizer
// already takes for every `call *` of the program.
Result<bool, std::string> through_a_pointer(std::span<const uint8_t> code,
                                            uint64_t function_address,
                                            std::span<const uint64_t> starts,
                                            std::span<const uint64_t> branch_targets, size_t jump);

// The targets of the table the indirect jmp at `starts[jump]` goes
// through. `code` is the whole function from `function_address`;
// `starts` its instructions' addresses, in order; `branch_targets` where
// its direct branches go (none may come in between the check and the jmp).
Result<std::vector<uint64_t>, std::string> jump_table_targets(
    std::span<const uint8_t> code, uint64_t function_address, std::span<const uint64_t> starts,
    std::span<const uint64_t> branch_targets, size_t jump, const ReadMemory& read);

}  // namespace dprobe::arch::x86_64

#endif  // DPROBE_ARCH_X86_64_JUMP_TABLES_H_
