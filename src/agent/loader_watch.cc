// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/loader_watch.h"

#include <link.h>

#include <algorithm>
#include <vector>

#include "agent/agent_state.h"
#include "agent/arming.h"
#include "agent/bind_interposers.h"
#include "agent/controller.h"
#include "agent/hit/stack_trace.h"
#include "agent/hit/thread_trace.h"
#include "agent/jump_optimizer.h"
#include "agent/loaded_objects.h"
#include "agent/semaphores.h"

namespace dprobe::agent {
namespace {

struct KnownObject {
  MappedObject mapped;
  bool startup;
};

// Only the loader's thread of the moment touches these: the loader calls
// r_brk with its lock held.
std::vector<KnownObject>* g_known = nullptr;
bool g_deleting = false;

bool same_object(const protocol::LoadedObject& a, const protocol::LoadedObject& b) {
  return a.dev == b.dev && a.ino == b.ino && a.bias == b.bias;
}

void for_each_range(const KnownObject& known,
                    void (core::ProbeRegistry::*action)(uint64_t, uint64_t) noexcept) {
  core::ProbeRegistry& registry = *agent_state().registry;
  for (const TextRange& range : known.mapped.text) (registry.*action)(range.begin, range.end);
}

// About to unmap: no object loaded after start keeps a patched byte, nor a
// count in a semaphore that may be gone before the session ends.
void before_delete() {
  AgentState& state = agent_state();
  std::lock_guard lock(state.registry_writer);
  for (const KnownObject& known : *g_known) {
    if (known.startup) continue;
    for_each_range(known, &core::ProbeRegistry::disarm_range);
    for (const TextRange& range : known.mapped.text) {
      lower_semaphores_of_sites(range.begin, range.end);
    }
  }
}

// Forgets what went, re-arms what stayed; answers what came.
void after_change() {
  refresh_unwind_objects();  // stack traces: the objects mapped from now on
  AgentState& state = agent_state();
  std::vector<MappedObject> now = mapped_objects();
  protocol::ObjectsChanged changed;
  {
    std::lock_guard lock(state.registry_writer);
    auto kept = std::remove_if(g_known->begin(), g_known->end(), [&](const KnownObject& known) {
      const bool present = std::any_of(now.begin(), now.end(), [&](const MappedObject& m) {
        return same_object(m.object, known.mapped.object);
      });
      if (present) return false;
      for (const TextRange& range : known.mapped.text) {
        state.registry->remove_range(range.begin, range.end);
        forget_semaphores_of_sites(range.begin, range.end);
      }
      changed.unloaded.push_back(known.mapped.object);
      return true;
    });
    g_known->erase(kept, g_known->end());
    for (const KnownObject& known : *g_known) {
      if (known.startup) continue;
      for_each_range(known, &core::ProbeRegistry::arm_range);
      for (const TextRange& range : known.mapped.text) {
        raise_semaphores_of_sites(range.begin, range.end);
      }
    }
  }
  std::vector<TextRange> new_text;  // of the objects loaded now
  for (MappedObject& mapped : now) {
    const bool known = std::any_of(g_known->begin(), g_known->end(), [&](const KnownObject& k) {
      return same_object(k.mapped.object, mapped.object);
    });
    if (known) continue;
    changed.loaded.push_back(mapped.object);
    new_text.insert(new_text.end(), mapped.text.begin(), mapped.text.end());
    g_known->push_back({std::move(mapped), false});
  }
  if (changed.loaded.empty() && changed.unloaded.empty()) return;
  // The loader holds its lock, and the new objects' code has not run.
  if (loaded_late() && !changed.loaded.empty()) bind_interposers();
  auto probes = Controller::instance().ask(changed);
  if (!probes) return;
  protocol::ArmReport report = add_probes(*probes, Objects::kJustMapped);
  for (const TextRange& range : new_text) {
    optimize_armed(range.begin, range.end);
    auto states = probe_states(range.begin, range.end);
    report.states.insert(report.states.end(), states.begin(), states.end());
  }
  Controller::instance().send_report(report);
}

// The loader's notification: runs in the trap handler of the thread that
// is loading or unloading, at the entry of r_brk.
void on_loader_event(const arch::SavedRegs&) {
  if (!Controller::instance().running()) return;
  const AgentWork work;  // what this does is not the program's to trace
  switch (_r_debug.r_state) {
    case r_debug::RT_DELETE:
      g_deleting = true;
      before_delete();
      break;
    case r_debug::RT_CONSISTENT:
      g_deleting = false;
      after_change();
      break;
    case r_debug::RT_ADD:
      break;
  }
}

}  // namespace

bool watch_loader(core::ProbeRegistry& registry) {
  refresh_unwind_objects();  // stack traces: the objects mapped at start
  g_known = new std::vector<KnownObject>;
  for (MappedObject& mapped : mapped_objects()) g_known->push_back({std::move(mapped), true});
  const auto r_brk = static_cast<uint64_t>(_r_debug.r_brk);
  if (r_brk == 0) return false;
  return registry.add_internal({r_brk, r_brk, 0}, on_loader_event).has_value();
}

}  // namespace dprobe::agent
