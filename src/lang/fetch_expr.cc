// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/fetch_expr.h"

#include <cctype>

#include "base/strings.h"
#include "lang/limits.h"

namespace dprobe::lang {
namespace {

using trace::FetchInsn;
using trace::FetchOp;

bool starts_with_digit(std::string_view text) {
  return !text.empty() && std::isdigit(static_cast<unsigned char>(text[0])) != 0;
}

FetchInsn op(FetchOp kind, uint32_t param = 0, int64_t imm = 0) {
  return {kind, 0, 0, 0, param, imm};
}

class ExprParser {
 public:
  ExprParser(const ArgContext& context, trace::EventArg& arg, std::vector<FetchInsn>& code)
      : context_(context), arg_(arg), code_(code) {}

  Parsed<void> parse(std::string_view expr, size_t column) {
    if (expr.empty()) return fault(ErrorCode::BAD_FETCH_ARG, column);
    switch (expr[0]) {
      case '$':
        return parse_variable(expr.substr(1), column);
      case '%':
        return parse_register(expr.substr(1), column);
      case '@':
        return parse_memory(expr.substr(1), column);
      case '+':
      case '-':
        return parse_deref(expr, column);
      case '\\':
        return parse_immediate(expr.substr(1), column);
      default:
        return fault(ErrorCode::BAD_FETCH_ARG, column);
    }
  }

 private:
  Parsed<void> emit(FetchInsn insn, size_t column) {
    if (code_.size() >= kMaxFetchOps) return fault(ErrorCode::TOO_MANY_OPS, column);
    code_.push_back(insn);
    return {};
  }

  Parsed<void> parse_variable(std::string_view name, size_t column) {
    if (name == "retval" && !context_.event_probe) {
      if (!context_.is_return) return fault(ErrorCode::RETVAL_ON_PROBE, column);
      return emit(op(FetchOp::kRetval), column);
    }
    if (name == "comm") return emit(op(FetchOp::kComm), column);
    // dprobe's own: how long the call took, kept in its return instance.
    if (name == "duration" && !context_.event_probe) {
      if (!context_.is_return) return fault(ErrorCode::BAD_VAR, column);
      return emit(op(FetchOp::kDuration), column);
    }
    if (context_.event_probe) return parse_event_field(name, column);
    if (name == "stack") return emit(op(FetchOp::kStackPtr), column);
    if (name.starts_with("stack") && starts_with_digit(name.substr(5))) {
      return parse_stack_slot(name.substr(5), column);
    }
    if (context_.event_probe) return parse_event_field(name, column);
    if (name.starts_with("arg") && starts_with_digit(name.substr(3))) {
      return parse_argument(name.substr(3), column);
    }
    return fault(ErrorCode::BAD_VAR, column);
  }

  // An event probe's $FIELD (the kernel's eprobe: any field of the
  // attached event; $argN, $stack and $retval are not there).
  Parsed<void> parse_event_field(std::string_view name, size_t column) {
    for (const EventField& field : context_.fields) {
      if (field.name == name) return emit(op(FetchOp::kReg, field.reg), column);
    }
    return fault(ErrorCode::BAD_ATTACH_ARG, column);
  }

  Parsed<void> parse_stack_slot(std::string_view digits, size_t column) {
    const auto slot = parse_decimal(digits);
    if (!slot) return fault(ErrorCode::BAD_VAR, column);
    if (*slot >= kMaxStackWords) return fault(ErrorCode::BAD_STACK_NUM, column);
    return emit(op(FetchOp::kStack, static_cast<uint32_t>(*slot)), column);
  }

  Parsed<void> parse_argument(std::string_view digits, size_t column) {
    const auto number = parse_decimal(digits);
    if (!number) return fault(ErrorCode::BAD_VAR, column);
    if (*number == 0 || *number > kMaxArgNumber) return fault(ErrorCode::BAD_ARG_NUM, column);
    if (!context_.is_return && !context_.at_function_entry && !context_.sdt) {
      return fault(ErrorCode::NOFENTRY_ARGS, column);
    }
    // A return probe keeps its arguments from the entry, so many of them.
    if (context_.is_return && *number > kMaxReturnProbeArgs) {
      return fault(ErrorCode::ARGIDX_2BIG, column);
    }
    return emit(op(FetchOp::kArg, static_cast<uint32_t>(*number - 1)), column);
  }

  // $argN and $stackN are decimal, as the kernel's kstrtoul(..., 10, ...).
  static std::optional<uint64_t> parse_decimal(std::string_view digits) {
    for (char c : digits) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    }
    if (digits.size() > 1 && digits[0] == '0') return parse_u64(digits.substr(1));
    return parse_u64(digits);
  }

  Parsed<void> parse_register(std::string_view name, size_t column) {
    const auto index = arch::register_index(context_.isa, name);
    if (!index) return fault(ErrorCode::BAD_REG_NAME, column);
    return emit(op(FetchOp::kReg, *index), column);
  }

