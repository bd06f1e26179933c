// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The filter compiler, in three steps, none recursive (the text is the
// user's, its nesting unbounded):
//   1. count_terms: quotes and parentheses over the whole text, as the
//      kernel's calc_stack checks them first;
//   2. Compiler::parse: terms and operators into a tree, with explicit
//      stacks, accepting what the kernel's predicate_parse accepts;
//   3. Compiler::generate: the tree into jumping code, each predicate
//      jumping to the next one to test when true and when false, which is
//      what the kernel's filter program is after its second pass.
//
// Columns: the kernel hands its predicate parser (parse_pred) a position
// one past the predicate's first character, so the errors found inside a
// predicate point one column right of the character they mean ("foo == 1"
// reports Field not found at the first '='). They are kept so, for the
// caret to fall where the kernel's error_log puts it (checked against
// Linux 6.18's error_log for every message below).
#include "lang/event_filter.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/strings.h"

namespace dprobe::lang {
namespace {

using trace::FilterInsn;
using trace::FilterOp;
using trace::FilterProgram;
using trace::RecordField;

// The kernel's err_text[] (kernel/trace/trace_events_filter.c).
constexpr std::string_view kInvalidOp = "Invalid operator";
constexpr std::string_view kTooManyOpen = "Too many '('";
constexpr std::string_view kTooManyClose = "Too few '('";
constexpr std::string_view kMissingQuote = "Missing matching quote";
constexpr std::string_view kOperandTooLong = "Operand too long";
constexpr std::string_view kExpectString = "Expecting string field";
constexpr std::string_view kExpectDigit = "Expecting numeric field";
constexpr std::string_view kIllegalFieldOp = "Illegal operation for field type";
constexpr std::string_view kFieldNotFound = "Field not found";
constexpr std::string_view kIllegalIntval = "Illegal integer value";
constexpr std::string_view kTooManyPreds = "Too many terms in predicate expression";
constexpr std::string_view kInvalidValue = "Invalid value (did you forget quotes)?";
constexpr std::string_view kNoFilter = "No filter found";
// Where a field name is missing ("a == 1 && && b == 2", "(!)"), and where
// the text holds no term at all ("()", blanks), today's kernel has no
// message (its log says "Error" at column 0): the first gets the message
// older kernels gave (FILT_ERR_MISSING_FIELD), the second kNoFilter.
constexpr std::string_view kMissingField = "Missing field name and/or value";

// The kernel's MAX_FILTER_STR_VAL (strings) and its number buffer.
constexpr size_t kMaxStringOperand = 255;
constexpr size_t kMaxNumberOperand = 23;

Unexpected<FilterError> filter_error(std::string_view message, size_t column) {
  return unexpected(FilterError{std::string(message), column});
}

// The kernel's isspace/isdigit/isalnum, on ASCII.
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_quote(char c) { return c == '"' || c == '\''; }

// The '(' the kernel blames for a missing ')': scanning back from the
// end, the first one not closed after it; 0 when that is the first
// character (the scan stops before it).
size_t unclosed_paren(std::string_view text) {
  int level = 0;
  char quote = 0;
  for (size_t i = text.size() - 1; i > 0; --i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '(') {
      if (level == 0) return i;
      --level;
    } else if (c == ')') {
      ++level;
    } else if (is_quote(c)) {
      quote = c;
    }
  }
  return 0;
}

// Quotes and parentheses, checked over the whole text before any predicate
// is read (so their errors win), and the number of terms, as the kernel's
// calc_stack counts them: none means there is nothing to filter with.
Result<size_t, FilterError> count_terms(std::string_view text) {
  size_t terms = 0;
  bool in_term = false;
  int open = 0;
  char quote = 0;
  size_t last_quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_space(c)) continue;
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (is_quote(c)) {
      quote = c;
      last_quote = i;
    } else if ((c == '&' || c == '|') && i + 1 < text.size() && text[i + 1] == c) {
      in_term = false;
      continue;
    } else if (c == '(' || c == ')') {
      in_term = false;
      if (c == ')' && open == 0) return filter_error(kTooManyClose, i);
      open += c == '(' ? 1 : -1;
      continue;
    }
    if (!in_term) ++terms;
    in_term = true;
  }
  if (quote != 0) return filter_error(kMissingQuote, last_quote);
  if (open != 0) return filter_error(kTooManyOpen, unclosed_paren(text));
  return terms;
}

