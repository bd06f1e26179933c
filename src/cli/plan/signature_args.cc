// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/signature_args.h"

#include <span>
#include <string>

#include "arch/isa.h"
#include "lang/fetch_arg.h"
#include "trace/event.h"

namespace dprobe::cli {
namespace {

using Kind = symbols::ValueShape::Kind;

// The psABIs' vector argument registers (xmm0-7, v0-7).
constexpr unsigned kVectorArgs = 8;

bool is_integer_class(const symbols::ValueShape& shape) {
  switch (shape.kind) {
    case Kind::kSigned:
    case Kind::kUnsigned:
    case Kind::kBool:
    case Kind::kPointer:
    case Kind::kString:
    case Kind::kEnum:
      return shape.size <= 8;
    default:
      return false;
  }
}

bool is_float(const symbols::ValueShape& shape) {
  return shape.kind == Kind::kFloat && (shape.size == 4 || shape.size == 8);
}

// What a parameter is to the ABI: the K-th integer argument, a float, or
// past what this follows.
struct Passing {
  enum { kInteger, kFloat, kUnknown } kind = kUnknown;
  unsigned integer = 0;  // kInteger: its 1-based place among the integers
  unsigned vector = 0;   // kFloat: its 0-based vector register
};

Passing passing_of(const symbols::FunctionSignature& signature, unsigned n) {
  unsigned integers = 0;
  unsigned floats = 0;
  for (unsigned i = 0; i < n && i < signature.parameters.size(); ++i) {
    const symbols::ValueShape& shape = signature.parameters[i];
    if (is_integer_class(shape)) {
      ++integers;
      if (i + 1 == n) return {Passing::kInteger, integers, 0};
    } else if (is_float(shape) && floats < kVectorArgs) {
      if (i + 1 == n) return {Passing::kFloat, 0, floats};
      ++floats;
    } else {
      break;
    }
  }
  return {};
}

std::string float_type(const symbols::ValueShape& shape) { return shape.size == 4 ? "f32" : "f64"; }

std::string c_float_name(const symbols::ValueShape& shape) {
  return shape.size == 4 ? "float (f32)" : "double (f64)";
}

}  // namespace

bool has_signature_args(const lang::Definition& def) {
  for (const trace::EventArg& arg : def.spec.event.args) {
    if (!arg.source_expr.empty()) continue;
    if (def.spec.point.is_return && arg.expr == "$retval" && !arg.type_written) return true;
    if (arg.expr.find("$arg") != std::string::npos) return true;
  }
  return false;
}

namespace {

// The word of argument `i` as written in the command.
std::string word_of(const lang::Definition& def, size_t i) {
  if (i >= def.arg_columns.size() || def.arg_columns[i] >= def.command.size()) return {};
  const size_t begin = def.arg_columns[i];
  const size_t end = def.command.find_first_of(" \t", begin);
  return def.command.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

class Rewriter {
 public:
  Rewriter(lang::Definition& def, const symbols::FunctionSignature& signature,
           const std::string& function)
      : def_(def), signature_(signature), function_(function) {}

  // `word` with each $argN that names an integer after floats moved to
  // its place among the integers; an error for a float's.
  Result<std::string, lang::ProbeError> arguments_in(std::string word, size_t column) const {
    for (size_t at = word.find("$arg"); at != std::string::npos; at = word.find("$arg", at + 1)) {
      size_t end = at + 4;
      while (end < word.size() && word[end] >= '0' && word[end] <= '9') ++end;
      if (end == at + 4) continue;
      const auto n = static_cast<unsigned>(std::stoul(word.substr(at + 4, end - at - 4)));
      const Passing passing = passing_of(signature_, n);
      if (passing.kind == Passing::kFloat && !def_.expanded) {
        return unexpected(float_argument(n, passing, column + at));
      }
      if (passing.kind == Passing::kInteger && passing.integer != n) {
        word.replace(at + 4, end - at - 4, std::to_string(passing.integer));
      }
    }
    return word;
  }

 private:
  lang::ProbeError float_argument(unsigned n, const Passing& passing, size_t column) const {
    return lang::ProbeError{.code = lang::ErrorCode::VAR_UNSUPPORTED,
                            .command = def_.command,
                            .column = column,
                            .detail = "$arg" + std::to_string(n) + " of " + function_ + " is a " +
                                      c_float_name(signature_.parameters[n - 1]) +
                                      ", which the ABI passes in vector register " +
                                      std::to_string(passing.vector) +
                                      ": dprobe reads a vector register for $retval only"};
  }

  lang::Definition& def_;
  const symbols::FunctionSignature& signature_;
  const std::string& function_;
};

}  // namespace

Result<void, lang::ProbeError> apply_signature(lang::Definition& def,
                                               const symbols::FunctionSignature& signature,
                                               const std::string& function) {
  const lang::ArgContext context{.isa = arch::host_isa(),
                                 .is_return = def.spec.point.is_return,
                                 .at_function_entry = true,
                                 .fields = {},
                                 .event_probe = false};
  const Rewriter rewriter(def, signature, function);
  std::vector<trace::EventArg>& args = def.spec.event.args;
  bool changed = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string word = word_of(def, i);
    if (!args[i].source_expr.empty() || word.empty()) continue;
    auto rewritten = rewriter.arguments_in(word, def.arg_columns[i]);
    if (!rewritten) return unexpected(rewritten.error());
    if (def.spec.point.is_return && args[i].expr == "$retval" && !args[i].type_written &&
        is_float(signature.returns)) {
      *rewritten += ":" + float_type(signature.returns);
    }
    if (*rewritten == word) continue;
    std::span<const trace::EventArg> before(args.data(), i);
    auto parsed = lang::parse_fetch_arg(*rewritten, def.arg_columns[i], before, context);
    if (!parsed) continue;  // as written, then
    args[i] = std::move(*parsed);
    changed = true;
  }
  if (changed) trace::layout_event(def.spec.event);
  return {};
}

}  // namespace dprobe::cli
