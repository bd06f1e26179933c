// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// can_optimize: the safety analysis of a jump-optimized probe. The trampoline
// writer is in trampoline.cc.
#include "arch/x86_64/optimize.h"

#include <algorithm>
#include <cstdio>

#include "arch/x86_64/classify.h"
#include "arch/x86_64/jump_tables.h"
#include "arch/x86_64/zydis_decode.h"
#include "base/strings.h"

namespace dprobe::arch::x86_64 {
namespace {

// What the analysis keeps of each instruction of the function.
struct Scanned {
  uint64_t address = 0;
  uint8_t length = 0;
  ZydisMnemonic mnemonic = ZYDIS_MNEMONIC_INVALID;
  bool has_target = false;  // a relative branch operand (jmp, jcc, call, loop, jrcxz, xbegin)
  uint64_t target = 0;
  bool unprovable_jump = false;  // an indirect jmp that is not a [rip+disp] tail call
  bool has_rip_target = false;   // a [rip+disp] operand (lea of a code address, a load)
  uint64_t rip_target = 0;
};

const char* name_of(ZydisMnemonic mnemonic) {
  const char* name = ZydisMnemonicGetString(mnemonic);
  return name != nullptr ? name : "instruction";
}

// A tail call through the GOT (jmp [rip+disp], no index, no segment) goes to
// another function; any other indirect jmp may be a jump table whose targets
// we cannot prove outside the replaced bytes.
bool is_unprovable_jump(const ZydisDecoded& d) {
  if (d.insn.mnemonic != ZYDIS_MNEMONIC_JMP) return false;
  const ZydisDecodedOperand& op = d.operands[0];
  if (op.type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op.imm.is_relative) return false;
  const bool got_tail_call =
      op.type == ZYDIS_OPERAND_TYPE_MEMORY && op.mem.base == ZYDIS_REGISTER_RIP &&
      op.mem.index == ZYDIS_REGISTER_NONE && d.insn.meta.branch_type == ZYDIS_BRANCH_TYPE_NEAR &&
      (op.mem.segment == ZYDIS_REGISTER_DS || op.mem.segment == ZYDIS_REGISTER_NONE);
  return !got_tail_call;
}

Scanned scan(const ZydisDecoded& d, uint64_t address) {
  Scanned s;
  s.address = address;
  s.length = d.insn.length;
  s.mnemonic = d.insn.mnemonic;
  s.unprovable_jump = is_unprovable_jump(d);
  const uint64_t next = address + s.length;
  for (size_t i = 0; i < d.insn.operand_count_visible; ++i) {
    const ZydisDecodedOperand& op = d.operands[i];
    if (op.type == ZYDIS_OPERAND_TYPE_MEMORY && op.mem.base == ZYDIS_REGISTER_RIP) {
      s.has_rip_target = true;
      s.rip_target = next + static_cast<uint64_t>(op.mem.disp.value);
    }
    if (op.type != ZYDIS_OPERAND_TYPE_IMMEDIATE || !op.imm.is_relative) continue;
    s.has_target = true;
    s.target = next + static_cast<uint64_t>(op.imm.value.s);
  }
  return s;
}

// Every instruction from the function's start to its end, or why not.
Result<std::vector<Scanned>, std::string> scan_function(std::span<const uint8_t> code,
                                                        uint64_t function_address) {
  std::vector<Scanned> out;
  size_t offset = 0;
  while (offset < code.size()) {
    ZydisDecoded d;
    const auto rest = code.subspan(offset, std::min(code.size() - offset, kMaxInsnLength));
    if (decode_zydis(rest, d) != kZydisOk) {
      return unexpected("the function does not decode to its end (at " +
                        hex(function_address + offset) + ")");
    }
    out.push_back(scan(d, function_address + offset));
    offset += d.insn.length;
  }
  return out;
}

// A prefix the trampoline may drop when it re-encodes a branch: the branch
// hints (2e, 3e) and bnd (f2, a no-op without MPX, which Linux no longer
// supports). Anything else (67, a REX, ...) is refused rather than guessed at.
bool droppable_branch_prefix(uint8_t value) {
  return value == 0x2e || value == 0x3e || value == 0xf2;
}

// Why the displaced branch cannot be relocated, or nullptr. The trampoline
// re-encodes a direct jcc, jmp or call to the same absolute target
// (write_trampoline); it must be the last displaced instruction, so that the
// only copy whose length changes is the last one. A ret runs the same from
// anywhere (it goes where the stack says: the 5-byte leaf `lea; ret` is
// the commonest small function), copied as it is; as the last displaced
// instruction, since nothing after it runs.
const char* cannot_relocate_branch(const Classified& c, const ZydisDecoded& d, bool last) {
  switch (c.branch) {
    case Branch::kJcc:
    case Branch::kJmpRel:
    case Branch::kCallRel:
      break;
    case Branch::kRet:
      return last ? nullptr
                  : "a ret can run from the trampoline only as the last displaced instruction";
    case Branch::kCallIndirect:
    case Branch::kJmpIndirect:
      return "an indirect branch cannot run from the trampoline";
    default:  // loop, loope, loopne, jrcxz
      return "a loop or jrcxz cannot run from the trampoline";
  }
  if (!last) return "a branch can run from the trampoline only as the last displaced instruction";
  for (size_t i = 0; i < d.insn.raw.prefix_count; ++i) {
    if (!droppable_branch_prefix(d.insn.raw.prefixes[i].value)) {
      return "a branch with a prefix the trampoline cannot re-encode";
    }
  }
  return nullptr;
}

// Why the displaced instruction cannot run in the trampoline, or nullptr.
const char* cannot_displace(const Insn& insn, bool first, bool last) {
  ZydisDecoded d;
  if (decode_zydis({insn.bytes.data(), insn.length}, d) != kZydisOk) return "undecodable";
  switch (d.insn.meta.category) {
    case ZYDIS_CATEGORY_SYSCALL:
    case ZYDIS_CATEGORY_SYSRET:
    case ZYDIS_CATEGORY_INTERRUPT:
      return "a system call or interrupt would see the trampoline's address";
    default:
      break;
  }
  if (d.insn.mnemonic == ZYDIS_MNEMONIC_ENDBR64 || d.insn.mnemonic == ZYDIS_MNEMONIC_ENDBR32) {
    // Past the first, an endbr marks a target of an indirect branch.
    return first ? nullptr : "an endbr64 (indirect branch target) inside the replaced bytes";
  }
  const Classified c = classify_insn(insn);
  if (c.branch != Branch::kNone) return cannot_relocate_branch(c, d, last);
  if (c.cls != InsnClass::kOutOfLine) return c.reason;
  return nullptr;
}

std::string displaced_refusal(const Insn& insn, const char* why) {
  ZydisDecoded d;
  const bool ok = decode_zydis({insn.bytes.data(), insn.length}, d) == kZydisOk;
  return std::string("cannot displace ") + (ok ? name_of(d.insn.mnemonic) : "bytes") + " at " +
         hex(insn.address) + ": " + why;
}

bool strictly_inside(uint64_t at, uint64_t start, uint64_t end) { return at > start && at < end; }

// How many instructions from `index` on make at least kJumpLength bytes, or 0.
size_t count_displaced(const std::vector<Scanned>& insns, size_t index) {
  size_t length = 0;
  for (size_t i = index; i < insns.size(); ++i) {
    length += insns[i].length;
    if (length >= kJumpLength) return i + 1 - index;
  }
  return 0;
}

// The instructions from `index` on, at least kJumpLength bytes of them.
Result<OptimizePlan, std::string> displace(std::span<const uint8_t> code, uint64_t function_address,
                                           const std::vector<Scanned>& insns, size_t index) {
  const size_t count = count_displaced(insns, index);
  if (count == 0) {
    const uint64_t left = function_address + code.size() - insns[index].address;
    return unexpected("only " + std::to_string(left) +
                      " bytes of instructions before the function's end, the jump needs 5");
  }
  OptimizePlan plan;
  plan.address = insns[index].address;
  for (size_t i = index; i < index + count; ++i) {
    const size_t offset = insns[i].address - function_address;
    auto insn = decode_insn(code.subspan(offset), insns[i].address);
    if (!insn) return unexpected(insn.error());
    if (const char* why = cannot_displace(*insn, i == index, i + 1 == index + count)) {
      return unexpected(displaced_refusal(*insn, why));
    }
    plan.displaced.push_back(*insn);
    plan.displaced_length = static_cast<uint8_t>(plan.displaced_length + insn->length);
  }
  return plan;
}

// The function's code, for what the analysis reads beyond one instruction.
struct FunctionCode {
  std::span<const uint8_t> code;
  uint64_t address;
  const ReadMemory& read;
  std::span<const uint64_t> landing_pads;  // ways in, as branch targets are
};

// Whether a target of the jump table `insns[jump]` goes through lands
// strictly inside the replaced bytes; an error where the table cannot be
// read.
Result<void, std::string> check_jump_table(const FunctionCode& f, const std::vector<Scanned>& insns,
                                           size_t jump, const OptimizePlan& plan) {
  std::vector<uint64_t> starts;
  std::vector<uint64_t> branch_targets;
  starts.reserve(insns.size());
  for (const Scanned& s : insns) {
    starts.push_back(s.address);
    if (s.has_target) branch_targets.push_back(s.target);
  }
  branch_targets.insert(branch_targets.end(), f.landing_pads.begin(), f.landing_pads.end());
  auto pointer = through_a_pointer(f.code, f.address, starts, branch_targets, jump);
  if (!pointer) return unexpected(pointer.error());
  if (*pointer) return {};
  auto targets = jump_table_targets(f.code, f.address, starts, branch_targets, jump, f.read);
  if (!targets) return unexpected(targets.error());
  const uint64_t end = plan.address + plan.displaced_length;
  for (uint64_t target : *targets) {
    if (strictly_inside(target, plan.address, end)) {
      return unexpected("the jump table of the jmp at " + hex(insns[jump].address) + " targets " +
                        hex(target) + ", inside the replaced bytes");
    }
  }
  return {};
}

// No direct branch may land inside the replaced bytes, nor a jump table's
// entry (jump_tables.h: a jump we cannot follow refuses), and no address
// inside the replaced bytes may be taken (lea rcx, [rip+label]; call rcx
// would land there).
Result<void, std::string> check_branches(const FunctionCode& f, const std::vector<Scanned>& insns,
                                         const OptimizePlan& plan) {
  const uint64_t end = plan.address + plan.displaced_length;
  for (size_t i = 0; i < insns.size(); ++i) {
    const Scanned& s = insns[i];
    if (s.unprovable_jump) {
      if (auto ok = check_jump_table(f, insns, i, plan); !ok) return ok;
    }
    if (s.has_target && strictly_inside(s.target, plan.address, end)) {
      return unexpected(std::string(name_of(s.mnemonic)) + " at " + hex(s.address) + " targets " +
                        hex(s.target) + ", inside the replaced bytes");
    }
    if (s.has_rip_target && strictly_inside(s.rip_target, plan.address, end)) {
      return unexpected(std::string(name_of(s.mnemonic)) + " at " + hex(s.address) +
                        " takes the address " + hex(s.rip_target) + ", inside the replaced bytes");
    }
  }
  return {};
}

Result<void, std::string> check_landing_pads(std::span<const uint64_t> landing_pads,
                                             const OptimizePlan& plan) {
  const uint64_t end = plan.address + plan.displaced_length;
  for (uint64_t pad : landing_pads) {
    if (strictly_inside(pad, plan.address, end)) {
      return unexpected("exception landing pad at " + hex(pad) + " inside the replaced bytes");
    }
  }
  return {};
}

}  // namespace

Result<std::vector<uint64_t>, std::string> code_targets(std::span<const uint8_t> code,
                                                        uint64_t address) {
  auto insns = scan_function(code, address);
  if (!insns) return unexpected(insns.error());
  std::vector<uint64_t> targets;
  for (const Scanned& s : *insns) {
    if (s.has_target) targets.push_back(s.target);
    if (s.has_rip_target) targets.push_back(s.rip_target);
  }
  return targets;
}

Result<OptimizePlan, std::string> can_optimize(std::span<const uint8_t> function_code,
                                               uint64_t function_address, uint64_t probe_address,
                                               std::span<const uint64_t> landing_pads,
                                               const ReadMemory& read) {
  if (probe_address < function_address ||
      probe_address - function_address >= function_code.size()) {
    return unexpected("probe " + hex(probe_address) + " is outside the function");
  }
  auto insns = scan_function(function_code, function_address);
  if (!insns) return unexpected(insns.error());
  auto at = std::find_if(insns->begin(), insns->end(),
                         [&](const Scanned& s) { return s.address >= probe_address; });
  if (at == insns->end() || at->address != probe_address) {
    return unexpected("probe " + hex(probe_address) + " is not on an instruction boundary");
  }
  const auto index = static_cast<size_t>(at - insns->begin());
  auto plan = displace(function_code, function_address, *insns, index);
  if (!plan) return plan;
  const FunctionCode f{function_code, function_address, read, landing_pads};
  if (auto ok = check_branches(f, *insns, *plan); !ok) return unexpected(ok.error());
  if (auto ok = check_landing_pads(landing_pads, *plan); !ok) return unexpected(ok.error());
  return plan;
}

namespace {

// The instructions ending with the syscall at `index`, at least kJumpLength
// bytes: the index of the first, or why there is none.
Result<size_t, std::string> syscall_run_start(const std::vector<Scanned>& insns, size_t index) {
  size_t length = insns[index].length;
  size_t first = index;
  while (length < kJumpLength) {
    if (first == 0) {
      return unexpected("only " + std::to_string(length) +
                        " bytes of instructions from the function's start to the syscall");
    }
    --first;
    length += insns[first].length;
  }
  return first;
}

}  // namespace

Result<OptimizePlan, std::string> can_rewrite_syscall(std::span<const uint8_t> function_code,
                                                      uint64_t function_address,
                                                      uint64_t syscall_address,
                                                      std::span<const uint64_t> landing_pads,
                                                      const ReadMemory& read) {
  auto insns = scan_function(function_code, function_address);
  if (!insns) return unexpected(insns.error());
  auto at = std::find_if(insns->begin(), insns->end(),
                         [&](const Scanned& s) { return s.address == syscall_address; });
  if (at == insns->end() || at->mnemonic != ZYDIS_MNEMONIC_SYSCALL) {
    return unexpected("no syscall instruction at " + hex(syscall_address));
  }
  const auto index = static_cast<size_t>(at - insns->begin());
  auto first = syscall_run_start(*insns, index);
  if (!first) return unexpected(first.error());
  OptimizePlan plan;
  plan.address = (*insns)[*first].address;
  for (size_t i = *first; i <= index; ++i) {
    const size_t offset = (*insns)[i].address - function_address;
    auto insn = decode_insn(function_code.subspan(offset), (*insns)[i].address);
    if (!insn) return unexpected(insn.error());
    if (i < index) {
      // Not the last: no branch at all (a copy's length must not change).
      if (const char* why = cannot_displace(*insn, i == *first, false)) {
        return unexpected(displaced_refusal(*insn, why));
      }
    }
    plan.displaced.push_back(*insn);
    plan.displaced_length = static_cast<uint8_t>(plan.displaced_length + insn->length);
  }
  const FunctionCode f{function_code, function_address, read, landing_pads};
  if (auto ok = check_branches(f, *insns, plan); !ok) return unexpected(ok.error());
  if (auto ok = check_landing_pads(landing_pads, plan); !ok) return unexpected(ok.error());
  return plan;
}

}  // namespace dprobe::arch::x86_64
