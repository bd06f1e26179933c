// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/progress.h"

#include <unistd.h>

#include <cstdio>
#include <iterator>

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
  status_ = nullptr;
  done_ = false;
  thread_ = std::thread([this] { show_until_done(); });
}

void Progress::follow(std::function<std::string()> status) {
  stop();
  if (!terminal_) return;
  std::lock_guard lock(mutex_);
  status_ = std::move(status);
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
    std::string line;
    if (status_) {
      lock.unlock();
      line = status_();
      lock.lock();
      if (done_) break;
    } else {
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%.1f", elapsed.count());
      line = what_ + "... " + seconds + " s";
    }
    errors_ << kEraseLine << "dprobe: " << line << std::flush;
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

std::string tracing_status(size_t probes, long pid, uint64_t hits) {
  char count[32];
  if (hits < 10000) {
    std::snprintf(count, sizeof(count), "%llu", static_cast<unsigned long long>(hits));
  } else {
    const char* units[] = {"K", "M", "G", "T"};
    double value = static_cast<double>(hits) / 1000.0;
    size_t unit = 0;
    while (value >= 1000.0 && unit + 1 < std::size(units)) {
      value /= 1000.0;
      ++unit;
    }
    std::snprintf(count, sizeof(count), "%.1f %s", value, units[unit]);
  }
  return "tracing " + std::to_string(probes) + (probes == 1 ? " probe" : " probes") + " in pid " +
         std::to_string(pid) + ", " + count + (hits == 1 ? " hit" : " hits") + ", Ctrl-C to end";
}

}  // namespace dprobe::cli
