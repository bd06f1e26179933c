// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/sdt_points.h"

#include <elf.h>

#include <cctype>
#include <set>

#include "arch/sdt_operand.h"
#include "base/strings.h"
#include "cli/plan/object_targets.h"
#include "lang/limits.h"

namespace dprobe::cli {
namespace {

using lang::ErrorCode;
using trace::FetchInsn;
using trace::FetchOp;

Unexpected<lang::ProbeError> error_at(ErrorCode code, const lang::Definition& def, size_t column,
                                      std::string detail) {
  return unexpected(lang::ProbeError{
      .code = code, .command = def.command, .column = column, .detail = std::move(detail)});
}

std::string site_name(const symbols::SdtNote& note) {
  return note.provider + ":" + note.name + " at " + hex(note.address);
}

// The fetch of one operand, in place of the placeholder $argN.
std::vector<FetchInsn> operand_fetch(const arch::SdtOperand& operand, trace::EventArg& arg,
                                     const std::string& object) {
  using Kind = arch::SdtOperand::Kind;
  switch (operand.kind) {
    case Kind::kRegister:
      return {{FetchOp::kReg, 0, 0, 0, operand.reg, 0}};
    case Kind::kImmediate:
      return {{FetchOp::kImm, 0, 0, 0, 0, operand.offset}};
    case Kind::kMemory:
      return {{FetchOp::kReg, 0, 0, 0, operand.reg, 0},
              {FetchOp::kDeref, 0, 0, 0, 0, operand.offset}};
    case Kind::kSymbol: {
      const auto index = static_cast<uint32_t>(arg.symbols.size());
      arg.symbols.push_back({object, operand.symbol});
      return {{FetchOp::kSymbolAddr, 0, 0, 0, index, operand.offset},
              {FetchOp::kDeref, 0, 0, 0, 0, 0}};
    }
  }
  return {};
}

// The operand as a fetch argument reads (what `check` prints, and reads
// back): %r14, +16(%sp), \42, @counter+8.
std::string operand_text(const arch::SdtOperand& operand, arch::Isa isa,
                         const std::string& object) {
  using Kind = arch::SdtOperand::Kind;
  const auto signed_offset = [](int64_t value) {
    return (value < 0 ? "-" : "+") + std::to_string(value < 0 ? -value : value);
  };
  const std::string reg = "%" + std::string(arch::register_name(isa, operand.reg));
  switch (operand.kind) {
    case Kind::kRegister:
      return reg;
    case Kind::kImmediate:
      return "\\" + std::to_string(operand.offset);
    case Kind::kMemory:
      return signed_offset(operand.offset) + "(" + reg + ")";
    case Kind::kSymbol:
      return "@" + (object.empty() ? "" : object + ":") + operand.symbol +
             (operand.offset != 0 ? signed_offset(operand.offset) : "");
  }
  return {};
}

// EXPR with its `$argN` (N = index + 1) written as `text`.
std::string replace_argument(std::string expr, uint32_t index, const std::string& text) {
  const std::string name = "$arg" + std::to_string(index + 1);
  for (size_t at = expr.find(name); at != std::string::npos; at = expr.find(name, at)) {
    const size_t end = at + name.size();
    if (end < expr.size() && std::isdigit(static_cast<unsigned char>(expr[end])) != 0) {
      at = end;
      continue;
    }
    expr.replace(at, name.size(), text);
    at += text.size();
  }
  return expr;
}

// "s32", "u8": the operand's own type, for an argument with none written.
void type_by_operand(const arch::SdtOperand& operand, trace::EventArg& arg) {
  const std::string name = (operand.is_signed ? "s" : "u") + std::to_string(operand.size * 8);
  if (const trace::FetchType* type = trace::find_fetch_type(name)) {
    arg.type = type->id;
    arg.type_text = name;
  }
}

// A plain `$argN` (no dereference, no type): the operand, as it is.
bool is_plain_argument(const trace::EventArg& arg) {
  return !arg.type_written && arg.count == 0 && arg.code.size() == 3 &&
         arg.code[0].op == FetchOp::kArg && arg.code[1].op == FetchOp::kStRaw;
}

class SiteArgs {
 public:
  SiteArgs(const lang::Definition& def, const symbols::SdtNote& note, arch::Isa isa)
      : def_(def), note_(note), isa_(isa) {}

  // The event's arguments at this site, or the error of the first that
  // names an operand the site has not, or cannot be read.
  Result<std::vector<trace::EventArg>, lang::ProbeError> compile(
      std::vector<trace::EventArg> written) {
    const std::vector<std::string_view> operands = arch::split_sdt_operands(note_.arguments);
    if (written.empty()) written.push_back(every_operand_marker());
    std::vector<trace::EventArg> out;
    for (size_t i = 0; i < written.size(); ++i) {
      const size_t column = i < def_.arg_columns.size() ? def_.arg_columns[i] : def_.symbol_column;
      std::vector<trace::EventArg> made;
      if (written[i].source_expr == "$arg*") {
        for (size_t n = 0; n < operands.size(); ++n) made.push_back(operand_arg(n));
      } else {
        made.push_back(std::move(written[i]));
      }
      for (trace::EventArg& arg : made) {
        if (auto done = substitute(arg, operands, column); !done) return unexpected(done.error());
        out.push_back(std::move(arg));
      }
    }
    return out;
  }

