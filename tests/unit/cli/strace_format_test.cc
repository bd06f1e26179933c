// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// --format strace from records: the events --format strace defines,
// parsed by the language as `run` parses them, their records made here;
// each thread's enter and exit paired into strace's line, with its
// column, -T, -r, [pid N], unfinished and resumed calls. And which calls
// --syscalls chooses.
#include "cli/output/strace_format.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cli/plan/strace_calls.h"
#include "lang/definition.h"
#include "lang/syscall_events.h"
#include "trace/record.h"

namespace dprobe::cli {
namespace {

constexpr arch::Isa kIsa = arch::Isa::kX86_64;

// A trace file of one or more streams whose events are --format strace's
// for the calls named.
class StraceFile {
 public:
  explicit StraceFile(std::initializer_list<const char*> calls) {
    std::vector<const syscalls::SyscallInfo*> infos;
    for (const char* name : calls) infos.push_back(syscalls::find_syscall(kIsa, name));
    uint16_t id = 1;
    for (const std::string& text :
         strace::strace_definitions(infos, strace::kDefaultStringLimit, kIsa)) {
      trace::EventDesc event = parse(text);
      event.id = id++;
      ids_[event.group + "/" + event.name] = event.id;
      events_.push_back(event);
    }
    add_stream(0);
  }

  void add_stream(uint32_t stream) {
    for (const trace::EventDesc& event : events_) file_.events[{stream, event.id}] = event;
  }

  // The enter record of `call`: its arguments by the kernel's names, and
  // the strings copied.
  StraceFile& enter(uint32_t tid, uint64_t ns, const std::string& call,
                    std::map<std::string, uint64_t> args,
                    std::map<std::string, std::string> strings = {}, uint32_t stream = 0) {
    const trace::EventDesc& event = event_of("strace/" + call);
    std::string bytes = header(event, tid, ns);
    for (const trace::EventArg& arg : event.args) {
      if (auto found = args.find(arg.name); found != args.end()) {
        trace::store_field(bytes.data(), arg.offset, found->second);
      }
      const std::string base = arg.name.substr(0, arg.name.size() - strace::kStringSuffix.size());
      if (auto found = strings.find(base); found != strings.end() && arg.name.ends_with("_str")) {
        const auto at = static_cast<uint32_t>(bytes.size());
        bytes += found->second + '\0';
        trace::store_field(
            bytes.data(), arg.offset,
            trace::make_data_loc(at, static_cast<uint32_t>(found->second.size() + 1)));
      }
    }
    return push(std::move(bytes), stream);
  }

  StraceFile& exit(uint32_t tid, uint64_t ns, const std::string& call, int64_t ret,
                   uint32_t stream = 0) {
    const std::string name =
        ids_.contains("strace_exit/" + call) ? "strace_exit/" + call : "syscalls/sys_exit_" + call;
    const trace::EventDesc& event = event_of(name);
    std::string bytes = header(event, tid, ns);
    trace::store_field(bytes.data(), event.args.at(0).offset, ret);
    return push(std::move(bytes), stream);
  }

  // The last record's copy of a buffer (its *_dataN arrays, in order).
  StraceFile& data(const std::string& bytes) {
    std::string& record = file_.records.back().bytes;
    const auto header = trace::load_field<trace::RecordHeader>(record.data(), 0);
    size_t done = 0;
    for (const trace::EventDesc& event : events_) {
      if (event.id != header.type) continue;
      for (const trace::EventArg& arg : event.args) {
        if (arg.name.find("_data") == std::string::npos) continue;
        const size_t size = std::min<size_t>(arg.field_size(), bytes.size() - done);
        record.replace(arg.offset, size, bytes.substr(done, size));
        done += size;
      }
    }
    return *this;
  }

  const trace::TraceFileContents& file() const { return file_; }

 private:
  static trace::EventDesc parse(const std::string& text) {
    if (lang::is_tracepoint_selector(text)) {
      auto defs = lang::parse_tracepoint_selector(text, {kIsa});
      EXPECT_TRUE(defs.has_value()) << text;
      return defs->at(0).spec.event;
    }
    auto def = lang::parse_definition(text, {kIsa});
    EXPECT_TRUE(def.has_value()) << text;
    return def->spec.event;
  }

  const trace::EventDesc& event_of(const std::string& name) const {
    for (const trace::EventDesc& event : events_) {
      if (event.id == ids_.at(name)) return event;
    }
    return events_.front();
  }

