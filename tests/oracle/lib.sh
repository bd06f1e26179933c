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
  file_offset_of_vaddr "$object" "$vaddr"
}

# The file offset of link-time address VADDR (hex, no 0x) in OBJECT,
# through the PT_LOAD segment that holds it.
file_offset_of_vaddr() {  # OBJECT VADDR
  local object=$1 vaddr=$2
  while read -r off va filesz; do
    if (( 16#$vaddr >= va && 16#$vaddr < va + filesz )); then
      printf '0x%x' $(( 16#$vaddr - va + off ))
      return
    fi
  done < <(readelf -lW "$object" | awk '$1 == "LOAD" {print $2, $3, $5}')
  return 1
}

# Exits 77 (skipped, with the reason) unless uprobe_events can be used:
# root, tracefs mounted (mounted here if it is not), nobody else's events.
require_uprobe_events() {  # TRACING_DIR
  local tracing=$1
  if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root to use uprobe_events"; exit 77; fi
  [ -e "$tracing/uprobe_events" ] || mount -t tracefs nodev "$tracing" 2>/dev/null
  if [ ! -w "$tracing/uprobe_events" ]; then echo "SKIP: no writable $tracing/uprobe_events"; exit 77; fi
  if [ -s "$tracing/uprobe_events" ]; then echo "SKIP: uprobe_events is in use"; exit 77; fi
}
