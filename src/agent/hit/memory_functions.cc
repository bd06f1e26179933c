// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's own memset, memcpy and memmove. Hidden, so every call the
// agent makes (the compiler's for a struct it zeroes or copies, and the
// libstdc++ linked into it) binds here and never to the C library's.
//
// Why: an optimized probe's trampoline saves the general registers only,
// and the program's FP/SIMD registers survive a hit because nothing on the
// hit path touches them. The C library's string functions use them (and
// the program may have probes in them). On arm64, GCC with
// -mgeneral-regs-only turns even a 64-byte struct's zeroing into a call to
// memset. Plain word loops are enough for what the agent copies.
#include <cstddef>
#include <cstdint>

#include "base/hit_path.h"
#include "base/no_libc_calls.h"

namespace {

DPROBE_HIT_PATH bool word_aligned(const void* a, const void* b, size_t n) {
  return ((reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b) | n) & 7) == 0;
}

DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS void copy_forward(unsigned char* dest,
                                                       const unsigned char* src, size_t n) {
  if (word_aligned(dest, src, n)) {
    auto* d = reinterpret_cast<uint64_t*>(dest);
    const auto* s = reinterpret_cast<const uint64_t*>(src);
    for (size_t i = 0; i < n / 8; ++i) d[i] = s[i];
    return;
  }
  for (size_t i = 0; i < n; ++i) dest[i] = src[i];
}

DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS void copy_backward(unsigned char* dest,
                                                        const unsigned char* src, size_t n) {
  if (word_aligned(dest, src, n)) {
    auto* d = reinterpret_cast<uint64_t*>(dest);
    const auto* s = reinterpret_cast<const uint64_t*>(src);
    for (size_t i = n / 8; i > 0; --i) d[i - 1] = s[i - 1];
    return;
  }
  for (size_t i = n; i > 0; --i) dest[i - 1] = src[i - 1];
}

}  // namespace

// Hidden by the assembler: the compilers know these names as built-ins
// and refuse a visibility attribute that differs from the built-in's.
asm(".hidden memset\n.hidden memcpy\n.hidden memmove");

extern "C" {

DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS void* memset(void* dest, int c, size_t n) {
  auto* d = static_cast<unsigned char*>(dest);
  const auto byte = static_cast<unsigned char>(c);
  if (word_aligned(dest, nullptr, n)) {
    const uint64_t word = uint64_t{byte} * 0x0101010101010101ull;
    auto* w = static_cast<uint64_t*>(dest);
    for (size_t i = 0; i < n / 8; ++i) w[i] = word;
    return dest;
  }
  for (size_t i = 0; i < n; ++i) d[i] = byte;
  return dest;
}

DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS void* memcpy(void* dest, const void* src, size_t n) {
  copy_forward(static_cast<unsigned char*>(dest), static_cast<const unsigned char*>(src), n);
  return dest;
}

DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS void* memmove(void* dest, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dest);
  const auto* s = static_cast<const unsigned char*>(src);
  if (d <= s || d >= s + n) {
    copy_forward(d, s, n);
  } else {
    copy_backward(d, s, n);
  }
  return dest;
}

}  // extern "C"
