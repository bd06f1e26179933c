// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/variable_args.h"

#include "lang/fetch_arg.h"
#include "lang/limits.h"
#include "lang/variable_path.h"
#include "trace/hit/fetch_type.h"

namespace dprobe::cli {
namespace {

using lang::ErrorCode;
using symbols::ValueShape;
using Kind = symbols::ValueShape::Kind;

std::string with_offset(int64_t offset, const std::string& inner) {
  return (offset < 0 ? "" : "+") + std::to_string(offset) + "(" + inner + ")";
}

std::string scalar_type(Kind kind, uint32_t size) {
  const std::string bits = std::to_string(size * 8);
  switch (kind) {
    case Kind::kSigned:
    case Kind::kEnum:
      return size <= 8 ? "s" + bits : "";
    case Kind::kUnsigned:
    case Kind::kBool:
      return size <= 8 ? "u" + bits : "";
    case Kind::kPointer:
    case Kind::kFloat:  // the kernel's types have no float: its bits, in hex
      return size <= 8 ? "x" + bits : "";
    default:
      return "";
  }
}

// The global at link address `address`, as @[OBJ:]SYM[+OFFS].
std::optional<std::string> global_reference(uint64_t address, const VariableScope& scope) {
  if (scope.globals == nullptr) return std::nullopt;
  for (const symbols::FunctionSymbol& global : *scope.globals) {
    const bool inside = address == global.address ||
                        (address > global.address && address - global.address < global.size);
    if (!inside) continue;
    std::string out = "@" + (scope.object.empty() ? "" : scope.object + ":") + global.name;
    if (address != global.address) out += "+" + std::to_string(address - global.address);
    return out;
  }
  return std::nullopt;
}

bool is_string_type(const std::string& type) {
  const trace::FetchType* found = trace::find_fetch_type(type);
  return found != nullptr && trace::is_string_class(found->cls);
}

Unexpected<lang::ProbeError> error_at(ErrorCode code, const lang::Definition& def, size_t column,
                                      std::string detail = {}) {
  return unexpected(lang::ProbeError{
      .code = code, .command = def.command, .column = column, .detail = std::move(detail)});
}

// Where the argument's expression starts: after NAME= when written.
size_t body_column(const lang::Definition& def, size_t arg_column, const trace::EventArg& arg) {
  const std::string_view rest = std::string_view(def.command).substr(arg_column);
  return rest.starts_with(arg.name + "=") ? arg_column + arg.name.size() + 1 : arg_column;
}

Unexpected<lang::ProbeError> variable_error(const symbols::VariableError& error,
                                            const lang::Definition& def,
                                            const lang::VariablePath& path, size_t column) {
  using ErrorKind = symbols::VariableError::Kind;
  const size_t at = error.step >= 0 && static_cast<size_t>(error.step) < path.steps.size()
                        ? path.steps[static_cast<size_t>(error.step)].column
                        : column;
  ErrorCode code = ErrorCode::VAR_UNSUPPORTED;
  switch (error.kind) {
    case ErrorKind::kNoScope:
    case ErrorKind::kNotFound:
      code = ErrorCode::NO_BTFARG;
      break;
    case ErrorKind::kOptimizedOut:
      code = ErrorCode::VAR_OPTIMIZED;
      break;
    case ErrorKind::kNoMember:
      code = ErrorCode::NO_BTF_FIELD;
      break;
    case ErrorKind::kNotPointer:
      code = ErrorCode::NO_PTR_STRCT;
      break;
    case ErrorKind::kNeedArrow:
      code = ErrorCode::BAD_MEMBER_OP;
      break;
    case ErrorKind::kUnsupported:
      code = ErrorCode::VAR_UNSUPPORTED;
      break;
  }
  auto failure = error_at(code, def, at, error.detail);
  if (!error.available.empty()) {
    std::string names;
    for (const std::string& name : error.available) names += (names.empty() ? "" : ", ") + name;
    failure.error.notes.push_back("Available variables here: " + names);
  }
  return failure;
}

symbols::VariableQuery query_of(const lang::VariablePath& path) {
  symbols::VariableQuery query{path.name, {}};
  for (const lang::PathStep& step : path.steps) {
    const auto kind = step.kind == lang::PathStep::kArrow ? symbols::AccessStep::kArrow
                      : step.kind == lang::PathStep::kDot ? symbols::AccessStep::kDot
                                                          : symbols::AccessStep::kIndex;
    query.steps.push_back({kind, step.member, step.index});
  }
  return query;
}

class Resolver {
 public:
  Resolver(lang::Definition& def, const VariableScope& scope) : def_(def), scope_(scope) {}

