// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A definition is split into words as the kernel's argv_split does, and
// every error column refers to those words joined by single spaces: the
// command the error report shows. A C++ name target keeps its spaces
// ("ns::f(int, double)"): the words up to its closing bracket are one.
#include <cctype>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/cxx_names.h"
#include "base/strings.h"
#include "lang/definition.h"
#include "lang/fetch_arg.h"
#include "lang/hints.h"
#include "lang/limits.h"
#include "lang/naming.h"
#include "lang/quoted_name.h"
#include "lang/sdt_point.h"
#include "lang/syscall_events.h"
#include "lang/target.h"

namespace dprobe::lang {
namespace {

struct Words {
  std::vector<std::string_view> text;  // into the line, or into *quoted
  std::vector<size_t> column;
  std::string command;
  // A target written in quotes, without them (where its view points: on
  // the heap, so that moving the words keeps it in place).
  std::unique_ptr<std::string> quoted;
};

// A probe's target's name in single quotes, as bpftrace takes a C++ name
// with spaces ('ns::C::f(int) const', or OBJ:'...'): one word, without the
// quotes. The words are joined in place in `owned` (the quotes go).
std::vector<Word> join_quoted_target(std::string_view line, std::vector<Word> split,
                                     std::string& owned) {
  if (split.size() < 2) return split;
  const std::string_view target = split[1].text;
  const size_t quote = target.find('\'');
  if (quote == std::string_view::npos || (quote != 0 && target[quote - 1] != ':')) return split;
  const size_t open = split[1].position + quote;
  const size_t close = line.find('\'', open + 1);
  // A name that can be nothing else, the quote ending a word: anything
  // else stays as written (and is refused as the kernel would).
  // The quote ends the word, or its %return suffix does.
  constexpr std::string_view kReturn = "%return";
  const std::string_view after =
      close == std::string_view::npos ? std::string_view() : line.substr(close + 1);
  const std::string_view suffix = after.starts_with(kReturn) ? kReturn : std::string_view();
  const size_t end = close + 1 + suffix.size();
  if (close == std::string_view::npos ||
      (end < line.size() && std::isspace(static_cast<unsigned char>(line[end])) == 0) ||
      !quotable_name(line.substr(open + 1, close - open - 1))) {
    return split;
  }
  size_t last = 1;
  while (last + 1 < split.size() && split[last + 1].position < close) ++last;
  owned = std::string(target.substr(0, quote)) +
          std::string(line.substr(open + 1, close - open - 1)) + std::string(suffix);
  split[1] = {owned, split[1].position};
  split.erase(split.begin() + 2, split.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  return split;
}

// What may follow a method's parameter list in its name: "f() const".
bool is_cxx_qualifier(std::string_view word) {
  return word == "const" || word == "volatile" || word == "&" || word == "&&" || word == "noexcept";
}

// Joins the words of a probe's target while its C++ parameter or template
// argument list is open, and the qualifiers after it.
std::vector<Word> join_cxx_target(std::string_view line, std::vector<Word> split) {
  if (split.size() < 3 || (split[0].text[0] != 'p' && split[0].text[0] != 'r')) return split;
  const Word target = split[1];
  if (!is_cxx_name(target.text)) return split;
  size_t last = 1;
  if (cxx_open_brackets(target.text) > 0) {
    for (size_t end = 2; end < split.size(); ++end) {
      const std::string_view joined = line.substr(
          target.position, split[end].position + split[end].text.size() - target.position);
      if (cxx_open_brackets(joined) > 0) continue;
      last = end;
      break;
    }
    if (last == 1) return split;
  }
  if (target.text.find('(') != std::string_view::npos || last > 1) {
    while (last + 1 < split.size() && is_cxx_qualifier(split[last + 1].text)) ++last;
  }
  if (last == 1) return split;
  const Word& end = split[last];
  split[1] = {line.substr(target.position, end.position + end.text.size() - target.position),
              target.position};
  split.erase(split.begin() + 2, split.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  return split;
}

Words join_words(std::string_view line) {
  Words words;
  words.quoted = std::make_unique<std::string>();
  std::vector<Word> split = join_quoted_target(line, split_words(line), *words.quoted);
  if (words.quoted->empty()) split = join_cxx_target(line, std::move(split));
  for (const Word& word : split) {
    if (!words.command.empty()) words.command.push_back(' ');
    words.column.push_back(words.command.size());
    words.text.push_back(word.text);
    words.command.append(word.text);
  }
  return words;
}

struct EventName {
  std::string group;
  std::string event;
  size_t event_column = 0;
};

// [GRP/][EVENT] (the kernel also takes '.' as the separator).
Parsed<EventName> parse_event_name(std::string_view text, size_t column, bool allow_empty) {
  EventName name;
  name.event_column = column;
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) slash = text.find('.');
  if (slash != std::string_view::npos) {
    if (slash == 0) return fault(ErrorCode::NO_GROUP_NAME, column);
    if (slash > kMaxEventNameLen) return fault(ErrorCode::GROUP_TOO_LONG, column);
    name.group = std::string(text.substr(0, slash));
    if (!is_c_identifier(name.group)) return fault(ErrorCode::BAD_GROUP_NAME, column);
    text = text.substr(slash + 1);
    column += slash + 1;
    name.event_column = column;
    if (text.empty()) return name;  // GRP/ alone: the default event name
  }
  if (text.empty() && !allow_empty) return fault(ErrorCode::NO_EVENT_NAME, column);
  if (text.size() > kMaxEventNameLen) return fault(ErrorCode::EVENT_TOO_LONG, column);
  if (!text.empty() && !is_c_identifier(text)) return fault(ErrorCode::BAD_EVENT_NAME, column);
  name.event = std::string(text);
  return name;
}

struct Header {
  bool is_return = false;
  bool is_event_probe = false;
  uint32_t maxactive = 0;
  EventName name;
};

Parsed<uint32_t> parse_maxactive(std::string_view digits, bool is_return) {
  constexpr size_t kColumn = 1;  // right after 'r'
  if (!is_return) return fault(ErrorCode::BAD_MAXACT_TYPE, kColumn);
  const auto value = parse_u64(digits);
  if (!value || *value == 0) return fault(ErrorCode::BAD_MAXACT, kColumn);
  if (*value > core::kMaxActiveLimit) return fault(ErrorCode::MAXACT_TOO_BIG, kColumn);
  return static_cast<uint32_t>(*value);
}

// p[:[GRP/][EVENT]], r[MAXACTIVE][:[GRP/][EVENT]] or e[:[GRP/][EVENT]]
Parsed<Header> parse_header(std::string_view word) {
  Header header;
  if (word[0] != 'p' && word[0] != 'r' && word[0] != 'e') {
    return fault(ErrorCode::BAD_PROBE_TYPE, 0);
  }
  header.is_return = word[0] == 'r';
  header.is_event_probe = word[0] == 'e';
  const size_t colon = word.find(':');
  const std::string_view between =
      word.substr(1, colon == std::string_view::npos ? colon : colon - 1);
  if (!between.empty()) {
    if (header.is_event_probe || !std::isdigit(static_cast<unsigned char>(between[0]))) {
      return fault(ErrorCode::BAD_PROBE_TYPE, 1);
    }
    auto maxactive = parse_maxactive(between, header.is_return);
    if (!maxactive) return unexpected(maxactive.error());
    header.maxactive = *maxactive;
  }
  if (colon != std::string_view::npos) {
    auto name = parse_event_name(word.substr(colon + 1), colon + 1, false);
    if (!name) return unexpected(name.error());
    header.name = std::move(*name);
  }
  return header;
}

Unexpected<ProbeError> to_error(const Fault& fault, const Words& words) {
  return unexpected(ProbeError{fault.code, words.command, fault.column, {}, {}, {}});
}

Result<Definition, ProbeError> parse_removal(const Words& words) {
  const std::string_view word = words.text[0];
  if (word.size() < 2 || word[1] != ':') return to_error({ErrorCode::BAD_PROBE_TYPE, 1}, words);
  if (words.text.size() > 1) return to_error({ErrorCode::REMOVE_WITH_ARGS, words.column[1]}, words);
  auto name = parse_event_name(word.substr(2), 2, false);
  if (!name) return to_error(name.error(), words);
  Definition def;
  def.kind = Definition::Kind::kRemove;
  def.command = words.command;
  def.remove_group = std::move(name->group);
  def.remove_event = std::move(name->event);
  def.event_column = name->event_column;
  return def;
}

class DefinitionParser {
 public:
  DefinitionParser(Words words, const ParseOptions& options)
      : words_(std::move(words)), options_(options) {}

  Result<Definition, ProbeError> parse() {
    auto header = parse_header(words_.text[0]);
    if (!header) return to_error(header.error(), words_);
    if (words_.text.size() < 2) {
      // The kernel puts the caret one past the end: the missing word.
      return to_error({ErrorCode::BAD_PROBE_ADDR, words_.command.size() + 1}, words_);
    }
    if (header->is_event_probe) {
      if (auto attached = parse_attached(*header); !attached) {
        return to_error(attached.error(), words_);
      }
    } else if (auto target = parse_point(*header); !target) {
      return to_error(target.error(), words_);
    }
    if (auto args = parse_args(); !args) return to_error(args.error(), words_);
    def_.command = words_.command;
    return std::move(def_);
  }

 private:
  Parsed<void> parse_point(const Header& header) {
    const size_t column = words_.column[1];
    if (auto sdt = parse_sdt_point(words_.text[1], column)) {
      if (!*sdt) return unexpected(sdt->error());
      return parse_sdt_point_of(header, **sdt);
    }
    if (auto place = parse_source_place(words_.text[1], column)) {
      if (!*place) return unexpected(place->error());
      return parse_source_point(header, **place);
    }
    auto parsed = parse_target(words_.text[1], column);
    if (!parsed) return unexpected(parsed.error());
    core::ProbePoint& point = def_.spec.point;
    point.target = std::move(parsed->target);
    point.is_return = header.is_return || parsed->has_return_suffix;
    point.maxactive = header.maxactive;
    def_.target_column = column;
    def_.symbol_column = parsed->symbol_column;
    const bool is_symbol = point.target.kind == core::TargetKind::kSymbol;
    if (point.is_return && is_symbol && point.target.offset != 0) {
      return fault(ErrorCode::BAD_RETPROBE, column);
    }
    // In a C++ name '*' may be a pointer or an operator ("ns::f(char*)").
    const std::string& name = point.target.symbol;
    def_.wildcard = is_symbol && (is_cxx_name(name) ? cxx_has_wildcard(name) : has_wildcard(name));
    return name_event(header);
  }

  // FUNC:RLN, SRC:ALN, FUNC@SRC[:RLN]: a symbol target once resolved; the
  // default name is perf probe's, FUNC_L<RLN> or FILE_L<ALN> (p_ or r_ first).
  Parsed<void> parse_source_point(const Header& header, const ParsedPlace& place) {
    core::ProbePoint& point = def_.spec.point;
    point.target.kind = core::TargetKind::kSymbol;
    point.target.object = place.object;
    // Printed back as written until the DWARF resolves it.
    point.target.symbol = format_source_place(place.place);
    point.is_return = header.is_return || place.has_return_suffix;
    point.maxactive = header.maxactive;
    if (point.is_return && place.place.line >= 0) {
      return fault(ErrorCode::BAD_RETPROBE, words_.column[1]);
    }
    def_.target_column = words_.column[1];
    def_.symbol_column = place.place_column;
    def_.source = place.place;
    trace::EventDesc& event = def_.spec.event;
    event.is_return = point.is_return;
    event.group = header.name.group.empty() ? std::string(kDefaultGroup) : header.name.group;
    def_.event_named = !header.name.event.empty();
    def_.event_column = header.name.event_column;
    event.name = def_.event_named ? header.name.event : source_event_name(point, place.place);
    return {};
  }

  // [OBJ:]%sdt_PROVIDER:NAME: a symbol target once its notes place it;
  // named as perf probe names it, sdt_PROVIDER/NAME.
  Parsed<void> parse_sdt_point_of(const Header& header, const ParsedSdtPoint& parsed) {
    if (header.is_return) return fault(ErrorCode::BAD_RETPROBE, words_.column[1]);
    core::ProbePoint& point = def_.spec.point;
    point.target.kind = core::TargetKind::kSymbol;
    point.target.object = parsed.object;
    point.target.symbol = format_sdt_point(parsed.point);  // printed back as written
    def_.target_column = words_.column[1];
    def_.symbol_column = parsed.point_column;
    def_.sdt = parsed.point;
    def_.sdt->group_written = !header.name.group.empty();
    def_.wildcard = has_wildcard(parsed.point.provider) || has_wildcard(parsed.point.name);
    trace::EventDesc& event = def_.spec.event;
    def_.event_named = !header.name.event.empty();
    def_.event_column = header.name.event_column;
    if (def_.event_named && def_.wildcard) {
      return fault(ErrorCode::WILDCARD_EVENT, def_.event_column);
    }
    event.group = def_.sdt->group_written ? header.name.group : "sdt_" + parsed.point.provider;
    event.name = def_.event_named ? header.name.event : parsed.point.name;
    if (!def_.event_named && !def_.wildcard && event.name.size() > kMaxEventNameLen) {
      return fault(ErrorCode::EVENT_TOO_LONG, parsed.point_column);
    }
    if (!def_.sdt->group_written && !has_wildcard(parsed.point.provider) &&
        event.group.size() > kMaxEventNameLen) {
      return fault(ErrorCode::GROUP_TOO_LONG, parsed.point_column);
    }
    return {};
  }

  // e:[GRP/][EVENT] SYSTEM/EVENT (or SYSTEM.EVENT): an event probe on a
  // system call event, named after it unless named; group "eprobes".
  Parsed<void> parse_attached(const Header& header) {
    const size_t column = words_.column[1];
    const std::string_view word = words_.text[1];
    size_t separator = word.find('/');
    if (separator == std::string_view::npos) separator = word.find('.');
    if (separator == std::string_view::npos || separator == 0 || separator + 1 == word.size()) {
      return fault(ErrorCode::NO_EVENT_INFO, column);
    }
    attached_ =
        find_attached_event(word.substr(0, separator), word.substr(separator + 1), options_.isa);
    if (!attached_) return fault(ErrorCode::BAD_ATTACH_EVENT, column);
    def_.spec.point.target.kind = core::TargetKind::kSyscall;
    def_.spec.point.target.symbol = std::string(word);
    def_.target_column = column;
    def_.symbol_column = column;
    trace::EventDesc& event = def_.spec.event;
    event.source = attached_->source;
    event.syscall_nr = attached_->nr;
    event.syscall_name = attached_->syscall_name;
    event.event_probe = true;
    event.group = header.name.group.empty() ? std::string(kEventProbeGroup) : header.name.group;
    def_.event_named = !header.name.event.empty();
    def_.event_column = header.name.event_column;
    event.name = def_.event_named ? header.name.event : std::string(word.substr(separator + 1));
    return {};
  }

  Parsed<void> name_event(const Header& header) {
    trace::EventDesc& event = def_.spec.event;
    event.is_return = def_.spec.point.is_return;
    event.group = header.name.group.empty() ? std::string(kDefaultGroup) : header.name.group;
    def_.event_named = !header.name.event.empty();
    def_.event_column = header.name.event_column;
    if (def_.event_named && def_.wildcard) {
      return fault(ErrorCode::WILDCARD_EVENT, def_.event_column);
    }
    event.name = def_.event_named ? header.name.event : default_event_name(def_.spec.point);
    return {};
  }

  Parsed<void> parse_args() {
    const size_t count = words_.text.size() - 2;
    if (count > kMaxArgs) return fault(ErrorCode::TOO_MANY_ARGS, words_.column[2]);
    const core::ProbePoint& point = def_.spec.point;
    const bool unknown_offset = point.target.kind != core::TargetKind::kSymbol;
    std::vector<EventField> fields;
    if (attached_) fields = attached_->fields();
    const ArgContext context{
        options_.isa, point.is_return,       unknown_offset || point.target.offset == 0,
        fields,       attached_.has_value(), def_.sdt.has_value()};
    trace::EventDesc& event = def_.spec.event;
    uint32_t size = trace::first_arg_offset(point.is_return);
    for (size_t i = 0; i < count; ++i) {
      const size_t column = words_.column[i + 2];
      auto arg = parse_fetch_arg(words_.text[i + 2], column, event.args, context);
      if (!arg) return unexpected(arg.error());
      size += arg->field_size();
      if (size > kMaxFixedRecordSize) return fault(ErrorCode::EVENT_TOO_BIG, column);
      event.args.push_back(std::move(*arg));
      def_.arg_columns.push_back(column);
    }
    trace::layout_event(event);
    return {};
  }

  Words words_;
  const ParseOptions& options_;
  Definition def_;
  std::optional<AttachedEvent> attached_;
};

}  // namespace

Result<Definition, ProbeError> parse_definition(std::string_view line,
                                                const ParseOptions& options) {
  Words words = join_words(line);
  if (words.text.empty()) return to_error({ErrorCode::BAD_PROBE_TYPE, 0}, words);
  if (words.text[0][0] == '-') return parse_removal(words);
  const bool quoted = !words.quoted->empty();
  const size_t target_column = words.column.size() > 1 ? words.column[1] : 0;
  const std::string command = words.command;
  auto parsed = DefinitionParser(std::move(words), options).parse();
  // What was quoted is a function's name once its offset is off (not a
  // source place, an address), or it could not be printed back as it was
  // read ('f( +0' would lose its quotes).
  if (parsed && quoted &&
      (parsed->source || parsed->spec.point.target.kind != core::TargetKind::kSymbol ||
       !quotable_name(parsed->spec.point.target.symbol))) {
    return unexpected(ProbeError{ErrorCode::BAD_PROBE_ADDR, command, target_column, {}, {}, {}});
  }
  if (!parsed && parsed.error().detail.empty()) {
    ProbeError& error = parsed.error();
    error.detail = hint_for(error.code, error.command, error.column, options.isa);
  }
  return parsed;
}

}  // namespace dprobe::lang
