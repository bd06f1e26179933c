// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/syscall_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "arch/isa.h"
#include "lang/probe_error.h"
#include "trace/fetch.h"

namespace dprobe::lang {
namespace {

using ::testing::ElementsAre;
using trace::EventSource;

constexpr ParseOptions kX86{arch::Isa::kX86_64};

std::vector<std::string> names(const std::vector<Definition>& defs) {
  std::vector<std::string> out;
  for (const Definition& def : defs)
    out.push_back(def.spec.event.group + ":" + def.spec.event.name);
  return out;
}

uint16_t reg(std::string_view name) { return *arch::register_index(arch::Isa::kX86_64, name); }

// The register an argument's fetch program reads.
uint32_t fetched_register(const trace::EventArg& arg) {
  EXPECT_FALSE(arg.code.empty());
  EXPECT_EQ(arg.code[0].op, trace::FetchOp::kReg);
  return arg.code[0].param;
}

TEST(TracepointSelector, IsOnlySyscallsOrRawSyscalls) {
  EXPECT_TRUE(is_tracepoint_selector("syscalls:sys_enter_openat"));
  EXPECT_TRUE(is_tracepoint_selector("  raw_syscalls:*"));
  EXPECT_FALSE(is_tracepoint_selector("p:grp/ev libc.so.6:open"));
  EXPECT_FALSE(is_tracepoint_selector("sched:sched_switch"));
  EXPECT_FALSE(is_tracepoint_selector("syscalls"));
}

TEST(TracepointSelector, OneEventTakesTheKernelsArgumentNamesInRegisters) {
  auto defs = parse_tracepoint_selector("syscalls:sys_enter_openat", kX86);
  ASSERT_TRUE(defs) << render_error(defs.error());
  ASSERT_EQ(defs->size(), 1u);
  const trace::EventDesc& event = (*defs)[0].spec.event;
  EXPECT_EQ(event.source, EventSource::kSyscallEnter);
  EXPECT_EQ(event.syscall_nr, 257);
  EXPECT_EQ(event.syscall_name, "openat");
  EXPECT_EQ((*defs)[0].spec.point.target.kind, core::TargetKind::kSyscall);
  ASSERT_EQ(event.args.size(), 4u);
  EXPECT_EQ(event.args[0].name, "dfd");
  EXPECT_EQ(event.args[1].name, "filename");
  EXPECT_EQ(event.args[3].name, "mode");
  // The kernel's convention: rdi, rsi, rdx, r10 (not rcx, which syscall clobbers).
  EXPECT_EQ(fetched_register(event.args[0]), reg("di"));
  EXPECT_EQ(fetched_register(event.args[3]), reg("r10"));
}

TEST(TracepointSelector, ExitHasTheReturnValue) {
  auto defs = parse_tracepoint_selector("syscalls:sys_exit_read", kX86);
  ASSERT_TRUE(defs);
  const trace::EventDesc& event = (*defs)[0].spec.event;
  EXPECT_EQ(event.source, EventSource::kSyscallExit);
  ASSERT_EQ(event.args.size(), 1u);
  EXPECT_EQ(event.args[0].name, "ret");
  EXPECT_EQ(fetched_register(event.args[0]), reg("ax"));
}

TEST(TracepointSelector, GlobsExpandInNumberOrderEnterBeforeExit) {
  auto defs = parse_tracepoint_selector("syscalls:sys_*_read", kX86);
  ASSERT_TRUE(defs);
  EXPECT_THAT(names(*defs), ElementsAre("syscalls:sys_enter_read", "syscalls:sys_exit_read"));
  auto every = parse_tracepoint_selector("syscalls:*", kX86);
  ASSERT_TRUE(every);
  EXPECT_GT(every->size(), 600u);
  EXPECT_TRUE(
      std::all_of(every->begin(), every->end(), [](const Definition& d) { return d.expanded; }));
}

TEST(TracepointSelector, RawSyscallsHaveIdAndSixArgumentsOrTheResult) {
  auto defs = parse_tracepoint_selector("raw_syscalls:*", kX86);
  ASSERT_TRUE(defs);
  EXPECT_THAT(names(*defs), ElementsAre("raw_syscalls:sys_enter", "raw_syscalls:sys_exit"));
  EXPECT_EQ((*defs)[0].spec.event.args.size(), 7u);
  EXPECT_EQ(fetched_register((*defs)[0].spec.event.args[0]), reg("orig_ax"));
  EXPECT_EQ((*defs)[1].spec.event.args.size(), 2u);
}

TEST(TracepointSelector, UnknownNamesPointAtTheEvent) {
  auto defs = parse_tracepoint_selector("syscalls:sys_enter_nosuch", kX86);
  ASSERT_FALSE(defs);
  EXPECT_EQ(defs.error().code, ErrorCode::NO_TRACEPOINT);
  EXPECT_EQ(defs.error().column, 9u);
  EXPECT_FALSE(parse_tracepoint_selector("raw_syscalls:sys_entry", kX86));
}

TEST(TracepointSelector, NoTableIsSaidSo) {
  auto defs = parse_tracepoint_selector("syscalls:*", {arch::Isa::kArm64});
  ASSERT_FALSE(defs);
  EXPECT_EQ(defs.error().code, ErrorCode::NO_SYSCALL_TABLE);
}

TEST(EventProbe, NamesFieldsAndDereferencesThem) {
  auto def = parse_definition(
      "e:io/open syscalls/sys_enter_openat path=+0($filename):ustring flags=$flags:x32", kX86);
  ASSERT_TRUE(def) << render_error(def.error());
  const trace::EventDesc& event = def->spec.event;
  EXPECT_EQ(event.group, "io");
  EXPECT_EQ(event.name, "open");
  EXPECT_TRUE(event.event_probe);
  EXPECT_EQ(event.source, EventSource::kSyscallEnter);
  EXPECT_EQ(event.syscall_nr, 257);
  ASSERT_EQ(event.args.size(), 2u);
  EXPECT_EQ(fetched_register(event.args[0]), reg("si"));
  EXPECT_EQ(fetched_register(event.args[1]), reg("dx"));
}

TEST(EventProbe, DefaultsToTheEventsNameInGroupEprobes) {
  auto def = parse_definition("e syscalls.sys_exit_openat ret=$ret", kX86);
  ASSERT_TRUE(def) << render_error(def.error());
  EXPECT_EQ(def->spec.event.group, "eprobes");
  EXPECT_EQ(def->spec.event.name, "sys_exit_openat");
  EXPECT_EQ(def->spec.event.source, EventSource::kSyscallExit);
  EXPECT_EQ(fetched_register(def->spec.event.args[0]), reg("ax"));
}

TEST(EventProbe, FieldsAreOnlyForEventProbes) {
  auto def = parse_definition("p:grp/ev libc.so.6:open fd=$filename", kX86);
  ASSERT_FALSE(def);
  EXPECT_EQ(def.error().code, ErrorCode::BAD_VAR);
  auto retval = parse_definition("e:g/e syscalls/sys_exit_openat r=$retval", kX86);
  ASSERT_FALSE(retval);
  EXPECT_EQ(retval.error().code, ErrorCode::BAD_ATTACH_ARG);
}

}  // namespace
}  // namespace dprobe::lang
