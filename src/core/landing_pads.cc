// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/landing_pads.h"

#include <link.h>

#include <algorithm>

#include "core/eh_reader.h"

namespace dprobe::core {

namespace {

// Bounds past which a table is taken as garbage rather than walked.
constexpr uint64_t kMaxFdeCount = uint64_t{1} << 24;
constexpr uint64_t kMaxCallSiteTableBytes = uint64_t{1} << 24;
constexpr size_t kMaxAugmentationLetters = 16;
constexpr uint32_t kExtendedLength = 0xffffffff;

Unexpected<std::string> broken(std::string why) { return unexpected(std::move(why)); }

// .eh_frame_hdr's binary search table: (initial_location, FDE address)
// pairs, sorted by initial location, each field in `encoding`.
struct SearchTable {
  uint64_t hdr = 0;
  uint64_t eh_frame = 0;
  uint64_t entries = 0;
  uint64_t count = 0;
  uint8_t encoding = dw_eh_pe::kOmit;

  // read_search_table accepted only fixed-size, direct encodings whose base
  // is known, so a field always reads.
  uint64_t field(uint64_t index, uint64_t which) const {
    const uint64_t size = fixed_size(encoding);
    EhReader reader(entries + (2 * index + which) * size);
    auto value = reader.pointer(encoding, {.data = hdr, .func = std::nullopt});
    return value ? *value : 0;
  }
  uint64_t initial_location(uint64_t index) const { return field(index, 0); }
  uint64_t fde(uint64_t index) const { return field(index, 1); }
};

bool searchable(uint8_t encoding) {
  const auto application = encoding & dw_eh_pe::kApplicationMask;
  const bool known_base = application == dw_eh_pe::kAbsptr || application == dw_eh_pe::kPcrel ||
                          application == dw_eh_pe::kDatarel;
  return known_format(encoding) && fixed_size(encoding) != 0 && known_base &&
         (encoding & dw_eh_pe::kIndirect) == 0;
}

EhResult<SearchTable> read_search_table(uint64_t hdr) {
  EhReader reader(hdr);
  const uint8_t version = reader.u8();
  if (version != 1) return broken("eh_frame_hdr version " + std::to_string(version) + ", not 1");
  const uint8_t eh_frame_encoding = reader.u8();
  const uint8_t count_encoding = reader.u8();
  const uint8_t table_encoding = reader.u8();
  const EhBases bases{.data = hdr, .func = std::nullopt};
  auto eh_frame = reader.pointer(eh_frame_encoding, bases);
  if (!eh_frame) return broken("eh_frame_ptr: " + eh_frame.error());
  if (count_encoding == dw_eh_pe::kOmit || table_encoding == dw_eh_pe::kOmit) {
    return broken("eh_frame_hdr without a search table");
  }
  auto count = reader.pointer(count_encoding, bases);
  if (!count) return broken("fde_count: " + count.error());
  if (*count > kMaxFdeCount) return broken("eh_frame_hdr fde_count " + std::to_string(*count));
  if (!searchable(table_encoding)) return broken("unsupported search table encoding");
  return SearchTable{.hdr = hdr,
                     .eh_frame = *eh_frame,
                     .entries = reader.at(),
                     .count = *count,
                     .encoding = table_encoding};
}

// The index of the last entry starting at or before `address` (0 when all
// start after it): the first FDE that may cover it.
uint64_t first_candidate(const SearchTable& table, uint64_t address) {
  uint64_t low = 0;
  uint64_t high = table.count;  // entries [low, high) are still in question
  while (high - low > 1) {
    const uint64_t middle = low + (high - low) / 2;
    if (table.initial_location(middle) <= address) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return low;
}

// A CIE or FDE length: 0xffffffff means a 64-bit length follows.
uint64_t read_length(EhReader& reader) {
  const uint32_t length = reader.fixed<uint32_t>();
  if (length != kExtendedLength) return length;
  return reader.fixed<uint64_t>();
}

// What an FDE needs from its CIE.
struct Cie {
  bool augmented = false;  // 'z': FDEs carry an augmentation data length
  uint8_t fde_encoding = dw_eh_pe::kAbsptr;
  uint8_t lsda_encoding = dw_eh_pe::kOmit;
};

EhResult<std::string> read_augmentation_string(EhReader& reader) {
  std::string letters;
  for (char letter = static_cast<char>(reader.u8()); letter != '\0';
       letter = static_cast<char>(reader.u8())) {
    if (letters.size() == kMaxAugmentationLetters) return broken("CIE augmentation too long");
    letters += letter;
  }
  return letters;
}

// The augmentation data, one field per letter after 'z', in their order.
EhResult<void> read_augmentation_data(EhReader& reader, const std::string& letters, Cie& cie) {
  for (const char letter : letters.substr(1)) {
    switch (letter) {
      case 'P': {
        // The personality routine: stepped over, never read through.
        auto skipped = reader.skip_pointer(reader.u8());
        if (!skipped) return broken("CIE personality: " + skipped.error());
        break;
      }
      case 'L':
        cie.lsda_encoding = reader.u8();
        break;
      case 'R':
        cie.fde_encoding = reader.u8();
        break;
      case 'S':  // a signal frame
      case 'B':  // arm64 B-key return address signing
      case 'G':  // arm64 MTE-tagged frame
        break;
      default:
        return broken("unsupported CIE augmentation \"" + letters + "\"");
    }
  }
  return {};
}

EhResult<Cie> read_cie(uint64_t address) {
  EhReader reader(address);
  if (read_length(reader) == 0) return broken("CIE pointer at the .eh_frame terminator");
  if (reader.fixed<uint32_t>() != 0) return broken("CIE pointer to an FDE");
  const uint8_t version = reader.u8();
  if (version != 1 && version != 3) return broken("CIE version " + std::to_string(version));
  auto letters = read_augmentation_string(reader);
  if (!letters) return broken(letters.error());
  Cie cie;
  if (letters->empty()) return cie;
  if ((*letters)[0] != 'z') return broken("unsupported CIE augmentation \"" + *letters + "\"");
  cie.augmented = true;
  auto code_alignment = reader.uleb128();
  auto data_alignment = reader.sleb128();
  if (!code_alignment || !data_alignment) return broken("CIE alignment factors");
  if (version == 1) {
    reader.skip(1);  // the return address register, a byte
  } else if (!reader.uleb128()) {
    return broken("CIE return address register");
  }
  if (!reader.uleb128()) return broken("CIE augmentation length");
  auto data = read_augmentation_data(reader, *letters, cie);
  if (!data) return broken(data.error());
  return cie;
}

struct Fde {
  uint64_t pc_begin = 0;
  uint64_t pc_range = 0;
  uint64_t lsda = 0;  // 0: none
};

EhResult<Fde> read_fde(uint64_t address) {
  EhReader reader(address);
  if (read_length(reader) == 0) return broken("FDE pointer at the .eh_frame terminator");
  const uint64_t cie_field = reader.at();
  const uint32_t cie_offset = reader.fixed<uint32_t>();
  if (cie_offset == 0) return broken("FDE pointer to a CIE");
  auto cie = read_cie(cie_field - cie_offset);
  if (!cie) return broken(cie.error());
  Fde fde;
  auto pc_begin = reader.pointer(cie->fde_encoding, {});
  if (!pc_begin) return broken("FDE pc_begin: " + pc_begin.error());
  auto pc_range = reader.value(cie->fde_encoding);
  if (!pc_range) return broken("FDE pc_range: " + pc_range.error());
  fde.pc_begin = *pc_begin;
  fde.pc_range = *pc_range;
  if (!cie->augmented || cie->lsda_encoding == dw_eh_pe::kOmit) return fde;
  if (!reader.uleb128()) return broken("FDE augmentation length");
  auto lsda = reader.pointer(cie->lsda_encoding, {.data = std::nullopt, .func = fde.pc_begin});
  if (!lsda) return broken("FDE LSDA: " + lsda.error());
  fde.lsda = *lsda;
  return fde;
}

// The LSDA's header up to its call-site table; returns the landing pads'
// base (LPStart) and leaves `reader` at the call-site encoding.
EhResult<uint64_t> read_lsda_header(EhReader& reader, uint64_t pc_begin) {
  const uint8_t lpstart_encoding = reader.u8();
  uint64_t lpstart = pc_begin;
  if (lpstart_encoding != dw_eh_pe::kOmit) {
    auto stored = reader.pointer(lpstart_encoding, {.data = std::nullopt, .func = pc_begin});
    if (!stored) return broken("LSDA LPStart: " + stored.error());
    lpstart = *stored;
  }
  const uint8_t ttype_encoding = reader.u8();
  if (ttype_encoding != dw_eh_pe::kOmit && !reader.uleb128()) return broken("LSDA TType offset");
  return lpstart;
}

// Appends the landing pads of the LSDA's call-site table.
EhResult<void> append_landing_pads(uint64_t lsda, uint64_t pc_begin, std::vector<uint64_t>& pads) {
  EhReader reader(lsda);
  auto lpstart = read_lsda_header(reader, pc_begin);
  if (!lpstart) return broken(lpstart.error());
  const uint8_t call_site_encoding = reader.u8();
  // Call-site fields are offsets: a base or an indirection makes no sense.
  if (!known_format(call_site_encoding) ||
      (call_site_encoding & (dw_eh_pe::kApplicationMask | dw_eh_pe::kIndirect)) != 0) {
    return broken("unsupported LSDA call-site encoding");
  }
  auto table_bytes = reader.uleb128();
  if (!table_bytes || *table_bytes > kMaxCallSiteTableBytes) return broken("LSDA call-site length");
  const uint64_t table_end = reader.at() + *table_bytes;
  while (reader.at() < table_end) {
    auto start = reader.value(call_site_encoding);
    auto length = reader.value(call_site_encoding);
    auto landing_pad = reader.value(call_site_encoding);
    auto action = reader.uleb128();
    if (!start || !length || !landing_pad || !action) return broken("LSDA call-site entry");
    if (*landing_pad != 0) pads.push_back(*lpstart + *landing_pad);
  }
  return {};
}

// Whether [pc_begin, pc_begin + pc_range) and [begin, end) share a byte,
// without computing an end that could wrap.
bool overlaps(const Fde& fde, uint64_t begin, uint64_t end) {
  if (fde.pc_range == 0 || fde.pc_begin >= end) return false;
  return begin <= fde.pc_begin || begin - fde.pc_begin < fde.pc_range;
}

}  // namespace

Result<std::vector<uint64_t>, std::string> landing_pads(const UnwindTables& tables, uint64_t begin,
                                                        uint64_t end) {
  if (tables.eh_frame_hdr == 0) return broken("no eh_frame_hdr");
  if (begin >= end) return std::vector<uint64_t>{};  // covers no byte
  auto table = read_search_table(tables.eh_frame_hdr);
  if (!table) return unexpected(table.error());
  std::vector<uint64_t> pads;
  for (uint64_t index = first_candidate(*table, begin);
       index < table->count && table->initial_location(index) < end; ++index) {
    const uint64_t address = table->fde(index);
    if (address < table->eh_frame) return broken("search table entry before .eh_frame");
    auto fde = read_fde(address);
    if (!fde) return unexpected(fde.error());
    if (!overlaps(*fde, begin, end) || fde->lsda == 0) continue;
    auto appended = append_landing_pads(fde->lsda, fde->pc_begin, pads);
    if (!appended) return unexpected(appended.error());
  }
  std::sort(pads.begin(), pads.end());
  pads.erase(std::unique(pads.begin(), pads.end()), pads.end());
  return pads;
}

Result<FunctionExtent, std::string> function_extent(const UnwindTables& tables, uint64_t address) {
  if (tables.eh_frame_hdr == 0) return broken("no eh_frame_hdr");
  auto table = read_search_table(tables.eh_frame_hdr);
  if (!table) return unexpected(table.error());
  if (table->count == 0) return broken("no FDE");
  const uint64_t index = first_candidate(*table, address);
  const uint64_t at = table->fde(index);
  if (at < table->eh_frame) return broken("search table entry before .eh_frame");
  auto fde = read_fde(at);
  if (!fde) return unexpected(fde.error());
  if (!overlaps(*fde, address, address + 1)) return broken("no FDE covers the address");
  return FunctionExtent{fde->pc_begin, fde->pc_range};
}

namespace {

struct Lookup {
  uint64_t address = 0;
  std::optional<UnwindTables> found;
};

bool holds(const dl_phdr_info& object, uint64_t address) {
  for (ElfW(Half) i = 0; i < object.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = object.dlpi_phdr[i];
    const uint64_t start = object.dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD && address - start < segment.p_memsz) return true;
  }
  return false;
}

int find_eh_frame_hdr(dl_phdr_info* object, size_t /*size*/, void* data) {
  auto* lookup = static_cast<Lookup*>(data);
  if (!holds(*object, lookup->address)) return 0;
  for (ElfW(Half) i = 0; i < object->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = object->dlpi_phdr[i];
    if (segment.p_type == PT_GNU_EH_FRAME) {
      lookup->found = UnwindTables{.eh_frame_hdr = object->dlpi_addr + segment.p_vaddr};
    }
  }
  return 1;  // the object holding the address: stop here, tables or not
}

}  // namespace

std::optional<UnwindTables> unwind_tables_for(uint64_t address) {
  Lookup lookup{.address = address, .found = std::nullopt};
  dl_iterate_phdr(find_eh_frame_hdr, &lookup);
  return lookup.found;
}

}  // namespace dprobe::core