// The comparison as written; `!=` becomes == with its jumps swapped.
enum class Comparison : uint8_t {
  kGlob,
  kNotEqual,
  kEqual,
  kLessEqual,
  kLess,
  kGreaterEqual,
  kGreater,
  kBitAnd
};

struct ComparisonSpelling {
  std::string_view text;
  Comparison comparison;
};

// In the kernel's order: "<=" before "<", and "&" last, so "&&" after a
// field name reads as "&" followed by a bad value, as in the kernel.
constexpr ComparisonSpelling kComparisons[] = {
    {"~", Comparison::kGlob},    {"!=", Comparison::kNotEqual},
    {"==", Comparison::kEqual},  {"<=", Comparison::kLessEqual},
    {"<", Comparison::kLess},    {">=", Comparison::kGreaterEqual},
    {">", Comparison::kGreater}, {"&", Comparison::kBitAnd},
};

FilterOp number_op(Comparison comparison) {
  switch (comparison) {
    case Comparison::kLess:
      return FilterOp::kLess;
    case Comparison::kLessEqual:
      return FilterOp::kLessEqual;
    case Comparison::kGreater:
      return FilterOp::kGreater;
    case Comparison::kGreaterEqual:
      return FilterOp::kGreaterEqual;
    case Comparison::kBitAnd:
      return FilterOp::kBitsSet;
    default:
      return FilterOp::kEqual;
  }
}

// A ~ pattern, classified as the kernel's filter_parse_regex does: a
// leading '!' inverts the match; a '*' first, last or both makes a
// suffix, prefix or substring test of the rest; any other '*', '?', '['
// or '\' needs the full glob. A pattern starting with a digit is compared
// whole, '*' and all (the kernel's MATCH_INDEX, meant for function
// indexes, which filters fall into too).
struct StringTest {
  FilterOp op = FilterOp::kStringEqual;
  bool negate = false;
  std::string_view pattern;
};

StringTest classify_glob(std::string_view pattern) {
  StringTest test;
  if (!pattern.empty() && pattern[0] == '!') {
    test.negate = true;
    pattern.remove_prefix(1);
  }
  test.pattern = pattern;
  if (!pattern.empty() && is_digit(pattern[0])) return test;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '[' || c == '?' || c == '\\') {
      test.op = FilterOp::kStringGlob;
      return test;
    }
    if (c != '*') continue;
    if (i == 0) {
      test.op = FilterOp::kStringSuffix;
    } else if (i + 1 == pattern.size()) {
      const bool both = test.op == FilterOp::kStringSuffix;
      test.op = both ? FilterOp::kStringContains : FilterOp::kStringPrefix;
      pattern = pattern.substr(0, i);
    } else {
      test.op = FilterOp::kStringGlob;
      return test;
    }
  }
  if (!pattern.empty() && pattern[0] == '*') pattern.remove_prefix(1);
  test.pattern = pattern;
  return test;
}

// A number as the field holds it: cut to its size, sign-extended if it is
// signed (the kernel casts the value to the field's type to compare).
uint64_t fit_to_field(uint64_t value, const RecordField& field) {
  if (field.source != trace::FieldSource::kNumber || field.size >= 8) return value;
  const unsigned bits = field.size * 8u;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  value &= mask;
  if (field.is_signed && ((value >> (bits - 1)) & 1) != 0) value |= ~mask;
  return value;
}

class Compiler {
 public:
  Compiler(std::string_view text, const std::vector<RecordField>& fields)
      : text_(text), fields_(fields) {}

  Result<FilterProgram, FilterError> compile() {
    auto parsed = parse();
    if (!parsed) return unexpected(parsed.error());
    generate(operands_.back());
    return std::move(program_);
  }

