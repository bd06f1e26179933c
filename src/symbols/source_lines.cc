// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/source_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <utility>

namespace dprobe::symbols {
namespace {

std::string normal(std::string_view path) {
  return std::filesystem::path(path).lexically_normal().string();
}

// Every compile unit's DIE (type units and skeletons' split parts aside).
void for_each_cu(Dwarf* dwarf, const std::function<void(Dwarf_Die&)>& visit) {
  Dwarf_CU* cu = nullptr;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Die cu_die;
  while (dwarf_get_units(dwarf, cu, &cu, &version, &unit_type, &cu_die, nullptr) == 0) {
    if (unit_type == DW_UT_type || unit_type == DW_UT_split_type) continue;
    visit(cu_die);
  }
}

// Every DIE under `parent`, depth first; `visit` returns false to skip a
// DIE's children.
void walk_children(Dwarf_Die& parent, const std::function<bool(Dwarf_Die&)>& visit) {
  Dwarf_Die child;
  if (dwarf_child(&parent, &child) != 0) return;
  do {
    if (visit(child)) walk_children(child, visit);
  } while (dwarf_siblingof(&child, &child) == 0);
}

bool has_code(Dwarf_Die& die) {
  Dwarf_Addr base = 0;
  Dwarf_Addr start = 0;
  Dwarf_Addr end = 0;
  return dwarf_ranges(&die, 0, &base, &start, &end) > 0;
}

// An inlined copy split in ranges, with no DW_AT_entry_pc: where its
// first range begins.
bool lowest_address(Dwarf_Die& die, Dwarf_Addr& lowest) {
  Dwarf_Addr base = 0;
  Dwarf_Addr start = 0;
  Dwarf_Addr end = 0;
  bool any = false;
  for (ptrdiff_t next = 0; (next = dwarf_ranges(&die, next, &base, &start, &end)) > 0;) {
    if (start == end) continue;  // an empty range holds no code
    if (!any || start < lowest) lowest = start;
    any = true;
  }
  return any;
}

bool names_match(Dwarf_Die& die, std::string_view function) {
  const char* name = dwarf_diename(&die);
  if (name != nullptr && function == name) return true;
  Dwarf_Attribute attr;
  const char* linkage = dwarf_formstring(dwarf_attr_integrate(&die, DW_AT_linkage_name, &attr));
  return linkage != nullptr && function == linkage;
}

int decl_line_of(Dwarf_Die& die) {
  int line = 0;
  return dwarf_decl_line(&die, &line) == 0 ? line : 0;
}

std::string decl_file_of(Dwarf_Die& die) {
  const char* file = dwarf_decl_file(&die);
  return file != nullptr ? normal(file) : std::string();
}

// The call site of an inlined instance, in its CU's file table.
std::pair<std::string, int> call_site_of(Dwarf_Die& inlined, Dwarf_Die& cu_die) {
  Dwarf_Attribute attr;
  Dwarf_Word file_index = 0;
  Dwarf_Word line = 0;
  std::string file;
  if (dwarf_formudata(dwarf_attr(&inlined, DW_AT_call_file, &attr), &file_index) == 0) {
    Dwarf_Files* files = nullptr;
    size_t count = 0;
    if (dwarf_getsrcfiles(&cu_die, &files, &count) == 0 && file_index < count) {
      const char* name = dwarf_filesrc(files, file_index, nullptr, nullptr);
      if (name != nullptr) file = normal(name);
    }
  }
  if (dwarf_formudata(dwarf_attr(&inlined, DW_AT_call_line, &attr), &line) != 0) line = 0;
  return {file, static_cast<int>(line)};
}

struct Instance {
  Dwarf_Die die;
  Dwarf_Die cu_die;
  bool inlined;
};

struct Function {
  std::string file;
  int decl_line = 0;
  std::vector<Instance> instances;
};

Result<Function> find_function(const DebugInfo& info, std::string_view function,
                               std::string_view file) {
  std::vector<Function> found;
  auto group_of = [&found](const std::string& decl_file, int decl_line) -> Function& {
    for (Function& f : found) {
      if (f.file == decl_file && f.decl_line == decl_line) return f;
    }
    found.push_back(Function{decl_file, decl_line, {}});
    return found.back();
  };
  bool named = false;
  for_each_cu(info.dwarf(), [&](Dwarf_Die& cu_die) {
    walk_children(cu_die, [&](Dwarf_Die& die) {
      const int tag = dwarf_tag(&die);
      if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) return true;
      if (!names_match(die, function)) return true;
      if (dwarf_hasattr(&die, DW_AT_declaration)) return true;
      named = true;
      const std::string decl_file = decl_file_of(die);
      if (!file.empty() && !source_file_matches(decl_file, file)) return true;
      Function& group = group_of(decl_file, decl_line_of(die));
      if (has_code(die)) group.instances.push_back({die, cu_die, tag == DW_TAG_inlined_subroutine});
      return true;
    });
  });
  const std::string what = std::string(function) + (file.empty() ? "" : "@" + std::string(file));
  if (found.empty()) {
    if (named) {
      return fail("no function " + what + " in the debug information of " + info.object_path() +
                  ": " + std::string(function) + " is defined in other files");
    }
    return fail("no function " + what + " in the debug information of " + info.object_path());
  }
  // Declarations in headers aside, one definition is expected.
  std::vector<Function*> with_code;
  for (Function& f : found) {
    if (!f.instances.empty()) with_code.push_back(&f);
  }
  if (with_code.empty()) {
    return fail(what + " has no code in " + info.object_path() + " (declared at " +
                found.front().file + ":" + std::to_string(found.front().decl_line) + ")");
  }
  if (with_code.size() > 1) {
    std::string places;
    for (const Function* f : with_code) {
      places += (places.empty() ? "" : ", ") + f->file + ":" + std::to_string(f->decl_line);
    }
    return fail(what + " is defined more than once (" + places + "): name one as " +
                std::string(function) + "@FILE");
  }
  return std::move(*with_code.front());
}

struct Row {
  uint64_t address;
  std::string file;  // normalized
  int line;
};

// The rows that start a block of a line: the first of each run of is_stmt
// rows of one (file, line), a run ending at an is_stmt row of another line
// or at the end of a sequence. `keep` filters by file. With `every_row`,
// every is_stmt row.
std::vector<Row> block_starts(Dwarf_Die& cu_die, const std::function<bool(const char*)>& keep,
                              bool every_row = false) {
  std::vector<Row> out;
  Dwarf_Lines* lines = nullptr;
  size_t count = 0;
  if (dwarf_getsrclines(&cu_die, &lines, &count) != 0) return out;
  const char* previous_file = nullptr;
  int previous_line = -1;
  for (size_t i = 0; i < count; ++i) {
    Dwarf_Line* row = dwarf_onesrcline(lines, i);
    bool flag = false;
    if (row == nullptr) continue;
    if (dwarf_lineendsequence(row, &flag) == 0 && flag) {
      previous_file = nullptr;
      previous_line = -1;
      continue;
    }
    if (dwarf_linebeginstatement(row, &flag) != 0 || !flag) continue;
    int line = 0;
    Dwarf_Addr address = 0;
    if (dwarf_lineno(row, &line) != 0 || dwarf_lineaddr(row, &address) != 0) continue;
    const char* file = dwarf_linesrc(row, nullptr, nullptr);
    if (file == nullptr) continue;
    const bool same = line == previous_line && previous_file != nullptr &&
                      std::string_view(file) == previous_file;
    previous_file = file;
    previous_line = line;
    if ((same && !every_row) || !keep(file)) continue;
    out.push_back({address, normal(file), line});
  }
  return out;
}

bool inside_inlined(Dwarf_Die& cu_die, uint64_t address) {
  Dwarf_Die* scopes = nullptr;
  const int count = dwarf_getscopes(&cu_die, address, &scopes);
  bool inlined = false;
  for (int i = 0; i < count; ++i) inlined |= dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
  free(scopes);  // NOLINT(cppcoreguidelines-no-malloc): libdw's allocation
  return inlined;
}

std::string nearest_text(const std::set<int>& lines, int line, const std::string& prefix,
                         int offset) {
  std::vector<std::string> near;
  auto below = lines.lower_bound(line);
  if (below != lines.begin()) near.push_back(prefix + std::to_string(*std::prev(below) - offset));
  auto above = lines.upper_bound(line);
  if (above != lines.end()) near.push_back(prefix + std::to_string(*above - offset));
  if (near.empty()) return "";
  return near.size() == 1
             ? " (the nearest line with code is " + near[0] + ")"
             : " (the nearest lines with code are " + near[0] + " and " + near[1] + ")";
}

void sort_unique(std::vector<CodeAddress>& out) {
  std::sort(out.begin(), out.end(),
            [](const CodeAddress& a, const CodeAddress& b) { return a.address < b.address; });
  out.erase(std::unique(
                out.begin(), out.end(),
                [](const CodeAddress& a, const CodeAddress& b) { return a.address == b.address; }),
            out.end());
}

// The innermost inlined subroutines directly inside `instance` (through
// lexical blocks, not through other inlined subroutines).
std::vector<Dwarf_Die> direct_inlines(Dwarf_Die& instance) {
  std::vector<Dwarf_Die> out;
  walk_children(instance, [&out](Dwarf_Die& die) {
    const int tag = dwarf_tag(&die);
    if (tag == DW_TAG_inlined_subroutine) {
      out.push_back(die);
      return false;
    }
    return tag == DW_TAG_lexical_block;
  });
  return out;
}

// Where each address of a CU maps back to, as perf probe checks a line is
// "reversible": a real function's entry is its declaration line, any other
// address the first is_stmt row there.
std::map<uint64_t, std::pair<std::string, int>> reverse_lines(Dwarf_Die& cu_die) {
  std::map<uint64_t, std::pair<std::string, int>> out;
  walk_children(cu_die, [&out](Dwarf_Die& die) {
    const int tag = dwarf_tag(&die);
    Dwarf_Addr entry = 0;
    if (tag == DW_TAG_subprogram && has_code(die) && dwarf_entrypc(&die, &entry) == 0) {
      out.emplace(entry, std::make_pair(decl_file_of(die), decl_line_of(die)));
    }
    return tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine;
  });
  Dwarf_Lines* lines = nullptr;
  size_t count = 0;
  if (dwarf_getsrclines(&cu_die, &lines, &count) != 0) return out;
  for (size_t i = 0; i < count; ++i) {
    Dwarf_Line* row = dwarf_onesrcline(lines, i);
    bool flag = false;
    int line = 0;
    Dwarf_Addr address = 0;
    if (row == nullptr || dwarf_linebeginstatement(row, &flag) != 0 || !flag ||
        dwarf_lineno(row, &line) != 0 || dwarf_lineaddr(row, &address) != 0) {
      continue;
    }
    const char* file = dwarf_linesrc(row, nullptr, nullptr);
    if (file != nullptr) out.emplace(address, std::make_pair(normal(file), line));
  }
  return out;
}

std::set<int> lines_of(Function& f) {
  std::set<int> lines;
  // perf probe numbers the declaration line when an out-of-line copy
  // starts there (an inlined instance's entry maps back to its caller).
  for (const Instance& instance : f.instances) {
    if (!instance.inlined) lines.insert(f.decl_line);
  }
  for (Instance& instance : f.instances) {
    const auto reverse = reverse_lines(instance.cu_die);
    std::vector<Dwarf_Die> inlines = direct_inlines(instance.die);
    std::vector<std::pair<std::string, int>> calls;
    for (Dwarf_Die& inlined : inlines) {
      calls.push_back(call_site_of(inlined, instance.cu_die));
      if (calls.back().first == f.file) lines.insert(calls.back().second);
    }
    const std::string& file = f.file;
    for (const Row& row : block_starts(
             instance.cu_die, [&file](const char* name) { return normal(name) == file; }, true)) {
      if (dwarf_haspc(&instance.die, row.address) <= 0) continue;
      const auto back = reverse.find(row.address);
      if (back != reverse.end() && back->second != std::make_pair(row.file, row.line)) continue;
      bool in_inline = false;
      bool at_call = false;
      for (size_t i = 0; i < inlines.size() && !in_inline; ++i) {
        if (dwarf_haspc(&inlines[i], row.address) > 0) {
          in_inline = true;
          at_call = calls[i].second == row.line;
        }
      }
      if (!in_inline || at_call) lines.insert(row.line);
    }
  }
  return lines;
}

}  // namespace

