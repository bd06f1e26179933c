// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every error a probe definition can get, in one table: a code and its
// message. Where the kernel's probe parser reports the same error, the code
// and message are the kernel's (kernel/trace/trace_probe.h); the entries
// after the "dprobe's own" line exist because dprobe resolves symbols and
// objects itself.
//
//   ErrorCode c = ErrorCode::BAD_REG_NAME;
//   error_name(c);     // "BAD_REG_NAME"
//   error_message(c);  // "Invalid register name"
#ifndef DPROBE_LANG_ERROR_TABLE_H_
#define DPROBE_LANG_ERROR_TABLE_H_

#include <cstdint>
#include <string_view>

namespace dprobe::lang {

// clang-format off
#define DPROBE_PROBE_ERRORS(X)                                                          \
  X(FILE_NOT_FOUND,    "Failed to find the given file")                                 \
  X(NO_REGULAR_FILE,   "Not a regular file")                                            \
  X(BAD_UPROBE_OFFS,   "Invalid uprobe offset")                                         \
  X(BAD_MAXACT_TYPE,   "Maxactive is only for function exit")                           \
  X(BAD_MAXACT,        "Invalid maxactive number")                                      \
  X(MAXACT_TOO_BIG,    "Maxactive is too big")                                          \
  X(BAD_PROBE_ADDR,    "Invalid probed address or symbol")                              \
  X(NON_UNIQ_SYMBOL,   "The symbol is not unique")                                      \
  X(BAD_RETPROBE,      "Retprobe address must be an function entry")                    \
  X(BAD_ADDR_SUFFIX,   "Invalid probed address suffix")                                 \
  X(NO_GROUP_NAME,     "Group name is not specified")                                   \
  X(GROUP_TOO_LONG,    "Group name is too long")                                        \
  X(BAD_GROUP_NAME,    "Group name must follow the same rules as C identifiers")        \
  X(NO_EVENT_NAME,     "Event name is not specified")                                   \
  X(EVENT_TOO_LONG,    "Event name is too long")                                        \
  X(BAD_EVENT_NAME,    "Event name must follow the same rules as C identifiers")        \
  X(EVENT_EXIST,       "Given group/event name is already used by another event")       \
  X(RETVAL_ON_PROBE,   "$retval is not available on probe")                             \
  X(BAD_STACK_NUM,     "Invalid stack number")                                          \
  X(BAD_ARG_NUM,       "Invalid argument number")                                       \
  X(BAD_VAR,           "Invalid $-variable specified")                                  \
  X(BAD_REG_NAME,      "Invalid register name")                                         \
  X(BAD_MEM_ADDR,      "Invalid memory address")                                        \
  X(BAD_IMM,           "Invalid immediate value")                                       \
  X(IMMSTR_NO_CLOSE,   "String is not closed with '\"'")                                \
  X(BAD_FILE_OFFS,     "Invalid file offset value")                                     \
  X(TOO_MANY_OPS,      "Dereference is too much nested")                                \
  X(DEREF_NEED_BRACE,  "Dereference needs a brace")                                     \
  X(BAD_DEREF_OFFS,    "Invalid dereference offset")                                    \
  X(DEREF_OPEN_BRACE,  "Dereference brace is not closed")                               \
  X(COMM_CANT_DEREF,   "$comm can not be dereferenced")                                 \
  X(BAD_FETCH_ARG,     "Invalid fetch argument")                                        \
  X(ARRAY_NO_CLOSE,    "Array is not closed")                                           \
  X(BAD_ARRAY_SUFFIX,  "Array has wrong suffix")                                        \
  X(BAD_ARRAY_NUM,     "Invalid array size")                                            \
  X(ARRAY_TOO_BIG,     "Array number is too big")                                       \
  X(BAD_TYPE,          "Unknown type is specified")                                     \
  X(BAD_STRING,        "String accepts only memory argument")                           \
  X(BAD_BITFIELD,      "Invalid bitfield")                                              \
  X(ARG_NAME_TOO_LONG, "Argument name is too long")                                     \
  X(NO_ARG_NAME,       "Argument name is not specified")                                \
  X(BAD_ARG_NAME,      "Argument name must follow the same rules as C identifiers")     \
  X(USED_ARG_NAME,     "This argument name is already used")                            \
  X(ARG_TOO_LONG,      "Argument expression is too long")                               \
  X(NO_ARG_BODY,       "No argument expression")                                        \
  X(SAME_PROBE,        "There is already the exact same probe event")                   \
  X(TOO_MANY_ARGS,     "Too many arguments are specified")                              \
  X(NOFENTRY_ARGS,     "$arg* can be used only on function entry or exit")              \
  X(ARGIDX_2BIG,       "$argN index is too big")                                        \
  X(NEED_STRING_TYPE,  "$comm and immediate-string only accepts string type")           \
  X(BAD_INSN_BNDRY,    "Probe point is not an instruction boundary")                    \
  X(FAIL_REG_PROBE,    "Failed to register probe event")                                \
  X(NO_EVENT_INFO,     "This requires both group and event name to attach")             \
  X(BAD_ATTACH_EVENT,  "Attached event does not exist")                                 \
  X(BAD_ATTACH_ARG,    "Attached event does not have this field")                       \
  /* dprobe's own: */                                                                   \
  X(BAD_PROBE_TYPE,    "Unknown probe type, expected p, r, e or -")                     \
  X(REMOVE_WITH_ARGS,  "Removing an event takes no probe point or arguments")           \
  X(EVENT_TOO_BIG,     "Event record is too big")                                       \
  X(WILDCARD_EVENT,    "Event name can not be given for a wildcard probe")              \
  X(NO_SUCH_EVENT,     "No event matches the name to remove")                           \
  X(NOT_ELF_FILE,      "Not an ELF object")                                             \
  X(NO_EXECUTABLE,     "No main executable to look the symbol up in (use -x or OBJ:)")  \
  X(NO_SYMBOL,         "The symbol is not found")                                       \
  X(NO_SYMBOL_MATCH,   "No function matches the pattern")                              \
  X(BAD_SYMBOL_OFFS,   "Offset is outside the symbol")                                  \
  X(NOT_TEXT_ADDR,     "Probe address is not in executable code")                        \
  X(OBJ_NOT_LOADED,    "The object is not loaded in the process")                       \
  X(BAD_INSN,          "Probe point is an instruction that can not be probed")          \
  X(BLACKLISTED,       "Probe point is on the blacklist")                               \
  X(NO_OOL_SLOT,       "No out-of-line slot within reach of the probe point")           \
  X(NO_TRACEPOINT,     "No such system call event")                                     \
  X(NO_SYSCALL_TABLE,  "No system call table for this architecture")                  \
  /* The kernel's, for arguments named by the types' information (BTF */             \
  /* there, the DWARF here): */                                                       \
  X(BAD_VAR_ARGS,      "$arg* must be an independent parameter without name etc.")     \
  X(BAD_HYPHEN,        "Failed to parse single hyphen. Forgot '>'?")                    \
  X(NO_BTFARG,         "This variable is not found at this probe point")                \
  X(NO_PTR_STRCT,      "This is not a pointer to union/structure.")                     \
  X(NO_BTF_FIELD,      "This field is not found.")                                      \
  X(NOSUP_DAT_ARG,     "Non pointer structure/union argument is not supported.")        \
  X(BAD_TYPE4STR,      "This type does not fit for string.")                            \
  /* dprobe's own, for the debug information: */                                      \
  X(NO_DEBUG_INFO,     "The object has no debug information")                           \
  X(NO_SOURCE_PLACE,   "The source line or function is not in the debug information")   \
  X(VAR_OPTIMIZED,     "The variable has no location at this probe point")              \
  X(BAD_MEMBER_OP,     "A pointer's member is reached with '->', a structure's with '.'") \
  X(VAR_UNSUPPORTED,   "The variable can not be fetched at this probe point")           \
  X(VAR_ON_RETPROBE,   "Source variables are not available at function exit")          \
  /* dprobe's own, for the probe points programs are compiled with: */                \
  X(NO_SDT_POINT,      "No SDT probe point of the object matches")                      \
  X(BAD_SDT_OPERAND,   "The SDT probe point's operand can not be fetched")
// clang-format on

enum class ErrorCode : uint8_t {
#define DPROBE_ERROR_ENUM(code, message) code,
  DPROBE_PROBE_ERRORS(DPROBE_ERROR_ENUM)
#undef DPROBE_ERROR_ENUM
      kCount
};

std::string_view error_name(ErrorCode code);
std::string_view error_message(ErrorCode code);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_ERROR_TABLE_H_
