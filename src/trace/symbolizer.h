// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Turns an address of the traced process into `name+0xoff/0xsize`, the way
// the kernel's %pS does. The CLI implements it over the process's loaded
// objects; the formatter only asks.
//
//   class MySymbols : public Symbolizer {
//     std::optional<SymbolHit> symbolize(uint64_t address) const override;
//   };
//   TraceFormatter formatter(&my_symbols);
#ifndef DPROBE_TRACE_SYMBOLIZER_H_
#define DPROBE_TRACE_SYMBOLIZER_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace dprobe::trace {

// The symbol an address falls in. `name` must stay valid as long as the
// symbolizer does: the formatter copies it into the line, never keeps it.
struct SymbolHit {
  std::string_view name;
  uint64_t offset;  // address - symbol start
  uint64_t size;    // the symbol's size in bytes
};

class Symbolizer {
 public:
  virtual ~Symbolizer() = default;
  // nullopt when no symbol covers the address; the address then prints raw.
  virtual std::optional<SymbolHit> symbolize(uint64_t address) const = 0;
  // The file name of the object the address is in ("libc.so.6"), for a
  // stack trace's frames; empty where unknown.
  virtual std::string_view object_name(uint64_t /*address*/) const { return {}; }
  // Looks again at what names may come from later (a JIT's perf map, which
  // the JVM writes only at its exit), however recently it looked.
  virtual void refresh() const {}
};

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_SYMBOLIZER_H_
