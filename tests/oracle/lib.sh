# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
# What the kernel-oracle scripts share (bash; sourced).

# The file offset of SYMBOL in OBJECT, as uprobe_events wants it; NM_FLAGS
# picks the symbol table (-D --defined-only for a library's dynamic one).
# Fails when the object has no such symbol.
file_offset_in() {  # OBJECT SYMBOL [NM_FLAGS...]
  local object=$1 symbol=$2 vaddr
  shift 2
  vaddr=$(nm "$@" "$object" | awk -v s="$symbol" '$3 == s {print $1}')
  [ -n "$vaddr" ] || return 1
  while read -r off va filesz; do
    if (( 16#$vaddr >= va && 16#$vaddr < va + filesz )); then
      printf '0x%x' $(( 16#$vaddr - va + off ))
      return
    fi
  done < <(readelf -lW "$object" | awk '$1 == "LOAD" {print $2, $3, $5}')
  return 1
}