bool source_file_matches(std::string_view name, std::string_view wanted) {
  if (wanted.empty()) return false;
  if (name == wanted) return true;
  return name.size() > wanted.size() && name.ends_with(wanted) &&
         name[name.size() - wanted.size() - 1] == '/';
}

Result<std::vector<CodeAddress>> find_source_line(const DebugInfo& info, std::string_view file,
                                                  int line) {
  std::vector<CodeAddress> out;
  std::set<std::string> files;
  std::set<int> with_code;
  for_each_cu(info.dwarf(), [&](Dwarf_Die& cu_die) {
    for (const Row& row : block_starts(
             cu_die, [file](const char* name) { return source_file_matches(name, file); })) {
      files.insert(row.file);
      with_code.insert(row.line);
      if (row.line == line) {
        out.push_back({row.address, row.file, row.line, inside_inlined(cu_die, row.address)});
      }
    }
  });
  if (files.empty()) {
    return fail("no source file " + std::string(file) + " in the debug information of " +
                info.object_path());
  }
  if (out.empty()) {
    const std::string name = files.size() == 1 ? *files.begin() : std::string(file);
    return fail("line " + std::to_string(line) + " of " + name + " has no code" +
                nearest_text(with_code, line, "", 0));
  }
  sort_unique(out);
  return out;
}

