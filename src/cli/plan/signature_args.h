// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// $retval (where no :TYPE was written) and $argN (anywhere in a fetch
// argument) as the function's DWARF says it passes them. The kernel reads $argN as the N-th integer
// register and $retval as the integer return register; a function of floats and doubles passes
// those in vector registers, and counts its integer arguments apart (x86_64 SysV and AAPCS64
// alike):
//
//   double scale(double x, int n)   r  $retval -> $retval:f64 (xmm0, v0)
//                                   p  $arg2   -> $arg1       (n is the first integer)
//                                   p  $arg1   -> refused: x is in a vector register
//
// Applied at a function's entry and at its return, only while every
// argument up to N is an integer, a pointer or a float (what goes by value
// in a struct, or a long double, moves the rest in ways not followed here).
#ifndef DPROBE_CLI_PLAN_SIGNATURE_ARGS_H_
#define DPROBE_CLI_PLAN_SIGNATURE_ARGS_H_

#include "base/result.h"
#include "lang/definition.h"
#include "symbols/dwarf_variables.h"

namespace dprobe::cli {

// Whether `def` has an untyped $retval of a return probe, or a $argN.
bool has_signature_args(const lang::Definition& def);

// Rewrites them by `signature`; a $argN of a float is refused
// (VAR_UNSUPPORTED) unless `def` is one of a wildcard's probes, where it
// is left as the kernel reads it.
Result<void, lang::ProbeError> apply_signature(lang::Definition& def,
                                               const symbols::FunctionSignature& signature,
                                               const std::string& function);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_SIGNATURE_ARGS_H_
