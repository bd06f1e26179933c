// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Definitions as a whole: probe kinds, targets, names, and the normalized
// form `dprobe check` prints (as `cat kprobe_events` would).
#include "lang/definition.h"

#include <gtest/gtest.h>

#include "lang/format_definition.h"
#include "lang/naming.h"
#include "unit/lang/parse_ok.h"

namespace dprobe::lang {
namespace {

using test::parse_ok;

std::string normalized(const std::string& line) { return format_definition(parse_ok(line).spec); }

TEST(Definition, NormalizedFormNamesAndTypesEveryArgument) {
  EXPECT_EQ(normalized("p libc.so.6:malloc size=%di"),
            "p:dprobes/p_malloc_0 libc.so.6:malloc size=%di:x64");
  EXPECT_EQ(normalized("p:my/ev libc.so.6:open +0(%di):string %si:u32 $comm"),
            "p:my/ev libc.so.6:open arg1=+0(%di):string arg2=%si:u32 arg3=$comm:string");
  EXPECT_EQ(normalized("p:g/e open a=+8(%di):u32[4] b=%di:b3@4/32"),
            "p:g/e open a=+8(%di):u32[4] b=%di:b3@4/32");
}

TEST(Definition, ReturnProbes) {
  Definition r = parse_ok("r libc.so.6:malloc $retval");
  EXPECT_TRUE(r.spec.point.is_return);
  EXPECT_EQ(r.spec.event.name, "r_malloc_0");
  EXPECT_EQ(normalized("r libc.so.6:malloc $retval"),
            "r:dprobes/r_malloc_0 libc.so.6:malloc arg1=$retval:x64");
  EXPECT_EQ(normalized("r libc.so.6:malloc lat=$duration:u64"),
            "r:dprobes/r_malloc_0 libc.so.6:malloc lat=$duration:u64");
  EXPECT_EQ(normalized("p libc.so.6:malloc%return rv=$retval"),
            "r:dprobes/r_malloc_0 libc.so.6:malloc rv=$retval:x64");
  Definition max = parse_ok("r16:g/ev libc.so.6:malloc");
  EXPECT_EQ(max.spec.point.maxactive, 16u);
  EXPECT_EQ(format_definition(max.spec), "r16:g/ev libc.so.6:malloc");
  EXPECT_EQ(parse_ok("r0x10 libc.so.6:malloc").spec.point.maxactive, 16u);
  EXPECT_EQ(parse_ok("r4096 libc.so.6:malloc").spec.point.maxactive, 4096u);
}

TEST(Definition, SymbolTargets) {
  const Definition def = parse_ok("p libc.so.6:malloc+16");
  const core::ProbeTarget& t = def.spec.point.target;
  EXPECT_EQ(t.kind, core::TargetKind::kSymbol);
  EXPECT_EQ(t.object, "libc.so.6");
  EXPECT_EQ(t.symbol, "malloc");
  EXPECT_EQ(t.offset, 16);
  EXPECT_EQ(def.spec.event.name, "p_malloc_16");
  EXPECT_EQ(def.target_column, 2u);
  EXPECT_EQ(def.symbol_column, 12u);
  EXPECT_EQ(parse_ok("p main-0x4").spec.point.target.offset, -4);
  EXPECT_EQ(parse_ok("p /usr/lib/x86_64-linux-gnu/libz.so.1:inflate").spec.point.target.object,
            "/usr/lib/x86_64-linux-gnu/libz.so.1");
}

TEST(Definition, AddressTargets) {
  const core::ProbeTarget abs = parse_ok("p 0x401000").spec.point.target;
  EXPECT_EQ(abs.kind, core::TargetKind::kAddress);
  EXPECT_EQ(abs.address, 0x401000u);
  const core::ProbeTarget in_obj = parse_ok("p libc.so.6:0x26000").spec.point.target;
  EXPECT_EQ(in_obj.kind, core::TargetKind::kObjectAddress);
  EXPECT_EQ(in_obj.address, 0x26000u);
  const core::ProbeTarget file = parse_ok("p /bin/ls:0x4a20").spec.point.target;
  EXPECT_EQ(file.kind, core::TargetKind::kFileOffset);
  EXPECT_EQ(file.offset, 0x4a20);
  EXPECT_EQ(normalized("p /bin/ls:0x4a20"), "p:dprobes/p_ls_0x4a20 /bin/ls:0x0000000000004a20");
  EXPECT_EQ(normalized("p 0x401000"), "p:dprobes/p_0x401000 0x0000000000401000");
  EXPECT_EQ(normalized("p libc.so.6:0x26000"),
            "p:dprobes/p_libc_0x26000 libc.so.6:0x0000000000026000");
}

TEST(Definition, GroupsAndEvents) {
  EXPECT_EQ(parse_ok("p:ev libc.so.6:open").spec.event.group, "dprobes");
  EXPECT_EQ(parse_ok("p:ev libc.so.6:open").spec.event.name, "ev");
  const Definition dotted = parse_ok("p:grp.ev libc.so.6:open");
  EXPECT_EQ(dotted.spec.event.group, "grp");
  EXPECT_EQ(dotted.spec.event.name, "ev");
  const Definition group_only = parse_ok("p:grp/ libc.so.6:open");
  EXPECT_EQ(group_only.spec.event.group, "grp");
  EXPECT_EQ(group_only.spec.event.name, "p_open_0");
  EXPECT_FALSE(group_only.event_named);
  const std::string max63(63, 'a');
  EXPECT_EQ(parse_ok("p:" + max63 + "/" + max63 + " libc.so.6:open").spec.event.name, max63);
}

TEST(Definition, WildcardsAreMarkedForExpansion) {
  const Definition def = parse_ok("p:grp/ libc.so.6:str*cmp");
  EXPECT_TRUE(def.wildcard);
  EXPECT_EQ(def.spec.point.target.symbol, "str*cmp");
  EXPECT_TRUE(parse_ok("p libc.so.6:mem?py").wildcard);
  EXPECT_FALSE(parse_ok("p libc.so.6:memcpy").wildcard);
}

TEST(Definition, Removal) {
  auto def = parse_definition("-:grp/ev");
  ASSERT_TRUE(def);
  EXPECT_EQ(def->kind, Definition::Kind::kRemove);
  EXPECT_EQ(def->remove_group, "grp");
  EXPECT_EQ(def->remove_event, "ev");
  auto any_group = parse_definition("-:ev");
  ASSERT_TRUE(any_group);
  EXPECT_EQ(any_group->remove_group, "");
  EXPECT_EQ(any_group->remove_event, "ev");
  auto whole_group = parse_definition("-:grp/");
  ASSERT_TRUE(whole_group);
  EXPECT_EQ(whole_group->remove_group, "grp");
  EXPECT_EQ(whole_group->remove_event, "");
}

TEST(Definition, RecordLayoutPacksFieldsAfterTheIp) {
  const Definition entry = parse_ok("p libc.so.6:open a=%di:u8 b=+0(%si):string c=%dx:u64");
  const auto& args = entry.spec.event.args;
  EXPECT_EQ(args[0].offset, 32u);
  EXPECT_EQ(args[1].offset, 33u);
  EXPECT_EQ(args[2].offset, 37u);
  EXPECT_EQ(entry.spec.event.fixed_size, 45u);
  const Definition ret = parse_ok("r libc.so.6:open a=$retval:u32");
  EXPECT_EQ(ret.spec.event.args[0].offset, 40u);
  EXPECT_EQ(ret.spec.event.entry_time_offset, 44u);  // dprobe's own, after the arguments
  EXPECT_EQ(ret.spec.event.fixed_size, 52u);
}

TEST(Naming, DefaultNamesFollowTheKernel) {
  core::ProbePoint point;
  point.target = {core::TargetKind::kSymbol, "", "do_sys_open", 0, 0};
  EXPECT_EQ(default_event_name(point), "p_do_sys_open_0");
  point.is_return = true;
  EXPECT_EQ(default_event_name(point), "r_do_sys_open_0");
  point = {};
  point.target = {core::TargetKind::kSymbol, "", "_ZN3foo3barEv.cold", -8, 0};
  EXPECT_EQ(default_event_name(point), "p__ZN3foo3barEv_cold__8");
  point.target = {core::TargetKind::kFileOffset, "/usr/lib/libz-ng.so.2", "", 0x1234, 0};
  EXPECT_EQ(default_event_name(point), "p_libz_0x1234");
}

TEST(Naming, LongNamesAreCutToTheKernelLimit) {
  core::ProbePoint point;
  point.target = {core::TargetKind::kSymbol, "", std::string(100, 'f'), 0, 0};
  const std::string name = default_event_name(point);
  EXPECT_EQ(name.size(), 63u);
  EXPECT_EQ(name.substr(0, 3), "p_f");
}

}  // namespace
}  // namespace dprobe::lang