Result<std::vector<CodeAddress>> find_function_line(const DebugInfo& info,
                                                    std::string_view function, int relative_line,
                                                    std::string_view file) {
  auto found = find_function(info, function, file);
  if (!found) return unexpected(found.error());
  Function& f = *found;
  const int line = f.decl_line + relative_line;
  std::vector<CodeAddress> out;
  std::set<uint64_t> seen_cus;
  for (Instance& instance : f.instances) {
    if (!seen_cus.insert(dwarf_dieoffset(&instance.cu_die)).second) continue;
    const std::string& decl_file = f.file;
    for (const Row& row : block_starts(instance.cu_die, [&decl_file](const char* name) {
           return normal(name) == decl_file;
         })) {
      if (row.line != line) continue;
      for (Instance& in : f.instances) {
        if (dwarf_haspc(&in.die, row.address) > 0) {
          out.push_back({row.address, row.file, row.line,
                         in.inlined || inside_inlined(instance.cu_die, row.address)});
          break;
        }
      }
    }
  }
  if (out.empty()) {
    const std::string name = std::string(function);
    return fail(name + ":" + std::to_string(relative_line) + " (line " + std::to_string(line) +
                " of " + f.file + ") has no code in " + name +
                nearest_text(lines_of(f), line, name + ":", f.decl_line));
  }
  sort_unique(out);
  return out;
}

