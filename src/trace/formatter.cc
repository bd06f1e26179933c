// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The ftrace text line (the JSON line: formatter_json.cc).
#include "trace/formatter.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "trace/formatter_parts.h"
#include "trace/hit/fetch_type.h"
#include "trace/record.h"

namespace dprobe::trace {
namespace {

using namespace formatter_parts;

// ---- The ftrace text line -------------------------------------------------

class TextLine : LineWriter {
 public:
  using LineWriter::LineWriter;

  // "%16s-%-7d [%03d] ..... %5lu.%06lu: %s: ", the kernel's line head with
  // the flags column fixed.
  void header(std::string_view comm, std::string_view event, uint64_t ns) {
    head(comm, ns);
    out_.append(event);
    out_.append(": ", 2);
  }

  // The line head up to the timestamp's ": ".
  void head(std::string_view comm, uint64_t ns) {
    const RecordHeader& h = record_.header();
    const Timestamp ts = split_timestamp(ns);
    append_padded(out_, comm, 16, ' ');
    out_.push_back('-');
    append_left_aligned(out_, digits(fmt::format_int(h.tid)), 7);
    out_.append(" [", 2);
    append_padded(out_, digits(fmt::format_int(h.cpu)), 3, '0');
    out_.append("] ..... ", 8);
    append_padded(out_, digits(fmt::format_int(ts.seconds)), 5, ' ');
    out_.push_back('.');
    append_padded(out_, digits(fmt::format_int(ts.micros)), 6, '0');
    out_.append(": ", 2);
  }

  // The kernel's syscall lines (print_syscall_enter / print_syscall_exit):
  //   sys_openat(dfd: 0xffffff9c, filename: 0x7f4b16dcf0b1, flags: 0x80000, mode: 0)
  //   sys_openat -> 0x3
  // An argument below 10 prints without its 0x ("fd: 3"), as 6.x kernels
  // print it; the result always with it.
  void syscall_enter(const EventDesc& ev) {
    out_.append("sys_", 4);
    out_.append(ev.syscall_name);
    out_.push_back('(');
    for (size_t i = 0; i < ev.args.size(); ++i) {
      if (i != 0) out_.append(", ", 2);
      out_.append(ev.args[i].name);
      out_.append(": ", 2);
      const std::optional<uint64_t> value = record_.load(ev.args[i].offset, 8);
      if (!value) {
        append(kBad);
      } else if (*value < 10) {
        out_.push_back(static_cast<char>('0' + *value));
      } else {
        append_hex(out_, *value);
      }
    }
    out_.push_back(')');
  }
  void syscall_exit(const EventDesc& ev) {
    out_.append("sys_", 4);
    out_.append(ev.syscall_name);
    out_.append(" -> ", 4);
    const std::optional<uint64_t> ret =
        ev.args.empty() ? std::nullopt : record_.load(ev.args[0].offset, 8);
    if (!ret) return append(kBad);
    append_hex(out_, *ret);
  }

  // raw_syscalls: "sys_enter: NR 33 (b, 1, 55bf25e8d9bc, 0, 7, b)" and
  // "sys_exit: NR 33 = 1"; the fields are id, then args[6] or ret.
  void raw_syscall(const EventDesc& ev) {
    const bool exit = ev.source == EventSource::kRawSyscallExit;
    out_.append(exit ? "sys_exit: NR " : "sys_enter: NR ");
    std::optional<uint64_t> id =
        ev.args.empty() ? std::nullopt : record_.load(ev.args[0].offset, 8);
    if (!id) return append(kBad);
    append_signed(out_, static_cast<int64_t>(*id));
    if (exit) {
      out_.append(" = ", 3);
      const std::optional<uint64_t> ret =
          ev.args.size() < 2 ? std::nullopt : record_.load(ev.args[1].offset, 8);
      if (!ret) return append(kBad);
      return append_signed(out_, static_cast<int64_t>(*ret));
    }
    out_.append(" (", 2);
    for (size_t i = 1; i < ev.args.size(); ++i) {
      if (i != 1) out_.append(", ", 2);
      const std::optional<uint64_t> value = record_.load(ev.args[i].offset, 8);
      if (!value) {
        append(kBad);
      } else {
        append_bare_hex(*value);
      }
    }
    out_.push_back(')');
  }

  // An event probe names the event it is attached to: "(syscalls.sys_enter_openat)".
  // ftrace's user stack block, after the event's line (options/
  // userstacktrace), each frame symbolized with its object:
  //   "              ls-1882    [000] .....    86.566478: <user stack trace>"
  //   " => opendir+0x1a/0x9a (libc.so.6)"
  void user_stack(const EventDesc& ev, std::string_view comm, uint64_t ns) {
    head(comm, ns);
    out_.append("<user stack trace>\n");
    record_.for_each_frame(ev.stack_offset, [&](uint64_t pc) {
      out_.append(" => ", 4);
      if (pc == 0) {
        out_.append("??\n", 3);
        return;
      }
      symbol(pc, true);
      if (symbolizer_ != nullptr) {
        const std::string_view object = symbolizer_->object_name(pc);
        if (!object.empty()) {
          out_.append(" (", 2);
          out_.append(object);
          out_.push_back(')');
        }
      }
      out_.push_back('\n');
    });
  }