  Result<void, lang::ProbeError> run() {
    std::vector<trace::EventArg> args = std::move(def_.spec.event.args);
    std::vector<size_t> columns = std::move(def_.arg_columns);
    def_.spec.event.args.clear();
    def_.arg_columns.clear();
    for (size_t i = 0; i < args.size(); ++i) {
      trace::EventArg& arg = args[i];
      const size_t column = i < columns.size() ? columns[i] : 0;
      Result<void, lang::ProbeError> done;
      if (arg.source_expr.empty()) {
        add(std::move(arg), column);
      } else if (arg.source_expr.starts_with('$')) {
        done = add_list(arg.source_expr, column);
      } else {
        done = add_variable(arg, column);
      }
      if (!done) return done;
    }
    trace::layout_event(def_.spec.event);
    uint32_t size = trace::first_arg_offset(def_.spec.point.is_return);
    for (size_t i = 0; i < def_.spec.event.args.size(); ++i) {
      size += def_.spec.event.args[i].field_size();
      if (size > lang::kMaxFixedRecordSize) {
        return error_at(ErrorCode::EVENT_TOO_BIG, def_, def_.arg_columns[i]);
      }
    }
    return {};
  }

 private:
  void add(trace::EventArg arg, size_t column) {
    def_.spec.event.args.push_back(std::move(arg));
    def_.arg_columns.push_back(column);
  }

  Result<void, lang::ProbeError> need_info(size_t column) {
    if (scope_.info != nullptr) return {};
    return error_at(ErrorCode::NO_DEBUG_INFO, def_, column, scope_.no_info);
  }

  Result<void, lang::ProbeError> add_variable(const trace::EventArg& arg, size_t column) {
    const size_t body = body_column(def_, column, arg);
    if (auto ok = need_info(body); !ok) return ok;
    auto path = lang::parse_variable_path(arg.source_expr, body);
    if (!path) return error_at(path.error().code, def_, path.error().column);
    auto fetch = symbols::find_variable(*scope_.info, scope_.address, query_of(*path));
    if (!fetch) return variable_error(fetch.error(), def_, *path, body);
    std::string type = arg.source_type;
    if (type.empty()) {
      if (fetch->shape.kind == Kind::kRecord) {
        return error_at(ErrorCode::NOSUP_DAT_ARG, def_, body,
                        arg.source_expr + " is a " + fetch->shape.type_name);
      }
      type = default_fetch_type(fetch->shape);
      if (type.empty()) {
        return error_at(
            ErrorCode::VAR_UNSUPPORTED, def_, body,
            arg.source_expr + " is a " + fetch->shape.type_name + ", which has no value to fetch");
      }
    }
    auto text = variable_fetch_text(*fetch, type, scope_);
    if (!text) {
      const bool for_string = is_string_type(type.substr(0, type.find('[')));
      return error_at(for_string ? ErrorCode::BAD_TYPE4STR : ErrorCode::VAR_UNSUPPORTED, def_, body,
                      text.error().message);
    }
    return compile(arg.name, *text, column, body);
  }

  // $params, $vars, $arg*: one argument per variable there is a value of
  // here, named after it; what has none (optimized out, a structure) is
  // left out, as perf probe does.
  Result<void, lang::ProbeError> add_list(const std::string& list, size_t column) {
    if (auto ok = need_info(column); !ok) return ok;
    auto variables = symbols::variables_at(*scope_.info, scope_.address);
    if (!variables) {
      return error_at(ErrorCode::NO_BTFARG, def_, column, variables.error().message);
    }
    for (const symbols::ScopeVariable& variable : *variables) {
      if (variable.global || !variable.available) continue;
      if (list != "$vars" && !variable.is_parameter) continue;
      if (taken(variable.name)) continue;
      auto fetch = symbols::find_variable(*scope_.info, scope_.address, {variable.name, {}});
      if (!fetch) continue;
      const std::string type = default_fetch_type(fetch->shape);
      if (type.empty()) continue;
      auto text = variable_fetch_text(*fetch, type, scope_);
      if (!text) continue;
      if (auto done = compile(variable.name, *text, column, column); !done) return done;
    }
    return {};
  }

  bool taken(const std::string& name) const {
    for (const trace::EventArg& arg : def_.spec.event.args) {
      if (arg.name == name) return true;
    }
    return false;
  }