 private:
  enum class Pending : uint8_t { kOpen, kNot, kAnd, kOr };
  struct Node {
    enum Kind : uint8_t { kLeaf, kNot, kAnd, kOr } kind;
    uint32_t left;  // a leaf's index in leaves_
    uint32_t right;
  };
  struct Leaf {
    FilterInsn insn;
    bool negate;
  };
  // Where parsing goes on from, and whether a term or a joiner comes next.
  struct Step {
    size_t at;
    bool want_term;
  };

  char at(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }
  void skip_spaces(size_t& i) const {
    while (i < text_.size() && is_space(text_[i])) ++i;
  }

  // The kernel's predicate_parse, as a loop over two kinds of step.
  Result<void, FilterError> parse() {
    Step step{0, true};
    for (;;) {
      skip_spaces(step.at);
      if (step.at == text_.size()) return finish(step);
      auto next = step.want_term ? term_step(step.at) : joiner_step(step.at);
      if (!next) return unexpected(next.error());
      step = *next;
    }
  }

  // Where a term is expected: '(' and '!' open one, a predicate ends it.
  Result<Step, FilterError> term_step(size_t i) {
    if (text_[i] == '(') {
      pending_.push_back(Pending::kOpen);
      return Step{i + 1, true};
    }
    // "!=" and "!~" here are a predicate's missing field, not a "not".
    if (text_[i] == '!' && at(i + 1) != '=' && at(i + 1) != '~') {
      pending_.push_back(Pending::kNot);
      return Step{i + 1, true};
    }
    if (leaves_.size() == trace::kMaxFilterPredicates) return filter_error(kTooManyPreds, i);
    auto end = parse_predicate(i);
    if (!end) return unexpected(end.error());
    push_operand({Node::kLeaf, static_cast<uint32_t>(leaves_.size() - 1), 0});
    term_done();
    return Step{*end, false};
  }

  // After a term: ')' closes a group, && and || join the next term.
  Result<Step, FilterError> joiner_step(size_t i) {
    const char c = text_[i];
    if (c == ')') {
      while (!pending_.empty() && pending_.back() != Pending::kOpen) reduce();
      // count_terms makes this unreachable; the kernel's position if not.
      if (pending_.empty()) return filter_error(kTooManyClose, i + 1);
      pending_.pop_back();
      term_done();
      return Step{i + 1, false};
    }
    if ((c == '&' || c == '|') && at(i + 1) == c) {
      push_binary(c == '&' ? Pending::kAnd : Pending::kOr);
      return Step{i + 2, true};
    }
    return filter_error(kTooManyPreds, i);
  }

  // The end of the text. Where a term was still expected ("a && b ||",
  // "a && !") the kernel keeps what came before and drops the dangling
  // operator; so does this. (The kernel refuses "a || b &&" alone, by way
  // of a warning from its program check: taken here as "a || b".)
  Result<void, FilterError> finish(Step step) {
    if (step.want_term) {
      while (!pending_.empty() && pending_.back() == Pending::kNot) pending_.pop_back();
      if (!pending_.empty() && pending_.back() != Pending::kOpen) pending_.pop_back();
      if (operands_.empty()) return filter_error(kNoFilter, step.at);
    }
    while (!pending_.empty() && pending_.back() != Pending::kOpen) reduce();
    if (!pending_.empty()) return filter_error(kTooManyOpen, step.at);  // as joiner_step's
    return {};
  }

  // A term is complete: the '!'s written before it apply to it.
  void term_done() {
    while (!pending_.empty() && pending_.back() == Pending::kNot) {
      pending_.pop_back();
      const uint32_t term = operands_.back();
      if (nodes_[term].kind == Node::kNot) {
        operands_.back() = nodes_[term].left;  // !!x is x
      } else {
        operands_.pop_back();
        push_operand({Node::kNot, term, 0});
      }
    }
  }

  // && binds tighter than ||; both group from the left.
  void push_binary(Pending op) {
    while (!pending_.empty() && (pending_.back() == Pending::kAnd ||
                                 (op == Pending::kOr && pending_.back() == Pending::kOr))) {
      reduce();
    }
    pending_.push_back(op);
  }

