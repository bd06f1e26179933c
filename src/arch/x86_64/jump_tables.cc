// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/x86_64/jump_tables.h"

#include <optional>

#include "arch/x86_64/zydis_decode.h"
#include "base/strings.h"

namespace dprobe::arch::x86_64 {
namespace {

// How far back from the jmp the table's instructions, and from the table's
// load the bound check, may be.
constexpr size_t kTableReach = 8;
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
  size_t use = 0;  // the instruction that reads the index: the movslq, or the jmp
};

// jmp *T(,%idx,8)
std::optional<Table> absolute_table(const ZydisDecodedOperand& op, size_t jump) {
  if (op.type != ZYDIS_OPERAND_TYPE_MEMORY || op.mem.base != ZYDIS_REGISTER_NONE ||
      op.mem.index == ZYDIS_REGISTER_NONE || op.mem.scale != 8 || !op.mem.disp.has_displacement) {
    return std::nullopt;
  }
  return Table{static_cast<uint64_t>(op.mem.disp.value), op.mem.index, false, jump};
}

// movslq (%base,%idx,4),%target (or (%idx,%base,4)): the index, when the
// base is `base`.
std::optional<ZydisRegister> scaled_load(const ZydisDecoded& d, ZydisRegister target,
                                         ZydisRegister base) {
  const ZydisDecodedOperand* ops = d.operands;
  if (d.insn.mnemonic != ZYDIS_MNEMONIC_MOVSXD || !is_register(ops[0], target) ||
      ops[1].type != ZYDIS_OPERAND_TYPE_MEMORY || ops[1].mem.scale != 4 ||
      ops[1].mem.disp.value != 0) {
    return std::nullopt;
  }
  if (full(ops[1].mem.base) == full(base)) return ops[1].mem.index;
  if (full(ops[1].mem.index) == full(base)) return ops[1].mem.base;
  return std::nullopt;
}

bool is_rip_lea(const ZydisDecoded& d, ZydisRegister reg) {
  const ZydisDecodedOperand* ops = d.operands;
  return d.insn.mnemonic == ZYDIS_MNEMONIC_LEA && is_register(ops[0], reg) &&
         ops[1].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[1].mem.base == ZYDIS_REGISTER_RIP &&
         ops[1].mem.index == ZYDIS_REGISTER_NONE;
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
    if (!base) {
      if (d->insn.mnemonic == ZYDIS_MNEMONIC_ADD && is_register(d->operands[0], target) &&
          d->operands[1].type == ZYDIS_OPERAND_TYPE_REGISTER) {
        base = d->operands[1].reg.value;
      } else if (writes(*d, target)) {
        return std::nullopt;
      }
    } else if (!table) {
      if (const auto index = scaled_load(*d, target, *base)) {
        table = Table{0, *index, true, i};
      } else if (writes(*d, target) || writes(*d, *base)) {
        return std::nullopt;
      }
    } else if (is_rip_lea(*d, *base)) {
      table->address = f.next(i) + static_cast<uint64_t>(d->operands[1].mem.disp.value);
      return table;
    } else if (writes(*d, *base)) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// The entries the bound check before the table allows: `cmp $N, %idx`
// then ja (N + 1) or jae (N), with `mov %src32, %idx32` (zero-extending)
// allowed between, and nothing else writing the index. The address where
// the check is, so that the caller can see no branch comes in after it.
struct Bound {
  uint64_t entries;
  size_t check;  // the cmp
};

std::optional<Bound> bound(const Function& f, const Table& table) {
  ZydisRegister index = table.index;
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
      const uint64_t limit = cmp->operands[1].imm.value.u;
      if (limit >= kMaxJumpTableEntries) return std::nullopt;
      return Bound{m == ZYDIS_MNEMONIC_JNBE ? limit + 1 : limit, i - 1};
    }
    if (m == ZYDIS_MNEMONIC_MOV && is_register(d->operands[0], index) &&
        d->operands[0].size == 32 && d->operands[1].type == ZYDIS_OPERAND_TYPE_REGISTER) {
      index = d->operands[1].reg.value;  // zero-extended: the bound holds
      continue;
    }
    // movzbl %al, %eax: a byte's 256 values bound it (more entries than the
    // table may have are read: what they point at can only refuse more).
    if (m == ZYDIS_MNEMONIC_MOVZX && is_register(d->operands[0], index) &&
        d->operands[1].size == 8) {
      return Bound{256, i};
    }
    if (writes(*d, index)) return std::nullopt;
    if (d->insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
        d->insn.meta.category == ZYDIS_CATEGORY_RET) {
      return std::nullopt;  // the code before it is not the way here
    }
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
// `jmp *0x18(%rax)`, `mov 0x18(%r12),%rax; ...; jmp *%rax`.
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
    return d->insn.mnemonic == ZYDIS_MNEMONIC_MOV && is_register(d->operands[0], op.reg.value) &&
           d->operands[0].size == 64 && loads_one_pointer(d->operands[1]);
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
  // One way in: a branch to after the check could bring any index.
  for (uint64_t target : branch_targets) {
    if (target > starts[checked->check] && target <= starts[jump]) {
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
