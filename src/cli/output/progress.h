// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A line of progress on stderr while something slow happens (arming a
// wildcard over a large library), or of status while a long trace runs
// (attach's "tracing 12 probes in pid 4242, 1.2 M hits, Ctrl-C to end"):
// shown only when stderr is a terminal,
// and only once the work has taken more than a second; erased when it
// ends. Whatever is written to stream() erases the line first, so that a
// message never lands at the end of the progress text: give stream() to
// everything that may write while the progress shows, for as long as it
// may write (a session keeps its stream), and keep the Progress that long.
//
//   Progress progress(std::cerr);
//   std::ostream& errors = progress.stream();
//   progress.start("arming 2513 probes");
//   auto session = Session::open(..., errors);
//   progress.stop();   // the line is gone
#ifndef DPROBE_CLI_OUTPUT_PROGRESS_H_
#define DPROBE_CLI_OUTPUT_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>
#include <thread>

namespace dprobe::cli {

class Progress {
 public:
  // `terminal`: whether to show anything; by default, whether stderr is one.
  Progress(std::ostream& errors, bool terminal);
  explicit Progress(std::ostream& errors);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Writes to `errors`, erasing the progress line first.
  std::ostream& stream() { return stream_; }
  // "dprobe: WHAT... 1.4 s", from a second on, until stop().
  void start(std::string what);
  // "dprobe: STATUS", STATUS asked again at each refresh (without the
  // line's lock: it may take locks of its own that writers to stream()
  // hold), from a second on, until stop().
  void follow(std::function<std::string()> status);
  void stop();

  static constexpr auto kDelay = std::chrono::seconds(1);

 private:
  // Forwards to the errors' buffer, erasing the progress line first.
  class Buffer : public std::streambuf {
   public:
    explicit Buffer(Progress& owner) : owner_(owner) {}

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* text, std::streamsize n) override;
    int sync() override;

   private:
    Progress& owner_;
  };

  void show_until_done();
  void erase_locked();

  std::ostream& errors_;
  bool terminal_;
  std::string what_;
  std::function<std::string()> status_;  // for follow(): the line's text
  Buffer buffer_;
  std::ostream stream_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = true;
  bool shown_ = false;  // the line is on the terminal now
  std::thread thread_;
};

// An attach's status line: "tracing 12 probes in pid 4242, 1.2 M hits,
// Ctrl-C to end" (counts from 10,000 on in K, M, G with one decimal).
std::string tracing_status(size_t probes, long pid, uint64_t hits);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_PROGRESS_H_
