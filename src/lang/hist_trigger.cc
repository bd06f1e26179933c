// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Follows the kernel's event_hist_trigger_parse: the " if " split, then
// parse_hist_trigger_attrs (":"-separated attributes), then the fields in
// its order (values, keys, sort keys), so that a trigger with several
// faults reports the one the kernel reports.
#include "lang/hist_trigger.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace dprobe::lang {
namespace {

using trace::FieldSource;
using trace::HistKey;
using trace::HistSortKey;
using trace::HistSpec;
using trace::RecordField;

// The kernel's err_text entries used here.
constexpr std::string_view kBadFieldModifier = "Invalid field modifier";
constexpr std::string_view kFieldNotFound = "Couldn't find field";
constexpr std::string_view kVarNotFound = "Couldn't find variable";
constexpr std::string_view kEmptyAssignment = "Empty assignment";
constexpr std::string_view kInvalidSortModifier = "Invalid sort modifier";
constexpr std::string_view kEmptySortField = "Empty sort field";
constexpr std::string_view kTooManySortFields = "Too many sort fields (Max = 2)";
constexpr std::string_view kInvalidSortField = "Sort field must be a key or a val";
constexpr std::string_view kEnoentClear = "Can't clear or continue a nonexistent hist trigger";

// A part of the text and the column it starts at.
struct Piece {
  std::string_view text;
  size_t at = 0;

