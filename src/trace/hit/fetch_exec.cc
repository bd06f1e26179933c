// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The interpreter follows the kernel's process_fetch_insn stage by stage,
// with one difference: a program is checked against the shape the language
// emits before it runs, because programs reach the agent over a socket and
// a bad one must cost a zeroed field, not a write outside its field.
#include "trace/hit/fetch_exec.h"

#include "base/hit_path.h"
#include "base/no_libc_calls.h"
#include "trace/fetch.h"
#include "trace/hit/fetch_type.h"
#include "trace/record.h"

namespace dprobe::trace {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "records are little-endian");

// ---- Record bytes ---------------------------------------------------------
// Fields are packed, so every access is a constant-size __builtin_memcpy,
// which compiles to one move.

DPROBE_HIT_PATH void store_le(std::byte* dst, uint64_t value, uint32_t size) {
  switch (size) {
    case 1: {
      const auto v = static_cast<uint8_t>(value);
      __builtin_memcpy(dst, &v, 1);
      break;
    }
    case 2: {
      const auto v = static_cast<uint16_t>(value);
      __builtin_memcpy(dst, &v, 2);
      break;
    }
    case 4: {
      const auto v = static_cast<uint32_t>(value);
      __builtin_memcpy(dst, &v, 4);
      break;
    }
    default:
      __builtin_memcpy(dst, &value, 8);
      break;
  }
}

