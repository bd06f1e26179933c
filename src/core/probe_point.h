// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Where a probe goes, as the definition said it: the probe engine resolves
// this against the objects loaded in the target process.
//
//   ProbePoint point{{TargetKind::kSymbol, "libc.so.6", "malloc", 0, 0}, false, 0};
#ifndef DPROBE_CORE_PROBE_POINT_H_
#define DPROBE_CORE_PROBE_POINT_H_

#include <cstdint>
#include <string>

namespace dprobe::core {

enum class TargetKind : uint8_t {
  kSymbol,         // [OBJ:]SYM[+|-OFFS]
  kAddress,        // 0xADDR: an address in the running process
  kObjectAddress,  // OBJ:0xADDR: a link-time address inside OBJ
  kFileOffset,     // PATH:0xOFFSET: a file offset, as uprobe_events
  kSyscall,        // a system call event (symbol: its name): no code address
};

struct ProbeTarget {
  TargetKind kind = TargetKind::kSymbol;
  std::string object;    // path, soname or basename; empty: the main executable
  std::string symbol;    // kSymbol only
  int64_t offset = 0;    // kSymbol: offset from the symbol; kFileOffset: the offset
  uint64_t address = 0;  // kAddress, kObjectAddress
};

// The kernel's default and upper bound for kretprobe maxactive.
inline constexpr uint32_t kMaxActiveLimit = 4096;

struct ProbePoint {
  ProbeTarget target;
  bool is_return = false;
  uint32_t maxactive = 0;  // return probes: live instances per thread, 0 = default
  // An SDT site's semaphore: the link-time address, in the target's
  // object, of the 16-bit counter the program tests before it reaches the
  // site. Counted up while the probe is armed; 0 for none.
  uint64_t sdt_semaphore = 0;
};

// How a placed probe is armed, as the kernel's kprobes/list shows it:
// [OPTIMIZED], or a breakpoint with the reason it could not be optimized.
struct ProbeState {
  uint64_t address = 0;
  bool optimized = false;
  std::string reason;  // why a breakpoint
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_PROBE_POINT_H_