  void reduce() {
    const Node::Kind kind = pending_.back() == Pending::kAnd ? Node::kAnd : Node::kOr;
    pending_.pop_back();
    const uint32_t right = operands_.back();
    operands_.pop_back();
    const uint32_t left = operands_.back();
    operands_.pop_back();
    push_operand({kind, left, right});
  }

  void push_operand(Node node) {
    operands_.push_back(static_cast<uint32_t>(nodes_.size()));
    nodes_.push_back(node);
  }

  // The kernel's parse_pred: FIELD OP VALUE from `start`, returning where
  // it ends; errors at the kernel's columns (see the file comment).
  Result<size_t, FilterError> parse_predicate(size_t start) {
    size_t i = start;
    if (at(i) == '$') ++i;  // $duration, dprobe's own field
    while (is_alnum(at(i)) || at(i) == '_') ++i;
    if (i == start) return filter_error(kMissingField, i + 1);
    const RecordField* field = trace::find_record_field(fields_, text_.substr(start, i - start));
    if (field == nullptr) return filter_error(kFieldNotFound, i + 1);
    skip_spaces(i);
    const ComparisonSpelling* comparison = nullptr;
    for (const ComparisonSpelling& spelling : kComparisons) {
      if (text_.substr(i).starts_with(spelling.text)) {
        comparison = &spelling;
        break;
      }
    }
    if (comparison == nullptr) return filter_error(kInvalidOp, i + 1);
    i += comparison->text.size();
    skip_spaces(i);
    if (is_quote(at(i))) return string_operand(*field, comparison->comparison, i);
    if (is_digit(at(i)) || at(i) == '-') return number_operand(*field, comparison->comparison, i);
    return filter_error(kInvalidValue, i + 1);
  }

  Result<size_t, FilterError> string_operand(const RecordField& field, Comparison comparison,
                                             size_t i) {
    if (comparison != Comparison::kEqual && comparison != Comparison::kNotEqual &&
        comparison != Comparison::kGlob) {
      return filter_error(kIllegalFieldOp, i + 1);
    }
    if (!field.is_string()) return filter_error(kExpectDigit, i + 1);
    const size_t close = text_.find(text_[i], i + 1);
    if (close == std::string_view::npos) return filter_error(kMissingQuote, text_.size() + 1);
    const std::string_view value = text_.substr(i + 1, close - i - 1);
    if (value.size() > kMaxStringOperand) return filter_error(kOperandTooLong, close + 1);
    StringTest test;
    if (comparison == Comparison::kGlob) {
      test = classify_glob(value);
    } else {
      test.pattern = value;
      test.negate = comparison == Comparison::kNotEqual;
    }
    FilterInsn insn;
    insn.op = test.op;
    insn.str_offset = static_cast<uint32_t>(program_.strings.size());
    insn.str_length = static_cast<uint16_t>(test.pattern.size());
    program_.strings.append(test.pattern);
    add_leaf(field, insn, test.negate);
    return close + 1;
  }

  Result<size_t, FilterError> number_operand(const RecordField& field, Comparison comparison,
                                             size_t i) {
    if (field.is_string()) return filter_error(kExpectString, i + 1);
    if (comparison == Comparison::kGlob) return filter_error(kIllegalFieldOp, i + 1);
    const size_t start = i;
    if (at(i) == '-') ++i;
    while (is_alnum(at(i))) ++i;
    if (i - start > kMaxNumberOperand) return filter_error(kOperandTooLong, i + 1);
    // kstrtoll for signed fields, kstrtoull for the others, as the kernel.
    const std::string_view digits = text_.substr(start, i - start);
    std::optional<uint64_t> value;
    if (field.is_signed) {
      if (const auto s = parse_s64(digits)) value = static_cast<uint64_t>(*s);
    } else {
      value = parse_u64(digits);
    }
    if (!value) return filter_error(kIllegalIntval, start + 1);
    FilterInsn insn;
    insn.op = number_op(comparison);
    insn.value = fit_to_field(*value, field);
    add_leaf(field, insn, comparison == Comparison::kNotEqual);
    return i;
  }

