// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The return stubs' table and unwind information, for every ISA; each
// ISA writes its own stub (arch/<isa>/runtime/return_stubs_<isa>.cc) and
// says how an unwinder reads it (kStubUnwindRules).
#include "arch/runtime/return_stubs.h"

#include <sys/mman.h>

#include <cstring>

extern "C" void dprobe_return_common();

namespace dprobe::arch {
namespace {

constexpr uint8_t kDwCfaDefCfa = 0x0c;
constexpr uint8_t kDwCfaExpression = 0x10;
constexpr uint8_t kDwCfaValOffset = 0x14;
constexpr uint8_t kDwOpAddr = 0x03;
constexpr uint8_t kDwEhPePcrelSdata4 = 0x1b;

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>& out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void raw(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out_.insert(out_.end(), p, p + size);
  }
  size_t size() const { return out_.size(); }
  void patch_u32(size_t at, uint32_t v) { std::memcpy(out_.data() + at, &v, 4); }
  void pad_to(size_t multiple) {
    while (out_.size() % multiple != 0) out_.push_back(0);  // DW_CFA_nop
  }

 private:
  std::vector<uint8_t>& out_;
};

// Lengths are patched in once known; entries stay 8-byte aligned.
size_t begin_entry(Writer& w) {
  const size_t at = w.size();
  w.u32(0);
  return at;
}
void end_entry(Writer& w, size_t at) {
  w.pad_to(8);
  w.patch_u32(at, static_cast<uint32_t>(w.size() - at - 4));
}

void write_cie(Writer& w, const StubUnwindRules& rules) {
  const size_t at = begin_entry(w);
  w.u32(0);  // CIE id
  w.u8(1);   // version
  w.raw("zR", 3);
  w.u8(1);     // code alignment
  w.u8(0x78);  // data alignment -8 (sleb128)
  w.u8(rules.return_column);
  w.u8(1);  // augmentation data: the FDE pointer encoding
  w.u8(kDwEhPePcrelSdata4);
  w.u8(kDwCfaDefCfa);  // CFA = sp + cfa_offset
  w.u8(rules.sp_column);
  w.u8(rules.cfa_offset);
  w.u8(kDwCfaValOffset);  // sp = CFA - cfa_offset: the caller's sp is the stub's
  w.u8(rules.sp_column);
  w.u8(rules.cfa_offset / 8);
  end_entry(w, at);
}

// `image` is where the eh_frame will sit in memory: pc-relative fields are
// computed against it.
void write_fde(Writer& w, const StubUnwindRules& rules, uint64_t image, uint64_t stub_begin,
               uint64_t data_slot) {
  const size_t at = begin_entry(w);
  w.u32(static_cast<uint32_t>(at + 4));  // back to the CIE at offset 0
  const uint64_t field = image + w.size();
  w.u32(static_cast<uint32_t>(static_cast<int64_t>(stub_begin - field)));
  w.u32(16);  // pc range
  w.u8(0);    // augmentation data length
  w.u8(kDwCfaExpression);
  w.u8(rules.return_column);
  w.u8(9);  // expression length
  w.u8(kDwOpAddr);
  w.u64(data_slot);
  end_entry(w, at);
}

}  // namespace

ReturnStubs::ReturnStubs(uint64_t code, uint32_t count)
    : code_(code), code_end_(code + kHeaderBytes + count * kStubBytes), count_(count) {}

Result<ReturnStubs> ReturnStubs::create(uint32_t count, uint64_t data, uint64_t stride) {
  const size_t bytes = kHeaderBytes + count * kStubBytes;
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return fail("cannot map return stubs");
  auto* code = static_cast<uint8_t*>(map);
  const auto base = reinterpret_cast<uint64_t>(map);
  const auto common = reinterpret_cast<uint64_t>(&dprobe_return_common);
  std::memcpy(code, &common, 8);
  ReturnStubs stubs(base, count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t begin = stubs.address(i) - kEntryOffset;
    write_stub(code + (begin - base), i, begin, base);
  }
  __builtin___clear_cache(reinterpret_cast<char*>(code), reinterpret_cast<char*>(code) + bytes);
  if (::mprotect(map, bytes, PROT_READ | PROT_EXEC) != 0) return fail("cannot seal return stubs");
  // The eh_frame lives in the vector's buffer: reserve it first so that
  // pc-relative fields computed against its address stay true.
  stubs.eh_frame_.reserve(32 + count * 32 + 4);
  Writer w(stubs.eh_frame_);
  const auto image = reinterpret_cast<uint64_t>(stubs.eh_frame_.data());
  write_cie(w, kStubUnwindRules);
  for (uint32_t i = 0; i < count; ++i) {
    write_fde(w, kStubUnwindRules, image, stubs.address(i) - kEntryOffset, data + i * stride);
  }
  w.u32(0);  // the terminator
  return stubs;
}

}  // namespace dprobe::arch
