// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/fetch.h"

namespace dprobe::trace {

std::string_view fetch_op_name(FetchOp op) {
  switch (op) {
    case FetchOp::kNop:
      return "nop";
    case FetchOp::kReg:
      return "reg";
    case FetchOp::kStack:
      return "stack";
    case FetchOp::kStackPtr:
      return "stackp";
    case FetchOp::kArg:
      return "arg";
    case FetchOp::kRetval:
      return "retval";
    case FetchOp::kComm:
      return "comm";
    case FetchOp::kDuration:
      return "duration";
    case FetchOp::kFloatRetval:
      return "fretval";
    case FetchOp::kImm:
      return "imm";
    case FetchOp::kData:
      return "data";
    case FetchOp::kSymbolAddr:
      return "symbol";
    case FetchOp::kFileOffset:
      return "foffs";
    case FetchOp::kDeref:
      return "deref";
    case FetchOp::kUDeref:
      return "uderef";
    case FetchOp::kStRaw:
      return "st_raw";
    case FetchOp::kStMem:
      return "st_mem";
    case FetchOp::kStUMem:
      return "st_umem";
    case FetchOp::kStString:
      return "st_string";
    case FetchOp::kStUString:
      return "st_ustring";
    case FetchOp::kModBitfield:
      return "mod_bf";
    case FetchOp::kLoopArray:
      return "lp_array";
    case FetchOp::kEnd:
      return "end";
  }
  return "?";
}

}  // namespace dprobe::trace