  void add_leaf(const RecordField& field, FilterInsn insn, bool negate) {
    insn.field = field_index(field);
    leaves_.push_back({insn, negate});
  }

  // The field's index in the program, each field copied once.
  uint16_t field_index(const RecordField& field) {
    for (size_t i = 0; i < program_.fields.size(); ++i) {
      if (program_.fields[i].name == field.name) return static_cast<uint16_t>(i);
    }
    program_.fields.push_back(field);
    return static_cast<uint16_t>(program_.fields.size() - 1);
  }

  // Jumping code from the tree: a node is compiled knowing where to go when
  // it is true and when false. a && b: a goes to b when true, to the false
  // target otherwise; a || b the mirror; !a swaps the targets. Labels name
  // the start of a right-hand side until its first predicate is emitted.
  void generate(uint32_t root) {
    constexpr uint32_t kPass = 0;
    constexpr uint32_t kDrop = 1;
    struct Work {
      uint32_t node;  // or, for a label's placing, the label
      uint32_t on_true;
      uint32_t on_false;
      bool place_label;
    };
    std::vector<uint32_t> label_insn{0, 0};
    std::vector<Work> work{{root, kPass, kDrop, false}};
    while (!work.empty()) {
      const Work w = work.back();
      work.pop_back();
      if (w.place_label) {
        label_insn[w.node] = static_cast<uint32_t>(program_.code.size());
        continue;
      }
      const Node& node = nodes_[w.node];
      if (node.kind == Node::kLeaf) {
        emit(leaves_[node.left], w.on_true, w.on_false);
      } else if (node.kind == Node::kNot) {
        work.push_back({node.left, w.on_false, w.on_true, false});
      } else {
        const auto right = static_cast<uint32_t>(label_insn.size());
        label_insn.push_back(0);
        const bool is_and = node.kind == Node::kAnd;
        work.push_back({node.right, w.on_true, w.on_false, false});
        work.push_back({right, 0, 0, true});
        work.push_back({node.left, is_and ? right : w.on_true, is_and ? w.on_false : right, false});
      }
    }
    const auto n = static_cast<uint32_t>(program_.code.size());
    label_insn[kPass] = n;
    label_insn[kDrop] = n + 1;
    for (FilterInsn& insn : program_.code) {
      insn.on_true = static_cast<uint16_t>(label_insn[insn.on_true]);
      insn.on_false = static_cast<uint16_t>(label_insn[insn.on_false]);
    }
  }

  // Jump targets are labels until generate() resolves them.
  void emit(const Leaf& leaf, uint32_t on_true, uint32_t on_false) {
    FilterInsn insn = leaf.insn;
    if (leaf.negate) std::swap(on_true, on_false);
    insn.on_true = static_cast<uint16_t>(on_true);
    insn.on_false = static_cast<uint16_t>(on_false);
    program_.code.push_back(insn);
  }

  std::string_view text_;
  const std::vector<RecordField>& fields_;
  FilterProgram program_;
  std::vector<Leaf> leaves_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> operands_;
  std::vector<Pending> pending_;
};

std::string_view strip_trailing_spaces(std::string_view text) {
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

Result<trace::FilterProgram, FilterError> compile_filter(
    std::string_view text, const std::vector<trace::RecordField>& fields) {
  FilterProgram empty;
  empty.text = std::string(text);
  // The kernel reads the filter as a C string with its trailing blanks cut
  // (leading ones stay, and count in the columns).
  const std::string_view body = strip_trailing_spaces(text.substr(0, text.find('\0')));
  if (text.empty() || trim(body) == "0") return empty;
  auto terms = count_terms(body);
  if (!terms) return unexpected(terms.error());
  if (*terms == 0) return filter_error(kNoFilter, 0);
  auto program = Compiler(body, fields).compile();
  if (program) program->text = std::string(text);
  return program;
}

}  // namespace dprobe::lang