Result<std::vector<CodeAddress>> find_function_entries(const DebugInfo& info,
                                                       std::string_view function,
                                                       std::string_view file) {
  auto found = find_function(info, function, file);
  if (!found) return unexpected(found.error());
  std::vector<CodeAddress> out;
  for (Instance& instance : found->instances) {
    // DW_AT_entry_pc, unless it lies outside the copy's code (GCC names
    // an address of an empty range, with a view): then the copy's first
    // code, where gdb's breakpoint goes too.
    Dwarf_Addr entry = 0;
    const bool has_entry = dwarf_entrypc(&instance.die, &entry) == 0;
    if ((!has_entry || dwarf_haspc(&instance.die, entry) <= 0) &&
        !lowest_address(instance.die, entry)) {
      continue;
    }
    out.push_back({entry, found->file, found->decl_line, instance.inlined});
  }
  if (out.empty()) {
    return fail(std::string(function) + " has no entry address in " + info.object_path());
  }
  sort_unique(out);
  return out;
}

Result<FunctionLines> function_lines(const DebugInfo& info, std::string_view function,
                                     std::string_view file) {
  auto found = find_function(info, function, file);
  if (!found) return unexpected(found.error());
  const std::set<int> lines = lines_of(*found);
  return FunctionLines{std::string(function), found->file, found->decl_line,
                       std::vector<int>(lines.begin(), lines.end())};
}

}  // namespace dprobe::symbols
