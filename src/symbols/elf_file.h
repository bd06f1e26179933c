// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One ELF file on disk, read with elfutils' libelf: its dynamic section,
// loadable segments and function symbols. Addresses are link-time virtual
// addresses; the agent adds the load bias at run time.
//
//   auto elf = ElfFile::open("/lib/x86_64-linux-gnu/libc.so.6");
//   if (!elf) return elf.error();
//   for (const FunctionSymbol& f : elf->functions()) ...
//   std::optional<uint64_t> off = elf->file_offset_of(vaddr);
#ifndef DPROBE_SYMBOLS_ELF_FILE_H_
#define DPROBE_SYMBOLS_ELF_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "symbols/lookup_error.h"

struct Elf;  // libelf's handle; callers need not include <libelf.h>

namespace dprobe::symbols {

struct FunctionSymbol {
  std::string name;  // without a symbol version ("opendir", not "opendir@@GLIBC_2.2.5")
  uint64_t address;  // link-time virtual address
  uint64_t size;     // 0 when the symbol table does not know it
  bool is_ifunc;     // STT_GNU_IFUNC: address is the resolver, not the implementation
  bool is_global;    // global or weak binding; false for file-local symbols
  // A compatibility version ("cfree@GLIBC_2.2.5", single @): kept for old
  // binaries, never what a new link binds the name to.
  bool is_compat_version = false;
  // The C++ source name ("ns::f(int)") of a mangled name, filled in by
  // SymbolTable; empty for C names and names the demangler refuses.
  std::string demangled = {};

  // What a person reads: the source name when there is one.
  std::string_view display_name() const { return demangled.empty() ? name : demangled; }
};

// A PT_LOAD program header, the part address translation needs.
struct LoadSegment {
  uint64_t vaddr;
  uint64_t offset;
  uint64_t file_size;
  uint64_t mem_size;
  bool executable;
  bool writable = false;
};

// A statically defined probe point (SystemTap's SDT, DTrace's USDT): a nop
// the program was compiled with, described by a note in .note.stapsdt.
struct SdtNote {
  std::string provider;
  std::string name;
  uint64_t address = 0;    // the nop, link-time (moved as .stapsdt.base moved)
  uint64_t semaphore = 0;  // the counter that enables it, link-time; 0 for none
  std::string arguments;   // the operands, "-4@%eax 8@-16(%rbp)"
};

class ElfFile {
 public:
  static Result<ElfFile, LookupError> open(std::string path);

  ElfFile(ElfFile&& other) noexcept;
  ElfFile& operator=(ElfFile&& other) noexcept;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile();

  const std::string& path() const { return path_; }
  uint16_t machine() const { return machine_; }    // e_machine: EM_X86_64, EM_AARCH64, ...
  bool is_dynamic() const { return is_dynamic_; }  // ET_DYN: a library or a PIE
  bool is_64bit() const { return is_64bit_; }
  const std::string& soname() const { return soname_; }
  const std::vector<std::string>& needed() const { return needed_; }  // in DT_NEEDED order
  // Search directories with $ORIGIN expanded; empty when the tag is absent.
  const std::vector<std::string>& rpath() const { return rpath_; }
  const std::vector<std::string>& runpath() const { return runpath_; }
  bool has_runpath() const { return has_runpath_; }
  const std::string& interpreter() const { return interpreter_; }  // PT_INTERP, or empty
  const std::vector<LoadSegment>& segments() const { return segments_; }

  // Every defined function of .symtab and .dynsym, each (name, address)
  // once, sorted by address then name. Reads the symbol tables on each call.
  std::vector<FunctionSymbol> functions() const;
  // Every variable with a link-time address (STT_OBJECT), for @SYM fetches;
  // the same shape as functions(), is_ifunc always false.
  std::vector<FunctionSymbol> variables() const;

  // Translation through PT_LOAD segments; only bytes present in the file
  // (inside p_filesz) have a file offset.
  // Its SDT probe points, in note order (sdt_notes.cc).
  std::vector<SdtNote> sdt_notes() const;
  bool is_writable_vaddr(uint64_t vaddr, uint64_t size) const;

  std::optional<uint64_t> file_offset_of(uint64_t vaddr) const;
  std::optional<uint64_t> vaddr_of_file_offset(uint64_t offset) const;
  bool is_executable_vaddr(uint64_t vaddr) const;

 private:
  ElfFile(std::string path, int fd, Elf* elf);
  Result<void, LookupError> read_headers();
  void read_dynamic();
  void release();

  std::string path_;
  int fd_ = -1;
  Elf* elf_ = nullptr;
  uint16_t machine_ = 0;
  bool is_dynamic_ = false;
  bool is_64bit_ = false;
  bool has_runpath_ = false;
  std::string soname_;
  std::vector<std::string> needed_;
  std::vector<std::string> rpath_;
  std::vector<std::string> runpath_;
  std::string interpreter_;
  std::vector<LoadSegment> segments_;
};

// Splits a DT_RPATH/DT_RUNPATH value on ':' and replaces $ORIGIN and
// ${ORIGIN} with `origin`, the directory of the object that carries it.
std::vector<std::string> expand_search_path(std::string_view value, std::string_view origin);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_ELF_FILE_H_
