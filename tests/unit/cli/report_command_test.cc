// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe report` on files that are not what it expects: a directory, a
// crafted chunk, a FIFO. Each gets a clear error or says what it waits
// for; none aborts, prints the file's raw bytes or hangs without a word.
#include "cli/command/report_command.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <thread>

#include "support/files.h"
#include "support/patience.h"
#include "trace/record.h"
#include "trace/trace_file.h"

namespace dprobe::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Report {
  int status = -1;
  std::string err;
};

class ReportBadFiles : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(temp_.ok()); }

  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  static Report report(const std::string& path) {
    ReportOptions options;
    options.file = path;
    std::FILE* out = std::tmpfile();
    std::ostringstream err;
    Report run;
    run.status = run_report(options, out, err);
    std::fclose(out);
    run.err = err.str();
    return run;
  }

  support::TempDir temp_;
  const std::string dir_ = temp_.path();
};

// A file whose notes say `notes`, as `record` writes them.
std::string file_with_notes(const std::string& notes) {
  std::string bytes;
  trace::append_file_header(bytes);
  trace::append_notes_chunk(bytes, notes);
  return bytes;
}

TEST_F(ReportBadFiles, DirectoryIsAnErrorNotAnAbort) {
  const Report run = report(dir_);
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.err, "dprobe: error: " + dir_ + ": Is a directory\n");
}

TEST_F(ReportBadFiles, NotesAreShownWithControlCharactersEscaped) {
  const std::string path = write("notes.dat", file_with_notes("dprobe: lost \x1b]0;x\x07 7\n"));
  const Report run = report(path);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "dprobe: lost \\x1b]0;x\\x07 7\n");
}

// A record chunk relabelled as notes: its stream id reads as a string
// length that covers the thread name's length and the name (an escape
// sequence here), and the record is left over. Not one of its bytes may
// reach the terminal: the chunk is only an error at its offset.
TEST_F(ReportBadFiles, ChunkRelabelledAsNotesIsAnErrorNotText) {
  const std::string comm = "\x1b[2J\x1b]0;owned\x07";
  std::string bytes;
  trace::append_file_header(bytes);
  const std::string record(trace::kRecordHeaderSize, '\0');
  trace::append_record_chunk(bytes, static_cast<uint32_t>(4 + comm.size()), comm,
                             std::as_bytes(std::span(record)));
  const auto notes = static_cast<char>(trace::ChunkKind::kNotes);
  bytes[trace::kTraceFileHeaderSize] = notes;
  const Report run = report(write("relabelled.dat", bytes));
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.err, Not(HasSubstr("\x1b")));
  EXPECT_THAT(run.err, Not(HasSubstr(std::string(1, '\0'))));
  EXPECT_THAT(run.err, HasSubstr("at offset 16: notes: bad length"));
}

// `dprobe report FIFO` as a user runs it, its stderr read as it comes.
class ReportProcess {
 public:
  explicit ReportProcess(const std::string& path) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(pipe_fds[1], STDERR_FILENO);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::execl(DPROBE_BINARY, DPROBE_BINARY, "report", path.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    err_fd_ = pipe_fds[0];
  }
  ~ReportProcess() {
    if (pid_ > 0 && status_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (err_fd_ >= 0) ::close(err_fd_);
  }
  ReportProcess(const ReportProcess&) = delete;
  ReportProcess& operator=(const ReportProcess&) = delete;

  // Reads stderr until it holds `text` or `timeout` passes.
  bool said(const std::string& text, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (err_.find(text) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd wanted{err_fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&wanted, 1, static_cast<int>(left.count())) <= 0) {
        return false;
      }
      char buffer[256];
      const ssize_t got = ::read(err_fd_, buffer, sizeof buffer);
      if (got <= 0) return false;
      err_.append(buffer, static_cast<size_t>(got));
    }
    return true;
  }

  // The exit status, or -1 once `timeout` passed.
  int wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int wstatus = 0;
    while (::waitpid(pid_, &wstatus, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    status_ = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128;
    char buffer[256];
    ssize_t got = 0;
    while ((got = ::read(err_fd_, buffer, sizeof buffer)) > 0) {
      err_.append(buffer, static_cast<size_t>(got));
    }
    return status_;
  }
  const std::string& err() const { return err_; }

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  int status_ = -1;
  std::string err_;
};

// A FIFO no one writes yet: report says it waits for a writer (instead of
// hanging in open without a word), then reads what the writer sends.
TEST_F(ReportBadFiles, FifoWithoutWriterSaysWhatItWaitsFor) {
  const std::string path = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  ReportProcess process(path);
  ASSERT_TRUE(process.said(path + " is a FIFO: waiting for a writer\n", support::patience()))
      << process.err();
  {
    std::ofstream writer(path, std::ios::binary);
    writer << file_with_notes("dprobe: from the writer\n");
  }
  EXPECT_EQ(process.wait(support::patience()), 0) << process.err();
  EXPECT_THAT(process.err(), HasSubstr("dprobe: from the writer\n"));
}

}  // namespace
}  // namespace dprobe::cli
