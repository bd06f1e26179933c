// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Where the calls to an IFUNC symbol go. The loader binds such a symbol to
// whatever its resolver returns (strlen to __strlen_avx2 on a CPU with
// AVX2); a probe on the symbol belongs there, not on the resolver, which
// runs once per binding. Asked in the process, as the loader asks it.
//
//   if (auto implementation = resolve_ifunc(resolver_address))
//     add(implementation->address, implementation->function_begin, ...);
#ifndef DPROBE_AGENT_IFUNC_H_
#define DPROBE_AGENT_IFUNC_H_

#include <cstdint>
#include <optional>

namespace dprobe::agent {

struct IfuncImplementation {
  uint64_t address;
  // The function around it from its unwind information, where that
  // starts at the implementation and no neighbour branches into its first
  // bytes (else the address itself and 0: a breakpoint): the implementation
  // usually has no symbol of its own in a stripped library, and a jump
  // needs the function's extent.
  uint64_t function_begin;
  uint64_t function_size;
};

// Calls the resolver as the agent's own work (a probe on it does not
// count). nullopt when it returns no address in executable code of a
// loaded object.
std::optional<IfuncImplementation> resolve_ifunc(uint64_t resolver) noexcept;

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_IFUNC_H_
