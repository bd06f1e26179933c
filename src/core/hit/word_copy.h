// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Copies and clears for the stack unwinder, which runs on the hit path:
// word by word, each word through an empty asm, so that the compiler cannot
// make them calls to memcpy or memset: those are the C library's, which
// uses vector registers and may itself be probed.
//
//   Row row;            // not initialized by itself
//   clear_words(row);   // all zero
//   copy_words(saved, row);
#ifndef DPROBE_CORE_WORD_COPY_H_
#define DPROBE_CORE_WORD_COPY_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "base/hit_path.h"

namespace dprobe::core::unwinding {

// `size` a multiple of 8.
DPROBE_HIT_PATH inline void copy_bytes(void* dst, const void* src, size_t size) noexcept {
  auto* to = static_cast<unsigned char*>(dst);
  const auto* from = static_cast<const unsigned char*>(src);
  for (size_t i = 0; i < size; i += 8) {
    uint64_t word;
    __builtin_memcpy(&word, from + i, 8);
    __asm__("" : "+r"(word));
    __builtin_memcpy(to + i, &word, 8);
  }
}

template <typename T>
DPROBE_HIT_PATH void copy_words(T& dst, const T& src) noexcept {
  static_assert(sizeof(T) % 8 == 0 && std::is_trivially_copyable_v<T>);
  copy_bytes(&dst, &src, sizeof(T));
}

template <typename T>
DPROBE_HIT_PATH void clear_words(T& dst) noexcept {
  static_assert(sizeof(T) % 8 == 0 && std::is_trivially_copyable_v<T>);
  auto* to = reinterpret_cast<unsigned char*>(&dst);
  for (size_t i = 0; i < sizeof(T); i += 8) {
    uint64_t word = 0;
    __asm__("" : "+r"(word));
    __builtin_memcpy(to + i, &word, 8);
  }
}

}  // namespace dprobe::core::unwinding

#endif  // DPROBE_CORE_WORD_COPY_H_