  static std::string header(const trace::EventDesc& event, uint32_t tid, uint64_t ns) {
    std::string bytes(event.fixed_size, '\0');
    trace::store_field(bytes.data(), 0, trace::RecordHeader{event.id, 0, 0, 100, tid, ns});
    return bytes;
  }

  StraceFile& push(std::string bytes, uint32_t stream) {
    auto header = trace::load_field<trace::RecordHeader>(bytes.data(), 0);
    header.size = static_cast<uint16_t>(bytes.size());
    trace::store_field(bytes.data(), 0, header);
    file_.records.push_back({stream, 0, "prog", std::move(bytes)});
    return *this;
  }

  std::vector<trace::EventDesc> events_;
  std::map<std::string, uint16_t> ids_;
  trace::TraceFileContents file_;
};

constexpr uint64_t kAtFdCwd = static_cast<uint64_t>(-100);

TEST(StraceFormat, PairsEnterAndExitIntoOneLineInStracesColumn) {
  StraceFile trace({"openat", "close", "exit_group"});
  trace
      .enter(100, 1000, "openat", {{"dfd", kAtFdCwd}, {"filename", 0x7ffc}, {"flags", 0}},
             {{"filename", "/etc/os-release"}})
      .exit(100, 2000, "openat", 3)
      .enter(100, 3000, "close", {{"fd", 3}})
      .exit(100, 4000, "close", 0)
      .enter(100, 5000, "exit_group", {{"error_code", 0}});
  EXPECT_EQ(strace_text(trace.file(), {}),
            "openat(AT_FDCWD, \"/etc/os-release\", O_RDONLY) = 3\n"
            "close(3)                                = 0\n"
            "exit_group(0)                           = ?\n"
            "+++ exited with 0 +++\n");
}

TEST(StraceFormat, DurationsAndRelativeTimestamps) {
  StraceFile trace({"close"});
  trace.enter(100, 1'000'000'000, "close", {{"fd", 3}})
      .exit(100, 1'000'012'345, "close", 0)
      .enter(100, 1'250'000'000, "close", {{"fd", 4}})
      .exit(100, 1'250'001'000, "close", -9);
  StraceOptions options{.durations = true, .timestamps = StraceTimestamps::kRelative};
  EXPECT_EQ(
      strace_text(trace.file(), options),
      "     0.000000 close(3)                  = 0 <0.000012>\n"
      "     0.250000 close(4)                  = -1 EBADF (Bad file descriptor) <0.000001>\n");
  options = {.timestamps = StraceTimestamps::kEpoch, .wall_offset_ns = 1'700'000'000'000'000'000};
  EXPECT_EQ(strace_text(trace.file(), options).substr(0, 28), "1700000001.000000 close(3)  ");
}

TEST(StraceFormat, AnotherThreadsCallInterruptsALine) {
  StraceFile trace({"read", "close"});
  trace.enter(100, 1000, "read", {{"fd", 0}, {"buf", 0x5000}, {"count", 10}})
      .enter(101, 2000, "close", {{"fd", 5}})
      .exit(101, 3000, "close", 0)
      .exit(100, 4000, "read", 4)
      .data("abcd");
  // strace's own shape: the buffer the kernel fills, and what follows it,
  // come with the result.
  EXPECT_EQ(strace_text(trace.file(), {}),
            "[pid   100] read(0,  <unfinished ...>\n"
            "[pid   101] close(5)                    = 0\n"
            "[pid   100] <... read resumed>\"abcd\", 10) = 4\n");
}

TEST(StraceFormat, AnExecThatWorkedIsSeenInTheNextStream) {
  StraceFile trace({"execve", "close"});
  trace.add_stream(1);
  trace
      .enter(100, 1000, "execve", {{"filename", 0x1000}, {"argv", 0x2000}, {"envp", 0x3000}},
             {{"filename", "/bin/true"}})
      .enter(100, 2000, "close", {{"fd", 3}}, {}, 1)
      .exit(100, 3000, "close", 0, 1);
  EXPECT_EQ(strace_text(trace.file(), {}),
            "execve(\"/bin/true\", 0x2000, 0x3000)     = 0\n"
            "close(3)                                = 0\n");
}

// What write writes and read reads, as strings cut at the limit; a
// failed read's buffer is an address.
TEST(StraceFormat, BuffersPrintAsStraceQuotesThem) {
  StraceFile trace({"read", "write"});
  trace.enter(100, 1000, "write", {{"fd", 1}, {"buf", 0x6000}, {"count", 3}})
      .data("hi\n")
      .exit(100, 2000, "write", 3)
      .enter(100, 3000, "write", {{"fd", 1}, {"buf", 0x6000}, {"count", 40}})
      .data(std::string(40, 'x'))
      .exit(100, 4000, "write", 40)
      .enter(100, 5000, "read", {{"fd", 3}, {"buf", 0x7000}, {"count", 4096}})
      .exit(100, 6000, "read", 5)
      .data(std::string("a\0b\tc", 5))
      .enter(100, 7000, "read", {{"fd", 9}, {"buf", 0x7000}, {"count", 4096}})
      .exit(100, 8000, "read", -9);
  EXPECT_EQ(strace_text(trace.file(), {}),
            "write(1, \"hi\\n\", 3)                     = 3\n"
            "write(1, \"" +
                std::string(32, 'x') +
                "\"..., 40) = 40\n"
                "read(3, \"a\\0b\\tc\", 4096)                = 5\n"
                "read(9, 0x7000, 4096)                   = -1 EBADF (Bad file descriptor)\n");
}

TEST(StraceFormat, AReturnWithoutItsEntry) {
  StraceFile trace({"read"});
  trace.exit(100, 1000, "read", 7);
  EXPECT_EQ(strace_text(trace.file(), {}), "<... read resumed>)                     = 7\n");
}

TEST(StraceCalls, NamesGlobsClassesAndAllBut) {
  auto names = [](std::string_view spec) {
    std::vector<std::string> out;
    auto calls = strace::select_syscalls(spec, kIsa);
    EXPECT_TRUE(calls.has_value()) << spec;
    if (calls) {
      for (const syscalls::SyscallInfo* info : *calls) out.emplace_back(info->name);
    }
    return out;
  };
  EXPECT_EQ(names("openat,read"), (std::vector<std::string>{"read", "openat"}));
  EXPECT_EQ(names("stat"), (std::vector<std::string>{"newstat"}));
  const auto files = names("%file");
  EXPECT_NE(std::find(files.begin(), files.end(), "openat"), files.end());
  EXPECT_NE(std::find(files.begin(), files.end(), "execve"), files.end());
  EXPECT_NE(std::find(files.begin(), files.end(), "newfstatat"), files.end());
  EXPECT_EQ(std::find(files.begin(), files.end(), "read"), files.end());
  const auto descs = names("%desc");
  EXPECT_NE(std::find(descs.begin(), descs.end(), "read"), descs.end());
  EXPECT_NE(std::find(descs.begin(), descs.end(), "mmap"), descs.end());
  EXPECT_EQ(std::find(descs.begin(), descs.end(), "munmap"), descs.end());
  const auto all = names("");
  const auto but_read = names("!read");
  EXPECT_EQ(but_read.size() + 1, all.size());
  EXPECT_EQ(names("%memory").front(), "mmap");
  EXPECT_FALSE(strace::select_syscalls("%nosuch", kIsa).has_value());
  EXPECT_FALSE(strace::select_syscalls("openat,nosuchcall", kIsa).has_value());
}

TEST(StraceCalls, DefinitionsCopyFileNamesAndBuffers) {
  const auto defs = strace::strace_definitions(
      {syscalls::find_syscall(kIsa, "read"), syscalls::find_syscall(kIsa, "openat"),
       syscalls::find_syscall(kIsa, "write")},
      100, kIsa);
  EXPECT_EQ(defs, (std::vector<std::string>{
                      "e:strace/read syscalls/sys_enter_read fd=$fd buf=$buf count=$count",
                      "e:strace_exit/read syscalls/sys_exit_read ret=$ret "
                      "buf_data0=+0(%si):u8[64] buf_data1=+64(%si):u8[36]",
                      "e:strace/openat syscalls/sys_enter_openat dfd=$dfd filename=$filename "
                      "filename_str=+0($filename):ustring flags=$flags mode=$mode",
                      "syscalls:sys_exit_openat",
                      "e:strace/write syscalls/sys_enter_write fd=$fd buf=$buf "
                      "buf_data0=+0($buf):u8[64] buf_data1=+64($buf):u8[36] count=$count",
                      "syscalls:sys_exit_write"}));
}

}  // namespace
}  // namespace dprobe::cli
