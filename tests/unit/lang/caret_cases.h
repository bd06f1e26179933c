// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every parse-time error of the language, with the column the caret must
// point at, drawn under the definition. Where the kernel's parser reports the
// same error, the column is the one the kernel's error_log shows for it
// (checked against uprobe_events: tests/oracle/kernel_errors.sh).
#ifndef DPROBE_TESTS_UNIT_LANG_CARET_CASES_H_
#define DPROBE_TESTS_UNIT_LANG_CARET_CASES_H_

#include <ostream>
#include <string_view>

#include "lang/error_table.h"

namespace dprobe::lang::test {

struct CaretCase {
  std::string_view definition;
  std::string_view caret;  // spaces, then '^' under the offending character
  ErrorCode code;
};

// Names the case in test listings by its definition, not its bytes.
inline void PrintTo(const CaretCase& c, std::ostream* os) { *os << c.definition; }

// clang-format off
inline constexpr CaretCase kParseCaretCases[] = {
    {R"(p:/ev libc.so.6:open)",
     R"(  ^)", ErrorCode::NO_GROUP_NAME},
    {R"(p:1grp/ev libc.so.6:open)",
     R"(  ^)", ErrorCode::BAD_GROUP_NAME},
    {R"(p:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/ev libc.so.6:open)",
     R"(  ^)", ErrorCode::GROUP_TOO_LONG},
    {R"(p:grp/1ev libc.so.6:open)",
     R"(      ^)", ErrorCode::BAD_EVENT_NAME},
    {R"(p:grp/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa libc.so.6:open)",
     R"(      ^)", ErrorCode::EVENT_TOO_LONG},
    {R"(p: libc.so.6:open)",
     R"(  ^)", ErrorCode::NO_EVENT_NAME},
    {R"(x:grp/ev libc.so.6:open)",
     R"(^)", ErrorCode::BAD_PROBE_TYPE},
    {R"(pz:grp/ev libc.so.6:open)",
     R"( ^)", ErrorCode::BAD_PROBE_TYPE},
    {R"(p10:grp/ev libc.so.6:open)",
     R"( ^)", ErrorCode::BAD_MAXACT_TYPE},
    {R"(r10x:grp/ev libc.so.6:open)",
     R"( ^)", ErrorCode::BAD_MAXACT},
    {R"(r4097:grp/ev libc.so.6:open)",
     R"( ^)", ErrorCode::MAXACT_TOO_BIG},
    {R"(p:grp/ev)",
     R"(         ^)", ErrorCode::BAD_PROBE_ADDR},
    {R"(p:grp/ev libc.so.6:open+zz)",
     R"(         ^)", ErrorCode::BAD_PROBE_ADDR},
    {R"(p:grp/ev /bin/ls:0xzz)",
     R"(                 ^)", ErrorCode::BAD_UPROBE_OFFS},
    {R"(p:grp/ev libc.so.6:open%retx)",
     R"(                       ^)", ErrorCode::BAD_ADDR_SUFFIX},
    {R"(r:grp/ev libc.so.6:open+4)",
     R"(         ^)", ErrorCode::BAD_RETPROBE},
    {R"(p:grp/ev libc.so.6:open+4 fd=$arg1)",
     R"(                             ^)", ErrorCode::NOFENTRY_ARGS},
    {R"(p:grp/ev libc.so.6:open fd=$retval)",
     R"(                           ^)", ErrorCode::RETVAL_ON_PROBE},
    {R"(p:grp/ev libc.so.6:open fd=$stack1048576)",
     R"(                           ^)", ErrorCode::BAD_STACK_NUM},
    {R"(p:grp/ev libc.so.6:open fd=$arg0)",
     R"(                           ^)", ErrorCode::BAD_ARG_NUM},
    {R"(p:grp/ev libc.so.6:open fd=$foo)",
     R"(                           ^)", ErrorCode::BAD_VAR},
    // $duration is dprobe's, for return probes only.
    {R"(p:grp/ev libc.so.6:open lat=$duration)",
     R"(                            ^)", ErrorCode::BAD_VAR},
    {R"(e:grp/ev syscalls)",
     R"(         ^)", ErrorCode::NO_EVENT_INFO},
    {R"(e:grp/ev syscalls/sys_enter_nosuch)",
     R"(         ^)", ErrorCode::BAD_ATTACH_EVENT},
    {R"(e:grp/ev raw_syscalls/sys_enter p=$path)",
     R"(                                  ^)", ErrorCode::BAD_ATTACH_ARG},
    {R"(p:grp/ev libc.so.6:open fd=%zz)",
     R"(                           ^)", ErrorCode::BAD_REG_NAME},
    {R"(p:grp/ev libc.so.6:open fd=@0xzz)",
     R"(                           ^)", ErrorCode::BAD_MEM_ADDR},
    {R"(p:grp/ev libc.so.6:open fd=\zz)",
     R"(                            ^)", ErrorCode::BAD_IMM},
    {R"(p:grp/ev libc.so.6:open fd=\"abc)",
     R"(                                ^)", ErrorCode::IMMSTR_NO_CLOSE},
    {R"(p:grp/ev libc.so.6:open fd=@+zz)",
     R"(                           ^)", ErrorCode::BAD_FILE_OFFS},
    {R"(p:grp/ev libc.so.6:open fd=+8(+8(+8(+8(+8(+8(+8(+8(+8(+8(+8(+8(+8(+8(+8(%ax))))))))))))))))",
     R"(                              ^)", ErrorCode::TOO_MANY_OPS},
    {R"(p:grp/ev libc.so.6:open fd=+8%di)",
     R"(                           ^)", ErrorCode::DEREF_NEED_BRACE},
    {R"(p:grp/ev libc.so.6:open fd=+zz(%di))",
     R"(                           ^)", ErrorCode::BAD_DEREF_OFFS},
    {R"(p:grp/ev libc.so.6:open fd=+8(%di)",
     R"(                                 ^)", ErrorCode::DEREF_OPEN_BRACE},
    {R"(p:grp/ev libc.so.6:open fd=+8($comm))",
     R"(                              ^)", ErrorCode::COMM_CANT_DEREF},
    {R"(p:grp/ev libc.so.6:open fd=^foo)",
     R"(                           ^)", ErrorCode::BAD_FETCH_ARG},
    {R"(p:grp/ev libc.so.6:open fd=foo+1)",
     R"(                              ^)", ErrorCode::BAD_FETCH_ARG},
    {R"(p:grp/ev libc.so.6:open fd=it-name)",
     R"(                             ^)", ErrorCode::BAD_HYPHEN},
    {R"(p:grp/ev libc.so.6:open fd=v[x])",
     R"(                             ^)", ErrorCode::BAD_ARRAY_NUM},
    {R"(p:grp/ev libc.so.6:open it->)",
     R"(                            ^)", ErrorCode::BAD_FETCH_ARG},
    {R"(p:grp/ev libc.so.6:open x=$params)",
     R"(                        ^)", ErrorCode::BAD_VAR_ARGS},
    {R"(p:grp/ev libc.so.6:open $vars:u32)",
     R"(                        ^)", ErrorCode::BAD_VAR_ARGS},
    {R"(p:grp/ev libc.so.6:open+4 $arg*)",
     R"(                          ^)", ErrorCode::NOFENTRY_ARGS},
    {R"(r:grp/ev libc.so.6:open count)",
     R"(                        ^)", ErrorCode::VAR_ON_RETPROBE},
    {R"(p:grp/ev visit:3%return)",
     R"(         ^)", ErrorCode::BAD_RETPROBE},
    {R"(p:grp/ev libc.so.6:open fd=+0(%di):u32[2)",
     R"(                                        ^)", ErrorCode::ARRAY_NO_CLOSE},
    {R"(p:grp/ev libc.so.6:open fd=+0(%di):u32[2]x)",
     R"(                                         ^)", ErrorCode::BAD_ARRAY_SUFFIX},
    {R"(p:grp/ev libc.so.6:open fd=+0(%di):u32[0])",
     R"(                                       ^)", ErrorCode::BAD_ARRAY_NUM},
    {R"(p:grp/ev libc.so.6:open fd=+0(%di):u32[65])",
     R"(                                       ^)", ErrorCode::ARRAY_TOO_BIG},
    {R"(p:grp/ev libc.so.6:open fd=%di:u33)",
     R"(                               ^)", ErrorCode::BAD_TYPE},
    {R"(p:grp/ev libc.so.6:open fd=%di:string)",
     R"(                               ^)", ErrorCode::BAD_STRING},
    // As on a kprobe (the kernel's uprobes refuse the symbol type).
    {R"(p:grp/ev libc.so.6:open fd=%di:symbol[2])",
     R"(                               ^)", ErrorCode::BAD_STRING},
    {R"(p:grp/ev libc.so.6:open fd=%di:b4@30/32)",
     R"(                               ^)", ErrorCode::BAD_BITFIELD},
    // After a dereference the kernel's store, bitfield and array errors
    // point past the outermost `+OFFS(` (its `u` not counted), and what is
    // inside a user dereference one column left of it.
    {R"(p:grp/ev libc.so.6:open fd=-5(%di):b9@0/8)",
     R"(                                      ^)", ErrorCode::BAD_BITFIELD},
    {R"(p:grp/ev libc.so.6:open -5(%di):b9@0/8)",
     R"(                                   ^)", ErrorCode::BAD_BITFIELD},
    {R"(p:grp/ev libc.so.6:open fd=+8(+0(%di)):b9@0/8)",
     R"(                                          ^)", ErrorCode::BAD_BITFIELD},
    {R"(p:grp/ev libc.so.6:open fd=+u0(%di):b9@0/8)",
     R"(                                       ^)", ErrorCode::BAD_BITFIELD},
    {R"(p:grp/ev libc.so.6:open fd=-0x10(%di):b9@0/8)",
     R"(                                            ^)", ErrorCode::BAD_BITFIELD},
    {R"(p:grp/ev libc.so.6:open fd=@0x1234:b9@0/8)",
     R"(                                   ^)", ErrorCode::BAD_BITFIELD},
    {R"(p:grp/ev libc.so.6:open fd=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@1))))))))))))):b1@0/8)",
     R"(                                                                                     ^)", ErrorCode::BAD_BITFIELD},
    {R"(p:grp/ev libc.so.6:open fd=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@1))))))))))))):u8[2])",
     R"(                              ^)", ErrorCode::TOO_MANY_OPS},
    {R"(p:grp/ev libc.so.6:open fd=+u0(%zz))",
     R"(                              ^)", ErrorCode::BAD_REG_NAME},
    {R"(p:grp/ev libc.so.6:open fd=+u0(%di)",
     R"(                                 ^)", ErrorCode::DEREF_OPEN_BRACE},
    {R"(p:grp/ev libc.so.6:open fd=+u8(+0(%zz)))",
     R"(                                 ^)", ErrorCode::BAD_REG_NAME},
    {R"(p:grp/ev libc.so.6:open fd=-u4($comm))",
     R"(                              ^)", ErrorCode::COMM_CANT_DEREF},
    {R"(p:grp/ev libc.so.6:open aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=%di)",
     R"(                        ^)", ErrorCode::ARG_NAME_TOO_LONG},
    {R"(p:grp/ev libc.so.6:open =%di)",
     R"(                        ^)", ErrorCode::NO_ARG_NAME},
    {R"(p:grp/ev libc.so.6:open 1fd=%di)",
     R"(                        ^)", ErrorCode::BAD_ARG_NAME},
    {R"(p:grp/ev libc.so.6:open fd=%di fd=%si)",
     R"(                               ^)", ErrorCode::USED_ARG_NAME},
    {R"(p:grp/ev libc.so.6:open fd=+0000000000000000000000000000000000000000000000000000000000(%di))",
     R"(                           ^)", ErrorCode::ARG_TOO_LONG},
    {R"(p:grp/ev libc.so.6:open fd=)",
     R"(                           ^)", ErrorCode::NO_ARG_BODY},
    {R"(p:grp/ev libc.so.6:open fd=$comm:u32)",
     R"(                                 ^)", ErrorCode::NEED_STRING_TYPE},
    {R"(-:grp/ev libc.so.6:open)",
     R"(         ^)", ErrorCode::REMOVE_WITH_ARGS},
    {R"(p:grp/ev libc.so.6:str*)",
     R"(      ^)", ErrorCode::WILDCARD_EVENT},
    {R"(r:grp/ev libc.so.6:open fd=$arg17)",
     R"(                           ^)", ErrorCode::ARGIDX_2BIG},
    {R"(-:)",
     R"(  ^)", ErrorCode::NO_EVENT_NAME},
};
// clang-format on

}  // namespace dprobe::lang::test

#endif  // DPROBE_TESTS_UNIT_LANG_CARET_CASES_H_