  void attached_event(const EventDesc& ev) {
    const bool exit = is_syscall_exit(ev.source);
    out_.append(exit ? "(syscalls.sys_exit_" : "(syscalls.sys_enter_");
    out_.append(ev.syscall_name);
    out_.push_back(')');
  }

  // "(sym+0xoff/0xsize)", or for a return "(caller+0xoff/0xsize <- func)".
  // The ip fields are one unit: if any is missing the whole group is (bad).
  void ip_fields(const EventDesc& ev) {
    if (!ev.is_return) {
      const std::optional<uint64_t> ip = record_.load(EventDesc::kIpOffset, 8);
      if (!ip) return append(kBad);
      out_.push_back('(');
      symbol(*ip, /*with_offset=*/true);
      out_.push_back(')');
      return;
    }
    const std::optional<uint64_t> func = record_.load(EventDesc::kFuncOffset, 8);
    const std::optional<uint64_t> ret_ip = record_.load(EventDesc::kRetIpOffset, 8);
    if (!func || !ret_ip) return append(kBad);
    out_.push_back('(');
    symbol(*ret_ip, /*with_offset=*/true);
    out_.append(" <- ", 4);
    symbol(*func, /*with_offset=*/false);
    out_.push_back(')');
  }

  // " name=value", or " name={v,v,...}" for an array.
  void arg(const EventArg& arg) {
    out_.push_back(' ');
    out_.append(arg.name);
    out_.push_back('=');
    append_values(out_, arg, '{', '}',
                  [this](const FetchType& type, uint32_t offset) { value(type, offset); });
  }

 private:
  void value(const FetchType& type, uint32_t offset) {
    if (type.cls == TypeClass::kString) return string_value(offset);
    const std::optional<uint64_t> raw = record_.load(offset, type.size);
    if (!raw) return append(kBad);
    switch (type.cls) {
      case TypeClass::kUnsigned:
        return append_decimal(out_, *raw);
      case TypeClass::kSigned:
        return append_signed(out_, sign_extend(*raw, type.size));
      case TypeClass::kHex:
        return append_hex(out_, *raw);
      case TypeClass::kChar:
        return quoted('\'', [&] { out_.push_back(static_cast<char>(*raw)); });
      case TypeClass::kSymbol:
        return symbol(*raw, /*with_offset=*/true);
      case TypeClass::kSymStr:
        return quoted('"', [&] { symbol(*raw, /*with_offset=*/true); });
      case TypeClass::kFloat:
        (void)append_float(out_, *raw, type.size);
        return;
      case TypeClass::kString:
        return;  // handled above
    }
  }

  // The raw bytes, nothing escaped: the kernel prints "%s".
  void string_value(uint32_t offset) {
    const StringField field = record_.string_at(offset);
    switch (field.state) {
      case StringField::State::kOk:
        return quoted('"', [&] { append(field.text); });
      case StringField::State::kFault:
        return append(kFault);
      case StringField::State::kBad:
        return append(kBad);
    }
  }

  // %pS, or just the name where the kernel prints a function (the "<- func"
  // of a return); an unknown address prints as 0x<hex> either way.
  void symbol(uint64_t address, bool with_offset) {
    const std::optional<SymbolHit> hit = find_symbol(symbolizer_, address);
    if (!hit) return append_hex(out_, address);
    out_.append(hit->name);
    if (with_offset) append_symbol_offset(out_, hit->offset, hit->size);
  }

  template <typename Body>
  void quoted(char quote, Body body) {
    out_.push_back(quote);
    body();
    out_.push_back(quote);
  }

  // %lx: the digits of append_hex without its "0x".
  void append_bare_hex(uint64_t value) {
    const size_t at = out_.size();
    append_hex(out_, value);
    out_.erase(at, 2);
  }
};

}  // namespace

void TraceFormatter::format_text(const EventDesc& ev, std::span<const std::byte> record,
                                 std::string_view comm, std::string& out,
                                 std::optional<uint64_t> ns) const {
  const RecordView view(record);
  TextLine line(view, symbolizer_, out);
  const uint64_t time = ns.value_or(timestamp_ns(view.header()));
  if (ev.source == EventSource::kProbe || ev.event_probe) {
    line.header(comm, ev.name, time);
    if (ev.event_probe) {
      line.attached_event(ev);
    } else {
      line.ip_fields(ev);
    }
    for (const EventArg& arg : ev.args) line.arg(arg);
  } else {
    line.head(comm, time);
    switch (ev.source) {
      case EventSource::kSyscallEnter:
        line.syscall_enter(ev);
        break;
      case EventSource::kSyscallExit:
        line.syscall_exit(ev);
        break;
      default:
        line.raw_syscall(ev);
        break;
    }
  }
  out.push_back('\n');
  if (ev.stack_offset != 0) line.user_stack(ev, comm, time);
}

}  // namespace dprobe::trace
