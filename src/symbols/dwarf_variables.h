// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Source variables at a code address, from the DWARF (symbols/debug_info.h),
// the way perf probe finds them: the scopes around the address, innermost
// first, up to the function (or inlined instance) it is in, then the file's
// globals; each variable's location at that very address (location lists
// honoured); and a path through its type: VAR->MEMBER, VAR.MEMBER, VAR[N].
//
//   VariablePath path{"it", {{PathStep::kArrow, "name"}}};
//   auto fetch = find_variable(info, 0x1149, path);
//   // fetch->base == kRegister, dwarf_reg 5 (rdi), in_memory, at == 8:
//   // the value is the 8 bytes at rdi + 8, a `const char *`: a string.
//
// What comes back says where the value is in the terms of the kernel's
// fetch arguments (a register, loads through pointers, an offset), not how
// to fetch it: the CLI writes that as a fetch argument
// (cli/plan/variable_args.h).
#ifndef DPROBE_SYMBOLS_DWARF_VARIABLES_H_
#define DPROBE_SYMBOLS_DWARF_VARIABLES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/variable_path.h"
#include "symbols/debug_info.h"

namespace dprobe::symbols {

// find_variable follows a VariablePath (base/variable_path.h), the type
// the language parses. The former names of this layer's copy of it, still
// spelled by cli/plan/variable_args.cc: to go once that copies the path whole.
using AccessStep = PathStep;
using VariableQuery = VariablePath;

// What a value is, as far as fetching and printing it goes.
struct ValueShape {
  enum class Kind : uint8_t {
    kSigned,
    kUnsigned,
    kBool,
    kFloat,
    kPointer,
    kString,     // a pointer to char: the string it points to
    kCharArray,  // char[N]: the string it holds
    kArray,      // of scalars: `element` says of what
    kRecord,     // struct, union or class
    kEnum,
    kOther,  // void, functions, what has no value to fetch
  };
  Kind kind = Kind::kOther;
  uint32_t size = 0;   // bytes; an array's: one element's
  uint32_t count = 0;  // kArray, kCharArray: elements (0: unknown)
  Kind element = Kind::kOther;
  uint8_t bit_size = 0;    // a bitfield member: its width,
  uint8_t bit_offset = 0;  // and its lowest bit within `size` bytes
  std::string type_name;   // as C writes it: "const char *", "struct item"
};

// Where a value is. The base is a register's value, a link-time address of
// the object, or a constant; then each of `loads` replaces the value by the
// 8 bytes at value + load (pointers followed); then the object is at
// value + at when in_memory, else the value is the object itself.
struct VariableFetch {
  enum class Base : uint8_t { kRegister, kAddress, kConstant };
  Base base = Base::kRegister;
  unsigned dwarf_reg = 0;  // kRegister: the psABI's DWARF number
  uint64_t address = 0;    // kAddress
  int64_t constant = 0;    // kConstant
  std::vector<int64_t> loads;
  bool in_memory = false;
  int64_t at = 0;
  // Not in memory: the value is the register's plus this (a pointer the
  // compiler computes, &items[i]); only a load through it can use it.
  int64_t plus = 0;
  ValueShape shape;
};

struct VariableError {
  enum class Kind : uint8_t {
    kNoScope,       // no function's DWARF covers the address
    kNotFound,      // no such variable in scope
    kOptimizedOut,  // in scope, but no location at this address
    kNoMember,      // the type has no such member
    kNotPointer,    // -> or [N] on what is not a pointer (or array)
    kNeedArrow,     // . on a pointer
    kUnsupported,   // a location or a value dprobe cannot fetch
  };
  Kind kind;
  int step = -1;  // the step it is about; -1: the variable itself
  std::string detail;
  std::vector<std::string> available;  // kNotFound: the names in scope
};

Result<VariableFetch, VariableError> find_variable(const DebugInfo& info, uint64_t address,
                                                   const VariablePath& path);

// The variables in scope at `address`, innermost scope first, each in the
// DWARF's order (a function's parameters before its locals), for $params,
// $vars and `dprobe list -V`.
struct ScopeVariable {
  std::string name;
  std::string type_name;
  bool is_parameter = false;
  bool available = false;  // has a location at this address
  bool global = false;     // the file's, not the function's
};
Result<std::vector<ScopeVariable>> variables_at(const DebugInfo& info, uint64_t address);

// What the function holding `address` returns (kOther for void) and takes,
// in order, as its DWARF declares them; nullopt without its DWARF.
struct FunctionSignature {
  ValueShape returns;
  std::vector<ValueShape> parameters;
  bool variadic = false;  // `...` follows
};
std::optional<FunctionSignature> function_signature(const DebugInfo& info, uint64_t address);

// Where the prologue of the function starting at `entry` ends: the row the
// compiler marked prologue_end, else the first statement of another line
// (gdb's and perf probe's choice). Before it the frame is being built, and
// a variable the DWARF places relative to it is not there yet. nullopt when
// `entry` starts no function of the DWARF, or it has no second line.
std::optional<uint64_t> after_prologue(const DebugInfo& info, uint64_t entry);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_DWARF_VARIABLES_H_
