// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every width and format below is the kernel's (kernel/trace/
// trace_events_hist.c: hist_trigger_print_key, hist_trigger_entry_print,
// hist_trigger_show). Padding counts bytes, as printf does.
#include "trace/hist_format.h"

#include <algorithm>
#include <optional>

namespace dprobe::trace {
namespace {

std::string decimal(uint64_t value) { return std::to_string(value); }

// %llx: lower case, no prefix.
std::string hex(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  return out;
}

// %Ns and %-Ns.
std::string right(std::string text, size_t width) {
  if (text.size() < width) text.insert(0, width - text.size(), ' ');
  return text;
}
std::string left(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

// The kernel's %ps (with_offset false) and %pS for a user address.
std::string symbol(const HistNames& names, uint64_t address, bool with_offset) {
  std::optional<SymbolHit> hit;
  if (names.symbols != nullptr) hit = names.symbols->symbolize(address);
  if (!hit || hit->name.empty()) return "0x" + hex(address);
  std::string out(hit->name);
  if (with_offset) out += "+0x" + hex(hit->offset) + "/0x" + hex(hit->size);
  const std::string_view object = names.symbols->object_name(address);
  if (!object.empty()) out += " [" + std::string(object) + "]";
  return out;
}

std::string syscall_name(const HistNames& names, uint64_t nr) {
  std::string name = names.syscall_name ? names.syscall_name(nr) : std::string();
  return name.empty() ? "unknown_syscall" : name;
}

// One key as hist_trigger_print_key prints it, after "{ " or ", ".
std::string key_text(const HistKey& key, const HistKeyValue& value, const HistEntry& entry,
                     const HistNames& names) {
  const std::string name = key.label + ": ";
  const uint64_t v = value.number;
  if (key.stacktrace) {
    std::string out = key.label + ":\n";
    for (uint64_t pc : value.frames) out += std::string(9, ' ') + symbol(names, pc, true) + "\n";
    return out;
  }
  if (key.has(kHistHex)) return name + hex(v);
  if (key.has(kHistSym)) return name + "[" + hex(v) + "] " + left(symbol(names, v, false), 45);
  if (key.has(kHistSymOffset)) {
    return name + "[" + hex(v) + "] " + left(symbol(names, v, true), 55);
  }
  if (key.has(kHistExecname))
    return name + left(entry.comm, 16) + "[" + right(decimal(v), 10) + "]";
  if (key.has(kHistSyscall)) {
    return name + left(syscall_name(names, v), 30) + "[" + right(decimal(v), 3) + "]";
  }
  if (key.has(kHistLog2)) return name + "~ 2^" + left(decimal(v), 2);
  if (key.has(kHistBuckets)) return name + "~ " + decimal(v) + "-" + decimal(v + key.buckets - 1);
  if (key.is_string()) return name + left(value.text, 50);
  return name + right(decimal(v), 10);
}

std::string entry_line(const HistSpec& spec, const HistEntry& entry, const HistNames& names) {
  std::string out = "{ ";
  bool multiline = false;
  for (size_t i = 0; i < spec.keys.size() && i < entry.keys.size(); ++i) {
    if (i > 0) out += ", ";
    out += key_text(spec.keys[i], entry.keys[i], entry, names);
    multiline = multiline || spec.keys[i].stacktrace;
  }
  out += multiline ? "}" : " }";
  out += " hitcount: " + right(decimal(entry.hitcount), 10);
  for (size_t v = 0; v < spec.vals.size() && v < entry.vals.size(); ++v) {
    const uint64_t sum = entry.vals[v];
    const bool as_hex = spec.vals[v].has(kHistHex);
    out += "  " + spec.vals[v].label + ": " + right(as_hex ? hex(sum) : decimal(sum), 10);
  }
  return out + "\n";
}

// ---- Sorting --------------------------------------------------------------------

// A number key as the kernel's tracing_map_cmp_num sees it: the low
// `size` bytes, signed or not.
int compare_number(const RecordField& field, uint64_t a, uint64_t b) {
  const uint32_t bits = field.size >= 8 ? 64 : 8u * field.size;
  if (bits < 64) {
    const uint64_t mask = (uint64_t{1} << bits) - 1;
    a &= mask;
    b &= mask;
    if (field.is_signed) {
      const uint64_t sign = uint64_t{1} << (bits - 1);
      a = (a ^ sign) - sign;
      b = (b ^ sign) - sign;
    }
  }
  if (field.is_signed) {
    const auto sa = static_cast<int64_t>(a);
    const auto sb = static_cast<int64_t>(b);
    return sa < sb ? -1 : (sa > sb ? 1 : 0);
  }
  return a < b ? -1 : (a > b ? 1 : 0);
}

int compare_u64(uint64_t a, uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

int compare_key(const HistKey& key, const HistKeyValue& a, const HistKeyValue& b) {
  if (key.stacktrace) return 0;  // tracing_map_cmp_none
  if (key.is_string()) {
    const int c = a.text.compare(b.text);  // char_traits<char>: as unsigned bytes, as strcmp
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  return compare_number(key.field, a.number, b.number);
}

int compare_by(const HistSpec& spec, const HistSortKey& sort, const HistEntry& a,
               const HistEntry& b) {
  int c = 0;
  if (sort.source == HistSortKey::kKey && sort.index < spec.keys.size() &&
      sort.index < a.keys.size() && sort.index < b.keys.size()) {
    c = compare_key(spec.keys[sort.index], a.keys[sort.index], b.keys[sort.index]);
  } else if (sort.source == HistSortKey::kVal && sort.index < a.vals.size() &&
             sort.index < b.vals.size()) {
    c = compare_u64(a.vals[sort.index], b.vals[sort.index]);
  } else if (sort.source == HistSortKey::kHitcount) {
    c = compare_u64(a.hitcount, b.hitcount);
  }
  return sort.descending ? -c : c;
}

}  // namespace

std::vector<size_t> hist_sort_order(const HistSpec& spec, const HistResult& result) {
  std::vector<HistSortKey> sort = spec.sort;
  if (sort.empty()) sort.push_back(HistSortKey{});
  std::vector<size_t> order(result.entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    for (const HistSortKey& key : sort) {
      const int c = compare_by(spec, key, result.entries[x], result.entries[y]);
      if (c != 0) return c < 0;
    }
    return false;
  });
  return order;
}

std::string format_hist(const HistSpec& spec, std::string_view event, const HistResult& result,
                        const HistNames& names) {
  std::string out;
  if (!event.empty()) out += "# events/" + std::string(event) + "/hist\n";
  out += "# event histogram\n#\n# trigger info: " + spec.text + " [active]\n#\n\n";
  for (size_t i : hist_sort_order(spec, result)) {
    out += entry_line(spec, result.entries[i], names);
  }
  out += "\nTotals:\n    Hits: " + decimal(result.hits) +
         "\n    Entries: " + decimal(result.entries.size()) +
         "\n    Dropped: " + decimal(result.dropped) + "\n";
  return out;
}

std::string format_hist(const HistSpec& spec, std::string_view event, const HistResult& result,
                        const Symbolizer* symbols) {
  HistNames names;
  names.symbols = symbols;
  return format_hist(spec, event, result, names);
}

}  // namespace dprobe::trace