 private:
  static trace::EventArg every_operand_marker() {
    trace::EventArg marker;
    marker.source_expr = "$arg*";
    return marker;
  }

  // argN=$argN, typed by its operand once substituted.
  static trace::EventArg operand_arg(size_t n) {
    trace::EventArg arg;
    arg.name = "arg" + std::to_string(n + 1);
    arg.expr = "$" + arg.name;
    arg.code = {{FetchOp::kArg, 0, 0, 0, static_cast<uint32_t>(n), 0},
                {FetchOp::kStRaw, 8, 0, 0, 0, 0},
                {FetchOp::kEnd, 0, 0, 0, 0, 0}};
    return arg;
  }

  Result<void, lang::ProbeError> substitute(trace::EventArg& arg,
                                            const std::vector<std::string_view>& operands,
                                            size_t column) {
    const bool plain = is_plain_argument(arg);
    std::vector<FetchInsn> code;
    std::optional<arch::SdtOperand> used;
    for (const FetchInsn& insn : arg.code) {
      if (insn.op != FetchOp::kArg) {
        code.push_back(insn);
        continue;
      }
      if (insn.param >= operands.size()) {
        return error_at(
            ErrorCode::BAD_ARG_NUM, def_, column,
            site_name(note_) + " has " + std::to_string(operands.size()) + " operand(s)");
      }
      auto operand = arch::parse_sdt_operand(isa_, operands[insn.param]);
      if (!operand) {
        return error_at(ErrorCode::BAD_SDT_OPERAND, def_, column,
                        site_name(note_) + ": " + operand.error().message);
      }
      const std::string& object = def_.spec.point.target.object;
      for (const FetchInsn& fetch : operand_fetch(*operand, arg, object)) code.push_back(fetch);
      arg.expr = replace_argument(arg.expr, insn.param, operand_text(*operand, isa_, object));
      used = *operand;
    }
    // A dereference and the store of its value are one store of memory.
    for (size_t i = 0; i + 1 < code.size(); ++i) {
      if (code[i].op == FetchOp::kDeref && code[i + 1].op == FetchOp::kStRaw) {
        code[i + 1] = {FetchOp::kStMem, code[i + 1].size, 0, 0, 0, code[i].imm};
        code.erase(code.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    if (code.size() > trace::kMaxFetchInsns) {
      return error_at(ErrorCode::TOO_MANY_OPS, def_, column, site_name(note_));
    }
    arg.code = std::move(code);
    if (plain && used) {
      type_by_operand(*used, arg);
      arg.code[arg.code.size() - 2].size = trace::fetch_type(arg.type).size;
    }
    return {};
  }

  const lang::Definition& def_;
  const symbols::SdtNote& note_;
  arch::Isa isa_;
};

bool note_matches(const symbols::SdtNote& note, const lang::SdtPoint& point) {
  return glob_match(point.provider, note.provider) && glob_match(point.name, note.name);
}

arch::Isa isa_of(const symbols::ElfFile& elf) {
  return elf.machine() == EM_AARCH64 ? arch::Isa::kArm64 : arch::Isa::kX86_64;
}

}  // namespace

Result<std::vector<lang::Definition>, lang::ProbeError> resolve_sdt_sites(
    lang::Definition def, const LoadedObject& object) {
  const lang::SdtPoint point = *def.sdt;
  std::vector<lang::Definition> out;
  std::set<std::string> names;
  for (const symbols::SdtNote& note : object.elf.sdt_notes()) {
    if (!note_matches(note, point)) continue;
    lang::Definition each = def;
    auto target = target_at(object, def.spec.point.target.object, note.address);
    if (!target || !object.elf.is_executable_vaddr(note.address)) {
      return error_at(ErrorCode::NOT_TEXT_ADDR, def, def.symbol_column, site_name(note));
    }
    each.spec.point.target = std::move(*target);
    each.link_address = note.address;
    each.sdt.reset();  // placed: resolved once
    each.wildcard = false;
    each.expanded = def.wildcard;
    if (note.semaphore != 0 && !object.elf.is_writable_vaddr(note.semaphore, 2)) {
      return error_at(ErrorCode::BAD_SDT_OPERAND, def, def.symbol_column,
                      site_name(note) + ": its semaphore " + hex(note.semaphore) +
                          " is in no writable segment");
    }
    each.spec.point.sdt_semaphore = note.semaphore;
    trace::EventDesc& event = each.spec.event;
    if (!point.group_written) event.group = "sdt_" + note.provider;
    const std::string base =
        def.event_named ? event.name : note.name.substr(0, lang::kMaxEventNameLen);
    std::string name = base;
    for (size_t n = 1; !names.insert(event.group + "/" + name).second; ++n) {
      name = numbered_event_name(base, n);
    }
    event.name = std::move(name);
    auto args = SiteArgs(each, note, isa_of(object.elf)).compile(std::move(event.args));
    if (!args) return unexpected(args.error());
    event.args = std::move(*args);
    trace::layout_event(event);
    out.push_back(std::move(each));
  }
  if (out.empty()) {
    return error_at(ErrorCode::NO_SDT_POINT, def, def.symbol_column,
                    "`dprobe list -x " + object.elf.path() + " '%sdt_*'` lists them");
  }
  return out;
}

}  // namespace dprobe::cli
