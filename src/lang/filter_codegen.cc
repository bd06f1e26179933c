// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A node is compiled knowing where to go when it is true and when false.
// a && b: a goes to b when true, to the false target otherwise; a || b the
// mirror; !a swaps the targets. Labels name the start of a right-hand side
// until its first predicate is emitted; the jumps are resolved at the end.
#include "lang/filter_codegen.h"

#include <utility>

namespace dprobe::lang::filter {
namespace {

using trace::FilterInsn;

// The labels of the two ends: the hit passes, it is filtered out.
constexpr uint32_t kPass = 0;
constexpr uint32_t kDrop = 1;

// Jump targets are labels until resolve_labels() makes them indexes.
void emit(const Predicate& leaf, uint32_t on_true, uint32_t on_false,
          std::vector<FilterInsn>& code) {
  FilterInsn insn = leaf.insn;
  if (leaf.negate) std::swap(on_true, on_false);
  insn.on_true = static_cast<uint16_t>(on_true);
  insn.on_false = static_cast<uint16_t>(on_false);
  code.push_back(insn);
}

// `label_insn`: the instruction each label names, but for the ends.
void resolve_labels(std::vector<uint32_t>& label_insn, std::vector<FilterInsn>& code) {
  const auto n = static_cast<uint32_t>(code.size());
  label_insn[kPass] = n;
  label_insn[kDrop] = n + 1;
  for (FilterInsn& insn : code) {
    insn.on_true = static_cast<uint16_t>(label_insn[insn.on_true]);
    insn.on_false = static_cast<uint16_t>(label_insn[insn.on_false]);
  }
}

}  // namespace

void generate_code(const FilterTree& tree, uint32_t root, trace::FilterProgram& program) {
  struct Work {
    uint32_t node;  // or, for a label's placing, the label
    uint32_t on_true;
    uint32_t on_false;
    bool place_label;
  };
  std::vector<uint32_t> label_insn{0, 0};
  std::vector<Work> work{{root, kPass, kDrop, false}};
  while (!work.empty()) {
    const Work w = work.back();
    work.pop_back();
    if (w.place_label) {
      label_insn[w.node] = static_cast<uint32_t>(program.code.size());
      continue;
    }
    const FilterNode& node = tree.nodes[w.node];
    if (node.kind == FilterNode::kLeaf) {
      emit(tree.leaves[node.left], w.on_true, w.on_false, program.code);
    } else if (node.kind == FilterNode::kNot) {
      work.push_back({node.left, w.on_false, w.on_true, false});
    } else {
      const auto right = static_cast<uint32_t>(label_insn.size());
      label_insn.push_back(0);
      const bool is_and = node.kind == FilterNode::kAnd;
      work.push_back({node.right, w.on_true, w.on_false, false});
      work.push_back({right, 0, 0, true});
      work.push_back({node.left, is_and ? right : w.on_true, is_and ? w.on_false : right, false});
    }
  }
  resolve_labels(label_insn, program.code);
}

}  // namespace dprobe::lang::filter
