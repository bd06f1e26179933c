// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The objects a traced process has mapped, each with its ELF file opened:
// what probes are placed against and trace lines are symbolized with.
// Objects come and go while the program runs (dlopen, dlclose), and the
// drain thread reads while the control thread changes: every access is
// under a lock, and an object, once known, is never freed (a library
// loaded again at the same place is the same entry).
#ifndef DPROBE_CLI_PROCESS_PROCESS_OBJECTS_H_
#define DPROBE_CLI_PROCESS_PROCESS_OBJECTS_H_

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "cli/plan/target_resolver.h"
#include "protocol/messages.h"

namespace dprobe::cli {

struct PlacedObject {
  const protocol::LoadedObject* loaded;
  const LoadedObject* file;
};

class ProcessObjects {
 public:
  ProcessObjects(const std::vector<protocol::LoadedObject>& loaded, TargetResolver& resolver);

  void add(const protocol::LoadedObject& object);
  void remove(const protocol::LoadedObject& object);

  // The mapped object that is `file` (same device and inode), if any.
  std::optional<PlacedObject> find(const LoadedObject& file) const;
  // The mapped object whose executable segments hold a run-time address.
  std::optional<PlacedObject> containing(uint64_t address) const;
  // The same, for a trace line: a record may be read after its object was
  // unmapped, so those are looked at too, after the mapped ones.
  std::optional<PlacedObject> containing_then_or_now(uint64_t address) const;

 private:
  struct Entry {
    std::unique_ptr<protocol::LoadedObject> loaded;
    const LoadedObject* file;
    bool mapped;
  };
  TargetResolver& resolver_;
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_PROCESS_OBJECTS_H_
