// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/hit/fetch_type.h"

#include <array>

#include "base/hit_path.h"

namespace dprobe::trace {
namespace {

using enum TypeId;
constexpr TypeClass kUnsigned = TypeClass::kUnsigned;
constexpr TypeClass kSigned = TypeClass::kSigned;
constexpr TypeClass kHex = TypeClass::kHex;

constexpr std::array<FetchType, static_cast<size_t>(TypeId::kCount)> kTypes = {{
    {kU8, "u8", kUnsigned, 1, false, "u8", "%u"},
    {kU16, "u16", kUnsigned, 2, false, "u16", "%u"},
    {kU32, "u32", kUnsigned, 4, false, "u32", "%u"},
    {kU64, "u64", kUnsigned, 8, false, "u64", "%Lu"},
    {kS8, "s8", kSigned, 1, true, "s8", "%d"},
    {kS16, "s16", kSigned, 2, true, "s16", "%d"},
    {kS32, "s32", kSigned, 4, true, "s32", "%d"},
    {kS64, "s64", kSigned, 8, true, "s64", "%Ld"},
    {kX8, "x8", kHex, 1, false, "u8", "0x%x"},
    {kX16, "x16", kHex, 2, false, "u16", "0x%x"},
    {kX32, "x32", kHex, 4, false, "u32", "0x%x"},
    {kX64, "x64", kHex, 8, false, "u64", "0x%Lx"},
    {kChar, "char", TypeClass::kChar, 1, false, "u8", "'%c'"},
    {kString, "string", TypeClass::kString, 4, true, "__data_loc char[]", "\\\"%s\\\""},
    {kUString, "ustring", TypeClass::kString, 4, true, "__data_loc char[]", "\\\"%s\\\""},
    {kSymbol, "symbol", TypeClass::kSymbol, 8, false, "u64", "%pS"},
    {kSymStr, "symstr", TypeClass::kSymStr, 8, false, "u64", "\\\"%pS\\\""},
    {kF32, "f32", TypeClass::kFloat, 4, true, "float", "%g"},
    {kF64, "f64", TypeClass::kFloat, 8, true, "double", "%g"},
}};

}  // namespace

DPROBE_HIT_PATH const FetchType& fetch_type(TypeId id) { return kTypes[static_cast<size_t>(id)]; }

const FetchType* find_fetch_type(std::string_view name) {
  for (const FetchType& type : kTypes) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

}  // namespace dprobe::trace