  // The fetch written out, compiled as the user's own would be.
  Result<void, lang::ProbeError> compile(const std::string& name, const std::string& text,
                                         size_t column, size_t body) {
    const std::string word = name + "=" + text;
    const lang::ArgContext context{.isa = scope_.isa,
                                   .is_return = def_.spec.point.is_return,
                                   .at_function_entry = true,
                                   .fields = {},
                                   .event_probe = false};
    auto arg = lang::parse_fetch_arg(word, 0, def_.spec.event.args, context);
    if (!arg) {
      const ErrorCode code = arg.error().code == ErrorCode::USED_ARG_NAME
                                 ? ErrorCode::USED_ARG_NAME
                                 : ErrorCode::VAR_UNSUPPORTED;
      return error_at(code, def_, body, "as a fetch argument: " + word);
    }
    add(std::move(*arg), column);
    return {};
  }

  lang::Definition& def_;
  const VariableScope& scope_;
};

}  // namespace

bool has_variable_args(const lang::Definition& def) {
  for (const trace::EventArg& arg : def.spec.event.args) {
    if (!arg.source_expr.empty()) return true;
  }
  return false;
}

std::string default_fetch_type(const ValueShape& shape) {
  if (shape.bit_size != 0) {
    return "b" + std::to_string(shape.bit_size) + "@" + std::to_string(shape.bit_offset) + "/" +
           std::to_string(shape.size * 8);
  }
  switch (shape.kind) {
    case Kind::kString:
    case Kind::kCharArray:
      return "string";
    case Kind::kArray: {
      const std::string element = scalar_type(shape.element, shape.size);
      if (element.empty() || shape.count == 0 || shape.count > lang::kMaxArrayLen) return "";
      return element + "[" + std::to_string(shape.count) + "]";
    }
    default:
      return scalar_type(shape.kind, shape.size);
  }
}

Result<std::string> variable_fetch_text(const symbols::VariableFetch& fetch,
                                        const std::string& type, const VariableScope& scope) {
  using Base = symbols::VariableFetch::Base;
  std::string expr;
  std::vector<int64_t> loads = fetch.loads;
  const bool in_memory = fetch.in_memory;
  // Whether `expr` already names the object's memory (@SYM does), rather
  // than a value the object is at an offset from.
  bool designates = false;
  if (!in_memory && fetch.plus != 0) {
    return fail("it is computed here (a register plus " + std::to_string(fetch.plus) +
                "): only what it points to can be fetched");
  }
  if (fetch.base == Base::kRegister) {
    const std::string_view reg = arch::dwarf_register_name(scope.isa, fetch.dwarf_reg);
    if (reg.empty()) {
      return fail("it is in DWARF register " + std::to_string(fetch.dwarf_reg) +
                  ", which fetch arguments can not name");
    }
    expr = "%" + std::string(reg);
  } else if (fetch.base == Base::kConstant) {
    if (!loads.empty() || in_memory) return fail("it reads through a constant");
    expr = "\\" + std::to_string(fetch.constant);
  } else {
    // A global: @SYM is the memory at the symbol, so the first read (a
    // load, or the object itself) is the symbol's.
    const int64_t first = loads.empty() ? fetch.at : loads.front();
    auto global = global_reference(fetch.address + static_cast<uint64_t>(first), scope);
    if (!global) return fail("no symbol of the object holds its address");
    expr = *global;
    if (loads.empty()) {
      designates = true;
    } else {
      loads.erase(loads.begin());
    }
  }
  for (const int64_t load : loads) expr = with_offset(load, expr);
  // The object itself: its memory (designated), or the register's value.
  const std::string object = designates ? expr : in_memory ? with_offset(fetch.at, expr) : expr;
  const bool in_place = designates || in_memory;
  const bool array = type.find('[') != std::string::npos;
  if (is_string_type(type.substr(0, type.find('[')))) {
    const Kind kind = fetch.shape.kind;
    if (kind == Kind::kCharArray || (kind == Kind::kArray && fetch.shape.size == 1)) {
      // The characters are the object's own bytes.
      if (!in_place) return fail("the array is not in memory");
      return object + ":" + type;
    }
    if (kind != Kind::kString && kind != Kind::kPointer) {
      return fail("a " + fetch.shape.type_name + " is not a pointer to characters");
    }
    return with_offset(0, object) + ":" + type;
  }
  if (array && !in_place) return fail("the array is not in memory");
  return object + ":" + type;
}

Result<void, lang::ProbeError> resolve_variables(lang::Definition& def,
                                                 const VariableScope& scope) {
  if (!has_variable_args(def)) return {};
  return Resolver(def, scope).run();
}

}  // namespace dprobe::cli