  Piece sub(size_t from, size_t count = std::string_view::npos) const {
    from = std::min(from, text.size());
    return {text.substr(from, count), at + from};
  }
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

Piece trim(Piece p) {
  size_t begin = 0;
  while (begin < p.text.size() && is_blank(p.text[begin])) ++begin;
  size_t end = p.text.size();
  while (end > begin && is_blank(p.text[end - 1])) --end;
  return p.sub(begin, end - begin);
}

// strsep over the whole piece: every part, empty ones included.
std::vector<Piece> split(Piece p, char separator) {
  std::vector<Piece> parts;
  size_t start = 0;
  while (true) {
    const size_t end = p.text.find(separator, start);
    parts.push_back(p.sub(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// Splits "name.modifier" at its first dot; `modifier` is empty (and
// `has_modifier` false) without one.
struct Dotted {
  Piece name;
  Piece modifier;
  bool has_modifier = false;
};
Dotted split_dot(Piece p) {
  const size_t dot = p.text.find('.');
  if (dot == std::string_view::npos) return {p, p.sub(p.text.size()), false};
  return {p.sub(0, dot), p.sub(dot + 1), true};
}

// The kernel's kstrtoul(s, 0): decimal, 0x hex or 0 octal, one trailing
// newline allowed, no overflow.
std::optional<uint64_t> parse_ulong(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : s) {
    unsigned digit = 16;
    if (c >= '0' && c <= '9') digit = static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') digit = static_cast<unsigned>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') digit = static_cast<unsigned>(c - 'A' + 10);
    if (digit >= base) return std::nullopt;
    if (value > (UINT64_MAX - digit) / base) return std::nullopt;
    value = value * base + digit;
  }
  return value;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool is_stacktrace_name(std::string_view name) {
  return name == "stacktrace" || name == "common_stacktrace" || name == "STACKTRACE";
}

// An arithmetic expression or a constant, which the kernel would compute.
bool is_expression(std::string_view name) {
  if (!name.empty() && name[0] >= '0' && name[0] <= '9') return true;
  return name.find_first_of("+-*/()") != std::string_view::npos;
}

HistError error(std::string_view message, size_t column) {
  return HistError{std::string(message), column};
}

class HistParser {
 public:
  HistParser(std::string_view text, const std::vector<RecordField>& fields)
      : text_(text), fields_(fields) {}

  Result<HistSpec, HistError> parse() {
    if (auto e = parse_command()) return unexpected(std::move(*e));
    if (auto e = parse_vals()) return unexpected(std::move(*e));
    if (auto e = parse_keys()) return unexpected(std::move(*e));
    if (auto e = parse_sort()) return unexpected(std::move(*e));
    spec_.text = trace::hist_trigger_text(spec_);
    return std::move(spec_);
  }

 private:
  using Failure = std::optional<HistError>;

  // "hist:PARAMS[ if FILTER]" down to the attributes.
  Failure parse_command() {
    const Piece body = trim(Piece{text_, 0});
    const bool hist =
        starts_with(body.text, "hist") && (body.text.size() == 4 || body.text[4] == ':');
    if (!hist) return error("Only hist triggers are supported", body.at);
    Piece params = trim(body.sub(5));
    if (auto e = split_filter(params)) return e;
    if (params.text.empty()) return error("Missing keys", body.at + body.text.size());
    for (const Piece& token : split(params, ':')) {
      if (auto e = parse_attribute(token)) return e;
    }
    if (!keys_) return error("Missing keys", params.at + params.text.size());
    return std::nullopt;
  }

  // The kernel's rule: "if" with a blank on each side starts the filter.
  Failure split_filter(Piece& params) {
    const std::string_view t = params.text;
    size_t p = 0;
    while ((p = t.find("if", p)) != std::string_view::npos) {
      if (p == 0) return error("Missing keys", params.at);
      if (t[p - 1] != ' ' && t[p - 1] != '\t') {
        ++p;
        continue;
      }
      if (p + 3 >= t.size()) return error("Missing filter after 'if'", params.at + p);
      if (t[p + 2] != ' ' && t[p + 2] != '\t') {
        ++p;
        continue;
      }
      spec_.filter = std::string(trim(params.sub(p + 2)).text);
      params = trim(params.sub(0, p));
      return std::nullopt;
    }
    return std::nullopt;
  }

  Failure parse_attribute(Piece token) {
    const std::string_view t = token.text;
    const size_t eq = t.find('=');
    if (eq != std::string_view::npos) {
      if (eq + 1 == t.size()) return error(kEmptyAssignment, token.at);
      return parse_assignment(token, eq);
    }
    if (t == "cont" || t == "continue" || t == "clear") return error(kEnoentClear, token.at);
    if (t == "pause") return error("pause is not supported", token.at);
    if (t == "nohitcount" || t == "NOHC") return error("nohitcount is not supported", token.at);
    if (starts_with(t, "onmatch(") || starts_with(t, "onmax(") || starts_with(t, "onchange(")) {
      return error("Actions (onmatch, onmax, onchange) are not supported", token.at);
    }
    return error("Unknown hist trigger attribute", token.at);
  }

  Failure parse_assignment(Piece token, size_t eq) {
    const std::string_view t = token.text;
    const Piece value = token.sub(eq + 1);
    if (starts_with(t, "key=") || starts_with(t, "keys=")) {
      keys_ = value;
    } else if (starts_with(t, "val=") || starts_with(t, "vals=") || starts_with(t, "values=")) {
      vals_ = value;
    } else if (starts_with(t, "sort=")) {
      sort_ = value;
      sort_at_ = token.at;
    } else if (starts_with(t, "name=")) {
      return error("Named triggers are not supported", token.at);
    } else if (starts_with(t, "clock=")) {
      // Only timestamps use the clock, and dprobe has none: accepted as the
      // kernel does, without effect.
    } else if (starts_with(t, "size=")) {
      return parse_size(value);
    } else {
      return error("Variables are not supported", token.at);
    }
    return std::nullopt;
  }

  // The kernel's parse_map_size: rounded up to a power of two, 2^7..2^17.
  Failure parse_size(Piece value) {
    const std::optional<uint64_t> size = parse_ulong(value.text);
    const uint64_t bits = size ? trace::hist_log2(*size) : 0;
    if (bits < 7 || bits > 17) {
      return error("Invalid size (rounded up to a power of two, it must be 128 to 131072)",
                   value.at);
    }
    spec_.size = uint32_t{1} << bits;
    return std::nullopt;
  }

  // ---- Fields ------------------------------------------------------------------

  Result<uint16_t, HistError> parse_modifier(Piece modifier, std::string_view name,
                                             uint64_t& buckets) {
    const std::string_view m = modifier.text;
    if (m == "hex") return uint16_t{trace::kHistHex};
    if (m == "sym") return uint16_t{trace::kHistSym};
    if (m == "sym-offset") return uint16_t{trace::kHistSymOffset};
    if (m == "execname" && name == "common_pid") return uint16_t{trace::kHistExecname};
    if (m == "syscall") return uint16_t{trace::kHistSyscall};
    if (m == "log2") return uint16_t{trace::kHistLog2};
    if (m == "usecs") return uint16_t{trace::kHistUsecs};
    if (starts_with(m, "bucket")) {
      std::string_view rest = m.substr(6);
      if (!rest.empty() && rest.front() == 's') rest.remove_prefix(1);
      if (!rest.empty() && rest.front() == '=') {
        const std::optional<uint64_t> n = parse_ulong(rest.substr(1));
        if (n && *n != 0) {
          buckets = *n;
          return uint16_t{trace::kHistBuckets};
        }
      }
    }
    if (m == "percent" || m == "graph") {
      return unexpected(error(".percent and .graph are not supported", modifier.at));
    }
    return unexpected(error(kBadFieldModifier, modifier.at));
  }

  // The event field `name` names, or an error at it.
  Result<RecordField, HistError> find_field(Piece name) {
    std::string_view lookup = name.text;
    if (lookup == "common_comm") lookup = "comm";
    if (lookup == "common_timestamp") {
      return unexpected(error("common_timestamp is not supported", name.at));
    }
    if (const RecordField* field = trace::find_record_field(fields_, lookup)) return *field;
    if (starts_with(name.text, "$")) return unexpected(error(kVarNotFound, name.at + 1));
    return unexpected(error(kFieldNotFound, name.at));
  }

  // One key or value: "name[.modifier]".
  Result<HistKey, HistError> parse_field(Piece spec, bool is_key) {
    const Dotted d = split_dot(spec);
    if (is_expression(d.name.text)) {
      return unexpected(error("Expressions are not supported", spec.at));
    }
    HistKey key;
    if (d.has_modifier) {
      auto modifier = parse_modifier(d.modifier, d.name.text, key.buckets);
      if (!modifier) return unexpected(std::move(modifier.error()));
      key.modifiers = *modifier;
    }
    key.label = std::string(d.name.text);
    if (is_stacktrace_name(d.name.text)) {
      if (!is_key) return unexpected(error(kBadFieldModifier, spec.at));
      if (d.has_modifier) return unexpected(error(kBadFieldModifier, d.modifier.at));
      key.stacktrace = true;
      key.label = "common_stacktrace";
      return key;
    }
    auto field = find_field(d.name);
    if (!field) return unexpected(std::move(field.error()));
    key.field = std::move(*field);
    if (auto e = check_modifiers(key, d, spec, is_key)) return unexpected(std::move(*e));
    return key;
  }

  // What a key or a value may not take. The kernel refuses these
  // modifiers on values; on a string key, where it would print the
  // string's address, dprobe refuses every modifier.
  Failure check_modifiers(const HistKey& key, const Dotted& d, Piece spec, bool is_key) {
    if (is_key) {
      if (key.is_string() && d.has_modifier) return error(kBadFieldModifier, d.modifier.at);
      return std::nullopt;
    }
    constexpr uint16_t kNotForValues = trace::kHistLog2 | trace::kHistBuckets | trace::kHistSym |
                                       trace::kHistSymOffset | trace::kHistSyscall;
    if ((key.modifiers & kNotForValues) != 0) return error(kBadFieldModifier, spec.at);
    if (key.is_string()) return error("A string field can not be a value", spec.at);
    return std::nullopt;
  }

  Failure parse_vals() {
    if (!vals_) return std::nullopt;
    for (const Piece& piece : split(*vals_, ',')) {
      const Dotted d = split_dot(piece);
      if (d.name.text == "hitcount") {  // always there, first
        if (!d.has_modifier) continue;
        if (d.modifier.text == "percent" || d.modifier.text == "graph") {
          return error(".percent and .graph are not supported", d.modifier.at);
        }
        return error(kBadFieldModifier, d.modifier.at);
      }
      if (spec_.vals.size() + 1 >= trace::kHistValsMax) {
        return error("Too many values (Max = 3, hitcount included)", piece.at);
      }
      auto val = parse_field(piece, false);
      if (!val) return std::move(val.error());
      spec_.vals.push_back(std::move(*val));
    }
    return std::nullopt;
  }

  Failure parse_keys() {
    uint32_t key_size = 0;
    for (const Piece& piece : split(*keys_, ',')) {
      if (spec_.keys.size() == trace::kHistKeysMax)
        return error("Too many keys (Max = 3)", piece.at);
      auto key = parse_field(piece, true);
      if (!key) return std::move(key.error());
      key_size += trace::hist_key_kernel_size(*key);
      if (key_size > trace::kHistKeySizeMax) {
        return error("Key too large (Max = 384 bytes: a string counts 256, a stacktrace 128)",
                     piece.at);
      }
      spec_.keys.push_back(std::move(*key));
    }
    return std::nullopt;
  }

  // ---- Sort keys ---------------------------------------------------------------

  Failure parse_sort() {
    spec_.sort.clear();
    if (!sort_) {
      spec_.sort.push_back(HistSortKey{});  // hitcount, ascending
      return std::nullopt;
    }
    const std::vector<Piece> pieces = split(*sort_, ',');
    for (size_t i = 0; i < pieces.size() && i < trace::kHistSortKeysMax; ++i) {
      if (pieces[i].text.empty()) return error(kEmptySortField, sort_at_);
      if (i == trace::kHistSortKeysMax - 1 && pieces.size() > trace::kHistSortKeysMax) {
        return error(kTooManySortFields, sort_at_);
      }
      auto key = parse_sort_key(pieces[i]);
      if (!key) return std::move(key.error());
      spec_.sort.push_back(*key);
    }
    return std::nullopt;
  }

  Result<HistSortKey, HistError> parse_sort_key(Piece piece) {
    const Dotted d = split_dot(piece);
    if (d.name.text.empty()) return unexpected(error(kEmptySortField, sort_at_));
    HistSortKey key;
    if (d.name.text != "hitcount") {
      std::optional<HistSortKey> found = find_sort_field(d.name.text);
      if (!found) return unexpected(error(kInvalidSortField, d.name.at));
      key = *found;
    }
    if (d.has_modifier) {
      if (d.modifier.text == "descending") {
        key.descending = true;
      } else if (d.modifier.text != "ascending") {
        return unexpected(error(kInvalidSortModifier, d.modifier.at));
      }
    }
    return key;
  }

  // As the kernel's create_sort_keys: values first, then keys, by the name
  // an entry prints. A stacktrace key has none to sort by.
  std::optional<HistSortKey> find_sort_field(std::string_view name) const {
    for (size_t i = 0; i < spec_.vals.size(); ++i) {
      if (spec_.vals[i].label == name) {
        return HistSortKey{HistSortKey::kVal, static_cast<uint8_t>(i), false};
      }
    }
    for (size_t i = 0; i < spec_.keys.size(); ++i) {
      if (!spec_.keys[i].stacktrace && spec_.keys[i].label == name) {
        return HistSortKey{HistSortKey::kKey, static_cast<uint8_t>(i), false};
      }
    }
    return std::nullopt;
  }

  std::string_view text_;
  const std::vector<RecordField>& fields_;
  std::optional<Piece> keys_;
  std::optional<Piece> vals_;
  std::optional<Piece> sort_;
  size_t sort_at_ = 0;  // where "sort=" starts: the kernel's caret for its sort errors
  HistSpec spec_;
};

}  // namespace

Result<trace::HistSpec, HistError> parse_hist_trigger(
    std::string_view text, const std::vector<trace::RecordField>& fields) {
  return HistParser(text, fields).parse();
}

}  // namespace dprobe::lang