DPROBE_HIT_PATH uint64_t load_le(const std::byte* src, uint32_t size) {
  switch (size) {
    case 1: {
      uint8_t v;
      __builtin_memcpy(&v, src, 1);
      return v;
    }
    case 2: {
      uint16_t v;
      __builtin_memcpy(&v, src, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      __builtin_memcpy(&v, src, 4);
      return v;
    }
    default: {
      uint64_t v;
      __builtin_memcpy(&v, src, 8);
      return v;
    }
  }
}

DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS void zero_bytes(std::byte* dst, uint32_t size) {
  for (uint32_t i = 0; i < size; ++i) dst[i] = std::byte{0};
}

// A string of the agent's own (the comm, an immediate string): at most
// `max_chars` bytes of `src`, cut to fit `capacity` with its NUL. Returns
// the length with the NUL; `cut` tells whether `src` went on.
DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS int64_t copy_host_string(char* dst, const char* src,
                                                              size_t max_chars, uint32_t capacity,
                                                              bool& cut) {
  if (src == nullptr) return -1;
  uint32_t n = 0;
  while (n + 1 < capacity && n < max_chars && src[n] != '\0') {
    dst[n] = src[n];
    ++n;
  }
  dst[n] = '\0';
  cut = n < max_chars && src[n] != '\0';
  return n + 1;
}

// ---- Programs -------------------------------------------------------------

// The stage an operation belongs to (fetch.h); 0 for kNop and kEnd.
DPROBE_HIT_PATH int stage_of(FetchOp op) {
  switch (op) {
    case FetchOp::kReg:
    case FetchOp::kStack:
    case FetchOp::kStackPtr:
    case FetchOp::kArg:
    case FetchOp::kRetval:
    case FetchOp::kComm:
    case FetchOp::kDuration:
    case FetchOp::kFloatRetval:
    case FetchOp::kImm:
    case FetchOp::kData:
    case FetchOp::kSymbolAddr:
    case FetchOp::kFileOffset:
      return 1;
    case FetchOp::kDeref:
    case FetchOp::kUDeref:
      return 2;
    case FetchOp::kStRaw:
    case FetchOp::kStMem:
    case FetchOp::kStUMem:
    case FetchOp::kStString:
    case FetchOp::kStUString:
      return 3;
    case FetchOp::kModBitfield:
    case FetchOp::kLoopArray:
      return 4;
    case FetchOp::kNop:
    case FetchOp::kEnd:
      return 0;
  }
  return 0;
}

DPROBE_HIT_PATH bool is_string_store(FetchOp op) {
  return op == FetchOp::kStString || op == FetchOp::kStUString;
}

DPROBE_HIT_PATH bool is_host_string(FetchOp op) {
  return op == FetchOp::kComm || op == FetchOp::kData;
}

// One argument's program, split into its stages.
struct Program {
  const FetchInsn* source = nullptr;
  const FetchInsn* derefs = nullptr;  // deref_count operations in a row
  uint32_t deref_count = 0;
  const FetchInsn* store = nullptr;
  const FetchInsn* bitfield = nullptr;
  const FetchInsn* loop = nullptr;
  uint32_t count = 1;  // elements stored
};

// Whether the stages fit together and fit the argument's field, as the
// language emits them (lang/fetch_arg.cc).
DPROBE_HIT_PATH bool check_program(const EventArg& arg, const Program& p) {
  const FetchType& type = fetch_type(arg.type);
  const bool string = is_string_class(type.cls);
  if (p.store->size != type.size || string != is_string_store(p.store->op)) return false;
  if (p.count != (arg.count == 0 ? 1 : arg.count)) return false;
  if (p.loop != nullptr && p.store->op == FetchOp::kStRaw) return false;
  // A string array re-runs its last dereference for each pointer.
  if (string && p.loop != nullptr && p.deref_count == 0) return false;
  if (is_host_string(p.source->op) && (!string || p.deref_count != 0 || p.loop != nullptr)) {
    return false;
  }
  if (p.bitfield != nullptr) {
    const uint32_t bits = type.size * 8u;
    if (string || p.bitfield->size != type.size) return false;
    if (p.bitfield->lshift >= bits || p.bitfield->rshift >= bits) return false;
  }
  return true;
}

DPROBE_HIT_PATH bool decode_program(const EventArg& arg, Program& p) {
  const FetchInsn* insn = arg.code.data();
  const size_t length = arg.code.size() < kMaxFetchInsns ? arg.code.size() : kMaxFetchInsns;
  const FetchInsn* const end = insn + length;
  if (insn == end || stage_of(insn->op) != 1) return false;
  p.source = insn++;
  p.derefs = insn;
  for (; insn != end && stage_of(insn->op) == 2; ++insn) ++p.deref_count;
  if (insn == end || stage_of(insn->op) != 3) return false;
  p.store = insn++;
  if (insn != end && insn->op == FetchOp::kModBitfield) p.bitfield = insn++;
  if (insn != end && insn->op == FetchOp::kLoopArray) {
    p.loop = insn++;
    p.count = p.loop->param;
  }
  if (insn == end || insn->op != FetchOp::kEnd) return false;
  return check_program(arg, p);
}

// The bytes an argument takes in the record; 64-bit so a hostile count
// cannot wrap.
DPROBE_HIT_PATH uint64_t field_bytes(const EventArg& arg) {
  return uint64_t{fetch_type(arg.type).size} * (arg.count == 0 ? 1u : arg.count);
}

// Whether the field lies among the argument fields, where writing it is
// ours to do.
DPROBE_HIT_PATH bool field_in_record(const EventDesc& event, const EventArg& arg) {
  if (arg.type >= TypeId::kCount) return false;
  return arg.offset >= first_arg_offset(event.is_return) &&
         arg.offset + field_bytes(arg) <= event.fixed_size;
}

// ---- One hit --------------------------------------------------------------

class ArgWriter {
 public:
  ArgWriter(const FetchEnv& env, std::byte* record, uint32_t limit, uint32_t cursor)
      : env_(env), record_(record), limit_(limit), cursor_(cursor) {}

  // Writes one argument's field; a faulted or malformed argument is zeroed.
  void store(const EventDesc& event, const EventArg& arg) {
    if (!field_in_record(event, arg)) return;
    std::byte* field = record_ + arg.offset;
    Program program;
    if (!decode_program(arg, program) || !run(arg, program, field)) {
      zero_bytes(field, static_cast<uint32_t>(field_bytes(arg)));
    }
  }

  uint32_t size() const { return cursor_; }

 private:
  // Stages 1 to 4. False when the whole argument faulted.
  bool run(const EventArg& arg, const Program& p, std::byte* field) {
    uint64_t value = 0;
    if (!fetch_source(*p.source, value)) return false;
    const bool string = is_string_store(p.store->op);
    const uint32_t per_element = string && p.loop != nullptr ? 1 : 0;
    if (!dereference(p.derefs, p.deref_count - per_element, value)) return false;
    if (string) {
      store_strings(arg, p, value, field);
    } else {
      store_scalars(p, value, field);
    }
    return true;
  }

  bool fetch_source(const FetchInsn& insn, uint64_t& value) {
    switch (insn.op) {
      case FetchOp::kReg:
        return read_register(insn.param, value);
      case FetchOp::kStack:
        return read_stack(insn.param, value);
      case FetchOp::kStackPtr:
        return read_register(arch::stack_pointer_slot(env_.isa), value);
      case FetchOp::kArg:
        return fetch_argument(insn.param, value);
      case FetchOp::kRetval:
        return read_register(arch::return_value_slot(env_.isa), value);
      case FetchOp::kImm:
        value = static_cast<uint64_t>(insn.imm);
        return true;
      case FetchOp::kDuration:
        value = env_.duration_ns;
        return true;
      case FetchOp::kFloatRetval:
        value = env_.float_retval;
        return true;
      case FetchOp::kComm:
      case FetchOp::kData:
        value = 0;  // copied from the agent's own memory at the store
        return true;
      default:
        // kSymbolAddr and kFileOffset become kImm when the probe is armed;
        // one met here was never resolved.
        return false;
    }
  }

  bool read_register(uint32_t slot, uint64_t& value) const {
    if (env_.regs == nullptr || slot >= arch::register_count(env_.isa)) return false;
    value = env_.regs[slot];
    return true;
  }

  bool read_stack(uint64_t word, uint64_t& value) const {
    uint64_t sp = 0;
    if (!read_register(arch::stack_pointer_slot(env_.isa), sp)) return false;
    return read_word(sp + word * 8, value);
  }

  // $argN: kept from the entry on a return probe, else where the ABI puts it.
  bool fetch_argument(uint32_t index, uint64_t& value) const {
    if (env_.entry_args != nullptr) {
      if (index >= env_.entry_arg_count) return false;
      value = env_.entry_args[index];
      return true;
    }
    const arch::ArgLocation where = arch::argument_location(env_.isa, index + 1);
    if (where.in_register) return read_register(where.index, value);
    return read_stack(where.index, value);
  }

  bool read_word(uint64_t address, uint64_t& value) const {
    uint64_t word;
    if (!env_.memory.read(env_.memory.context, &word, address, sizeof(word))) return false;
    value = word;
    return true;
  }

  bool dereference(const FetchInsn* derefs, uint32_t count, uint64_t& value) const {
    for (uint32_t i = 0; i < count; ++i) {
      if (!read_word(value + static_cast<uint64_t>(derefs[i].imm), value)) return false;
    }
    return true;
  }

  // Stages 3 and 4 for numbers. Array elements fault one by one, as the
  // kernel's loop goes on past a failed element.
  void store_scalars(const Program& p, uint64_t value, std::byte* field) const {
    const uint32_t size = p.store->size;
    if (p.store->op == FetchOp::kStRaw) {
      store_le(field, value, size);
    } else {
      const uint64_t base = value + static_cast<uint64_t>(p.store->imm);
      read_elements(field, base, size, p.count);
    }
    if (p.bitfield == nullptr) return;
    for (uint32_t i = 0; i < p.count; ++i) apply_bitfield(*p.bitfield, field + i * size);
  }

  // One read for the whole array when it all reads; element by element,
  // zeroing the ones that fault, when it does not.
  void read_elements(std::byte* field, uint64_t base, uint32_t size, uint32_t count) const {
    if (count > 1 && read_memory(field, base, size * count)) return;
    for (uint32_t i = 0; i < count; ++i) {
      std::byte* element = field + i * size;
      if (!read_memory(element, base + uint64_t{i} * size, size)) zero_bytes(element, size);
    }
  }

  bool read_memory(std::byte* dst, uint64_t src, uint32_t size) const {
    return env_.memory.read(env_.memory.context, dst, src, size);
  }

  // The stored value, unsigned, cut to the field within its container:
  // (v << lshift) >> rshift in the container's width.
  static void apply_bitfield(const FetchInsn& insn, std::byte* element) {
    const uint32_t size = insn.size;
    const uint64_t mask = size == 8 ? ~uint64_t{0} : (uint64_t{1} << (size * 8)) - 1;
    const uint64_t shifted = (load_le(element, size) << insn.lshift) & mask;
    store_le(element, shifted >> insn.rshift, size);
  }

  // Stage 3 for strings: each element is a __data_loc word. A string array
  // reads its i-th pointer with the last dereference, at lval + 8 * i.
  void store_strings(const EventArg& arg, const Program& p, uint64_t value, std::byte* field) {
    const uint64_t offset = static_cast<uint64_t>(p.store->imm);
    if (p.loop == nullptr) return store_le(field, copy_string(arg, p, value + offset), 4);
    const FetchInsn& deref = p.derefs[p.deref_count - 1];
    for (uint32_t i = 0; i < p.count; ++i) {
      uint64_t pointer = 0;
      const uint64_t slot = value + static_cast<uint64_t>(deref.imm) + uint64_t{i} * 8;
      const uint32_t loc = read_word(slot, pointer) ? copy_string(arg, p, pointer + offset) : 0;
      store_le(field + i * 4, loc, 4);
    }
  }

  // Appends one string to the dynamic area; returns its __data_loc word,
  // 0 (length 0: a fault) if it faulted or does not fit.
  DPROBE_HIT_PATH uint32_t copy_string(const EventArg& arg, const Program& p, uint64_t address) {
    const uint32_t room = limit_ - cursor_;
    const uint32_t capacity = room < kMaxStringSize ? room : kMaxStringSize;
    if (capacity == 0) return 0;
    char* dst = reinterpret_cast<char*>(record_ + cursor_);
    bool cut = false;
    int64_t length = 0;
    if (p.source->op == FetchOp::kComm) {
      length = copy_host_string(dst, env_.comm, kCommSize - 1, capacity, cut);
    } else if (p.source->op == FetchOp::kData) {
      length = copy_host_string(dst, arg.data.data(), arg.data.size(), capacity, cut);
    } else {
      length = env_.memory.read_string(env_.memory.context, dst, address, capacity);
      cut = length == capacity && goes_on(address + capacity - 1);
    }
    if (length <= 0 || length > capacity) return 0;
    // Only MAX_STRING_SIZE cuts a string; one cut by a full record would
    // be a wrong value, so it is a fault instead.
    if (cut && capacity < kMaxStringSize) return 0;
    const uint32_t loc = make_data_loc(cursor_, static_cast<uint32_t>(length));
    cursor_ += static_cast<uint32_t>(length);
    return loc;
  }

  // Whether the string in memory has a byte other than its NUL at
  // `address`; a fault there means it cannot be stored whole either.
  bool goes_on(uint64_t address) const {
    uint8_t byte = 0;
    if (!env_.memory.read(env_.memory.context, &byte, address, 1)) return true;
    return byte != 0;
  }

  const FetchEnv& env_;
  std::byte* const record_;
  const uint32_t limit_;
  uint32_t cursor_;
};

}  // namespace

