// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// ElfFile::sdt_notes(): the probe points <sys/sdt.h> compiles into a
// program. Each is a note in .note.stapsdt, owner "stapsdt", type 3, whose
// description holds three addresses (the site, the link-time address of
// .stapsdt.base, the semaphore: words of the file's class) and then three
// strings: provider, name, operands. A tool that moved the file's sections
// after the link (prelink) moved .stapsdt.base with them, so the site and
// the semaphore move by as much as it did.
#include <gelf.h>
#include <libelf.h>

#include <cstring>
#include <string_view>

#include "symbols/elf_file.h"

namespace dprobe::symbols {
namespace {

constexpr uint32_t kNoteStapsdt = 3;  // NT_STAPSDT

std::string_view section_name(Elf* elf, size_t names, const GElf_Shdr& shdr) {
  const char* name = elf_strptr(elf, names, shdr.sh_name);
  return name == nullptr ? std::string_view() : std::string_view(name);
}

// The three strings after the addresses; false where one is not ended.
bool read_strings(std::string_view rest, SdtNote& note) {
  std::string* fields[] = {&note.provider, &note.name, &note.arguments};
  for (std::string* field : fields) {
    const size_t end = rest.find('\0');
    if (end == std::string_view::npos) return false;
    *field = std::string(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  return !note.provider.empty() && !note.name.empty();
}

uint64_t read_word(const char* at, size_t word) {
  if (word == 4) {
    uint32_t value;
    std::memcpy(&value, at, sizeof(value));
    return value;
  }
  uint64_t value;
  std::memcpy(&value, at, sizeof(value));
  return value;
}

struct NoteSection {
  Elf_Data* data = nullptr;
  std::optional<uint64_t> base_address;  // where .stapsdt.base is now
};

NoteSection find_sections(Elf* elf) {
  NoteSection found;
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return found;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const std::string_view name = section_name(elf, names, shdr);
    if (shdr.sh_type == SHT_NOTE && name == ".note.stapsdt") {
      found.data = elf_getdata(scn, nullptr);
    } else if (name == ".stapsdt.base") {
      found.base_address = shdr.sh_addr;
    }
  }
  return found;
}

}  // namespace

std::vector<SdtNote> ElfFile::sdt_notes() const {
  std::vector<SdtNote> notes;
  const NoteSection section = find_sections(elf_);
  if (section.data == nullptr || section.data->d_buf == nullptr) return notes;
  const char* bytes = static_cast<const char*>(section.data->d_buf);
  const size_t word = is_64bit_ ? 8 : 4;
  GElf_Nhdr header;
  size_t name_at = 0;
  size_t desc_at = 0;
  for (size_t at = 0; (at = gelf_getnote(section.data, at, &header, &name_at, &desc_at)) != 0;) {
    const std::string_view owner(bytes + name_at, header.n_namesz);
    if (header.n_type != kNoteStapsdt || owner != std::string_view("stapsdt", 8) ||
        header.n_descsz < 3 * word) {
      continue;
    }
    const char* desc = bytes + desc_at;
    SdtNote note;
    note.address = read_word(desc, word);
    const uint64_t linked_base = read_word(desc + word, word);
    note.semaphore = read_word(desc + 2 * word, word);
    if (!read_strings(std::string_view(desc + 3 * word, header.n_descsz - 3 * word), note)) {
      continue;
    }
    if (section.base_address && linked_base != 0) {
      const uint64_t moved = *section.base_address - linked_base;
      note.address += moved;
      if (note.semaphore != 0) note.semaphore += moved;
    }
    notes.push_back(std::move(note));
  }
  return notes;
}

bool ElfFile::is_writable_vaddr(uint64_t vaddr, uint64_t size) const {
  for (const LoadSegment& s : segments_) {
    if (s.writable && vaddr >= s.vaddr && vaddr - s.vaddr < s.mem_size &&
        size <= s.mem_size - (vaddr - s.vaddr)) {
      return true;
    }
  }
  return false;
}

}  // namespace dprobe::symbols
