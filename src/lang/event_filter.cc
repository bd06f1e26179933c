// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The filter compiler, in three steps, none recursive (the text is the
// user's, its nesting unbounded):
//   1. count_terms (lang/filter_terms.h): quotes and parentheses over the
//      whole text, as the kernel's calc_stack checks them first;
//   2. Compiler::parse, here: terms and operators into a tree, with
//      explicit stacks, accepting what the kernel's predicate_parse
//      accepts; each predicate read by lang/filter_predicate.h;
//   3. generate_code (lang/filter_codegen.h): the tree into jumping code,
//      each predicate jumping to the next one to test when true and when
//      false, which is what the kernel's filter program is after its
//      second pass.
//
// Columns: the kernel hands its predicate parser (parse_pred) a position
// one past the predicate's first character, so the errors found inside a
// predicate point one column right of the character they mean ("foo == 1"
// reports Field not found at the first '='). They are kept so, for the
// caret to fall where the kernel's error_log puts it (checked against
// Linux 6.18's error_log for every message below).
#include "lang/event_filter.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "lang/filter_codegen.h"
#include "lang/filter_predicate.h"
#include "lang/filter_syntax.h"
#include "lang/filter_terms.h"

namespace dprobe::lang {
namespace filter {
namespace {

using trace::FilterProgram;
using trace::RecordField;

class Compiler {
 public:
  Compiler(std::string_view text, const std::vector<RecordField>& fields)
      : text_(text), predicates_(text, fields, program_) {}

  Result<FilterProgram, FilterError> compile() {
    auto parsed = parse();
    if (!parsed) return unexpected(parsed.error());
    generate_code(tree_, operands_.back(), program_);
    return std::move(program_);
  }

 private:
  enum class Pending : uint8_t { kOpen, kNot, kAnd, kOr };
  // Where parsing goes on from, and whether a term or a joiner comes next.
  struct Step {
    size_t at;
    bool want_term;
  };

  char at(size_t i) const { return char_at(text_, i); }

  // The kernel's predicate_parse, as a loop over two kinds of step.
  Result<void, FilterError> parse() {
    Step step{0, true};
    for (;;) {
      skip_spaces(text_, step.at);
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
    if (tree_.leaves.size() == trace::kMaxFilterPredicates) return filter_error(kTooManyPreds, i);
    Predicate predicate;
    auto end = predicates_.parse(i, predicate);
    if (!end) return unexpected(end.error());
    tree_.leaves.push_back(predicate);
    push_operand({FilterNode::kLeaf, static_cast<uint32_t>(tree_.leaves.size() - 1), 0});
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
      if (tree_.nodes[term].kind == FilterNode::kNot) {
        operands_.back() = tree_.nodes[term].left;  // !!x is x
      } else {
        operands_.pop_back();
        push_operand({FilterNode::kNot, term, 0});
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
    const FilterNode::Kind kind =
        pending_.back() == Pending::kAnd ? FilterNode::kAnd : FilterNode::kOr;
    pending_.pop_back();
    const uint32_t right = operands_.back();
    operands_.pop_back();
    const uint32_t left = operands_.back();
    operands_.pop_back();
    push_operand({kind, left, right});
  }

  void push_operand(FilterNode node) {
    operands_.push_back(static_cast<uint32_t>(tree_.nodes.size()));
    tree_.nodes.push_back(node);
  }

  std::string_view text_;
  FilterProgram program_;
  PredicateParser predicates_;  // adds to program_
  FilterTree tree_;
  std::vector<uint32_t> operands_;
  std::vector<Pending> pending_;
};

std::string_view strip_trailing_spaces(std::string_view text) {
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace
}  // namespace filter

Result<trace::FilterProgram, FilterError> compile_filter(
    std::string_view text, const std::vector<trace::RecordField>& fields) {
  trace::FilterProgram empty;
  empty.text = std::string(text);
  // The kernel reads the filter as a C string with its trailing blanks cut
  // (leading ones stay, and count in the columns).
  const std::string_view body = filter::strip_trailing_spaces(text.substr(0, text.find('\0')));
  if (text.empty() || trim(body) == "0") return empty;
  auto terms = filter::count_terms(body);
  if (!terms) return unexpected(terms.error());
  if (*terms == 0) return filter::filter_error(filter::kNoFilter, 0);
  auto program = filter::Compiler(body, fields).compile();
  if (program) program->text = std::string(text);
  return program;
}

}  // namespace dprobe::lang