  // @ADDR, @+FILE_OFFSET and @[OBJ:]SYM[+|-OFFS] all name memory to read.
  Parsed<void> parse_memory(std::string_view text, size_t column) {
    Parsed<void> source;
    if (starts_with_digit(text)) {
      const auto address = parse_u64(text);
      if (!address) return fault(ErrorCode::BAD_MEM_ADDR, column);
      source = emit(op(FetchOp::kImm, 0, static_cast<int64_t>(*address)), column);
    } else if (!text.empty() && text[0] == '+') {
      const auto offset = parse_s64(text.substr(1));
      if (!offset) return fault(ErrorCode::BAD_FILE_OFFS, column);
      source = emit(op(FetchOp::kFileOffset, 0, *offset), column);
    } else {
      source = parse_symbol_ref(text, column);
    }
    if (!source) return source;
    return emit(op(FetchOp::kDeref), column);
  }

  Parsed<void> parse_symbol_ref(std::string_view text, size_t column) {
    const size_t colon = text.rfind(':');
    const std::string_view object =
        colon == std::string_view::npos ? std::string_view{} : text.substr(0, colon);
    std::string_view symbol = colon == std::string_view::npos ? text : text.substr(colon + 1);
    int64_t offset = 0;
    const size_t sign = symbol.find_first_of("+-");
    if (sign != std::string_view::npos) {
      const auto parsed = parse_s64(symbol.substr(sign));
      if (!parsed) return fault(ErrorCode::BAD_MEM_ADDR, column);
      offset = *parsed;
      symbol = symbol.substr(0, sign);
    }
    if (symbol.empty() || has_wildcard(symbol) ||
        (colon != std::string_view::npos && object.empty())) {
      return fault(ErrorCode::BAD_MEM_ADDR, column);
    }
    const auto index = static_cast<uint32_t>(arg_.symbols.size());
    arg_.symbols.push_back({std::string(object), std::string(symbol)});
    return emit(op(FetchOp::kSymbolAddr, index, offset), column);
  }

  // +|-[u]OFFS(EXPR): read memory at EXPR + OFFS.
  Parsed<void> parse_deref(std::string_view text, size_t column) {
    const char sign = text[0];
    std::string_view rest = text.substr(1);
    FetchOp deref = FetchOp::kDeref;
    if (!rest.empty() && rest[0] == 'u') {
      deref = FetchOp::kUDeref;
      rest.remove_prefix(1);
    }
    const size_t open = rest.find('(');
    if (open == std::string_view::npos) return fault(ErrorCode::DEREF_NEED_BRACE, column);
    const auto magnitude = parse_s64(rest.substr(0, open));
    if (!magnitude || rest.substr(0, open).find_first_of("+-") != std::string_view::npos) {
      return fault(ErrorCode::BAD_DEREF_OFFS, column);
    }
    // The kernel drops the `u` before it counts, so its column for what is
    // inside a user dereference is one less than the character's.
    const size_t inner_column = column + deref_prefix_columns(text);
    const std::string_view inner_and_tail = rest.substr(open + 1);
    const size_t close = inner_and_tail.rfind(')');
    if (close == std::string_view::npos) {
      return fault(ErrorCode::DEREF_OPEN_BRACE, inner_column + inner_and_tail.size());
    }
    if (close + 1 != inner_and_tail.size()) {
      return fault(ErrorCode::BAD_FETCH_ARG, inner_column + close + 1);
    }
    auto inner = parse(inner_and_tail.substr(0, close), inner_column);
    if (!inner) return inner;
    const FetchOp source = code_.back().op;
    if (source == FetchOp::kComm || source == FetchOp::kData) {
      return fault(ErrorCode::COMM_CANT_DEREF, inner_column);
    }
    const int64_t offset = sign == '-' ? -*magnitude : *magnitude;
    return emit(op(deref, 0, offset), inner_column);
  }

  // \IMM is a number; \"TEXT" an immediate string.
  Parsed<void> parse_immediate(std::string_view text, size_t column) {
    if (!text.empty() && text[0] == '"') {
      const std::string_view quoted = text.substr(1);
      if (quoted.empty() || quoted.back() != '"') {
        return fault(ErrorCode::IMMSTR_NO_CLOSE, column + 2 + quoted.size());
      }
      arg_.data = std::string(quoted.substr(0, quoted.size() - 1));
      return emit(op(FetchOp::kData), column);
    }
    std::optional<int64_t> value;
    if (starts_with_digit(text)) {
      const auto unsigned_value = parse_u64(text);
      if (unsigned_value) value = static_cast<int64_t>(*unsigned_value);
    } else if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
      value = parse_s64(text);
    }
    if (!value) return fault(ErrorCode::BAD_IMM, column + 1);
    return emit(op(FetchOp::kImm, 0, *value), column);
  }

  const ArgContext& context_;
  trace::EventArg& arg_;
  std::vector<FetchInsn>& code_;
};

}  // namespace

size_t deref_prefix_columns(std::string_view expr) {
  if (expr.empty() || (expr[0] != '+' && expr[0] != '-')) return 0;
  const size_t open = expr.find('(');
  if (open == std::string_view::npos) return 0;
  const bool user = expr.size() > 1 && expr[1] == 'u';
  return open + 1 - (user ? 1 : 0);
}

Parsed<void> parse_fetch_expr(std::string_view expr, size_t column, const ArgContext& context,
                              trace::EventArg& arg, std::vector<FetchInsn>& code) {
  return ExprParser(context, arg, code).parse(expr, column);
}

}  // namespace dprobe::lang
