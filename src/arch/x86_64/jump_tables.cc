// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/x86_64/jump_tables.h"

#include <algorithm>
#include <optional>

#include "arch/x86_64/zydis_decode.h"
#include "base/strings.h"

namespace dprobe::arch::x86_64 {
namespace {

// How far back from the jmp the table's instructions, and from the table's
// load the bound check, may be.
constexpr size_t kTableReach = 16;
constexpr size_t kBoundReach = 24;

class Function {
 public:
  Function(std::span<const uint8_t> code, uint64_t address, std::span<const uint64_t> starts)
      : code_(code), address_(address), starts_(starts) {}

  std::optional<ZydisDecoded> decode(size_t index) const {
    ZydisDecoded d;
    const size_t offset = starts_[index] - address_;
    const auto bytes = code_.subspan(offset, std::min<size_t>(code_.size() - offset, 15));
    if (decode_zydis(bytes, d) != kZydisOk) return std::nullopt;
    return d;
  }
  uint64_t next(size_t index) const {
    return index + 1 < starts_.size() ? starts_[index + 1] : address_ + code_.size();
  }

 private:
  std::span<const uint8_t> code_;
  uint64_t address_;
  std::span<const uint64_t> starts_;
};

ZydisRegister full(ZydisRegister reg) {
  return ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
}

bool is_register(const ZydisDecodedOperand& op, ZydisRegister reg) {
  return op.type == ZYDIS_OPERAND_TYPE_REGISTER && full(op.reg.value) == full(reg);
}

bool writes(const ZydisDecoded& d, ZydisRegister reg) {
  for (size_t i = 0; i < d.insn.operand_count; ++i) {
    const ZydisDecodedOperand& op = d.operands[i];
    if (is_register(op, reg) && (op.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0) return true;
  }
  return false;
}

// What the table's instructions say: where it is, its index register, and
// whether its entries are 32-bit offsets from it or 64-bit addresses.
struct Table {
  uint64_t address = 0;
  ZydisRegister index = ZYDIS_REGISTER_NONE;
  bool relative = true;
  size_t use = 0;    // the instruction that reads the index: the movslq, or the jmp
  size_t first = 0;  // the pattern's first instruction: the lea, or the jmp
};

// jmp *T(,%idx,8)
std::optional<Table> absolute_table(const ZydisDecodedOperand& op, size_t jump) {
  if (op.type != ZYDIS_OPERAND_TYPE_MEMORY || op.mem.base != ZYDIS_REGISTER_NONE ||
      op.mem.index == ZYDIS_REGISTER_NONE || op.mem.scale != 8 || !op.mem.disp.has_displacement) {
    return std::nullopt;
  }
  return Table{static_cast<uint64_t>(op.mem.disp.value), op.mem.index, false, jump, jump};
}

// movslq (%base,%idx,4),%target: the index, when the base is `base`. (The
// table in the index slot, (%idx,%base,4), would read idx + 4 T: no
// compiler writes it, and it is not taken.)
std::optional<ZydisRegister> scaled_load(const ZydisDecoded& d, ZydisRegister target,
                                         ZydisRegister base) {
  const ZydisDecodedOperand* ops = d.operands;
  if (d.insn.mnemonic != ZYDIS_MNEMONIC_MOVSXD || !is_register(ops[0], target) ||
      ops[0].size != 64 || ops[1].type != ZYDIS_OPERAND_TYPE_MEMORY || ops[1].mem.scale != 4 ||
      ops[1].mem.disp.value != 0 || full(ops[1].mem.base) != full(base) ||
      ops[1].mem.index == ZYDIS_REGISTER_NONE) {
    return std::nullopt;
  }
  return ops[1].mem.index;
}

bool is_rip_lea(const ZydisDecoded& d, ZydisRegister reg) {
  const ZydisDecodedOperand* ops = d.operands;
  return d.insn.mnemonic == ZYDIS_MNEMONIC_LEA && is_register(ops[0], reg) && ops[0].size == 64 &&
         ops[1].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[1].mem.base == ZYDIS_REGISTER_RIP &&
         ops[1].mem.index == ZYDIS_REGISTER_NONE;
}

bool ends_a_path(const ZydisDecoded& d) {
  return d.insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
         d.insn.meta.category == ZYDIS_CATEGORY_RET;
}

// lea T(%rip),%base ... movslq (%base,%idx,4),%target; add %base,%target;
// jmp *%target, with nothing else writing the base or the target between
// (the index may change: the bound check looks at that).
std::optional<Table> relative_table(const Function& f, ZydisRegister target, size_t jump) {
  std::optional<ZydisRegister> base;
  std::optional<Table> table;
  for (size_t i = jump; i-- > 0 && jump - i <= kTableReach;) {
    const auto d = f.decode(i);
    if (!d) return std::nullopt;
    if (ends_a_path(*d)) return std::nullopt;  // what is before it is not the way here
    if (!base) {
      if (d->insn.mnemonic == ZYDIS_MNEMONIC_ADD && is_register(d->operands[0], target) &&
          d->operands[0].size == 64 && d->operands[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
          d->operands[1].size == 64) {
        base = d->operands[1].reg.value;
      } else if (writes(*d, target)) {
        return std::nullopt;
      }
    } else if (!table) {
      if (const auto index = scaled_load(*d, target, *base)) {
        table = Table{0, *index, true, i, i};
      } else if (writes(*d, target) || writes(*d, *base)) {
        return std::nullopt;
      }
    } else if (is_rip_lea(*d, *base)) {
      table->address = f.next(i) + static_cast<uint64_t>(d->operands[1].mem.disp.value);
      table->first = i;
      return table;
    } else if (writes(*d, *base)) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// The entries the bound check before the table allows: `cmp $N, %idx`
// then ja (N + 1) or jae (N), with `mov %src32, %idx32` (zero-extending)
// allowed between, and nothing else writing the index. A check of the
// 32-bit register bounds the 64-bit index only if a 32-bit move after it
// cleared the upper half (as GCC writes it: `mov %eax,%eax`); a byte
// zero-extended to 32 or 64 bits bounds it by 256. Where the check is, so
// that the caller can see no branch comes in after it.
struct Bound {
  uint64_t entries;
  size_t check;  // the cmp, or the write before it that cleared the upper half
};

// Where the 32-bit write that cleared the index's upper half is, before
// the check at `check` (an instruction writing a 32-bit register clears
// bits 32 to 63); nullopt where the last write is of another width.
std::optional<size_t> cleared_before(const Function& f, size_t check, ZydisRegister index) {
  for (size_t i = check; i-- > 0 && check - i <= kBoundReach;) {
    const auto d = f.decode(i);
    if (!d || ends_a_path(*d)) return std::nullopt;
    for (size_t k = 0; k < d->insn.operand_count; ++k) {
      const ZydisDecodedOperand& op = d->operands[k];
      if (is_register(op, index) && (op.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0) {
        return op.size == 32 ? std::optional<size_t>(i) : std::nullopt;
      }
    }
  }
  return std::nullopt;
}

std::optional<Bound> bound(const Function& f, const Table& table) {
  ZydisRegister index = table.index;
  bool cleared_upper = false;  // a 32-bit move zero-extended the index
  for (size_t i = table.use; i-- > 0 && table.use - i <= kBoundReach;) {
    const auto d = f.decode(i);
    if (!d) return std::nullopt;
    const ZydisMnemonic m = d->insn.mnemonic;
    if ((m == ZYDIS_MNEMONIC_JNBE || m == ZYDIS_MNEMONIC_JNB) && i > 0) {
      const auto cmp = f.decode(i - 1);
      if (!cmp || cmp->insn.mnemonic != ZYDIS_MNEMONIC_CMP ||
          !is_register(cmp->operands[0], index) ||
          cmp->operands[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE) {
        return std::nullopt;
      }
      const uint16_t width = cmp->operands[0].size;
      size_t earliest = i - 1;
      if (width == 32 && !cleared_upper) {
        const auto cleared = cleared_before(f, i - 1, index);
        if (!cleared) return std::nullopt;
        earliest = *cleared;
      } else if (width != 64 && width != 32) {
        return std::nullopt;
      }
      const uint64_t limit = cmp->operands[1].imm.value.u;
      if (limit >= kMaxJumpTableEntries) return std::nullopt;
      return Bound{m == ZYDIS_MNEMONIC_JNBE ? limit + 1 : limit, earliest};
    }
    if (m == ZYDIS_MNEMONIC_MOV && is_register(d->operands[0], index) &&
        d->operands[0].size == 32 && d->operands[1].type == ZYDIS_OPERAND_TYPE_REGISTER) {
      index = d->operands[1].reg.value;  // zero-extended: the bound holds
      cleared_upper = true;
      continue;
    }
    // movzbl %al, %eax: a byte's 256 values bound it (more entries than the
    // table may have are read: what they point at can only refuse more).
    if (m == ZYDIS_MNEMONIC_MOVZX && is_register(d->operands[0], index) &&
        d->operands[0].size >= 32 && d->operands[1].size == 8) {
      return Bound{256, i};
    }
    if (writes(*d, index)) return std::nullopt;
    if (ends_a_path(*d)) return std::nullopt;  // the code before it is not the way here
  }
  return std::nullopt;
}

// A load of one pointer (a struct's or a vtable's slot, a GOT entry): no
// index register that could pick among many.
bool loads_one_pointer(const ZydisDecodedOperand& op) {
  return op.type == ZYDIS_OPERAND_TYPE_MEMORY && op.mem.index == ZYDIS_REGISTER_NONE &&
         op.mem.base != ZYDIS_REGISTER_NONE;
}

// Whether the jmp at `jump` goes through a pointer loaded from memory
// without an index, or through one such a load put in its register:
// `jmp *0x18(%rax)`, `mov 0x18(%r12),%rax; ...; jmp *%rax`. Not when the
// load's base moves on before the jmp (`mov (%rbx),%rax; add $8,%rbx`:
// threaded code walking a list of label addresses, not a call).
bool jumps_through_a_pointer(const Function& f, std::span<const uint64_t> starts,
                             std::span<const uint64_t> branch_targets, size_t jump,
                             const ZydisDecodedOperand& op) {
  if (op.type == ZYDIS_OPERAND_TYPE_MEMORY) return loads_one_pointer(op);
  if (op.type != ZYDIS_OPERAND_TYPE_REGISTER) return false;
  for (size_t i = jump; i-- > 0 && jump - i <= kTableReach;) {
    for (uint64_t target : branch_targets) {
      if (target == starts[i + 1]) return false;  // another way in: another value
    }
    const auto d = f.decode(i);
    if (!d) return false;
    if (!writes(*d, op.reg.value)) continue;
    if (d->insn.mnemonic != ZYDIS_MNEMONIC_MOV || !is_register(d->operands[0], op.reg.value) ||
        d->operands[0].size != 64 || !loads_one_pointer(d->operands[1])) {
      return false;
    }
    const ZydisRegister base = d->operands[1].mem.base;
    for (size_t k = i + 1; k < jump; ++k) {
      const auto later = f.decode(k);
      if (!later || writes(*later, base)) return false;
    }
    return true;
  }
  return false;
}

}  // namespace

Result<bool, std::string> through_a_pointer(std::span<const uint8_t> code,
                                            uint64_t function_address,
                                            std::span<const uint64_t> starts,
                                            std::span<const uint64_t> branch_targets, size_t jump) {
  const Function f(code, function_address, starts);
  const auto d = f.decode(jump);
  if (!d || d->insn.mnemonic != ZYDIS_MNEMONIC_JMP) {
    return unexpected("indirect jump at " + hex(starts[jump]) + ": undecodable");
  }
  return jumps_through_a_pointer(f, starts, branch_targets, jump, d->operands[0]);
}

Result<std::vector<uint64_t>, std::string> jump_table_targets(
    std::span<const uint8_t> code, uint64_t function_address, std::span<const uint64_t> starts,
    std::span<const uint64_t> branch_targets, size_t jump, const ReadMemory& read) {
  const Function f(code, function_address, starts);
  const std::string where = "indirect jump at " + hex(starts[jump]);
  const auto d = f.decode(jump);
  if (!d || d->insn.mnemonic != ZYDIS_MNEMONIC_JMP) return unexpected(where + ": undecodable");
  const ZydisDecodedOperand& op = d->operands[0];
  const std::optional<Table> table = op.type == ZYDIS_OPERAND_TYPE_REGISTER
                                         ? relative_table(f, op.reg.value, jump)
                                         : absolute_table(op, jump);
  if (!table) return unexpected(where + " (a jump table of no pattern dprobe reads)");
  const std::optional<Bound> checked = bound(f, *table);
  if (!checked) return unexpected(where + " (a jump table whose bound check is not found)");
  // One way in: a branch to after the first of the check and the table's
  // lea could bring another index, or another table.
  const uint64_t first = starts[std::min(checked->check, table->first)];
  for (uint64_t target : branch_targets) {
    if (target > first && target <= starts[jump]) {
      return unexpected(where + " (a jump table reached around its bound check)");
    }
  }
  if (!read) return unexpected(where + " (a jump table, not read here)");
  const uint64_t entries = checked->entries;
  std::vector<uint64_t> targets;
  const size_t size = table->relative ? 4 : 8;
  for (uint64_t n = 0; n < entries; ++n) {
    uint64_t value = 0;
    if (!read(table->address + n * size, &value, size)) {
      return unexpected(where + " (its table at " + hex(table->address) + " is unreadable)");
    }
    targets.push_back(table->relative
                          ? table->address + static_cast<uint64_t>(static_cast<int32_t>(value))
                          : value);
  }
  return targets;
}

}  // namespace dprobe::arch::x86_64
