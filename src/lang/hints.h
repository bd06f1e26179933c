// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What a user coming from another tool meant, said under the kernel's own
// error: a register by its full x86_64 name (%rdi, %eax: the kernel's is
// %di), a type by its C name (:int, :str: the kernel's are :s32 and
// :string). The error itself stays the kernel's, word for word and caret
// for caret; the hint is a line of its own after it.
//
//   error.detail = hint_for(error.code, error.command, error.column, isa);  // "" when none
#ifndef DPROBE_LANG_HINTS_H_
#define DPROBE_LANG_HINTS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "arch/isa.h"
#include "lang/error_table.h"

namespace dprobe::lang {

std::string hint_for(ErrorCode code, std::string_view command, size_t column, arch::Isa isa);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_HINTS_H_
