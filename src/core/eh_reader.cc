// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/eh_reader.h"

namespace dprobe::core {

namespace {

std::string hex(unsigned value) {
  constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[(value >> 4) & 0xf] + kDigits[value & 0xf];
}

// A 64-bit LEB128 number needs at most ten bytes; more is a broken table.
constexpr int kMaxLebBytes = 10;

EhResult<uint64_t> base_for(uint8_t application, uint64_t field, const EhBases& bases) {
  switch (application) {
    case dw_eh_pe::kAbsptr:
      return uint64_t{0};
    case dw_eh_pe::kPcrel:
      return field;
    case dw_eh_pe::kDatarel:
      if (bases.data) return *bases.data;
      return unexpected(std::string("datarel pointer outside .eh_frame_hdr"));
    case dw_eh_pe::kFuncrel:
      if (bases.func) return *bases.func;
      return unexpected(std::string("funcrel pointer outside a function"));
    default:
      return unexpected("unsupported pointer encoding " + hex(application));
  }
}

}  // namespace

bool known_format(uint8_t encoding) {
  switch (encoding & dw_eh_pe::kFormatMask) {
    case dw_eh_pe::kAbsptr:
    case dw_eh_pe::kUleb128:
    case dw_eh_pe::kUdata2:
    case dw_eh_pe::kUdata4:
    case dw_eh_pe::kUdata8:
    case dw_eh_pe::kSleb128:
    case dw_eh_pe::kSdata2:
    case dw_eh_pe::kSdata4:
    case dw_eh_pe::kSdata8:
      return encoding != dw_eh_pe::kOmit;
    default:
      return false;
  }
}

uint64_t fixed_size(uint8_t encoding) {
  switch (encoding & dw_eh_pe::kFormatMask) {
    case dw_eh_pe::kUdata2:
    case dw_eh_pe::kSdata2:
      return 2;
    case dw_eh_pe::kUdata4:
    case dw_eh_pe::kSdata4:
      return 4;
    case dw_eh_pe::kAbsptr:
    case dw_eh_pe::kUdata8:
    case dw_eh_pe::kSdata8:
      return 8;
    default:
      return 0;
  }
}

EhResult<uint64_t> EhReader::uleb128() {
  uint64_t result = 0;
  for (int i = 0; i < kMaxLebBytes; ++i) {
    const uint8_t byte = u8();
    result |= uint64_t{byte & 0x7fu} << (7 * i);
    if ((byte & 0x80) == 0) return result;
  }
  return unexpected(std::string("uleb128 longer than 10 bytes"));
}

EhResult<int64_t> EhReader::sleb128() {
  uint64_t result = 0;
  for (int i = 0; i < kMaxLebBytes; ++i) {
    const uint8_t byte = u8();
    const int shift = 7 * (i + 1);
    result |= uint64_t{byte & 0x7fu} << (7 * i);
    if ((byte & 0x80) == 0) {
      // Sign-extend from the last byte's sign bit, when bits are left.
      if (shift < 64 && (byte & 0x40) != 0) result |= ~uint64_t{0} << shift;
      return static_cast<int64_t>(result);
    }
  }
  return unexpected(std::string("sleb128 longer than 10 bytes"));
}

EhResult<uint64_t> EhReader::value(uint8_t encoding) {
  switch (encoding & dw_eh_pe::kFormatMask) {
    case dw_eh_pe::kAbsptr:
    case dw_eh_pe::kUdata8:
    case dw_eh_pe::kSdata8:
      return fixed<uint64_t>();
    case dw_eh_pe::kUdata2:
      return uint64_t{fixed<uint16_t>()};
    case dw_eh_pe::kUdata4:
      return uint64_t{fixed<uint32_t>()};
    case dw_eh_pe::kSdata2:
      return static_cast<uint64_t>(int64_t{fixed<int16_t>()});
    case dw_eh_pe::kSdata4:
      return static_cast<uint64_t>(int64_t{fixed<int32_t>()});
    case dw_eh_pe::kUleb128:
      return uleb128();
    case dw_eh_pe::kSleb128: {
      auto number = sleb128();
      if (!number) return unexpected(number.error());
      return static_cast<uint64_t>(*number);
    }
    default:
      return unexpected("unsupported pointer format " + hex(encoding & 0x0fu));
  }
}

EhResult<uint64_t> EhReader::raw(uint8_t encoding) {
  if (encoding == dw_eh_pe::kOmit) return unexpected(std::string("omitted pointer read"));
  if ((encoding & dw_eh_pe::kApplicationMask) == dw_eh_pe::kAligned) {
    // An aligned absolute pointer, whatever the format bits say (libgcc).
    constexpr uint64_t kAlign = sizeof(uint64_t);
    at_ = (at_ + kAlign - 1) & ~(kAlign - 1);
    return fixed<uint64_t>();
  }
  return value(encoding);
}

EhResult<uint64_t> EhReader::pointer(uint8_t encoding, const EhBases& bases) {
  const uint64_t field = at_;
  auto stored = raw(encoding);
  if (!stored || *stored == 0) return stored;
  const auto application = static_cast<uint8_t>(encoding & dw_eh_pe::kApplicationMask);
  if (application == dw_eh_pe::kAligned) return stored;
  auto base = base_for(application, field, bases);
  if (!base) return unexpected(base.error());
  const uint64_t address = *base + *stored;
  if ((encoding & dw_eh_pe::kIndirect) == 0) return address;
  return EhReader(address).fixed<uint64_t>();
}

EhResult<void> EhReader::skip_pointer(uint8_t encoding) {
  auto stored = raw(encoding);
  if (!stored) return unexpected(stored.error());
  return {};
}

}  // namespace dprobe::core
