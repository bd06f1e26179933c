// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The JSON line (the ftrace text line: formatter.cc).
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "trace/formatter.h"
#include "trace/formatter_parts.h"
#include "trace/hit/fetch_type.h"
#include "trace/json.h"
#include "trace/record.h"

namespace dprobe::trace {
namespace {

using namespace formatter_parts;

// ---- The JSON line --------------------------------------------------------

class JsonLine : LineWriter {
 public:
  using LineWriter::LineWriter;

  void header(const EventDesc& ev, std::string_view comm, uint64_t ns,
              const TraceFormatter::NamespaceIds* own) {
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
    if (own != nullptr) {
      key("ns_pid");
      append_decimal(out_, own->pid);
      key("ns_tid");
      append_decimal(out_, own->tid);
    }
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
    append_values(out_, arg, '[', ']',
                  [this](const FetchType& type, uint32_t offset) { value(type, offset); });
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
        // A number, as jq and every JSON reader take one; the text trace
        // keeps the kernel's 0x... for the x types.
        return append_decimal(out_, *raw);
      case TypeClass::kChar: {
        const char c = static_cast<char>(*raw);
        return append_json_string(out_, {&c, 1});
      }
      case TypeClass::kSymbol:
      case TypeClass::kSymStr:
        return symbol_string(*raw);
      case TypeClass::kFloat: {
        // JSON has no nan or inf: those go as strings.
        std::string number;
        if (append_float(number, *raw, type.size)) {
          out_.append(number);
        } else {
          append_json_string(out_, number);
        }
        return;
      }
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
};

}  // namespace

void TraceFormatter::format_json(const EventDesc& ev, std::span<const std::byte> record,
                                 std::string_view comm, std::string& out,
                                 std::optional<uint64_t> ns, const NamespaceIds* own) const {
  const RecordView view(record);
  JsonLine line(view, symbolizer_, out);
  line.header(ev, comm, ns.value_or(timestamp_ns(view.header())), own);
  line.ip_fields(ev);
  line.args(ev);
  line.stack(ev);
  line.end();
}

}  // namespace dprobe::trace
