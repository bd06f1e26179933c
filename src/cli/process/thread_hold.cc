// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/thread_hold.h"

#include <set>

#include "cli/process/namespace_ids.h"

namespace dprobe::cli {
namespace {

// How long the agent's request waits for the tracing thread to act.
constexpr auto kAnswerTime = std::chrono::seconds(2);
// How long threads stay held at most: arming every function of libc takes
// about a second here, several on a loaded machine, and a thread let go
// before the jumps are written may reach a breakpoint with every signal
// blocked.
constexpr auto kLongestHold = std::chrono::seconds(15);

}  // namespace

bool ThreadHold::hold(const std::vector<uint32_t>& running) {
  std::unique_lock lock(mutex_);
  if (state_ != State::kIdle) return false;
  running_ = running;
  state_ = State::kHoldAsked;
  changed_.wait_for(lock, kAnswerTime, [&] { return state_ != State::kHoldAsked; });
  const bool held = state_ == State::kHeld;
  // Never served (nothing was held), or refused: it may be asked again.
  if (!held) state_ = State::kIdle;
  return held;
}

void ThreadHold::release() {
  std::unique_lock lock(mutex_);
  if (state_ != State::kHeld) return;
  state_ = State::kReleaseAsked;
  changed_.wait_for(lock, kAnswerTime, [&] { return state_ == State::kIdle; });
}

void ThreadHold::serve() {
  std::lock_guard lock(mutex_);
  if (state_ == State::kHoldAsked) {
    // The agent names its threads as its namespace does (a container's).
    if (process_.hold_others(host_thread_ids(process_.pid(), running_))) {
      state_ = State::kHeld;
      held_since_ = std::chrono::steady_clock::now();
    } else {
      process_.release_other_threads();  // those it stopped before it failed
      state_ = State::kRefused;
    }
    changed_.notify_all();
  } else if (state_ == State::kReleaseAsked ||
             (state_ == State::kHeld &&
              std::chrono::steady_clock::now() - held_since_ > kLongestHold)) {
    process_.release_other_threads();
    state_ = State::kIdle;
    changed_.notify_all();
  }
}

void ThreadHold::end() {
  std::lock_guard lock(mutex_);
  if (state_ == State::kHeld || state_ == State::kReleaseAsked) {
    process_.release_other_threads();
  }
  state_ = State::kIdle;
  changed_.notify_all();
}

}  // namespace dprobe::cli
