// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The argument is parsed in the kernel's order, so that of several problems
// the one reported is the one the kernel would report: the name, then the
// type suffix, then the fetch expression, then the store and its modifiers.
#include "lang/fetch_arg.h"

#include <string>

#include "base/strings.h"
#include "lang/fetch_expr.h"
#include "lang/limits.h"
#include "lang/type_suffix.h"
#include "lang/variable_path.h"

namespace dprobe::lang {
namespace {

using trace::EventArg;
using trace::FetchInsn;
using trace::FetchOp;

bool is_name_taken(std::string_view name, std::span<const EventArg> previous) {
  for (const char* reserved : trace::kReservedFieldNames) {
    if (name == reserved) return true;
  }
  for (const EventArg& arg : previous) {
    if (arg.name == name) return true;
  }
  return false;
}

Parsed<std::string> parse_arg_name(std::string_view word, size_t column,
                                   std::span<const EventArg> previous, size_t* body_start) {
  const size_t equals = word.find('=');
  std::string name;
  if (equals == std::string_view::npos) {
    *body_start = 0;
    name = "arg" + std::to_string(previous.size() + 1);
  } else {
    if (equals > kMaxArgNameLen) return fault(ErrorCode::ARG_NAME_TOO_LONG, column);
    if (equals == 0) return fault(ErrorCode::NO_ARG_NAME, column);
    name = std::string(word.substr(0, equals));
    if (!is_c_identifier(name)) return fault(ErrorCode::BAD_ARG_NAME, column);
    *body_start = equals + 1;
  }
  if (is_name_taken(name, previous)) return fault(ErrorCode::USED_ARG_NAME, column);
  return name;
}

// Where the kernel points its errors of the store and its modifiers: past
// the outermost dereference's brace (fetch_expr.h), at the type or at the
// argument's body.
struct StoreColumns {
  size_t type;
  size_t body;
};

bool is_string_source(FetchOp op) {
  return op == FetchOp::kImm || op == FetchOp::kComm || op == FetchOp::kData;
}

// Stage 3: turn the last operation into a store, or append one.
Parsed<void> add_store(EventArg& arg, std::vector<FetchInsn>& code, const StoreColumns& at) {
  const trace::FetchType& type = trace::fetch_type(arg.type);
  FetchInsn& last = code.back();
  if (trace::is_string_class(type.cls)) {
    const bool deref = last.op == FetchOp::kDeref || last.op == FetchOp::kUDeref;
    if (!deref && !is_string_source(last.op)) return fault(ErrorCode::BAD_STRING, at.type);
    const bool user = arg.type == trace::TypeId::kUString || last.op == FetchOp::kUDeref;
    const FetchOp store = user ? FetchOp::kStUString : FetchOp::kStString;
    // A string array reads an array of pointers: the dereference stays, and
    // the string is copied from each pointer it loads.
    if (deref && arg.count == 0) {
      last.op = store;
      last.size = type.size;
      return {};
    }
    if (code.size() >= kMaxFetchOps) return fault(ErrorCode::TOO_MANY_OPS, at.body);
    code.push_back({store, type.size, 0, 0, 0, 0});
    return {};
  }
  if (last.op == FetchOp::kDeref || last.op == FetchOp::kUDeref) {
    last.op = last.op == FetchOp::kDeref ? FetchOp::kStMem : FetchOp::kStUMem;
    last.size = type.size;
    return {};
  }
  if (code.size() >= kMaxFetchOps) return fault(ErrorCode::TOO_MANY_OPS, at.body);
  code.push_back({FetchOp::kStRaw, type.size, 0, 0, 0, 0});
  return {};
}

bool is_memory_store(FetchOp op) {
  return op == FetchOp::kStMem || op == FetchOp::kStUMem || op == FetchOp::kStString ||
         op == FetchOp::kStUString;
}

// Stage 4: the bitfield modifier and the array loop.
Parsed<void> add_modifiers(EventArg& arg, std::string_view type, std::vector<FetchInsn>& code,
                           const StoreColumns& at) {
  const FetchOp store = code.back().op;
  if (arg.is_bitfield()) {
    const uint8_t bytes = trace::fetch_type(arg.type).size;
    auto bitfield = parse_bitfield(type, bytes, at.type);
    if (!bitfield) return unexpected(bitfield.error());
    // The kernel takes no room left for the shift as a bad bitfield.
    if (code.size() >= kMaxFetchOps) return fault(ErrorCode::BAD_BITFIELD, at.type);
    // Shift the field to the top of the container, then down to bit 0.
    const auto bits = static_cast<uint8_t>(bytes * 8);
    const auto lshift = static_cast<uint8_t>(bits - (bitfield->width + bitfield->offset));
    const auto rshift = static_cast<uint8_t>(bits - bitfield->width);
    code.push_back({FetchOp::kModBitfield, bytes, lshift, rshift, 0, 0});
  }
  if (arg.count > 0) {
    if (!is_memory_store(store)) return fault(ErrorCode::BAD_STRING, at.type);
    if (code.size() >= kMaxFetchOps) return fault(ErrorCode::TOO_MANY_OPS, at.body);
    code.push_back({FetchOp::kLoopArray, 0, 0, 0, arg.count, 0});
  }
  return {};
}

// $params, $vars (perf probe's) and $arg* (the kernel's): every parameter,
// or every variable, in scope; each becomes an argument of its own name.
bool is_variable_list(std::string_view body) {
  for (std::string_view list : {"$params", "$vars", "$arg*"}) {
    if (body.starts_with(list)) return true;
  }
  return false;
}

Parsed<EventArg> parse_variable_list(std::string_view word, size_t column, size_t body_start,
                                     const ArgContext& context) {
  const std::string_view body = word.substr(body_start);
  if (body_start != 0 || (body != "$params" && body != "$vars" && body != "$arg*")) {
    return fault(ErrorCode::BAD_VAR_ARGS, column);
  }
  if (context.is_return) return fault(ErrorCode::VAR_ON_RETPROBE, column);
  if (body == "$arg*" && !context.at_function_entry && !context.sdt) {
    return fault(ErrorCode::NOFENTRY_ARGS, column);
  }
  EventArg arg;
  arg.source_expr = std::string(body);
  return arg;
}

// A source variable: checked for its syntax now, fetched from where the
// DWARF says once the probe's address is known.
Parsed<void> defer_variable(EventArg& arg, const TypeSuffix& suffix, std::string_view body,
                            size_t body_column, bool named, const ArgContext& context,
                            std::span<const EventArg> previous) {
  auto path = parse_variable_path(suffix.expr, body_column);
  if (!path) return unexpected(path.error());
  if (context.is_return) return fault(ErrorCode::VAR_ON_RETPROBE, body_column);
  arg.source_expr = std::string(suffix.expr);
  if (suffix.has_type) arg.source_type = std::string(body.substr(suffix.expr.size() + 1));
  if (!named) {
    arg.name = variable_path_arg_name(suffix.expr);
    if (arg.name.size() > kMaxArgNameLen) arg.name.resize(kMaxArgNameLen);
    if (is_name_taken(arg.name, previous)) return fault(ErrorCode::USED_ARG_NAME, body_column);
  }
  return {};
}

// $retval as a float or a double: the ABIs return those in the first
// vector register (xmm0, v0), not in the integer one.
void use_float_return(const EventArg& arg, std::vector<FetchInsn>& code) {
  const bool floating = arg.type == trace::TypeId::kF32 || arg.type == trace::TypeId::kF64;
  if (floating && code.size() == 1 && code[0].op == FetchOp::kRetval) {
    code[0].op = FetchOp::kFloatRetval;
  }
}

}  // namespace

Parsed<EventArg> parse_fetch_arg(std::string_view word, size_t column,
                                 std::span<const EventArg> previous, const ArgContext& context) {
  EventArg arg;
  size_t body_start = 0;
  auto name = parse_arg_name(word, column, previous, &body_start);
  if (!name) return unexpected(name.error());
  arg.name = std::move(*name);
  if (!context.event_probe && is_variable_list(word.substr(body_start))) {
    return parse_variable_list(word, column, body_start, context);
  }

  const std::string_view body = word.substr(body_start);
  const size_t body_column = column + body_start;
  if (body.size() > kMaxArgExprLen) return fault(ErrorCode::ARG_TOO_LONG, body_column);
  if (body.empty()) return fault(ErrorCode::NO_ARG_BODY, body_column);

  auto suffix = parse_type_suffix(body, body_column);
  if (!suffix) return unexpected(suffix.error());
  arg.expr = std::string(suffix->expr);
  arg.count = suffix->count;
  auto type = resolve_arg_type(*suffix);
  if (!type) return unexpected(type.error());
  arg.type = type->id;
  arg.type_text = type->text;
  arg.type_written = suffix->has_type;
  if (!context.event_probe && is_variable_path(suffix->expr)) {
    auto deferred =
        defer_variable(arg, *suffix, body, body_column, body_start != 0, context, previous);
    if (!deferred) return unexpected(deferred.error());
    return arg;
  }

  std::vector<FetchInsn> code;
  auto parsed = parse_fetch_expr(suffix->expr, body_column, context, arg, code);
  if (!parsed) return unexpected(parsed.error());
  use_float_return(arg, code);
  const size_t shift = deref_prefix_columns(suffix->expr);
  const StoreColumns at{suffix->column + shift, body_column + shift};
  if (auto stored = add_store(arg, code, at); !stored) return unexpected(stored.error());
  if (auto modified = add_modifiers(arg, suffix->type, code, at); !modified) {
    return unexpected(modified.error());
  }
  code.push_back({FetchOp::kEnd, 0, 0, 0, 0, 0});
  arg.code = std::move(code);
  return arg;
}

}  // namespace dprobe::lang