RegisterFields plan_register_fields(const EventDesc& event, arch::Isa isa, uint32_t entry_args) {
  RegisterFields plan;
  if (event.args.size() > RegisterFields::kMax) return plan;
  for (const EventArg& arg : event.args) {
    Program p;
    if (!field_in_record(event, arg) || !decode_program(arg, p)) return plan;
    if (p.deref_count != 0 || p.bitfield != nullptr || p.loop != nullptr ||
        p.store->op != FetchOp::kStRaw) {
      return plan;
    }
    uint32_t slot = 0;
    bool from_entry = false;
    if (event.is_return && p.source->op == FetchOp::kArg) {
      if (p.source->param >= entry_args) return plan;  // not kept: the interpreter zeroes it
      slot = p.source->param;
      from_entry = true;
    } else if (p.source->op == FetchOp::kReg) {
      slot = p.source->param;
    } else if (p.source->op == FetchOp::kRetval) {
      slot = arch::return_value_slot(isa);
    } else if (p.source->op == FetchOp::kArg) {
      const arch::ArgLocation where = arch::argument_location(isa, p.source->param + 1);
      if (!where.in_register) return plan;
      slot = where.index;
    } else {
      return plan;
    }
    const uint32_t size = p.store->size;
    if ((!from_entry && slot >= arch::register_count(isa)) ||
        (size != 1 && size != 2 && size != 4 && size != 8)) {
      return plan;
    }
    plan.fields[plan.count++] = {static_cast<uint16_t>(slot), static_cast<uint16_t>(arg.offset),
                                 static_cast<uint16_t>(size), from_entry};
  }
  plan.usable = true;
  return plan;
}

DPROBE_HIT_PATH uint32_t store_event_args(const EventDesc& event, const FetchEnv& env,
                                          std::byte* record, uint32_t capacity) noexcept {
  const uint32_t limit = capacity < kMaxRecordSize ? capacity : kMaxRecordSize;
  if (record == nullptr || event.fixed_size > limit) return 0;
  ArgWriter writer(env, record, limit, event.fixed_size);
  for (const EventArg& arg : event.args) writer.store(event, arg);
  return writer.size();
}

}  // namespace dprobe::trace
