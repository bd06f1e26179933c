// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/formatter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>

#include "trace/hit/fetch_type.h"
#include "trace/json.h"
#include "trace/record.h"

namespace dprobe::trace {
namespace {

constexpr std::string_view kBad = "(bad)";
constexpr std::string_view kFault = "(fault)";

// ---- Reading records ------------------------------------------------------

struct StringField {
  enum class State : uint8_t { kOk, kFault, kBad };
  State state;
  std::string_view text;  // the bytes before the NUL, as the kernel's %s
};

// The part of a record the formatter may read: the shorter of the buffer
// and the header's own size, so no field, however broken, reads past either.
class RecordView {
 public:
  explicit RecordView(std::span<const std::byte> record) {
    if (record.size() < kRecordHeaderSize) return;  // every field is then (bad)
    header_ = load_field<RecordHeader>(record.data(), 0);
    data_ = record.data();
    size_ = std::min<size_t>(record.size(), header_.size);
  }

  const RecordHeader& header() const { return header_; }

  bool contains(uint32_t offset, uint64_t length) const { return offset + length <= size_; }

  // A field of 1, 2, 4 or 8 bytes, zero-extended; nullopt outside the record.
  std::optional<uint64_t> load(uint32_t offset, uint32_t size) const {
    if (!contains(offset, size)) return std::nullopt;
    switch (size) {
      case 1:
        return load_field<uint8_t>(data_, offset);
      case 2:
        return load_field<uint16_t>(data_, offset);
      case 4:
        return load_field<uint32_t>(data_, offset);
      case 8:
        return load_field<uint64_t>(data_, offset);
      default:
        return std::nullopt;
    }
  }

  // The string a __data_loc word at `offset` points to.
  StringField string_at(uint32_t offset) const {
    const std::optional<uint64_t> loc = load(offset, 4);
    if (!loc) return {StringField::State::kBad, {}};
    const auto word = static_cast<uint32_t>(*loc);
    const uint32_t length = data_loc_length(word);
    const uint32_t start = data_loc_offset(word);
    if (length == 0) return {StringField::State::kFault, {}};
    if (!contains(start, length)) return {StringField::State::kBad, {}};
    const char* text = reinterpret_cast<const char*>(data_ + start);
    const void* nul = std::memchr(text, 0, length);
    const size_t size = nul ? static_cast<size_t>(static_cast<const char*>(nul) - text) : length;
    return {StringField::State::kOk, {text, size}};
  }

  // The user stack a __data_loc word at `offset` points to (--stacktrace):
  // its return addresses, innermost first; none if the field is broken.
  template <typename Frame>
  void for_each_frame(uint32_t offset, Frame frame) const {
    const std::optional<uint64_t> loc = load(offset, 4);
    if (!loc) return;
    const auto word = static_cast<uint32_t>(*loc);
    const uint32_t start = data_loc_offset(word);
    const uint32_t length = data_loc_length(word);
    if (!contains(start, length)) return;
    for (uint32_t at = start; at + 8 <= start + length; at += 8) {
      frame(load_field<uint64_t>(data_, at));
    }
  }

