// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/progress.h"

#include <unistd.h>

#include <cstdio>

namespace dprobe::cli {
namespace {

constexpr auto kPeriod = std::chrono::milliseconds(250);
constexpr const char* kEraseLine = "\r\x1b[K";

}  // namespace

Progress::Progress(std::ostream& errors, bool terminal)
    : errors_(errors), terminal_(terminal), buffer_(*this), stream_(&buffer_) {}

Progress::Progress(std::ostream& errors) : Progress(errors, ::isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  stop();
  errors_.flush();
}

void Progress::start(std::string what) {
  stop();
  if (!terminal_) return;
  std::lock_guard lock(mutex_);
  what_ = std::move(what);
  done_ = false;
  thread_ = std::thread([this] { show_until_done(); });
}

void Progress::stop() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
    erase_locked();
  }
  done_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Progress::show_until_done() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  if (done_cv_.wait_for(lock, kDelay, [&] { return done_; })) return;
  while (!done_) {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.1f", elapsed.count());
    errors_ << kEraseLine << "dprobe: " << what_ << "... " << seconds << " s" << std::flush;
    shown_ = true;
    done_cv_.wait_for(lock, kPeriod, [&] { return done_; });
  }
}

void Progress::erase_locked() {
  if (!shown_) return;
  errors_ << kEraseLine << std::flush;
  shown_ = false;
}

Progress::Buffer::int_type Progress::Buffer::overflow(int_type c) {
  std::lock_guard lock(owner_.mutex_);
  owner_.erase_locked();
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  return owner_.errors_.rdbuf()->sputc(traits_type::to_char_type(c));
}

std::streamsize Progress::Buffer::xsputn(const char* text, std::streamsize n) {
  std::lock_guard lock(owner_.mutex_);
  owner_.erase_locked();
  return owner_.errors_.rdbuf()->sputn(text, n);
}

int Progress::Buffer::sync() {
  std::lock_guard lock(owner_.mutex_);
  return owner_.errors_.rdbuf()->pubsync();
}

}  // namespace dprobe::cli
