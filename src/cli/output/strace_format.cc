// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/strace_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <set>
#include <vector>

#include "cli/plan/strace_calls.h"
#include "trace/record_fields.h"

namespace dprobe::cli {
namespace {

using strace::SyscallCall;
using syscalls::SyscallInfo;
using trace::RecordField;

constexpr uint64_t kNsPerSecond = 1000000000;
constexpr uint64_t kNsPerMicro = 1000;

// Where an event's records keep what a strace line needs.
// A copied buffer's pieces (strace_calls.h: u8 arrays "buf_data0", ...).
struct BufferPiece {
  uint32_t offset;
  uint32_t size;
};

struct CallLayout {
  const SyscallInfo* info = nullptr;
  bool exit = false;
  uint32_t fixed_size = 0;
  std::vector<std::optional<RecordField>> args;     // by argument index
  std::vector<std::optional<RecordField>> strings;  // the copied string of each
  std::optional<RecordField> ret;
  const strace::BufferCall* buffer = nullptr;  // a call whose data prints
  std::vector<BufferPiece> pieces;             // its copy, in this event's records
};

std::optional<RecordField> field_named(const std::vector<RecordField>& fields,
                                       const std::string& name) {
  const RecordField* field = trace::find_record_field(fields, name);
  if (field == nullptr) return std::nullopt;
  return *field;
}

// The layout of a syscall event's records, or nullopt for an event that
// is none of strace's: another event probe on a syscall event has its own
// fields, not the call's arguments.
std::optional<CallLayout> call_layout(const trace::EventDesc& event) {
  const bool enter = event.source == trace::EventSource::kSyscallEnter &&
                     (!event.event_probe || event.group == strace::kEnterGroup);
  const bool exit = event.source == trace::EventSource::kSyscallExit &&
                    (!event.event_probe || event.group == strace::kExitGroup);
  if (!enter && !exit) return std::nullopt;
  const SyscallInfo* info = syscalls::find_syscall(arch::host_isa(), event.syscall_name);
  if (info == nullptr) return std::nullopt;
  const std::vector<RecordField> fields = trace::record_fields(event);
  CallLayout layout{.info = info, .exit = exit, .fixed_size = event.fixed_size};
  layout.buffer = strace::buffer_call(info->name);
  if (layout.buffer != nullptr && layout.buffer->filled == exit) {
    const std::string name =
        info->args[layout.buffer->buffer].name + std::string(strace::kDataSuffix);
    for (size_t piece = 0;; ++piece) {
      const std::string field = name + std::to_string(piece);
      const auto arg = std::find_if(event.args.begin(), event.args.end(),
                                    [&](const trace::EventArg& a) { return a.name == field; });
      if (arg == event.args.end()) break;
      layout.pieces.push_back({arg->offset, arg->field_size()});
    }
  }
  if (exit) {
    layout.ret = field_named(fields, "ret");
    return layout;
  }
  for (size_t i = 0; i < info->arg_count; ++i) {
    const std::string name = info->args[i].name;
    layout.args.push_back(field_named(fields, name));
    layout.strings.push_back(field_named(fields, name + std::string(strace::kStringSuffix)));
  }
  return layout;
}

// A copied string: nullopt when the copy faulted, or the record is short.
std::optional<std::string> read_copied_string(const RecordField& field, std::string_view bytes) {
  if (field.source != trace::FieldSource::kString || field.offset + 4 > bytes.size()) {
    return std::nullopt;
  }
  const auto loc = trace::load_field<uint32_t>(bytes.data(), field.offset);
  const uint32_t length = trace::data_loc_length(loc);
  const uint32_t offset = trace::data_loc_offset(loc);
  if (length == 0 || offset + length > bytes.size()) return std::nullopt;
  std::string text(bytes.substr(offset, length));
  if (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

// A buffer's copy, its pieces put together; nullopt without one.
std::optional<std::string> read_buffer(const CallLayout& layout, std::string_view bytes) {
  if (layout.pieces.empty()) return std::nullopt;
  std::string copy;
  for (const BufferPiece& piece : layout.pieces) {
    if (piece.offset + piece.size > bytes.size()) return std::nullopt;
    copy.append(bytes.substr(piece.offset, piece.size));
  }
  return copy;
}

SyscallCall decode_enter(const CallLayout& layout, const trace::FileRecord& record) {
  SyscallCall call{.info = layout.info};
  const trace::HitFields hit{reinterpret_cast<const std::byte*>(record.bytes.data()), "", 0};
  for (size_t i = 0; i < layout.args.size(); ++i) {
    call.has_arg[i] = layout.args[i].has_value();
    if (layout.args[i]) call.args[i] = trace::read_number(*layout.args[i], hit);
    if (layout.strings[i]) call.strings[i] = read_copied_string(*layout.strings[i], record.bytes);
  }
  if (layout.buffer != nullptr && !layout.buffer->filled) {
    call.buffer = read_buffer(layout, record.bytes);
    call.buffer_length = call.args[layout.buffer->length];
  }
  return call;
}

// Where a call's line is cut between its entry and its exit: before the
// buffer the kernel fills; none (the whole line at entry) for the others.
std::optional<size_t> split_of(const SyscallCall& call) {
  const strace::BufferCall* buffer = strace::buffer_call(call.info->name);
  if (buffer == nullptr || !buffer->filled) return std::nullopt;
  return buffer->buffer;
}

// A call entered whose line is not finished yet.
struct Pending {
  SyscallCall call;
  uint64_t enter_ns = 0;
  uint32_t stream = 0;
};

class StraceWriter {
 public:
  StraceWriter(const StraceOptions& options, bool several_threads)
      : options_(options), several_threads_(several_threads) {}

  void enter(const trace::RecordHeader& header, uint32_t stream, SyscallCall call) {
    if (auto earlier = pending_.find(header.tid); earlier != pending_.end()) {
      // Its thread went on without the exit: after an execve that
      // succeeded, in the new program (another stream of the file).
      resume(header.tid, earlier->second, header.timestamp,
             exec_succeeded(earlier->second, stream) ? "0" : "?");
    }
    end_open_line();
    const size_t first_part = split_of(call).value_or(call.info->arg_count);
    out_ += leader(header.tid, header.timestamp) + strace::call_name(*call.info) + "(" +
            strace::arguments_text(call, options_.string_limit, 0, first_part);
    if (first_part < call.info->arg_count && first_part > 0) out_ += ", ";
    if (strace::never_returns(*call.info)) {
      end_call("?");
      if (std::string_view(call.info->name) == "exit_group") {
        out_ += leader(header.tid, header.timestamp) +
                fmt::format("+++ exited with {} +++\n", static_cast<int32_t>(call.args[0]));
      }
      return;
    }
    pending_[header.tid] = Pending{std::move(call), header.timestamp, stream};
    open_tid_ = header.tid;
  }

  // `filled`: the buffer the kernel filled, copied at the exit.
  void exit(const trace::RecordHeader& header, const SyscallInfo& info, int64_t ret,
            std::optional<std::string> filled) {
    auto found = pending_.find(header.tid);
    if (found == pending_.end() || found->second.call.info != &info) {
      // A return whose entry the trace does not hold (attached mid-call).
      end_open_line();
      SyscallCall call{.info = &info};
      call.has_arg.fill(false);
      out_ +=
          leader(header.tid, header.timestamp) + "<... " + strace::call_name(info) + " resumed>";
      end_call(strace::result_text(call, ret));
      return;
    }
    Pending pending = std::move(found->second);
    pending_.erase(found);
    if (filled && ret >= 0) {
      pending.call.buffer = std::move(filled);
      pending.call.buffer_length = static_cast<uint64_t>(ret);
    }
    std::string result = strace::result_text(pending.call, ret);
    if (options_.durations) result += duration(header.timestamp - pending.enter_ns);
    if (open_tid_ == header.tid) {
      out_ += rest_of(pending.call);
      end_call(result);
      open_tid_.reset();
    } else {
      end_open_line();
      resume_line(header.tid, pending.call, header.timestamp, result);
    }
  }

  std::string finish() {
    end_open_line();
    return std::move(out_);
  }

 private:
  static bool exec_succeeded(const Pending& pending, uint32_t stream) {
    const std::string_view name = pending.call.info->name;
    return (name == "execve" || name == "execveat") && stream != pending.stream;
  }

  // The arguments a line printed at the exit: from its split on.
  std::string rest_of(const SyscallCall& call) const {
    const auto split = split_of(call);
    return split ? strace::arguments_text(call, options_.string_limit, *split) : std::string();
  }

  void resume(uint32_t tid, const Pending& pending, uint64_t ns, const std::string& result) {
    if (open_tid_ == tid) {
      out_ += rest_of(pending.call);
      end_call(result);
      open_tid_.reset();
    } else {
      resume_line(tid, pending.call, ns, result);
    }
    pending_.erase(tid);
  }

  void resume_line(uint32_t tid, const SyscallCall& call, uint64_t ns, const std::string& result) {
    out_ += leader(tid, ns) + "<... " + strace::call_name(*call.info) + " resumed>" + rest_of(call);
    end_call(result);
  }

  // ") = RESULT": the result in strace's column (its -a, 40 by default)
  // where the line is shorter.
  void end_call(const std::string& result) {
    constexpr size_t kResultColumn = 40;
    out_ += ")";
    const size_t line_start = out_.rfind('\n') + 1;  // npos + 1: the first line
    const size_t column = out_.size() - line_start;
    out_ += column < kResultColumn ? std::string(kResultColumn - column, ' ') : std::string(" ");
    out_ += "= " + result + "\n";
  }

  // Another thread's line begins: the open one waits, unfinished.
  void end_open_line() {
    if (!open_tid_) return;
    out_ += " <unfinished ...>\n";
    open_tid_.reset();
  }

  std::string leader(uint32_t tid, uint64_t ns) {
    std::string text = several_threads_ ? fmt::format("[pid {:>5}] ", tid) : std::string();
    return text + timestamp(ns);
  }

  std::string timestamp(uint64_t ns) {
    const int64_t wall = static_cast<int64_t>(ns) + options_.wall_offset_ns;
    const auto seconds = static_cast<time_t>(wall / static_cast<int64_t>(kNsPerSecond));
    const int64_t micros = (wall % static_cast<int64_t>(kNsPerSecond)) / 1000;
    switch (options_.timestamps) {
      case StraceTimestamps::kNone:
        return {};
      case StraceTimestamps::kSeconds:
        return clock_time(seconds) + " ";
      case StraceTimestamps::kMicros:
        return fmt::format("{}.{:06} ", clock_time(seconds), micros);
      case StraceTimestamps::kEpoch:
        return fmt::format("{}.{:06} ", seconds, micros);
      case StraceTimestamps::kRelative: {
        const uint64_t since = last_ns_ ? ns - std::min(ns, *last_ns_) : 0;
        last_ns_ = ns;
        return fmt::format("{:>6}.{:06} ", since / kNsPerSecond,
                           (since % kNsPerSecond) / kNsPerMicro);
      }
    }
    return {};
  }

  static std::string clock_time(time_t seconds) {
    struct tm local {};
    ::localtime_r(&seconds, &local);
    return fmt::format("{:02}:{:02}:{:02}", local.tm_hour, local.tm_min, local.tm_sec);
  }

  static std::string duration(uint64_t ns) {
    return fmt::format(" <{}.{:06}>", ns / kNsPerSecond, (ns % kNsPerSecond) / kNsPerMicro);
  }

  const StraceOptions& options_;
  bool several_threads_;
  std::string out_;
  std::map<uint32_t, Pending> pending_;  // by thread
  std::optional<uint32_t> open_tid_;     // whose line waits for its result
  std::optional<uint64_t> last_ns_;      // -r: the previous line's time
};

}  // namespace

std::optional<StraceTimestamps> parse_strace_timestamps(std::string_view text) {
  if (text == "t") return StraceTimestamps::kSeconds;
  if (text == "tt") return StraceTimestamps::kMicros;
  if (text == "ttt") return StraceTimestamps::kEpoch;
  if (text == "r") return StraceTimestamps::kRelative;
  return std::nullopt;
}

std::string strace_text(const trace::TraceFileContents& file, const StraceOptions& options) {
  std::map<std::pair<uint32_t, uint16_t>, std::optional<CallLayout>> layouts;
  for (const auto& [key, event] : file.events) layouts.emplace(key, call_layout(event));
  struct Step {
    const trace::FileRecord* record;
    const CallLayout* layout;
    trace::RecordHeader header;
  };
  std::vector<Step> steps;
  std::set<uint32_t> threads;
  for (const trace::FileRecord& record : file.records) {
    if (record.bytes.size() < sizeof(trace::RecordHeader)) continue;
    const auto header = trace::load_field<trace::RecordHeader>(record.bytes.data(), 0);
    const auto found = layouts.find({record.stream, header.type});
    if (found == layouts.end() || !found->second) continue;
    if (record.bytes.size() < found->second->fixed_size) continue;
    steps.push_back({&record, &*found->second, header});
    threads.insert(header.tid);
  }
  StraceWriter writer(options, threads.size() > 1);
  for (const Step& step : steps) {
    if (!step.layout->exit) {
      writer.enter(step.header, step.record->stream, decode_enter(*step.layout, *step.record));
      continue;
    }
    if (!step.layout->ret) continue;
    const trace::HitFields hit{reinterpret_cast<const std::byte*>(step.record->bytes.data()), "",
                               0};
    writer.exit(step.header, *step.layout->info,
                static_cast<int64_t>(trace::read_number(*step.layout->ret, hit)),
                read_buffer(*step.layout, step.record->bytes));
  }
  return writer.finish();
}

}  // namespace dprobe::cli
