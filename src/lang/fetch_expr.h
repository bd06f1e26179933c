// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The fetch expression of an argument (what comes before `:TYPE`), parsed
// recursively into the source and dereference stages of its program:
//
//   %REG  $stackN  $stack  $argN  $retval  $comm  @ADDR  @+FOFFS
//   @[OBJ:]SYM[+|-OFFS]  +|-[u]OFFS(EXPR)  \IMM  \"STRING"
#ifndef DPROBE_LANG_FETCH_EXPR_H_
#define DPROBE_LANG_FETCH_EXPR_H_

#include <string_view>
#include <vector>

#include "lang/fetch_arg.h"
#include "lang/parse_fault.h"
#include "trace/event.h"

namespace dprobe::lang {

// Operations an argument may have before kEnd (the kernel's FETCH_INSN_MAX - 1).
inline constexpr size_t kMaxFetchOps = trace::kMaxFetchInsns - 1;

// How many columns the kernel's parser counts for the `+|-[u]OFFS(` that
// starts `expr` (0 when it is no dereference): the `u` is not counted. The
// kernel's later errors (the store, the bitfield, the array) point that far
// past where they would otherwise, as its parser leaves its column past the
// outermost dereference's opening brace.
size_t deref_prefix_columns(std::string_view expr);

// Appends the expression's operations to `code`; immediate strings and
// symbol references go into `arg`.
Parsed<void> parse_fetch_expr(std::string_view expr, size_t column, const ArgContext& context,
                              trace::EventArg& arg, std::vector<trace::FetchInsn>& code);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_FETCH_EXPR_H_
