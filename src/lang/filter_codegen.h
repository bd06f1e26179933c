// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The last step of the filter compiler (lang/event_filter.h): the parsed
// tree of && || ! over predicates into jumping code, each predicate jumping
// to the next one to test when true and when false, which is what the
// kernel's filter program is after its second pass. Not recursive: the
// tree's depth is the user's.
//
//   FilterTree tree;  // built by the parser; `root` its top node
//   generate_code(tree, root, program);
#ifndef DPROBE_LANG_FILTER_CODEGEN_H_
#define DPROBE_LANG_FILTER_CODEGEN_H_

#include <cstdint>
#include <vector>

#include "lang/filter_predicate.h"
#include "trace/hit/event_filter.h"

namespace dprobe::lang::filter {

struct FilterNode {
  enum Kind : uint8_t { kLeaf, kNot, kAnd, kOr } kind;
  uint32_t left;  // a leaf's index in FilterTree::leaves
  uint32_t right;
};

struct FilterTree {
  std::vector<Predicate> leaves;
  std::vector<FilterNode> nodes;
};

// The code of the tree under `root`, into `program.code` (empty before).
void generate_code(const FilterTree& tree, uint32_t root, trace::FilterProgram& program);

}  // namespace dprobe::lang::filter

#endif  // DPROBE_LANG_FILTER_CODEGEN_H_