 private:
  RecordHeader header_{};
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

int64_t sign_extend(uint64_t value, uint32_t size) {
  switch (size) {
    case 1:
      return static_cast<int8_t>(static_cast<uint8_t>(value));
    case 2:
      return static_cast<int16_t>(static_cast<uint16_t>(value));
    case 4:
      return static_cast<int32_t>(static_cast<uint32_t>(value));
    default:
      return static_cast<int64_t>(value);
  }
}

// A hit with no name is no better than no hit: the address prints raw.
std::optional<SymbolHit> find_symbol(const Symbolizer* symbolizer, uint64_t address) {
  if (symbolizer == nullptr) return std::nullopt;
  std::optional<SymbolHit> hit = symbolizer->symbolize(address);
  if (hit && hit->name.empty()) return std::nullopt;
  return hit;
}

// ---- Writing numbers ------------------------------------------------------

void append_decimal(std::string& out, uint64_t value) {
  const fmt::format_int text(value);
  out.append(text.data(), text.size());
}

void append_signed(std::string& out, int64_t value) {
  const fmt::format_int text(value);
  out.append(text.data(), text.size());
}

// The kernel's 0x%x: lower case, no padding. By hand rather than through
// fmt: a quarter of a line's time went into fmt's spec handling here.
void append_hex(std::string& out, uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  char text[18];
  char* begin = std::end(text);
  do {
    *--begin = kDigits[value & 0xf];
    value >>= 4;
  } while (value != 0);
  *--begin = 'x';
  *--begin = '0';
  out.append(begin, static_cast<size_t>(std::end(text) - begin));
}

// printf's %5s / %03u: pads to `width` bytes. Bytes, not characters, so a
// UTF-8 comm lines up as it does in the kernel's output (fmt would count
// code points).
void append_padded(std::string& out, std::string_view text, size_t width, char fill) {
  if (text.size() < width) out.append(width - text.size(), fill);
  out.append(text);
}
// printf's %-7s.
void append_left_aligned(std::string& out, std::string_view text, size_t width) {
  out.append(text);
  if (text.size() < width) out.append(width - text.size(), ' ');
}

std::string_view digits(const fmt::format_int& number) { return {number.data(), number.size()}; }

// The tail of %pS after the name: "+0xoff/0xsize".
void append_symbol_offset(std::string& out, uint64_t offset, uint64_t size) {
  out.push_back('+');
  append_hex(out, offset);
  out.push_back('/');
  append_hex(out, size);
}

// seconds.microseconds, truncated as the kernel's trace output does.
struct Timestamp {
  uint64_t seconds;
  uint64_t micros;
};
Timestamp split_timestamp(uint64_t ns) { return {ns / 1000000000u, ns % 1000000000u / 1000u}; }

// ---- The ftrace text line -------------------------------------------------

class TextLine {
 public:
  TextLine(const RecordView& record, const Symbolizer* symbolizer, std::string& out)
      : record_(record), symbolizer_(symbolizer), out_(out) {}

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
    const FetchType& type = fetch_type(arg.type);
    if (arg.count == 0) return value(type, arg.offset);
    out_.push_back('{');
    for (uint32_t i = 0; i < arg.count; ++i) {
      if (i != 0) out_.push_back(',');
      value(type, arg.offset + i * type.size);
    }
    out_.push_back('}');
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

  void append(std::string_view text) { out_.append(text); }

  // %lx: the digits of append_hex without its "0x".
  void append_bare_hex(uint64_t value) {
    const size_t at = out_.size();
    append_hex(out_, value);
    out_.erase(at, 2);
  }

  const RecordView& record_;
  const Symbolizer* symbolizer_;
  std::string& out_;
};

// ---- The JSON line --------------------------------------------------------

class JsonLine {
 public:
  JsonLine(const RecordView& record, const Symbolizer* symbolizer, std::string& out)
      : record_(record), symbolizer_(symbolizer), out_(out) {}

  void header(const EventDesc& ev, std::string_view comm, uint64_t ns) {
    const RecordHeader& h = record_.header();
    const Timestamp ts = split_timestamp(ns);
    out_.append("{\"ts\":", 6);
    append_decimal(out_, ts.seconds);
    out_.push_back('.');
    append_padded(out_, digits(fmt::format_int(ts.micros)), 6, '0');
    out_.append(",\"comm\":", 8);
    append_json_string(out_, comm);
    key("pid");
    append_decimal(out_, h.pid);
    key("tid");
    append_decimal(out_, h.tid);
    key("cpu");
    append_decimal(out_, h.cpu);
    key("group");
    append_json_string(out_, ev.group);
    key("event");
    append_json_string(out_, ev.name);
  }

  void ip_fields(const EventDesc& ev) {
    if (!ev.is_return) return address("ip", "sym", EventDesc::kIpOffset, /*with_offset=*/true);
    address("func", "func_sym", EventDesc::kFuncOffset, /*with_offset=*/false);
    address("ret_ip", "ret_sym", EventDesc::kRetIpOffset, /*with_offset=*/true);
  }

  void args(const EventDesc& ev) {
    key("args");
    out_.push_back('{');
    for (size_t i = 0; i < ev.args.size(); ++i) {
      if (i != 0) out_.push_back(',');
      arg(ev.args[i]);
    }
    out_.push_back('}');
  }

