// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// x86_64 return stubs. Stub i, 16 bytes:
//
//   +0   cc                  padding: an unwinder looks up "return address
//                            - 1", which must fall in stub i's FDE
//   +1   68 ii ii ii ii      push imm32 i   (into the popped return slot)
//   +6   ff 25 dd dd dd dd   jmp [rip+d]    -> dprobe_return_common
//   +12  cc cc cc cc
//
// Its FDE: the return address is saved at data slot i, and the caller's
// stack pointer is the stub's own. The CFA is put 8 bytes above it, with
// rsp given explicitly as CFA - 8: a zero-size frame would share its CFA
// with the hijacked function's frame, and libgcc, which tells frames apart
// by CFA, would take the stub for the frame of the exception's handler.
#include <sys/mman.h>

#include <cstring>

#include "arch/runtime/return_stubs.h"
#include "arch/runtime/safe_memory.h"

extern "C" void dprobe_return_common();

namespace dprobe::arch {
namespace {

constexpr uint8_t kDwCfaDefCfa = 0x0c;
constexpr uint8_t kDwCfaExpression = 0x10;
constexpr uint8_t kDwCfaValOffset = 0x14;
constexpr uint8_t kDwOpAddr = 0x03;
constexpr uint8_t kDwEhPePcrelSdata4 = 0x1b;
constexpr uint8_t kRsp = 7;
constexpr uint8_t kReturnAddressColumn = 16;  // rip

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

void write_cie(Writer& w) {
  const size_t at = begin_entry(w);
  w.u32(0);  // CIE id
  w.u8(1);   // version
  w.raw("zR", 3);
  w.u8(1);     // code alignment
  w.u8(0x78);  // data alignment -8 (sleb128)
  w.u8(kReturnAddressColumn);
  w.u8(1);  // augmentation data: the FDE pointer encoding
  w.u8(kDwEhPePcrelSdata4);
  w.u8(kDwCfaDefCfa);  // CFA = rsp + 8
  w.u8(kRsp);
  w.u8(8);
  w.u8(kDwCfaValOffset);  // rsp = CFA + 1 * (-8): the caller's rsp is the stub's
  w.u8(kRsp);
  w.u8(1);
  end_entry(w, at);
}

// `image` is where the eh_frame will sit in memory: pc-relative fields are
// computed against it.
void write_fde(Writer& w, uint64_t image, uint64_t stub_begin, uint64_t data_slot) {
  const size_t at = begin_entry(w);
  w.u32(static_cast<uint32_t>(at + 4));  // back to the CIE at offset 0
  const uint64_t field = image + w.size();
  w.u32(static_cast<uint32_t>(static_cast<int64_t>(stub_begin - field)));
  w.u32(16);  // pc range
  w.u8(0);    // augmentation data length
  w.u8(kDwCfaExpression);
  w.u8(kReturnAddressColumn);
  w.u8(9);  // expression length
  w.u8(kDwOpAddr);
  w.u64(data_slot);
  end_entry(w, at);
}

// `stub_begin` is where the stub's padding byte sits in memory.
void write_stub(uint8_t* stub, uint32_t index, uint64_t stub_begin, uint64_t literal) {
  stub[0] = 0xcc;
  stub[1] = 0x68;
  std::memcpy(stub + 2, &index, 4);
  stub[6] = 0xff;
  stub[7] = 0x25;
  const auto displacement = static_cast<int32_t>(literal - (stub_begin + 12));
  std::memcpy(stub + 8, &displacement, 4);
  std::memset(stub + 12, 0xcc, 4);
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
    write_stub(code + kHeaderBytes + i * kStubBytes, i, stubs.address(i) - 1, base);
  }
  if (::mprotect(map, bytes, PROT_READ | PROT_EXEC) != 0) return fail("cannot seal return stubs");
  // The eh_frame lives in the vector's buffer: reserve it first so that
  // pc-relative fields computed against its address stay true.
  stubs.eh_frame_.reserve(32 + count * 32 + 4);
  Writer w(stubs.eh_frame_);
  const auto image = reinterpret_cast<uint64_t>(stubs.eh_frame_.data());
  write_cie(w);
  for (uint32_t i = 0; i < count; ++i) {
    write_fde(w, image, stubs.address(i) - 1, data + i * stride);
  }
  w.u32(0);  // the terminator
  return stubs;
}

std::optional<uint32_t> ReturnStubs::index_of(uint64_t address) const {
  if (address < code_ + kHeaderBytes + 1 || address >= code_end_) return std::nullopt;
  const uint64_t offset = address - code_ - kHeaderBytes;
  if (offset % kStubBytes != 1) return std::nullopt;
  return static_cast<uint32_t>(offset / kStubBytes);
}

// At entry the return address is the word at the stack pointer, where
// `call` pushed it.
uint64_t entry_frame(const SavedRegs& regs) noexcept { return regs.slot[x86_64::kSp]; }

bool read_return_address(const SavedRegs& regs, uint64_t& address) noexcept {
  return safe_read(&address, entry_frame(regs), 8);
}

bool replace_return_address(SavedRegs& regs, uint64_t stub) noexcept {
  return safe_write(entry_frame(regs), &stub, 8);
}

bool frame_returns_to(uint64_t frame, uint64_t stub) noexcept {
  uint64_t in_slot = 0;
  return safe_read(&in_slot, frame, 8) && in_slot == stub;
}

// dprobe_return_common pushes r15 first in memory, rax last.
void load_return_regs(const uint64_t* saved, uint64_t frame, uint64_t caller,
                      SavedRegs& regs) noexcept {
  using namespace x86_64;
  constexpr Reg kPushOrder[] = {kR15, kR14, kR13, kR12, kR11, kR10, kR9, kR8,
                                kDi,  kSi,  kBp,  kBx,  kDx,  kCx,  kAx};
  for (size_t i = 0; i < std::size(kPushOrder); ++i) regs.slot[kPushOrder[i]] = saved[i];
  regs.slot[kSp] = frame + 8;  // as after the function's own ret
  regs.slot[kIp] = caller;
}

}  // namespace dprobe::arch