  // --stacktrace: "stack":[{"ip":"0x..","sym":"f+0x1a/0x40","object":"libc.so.6"},...],
  // innermost first, sym and object only when known.
  void stack(const EventDesc& ev) {
    if (ev.stack_offset == 0) return;
    key("stack");
    out_.push_back('[');
    bool first = true;
    record_.for_each_frame(ev.stack_offset, [&](uint64_t pc) {
      if (!first) out_.push_back(',');
      first = false;
      out_.append("{\"ip\":", 6);
      hex_string(pc);
      const std::optional<SymbolHit> hit = find_symbol(symbolizer_, pc);
      if (hit) {
        key("sym");
        symbol_string(pc);
      }
      if (symbolizer_ != nullptr && !symbolizer_->object_name(pc).empty()) {
        key("object");
        append_json_string(out_, symbolizer_->object_name(pc));
      }
      out_.push_back('}');
    });
    out_.push_back(']');
  }

  void end() { out_.append("}\n", 2); }

 private:
  // ,"name": -- every key but the first follows another member. Our own
  // keys need no escaping.
  void key(std::string_view name) {
    out_.append(",\"", 2);
    out_.append(name);
    out_.append("\":", 2);
  }

  // "ip":"0x..","sym":"name+0xoff/0xsize", the sym key only when known.
// GCC 12 sees a dangling pointer to the symbol here that is not there (a
// false positive of its -Wdangling-pointer once append_hex is inlined).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
  void address(std::string_view ip_key, std::string_view sym_key, uint32_t offset,
               bool with_offset) {
    key(ip_key);
    const std::optional<uint64_t> ip = record_.load(offset, 8);
    if (!ip) return append_json_string(out_, kBad);
    hex_string(*ip);
    const std::optional<SymbolHit> hit = find_symbol(symbolizer_, *ip);
    if (!hit) return;
    key(sym_key);
    out_.push_back('"');
    append_json_escaped(out_, hit->name);
    if (with_offset) append_symbol_offset(out_, hit->offset, hit->size);
    out_.push_back('"');
  }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  void arg(const EventArg& arg) {
    out_.push_back('"');
    append_json_escaped(out_, arg.name);
    out_.append("\":", 2);
    const FetchType& type = fetch_type(arg.type);
    if (arg.count == 0) return value(type, arg.offset);
    out_.push_back('[');
    for (uint32_t i = 0; i < arg.count; ++i) {
      if (i != 0) out_.push_back(',');
      value(type, arg.offset + i * type.size);
    }
    out_.push_back(']');
  }

  void value(const FetchType& type, uint32_t offset) {
    if (type.cls == TypeClass::kString) return string_value(offset);
    const std::optional<uint64_t> raw = record_.load(offset, type.size);
    if (!raw) return append_json_string(out_, kBad);
    switch (type.cls) {
      case TypeClass::kUnsigned:
        return append_decimal(out_, *raw);
      case TypeClass::kSigned:
        return append_signed(out_, sign_extend(*raw, type.size));
      case TypeClass::kHex:
        return hex_string(*raw);
      case TypeClass::kChar: {
        const char c = static_cast<char>(*raw);
        return append_json_string(out_, {&c, 1});
      }
      case TypeClass::kSymbol:
      case TypeClass::kSymStr:
        return symbol_string(*raw);
      case TypeClass::kString:
        return;  // handled above
    }
  }

  void string_value(uint32_t offset) {
    const StringField field = record_.string_at(offset);
    switch (field.state) {
      case StringField::State::kOk:
        return append_json_string(out_, field.text);
      case StringField::State::kFault:
        return append("null");
      case StringField::State::kBad:
        return append_json_string(out_, kBad);
    }
  }

  void hex_string(uint64_t value) {
    out_.push_back('"');
    append_hex(out_, value);
    out_.push_back('"');
  }

  void symbol_string(uint64_t address) {
    const std::optional<SymbolHit> hit = find_symbol(symbolizer_, address);
    if (!hit) return hex_string(address);
    out_.push_back('"');
    append_json_escaped(out_, hit->name);
    append_symbol_offset(out_, hit->offset, hit->size);
    out_.push_back('"');
  }

  void append(std::string_view text) { out_.append(text); }

  const RecordView& record_;
  const Symbolizer* symbolizer_;
  std::string& out_;
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

void TraceFormatter::format_json(const EventDesc& ev, std::span<const std::byte> record,
                                 std::string_view comm, std::string& out,
                                 std::optional<uint64_t> ns) const {
  const RecordView view(record);
  JsonLine line(view, symbolizer_, out);
  line.header(ev, comm, ns.value_or(timestamp_ns(view.header())));
  line.ip_fields(ev);
  line.args(ev);
  line.stack(ev);
  line.end();
}

}  // namespace dprobe::trace
