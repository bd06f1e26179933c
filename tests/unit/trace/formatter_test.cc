// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The formatter's text lines against hand-built records. Expected lines
// are the kernel's byte for byte; the first two are what Linux printed for
// the same uprobe on the machine these tests were written on. JSON lines:
// formatter_json_test.cc.
#include "trace/formatter.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event.h"
#include "trace/json.h"
#include "trace/record.h"
#include "unit/trace/event_records.h"

namespace dprobe::trace {
namespace {

using namespace test_support;

constexpr std::string_view kHead = "              ls-1882    [000] .....    86.566478: ";

std::string text(const EventDesc& ev, const std::vector<std::byte>& record,
                 const Symbolizer* symbolizer = nullptr, std::string_view comm = "ls") {
  std::string out;
  TraceFormatter(symbolizer).format_text(ev, record, comm, out);
  return out;
}

// Formats one scalar argument of `type` holding `value`, without symbols.
std::string one_value(TypeId type, uint64_t value) {
  const EventDesc ev = make_event("e", false, {{"v", type}});
  const std::string line = text(ev, RecordBuilder(ev).ip(1).value(0, value).build());
  const size_t start = line.find(" v=") + 3;
  return line.substr(start, line.size() - start - 1);
}

// ---- Text: the kernel's syscall lines --------------------------------------

EventDesc syscall_event(EventSource source, const std::vector<std::string>& names) {
  std::vector<ArgSpec> args;
  for (const std::string& name : names) args.push_back({name, TypeId::kX64});
  EventDesc ev = make_event("sys_enter_openat", false, args);
  ev.source = source;
  ev.syscall_nr = 257;
  ev.syscall_name = "openat";
  return ev;
}

TEST(FormatText, SyscallEnterIsTheKernelsPrintSyscallEnter) {
  const EventDesc ev =
      syscall_event(EventSource::kSyscallEnter, {"dfd", "filename", "flags", "mode"});
  RecordBuilder b(ev);
  b.ip(0x7f4b16dc0000).value(0, 0xffffff9c).value(1, 0x7f4b16dcf0b1).value(2, 0x80000).value(3, 0);
  // In hex, but a value below 10 without its 0x, as the kernel prints it.
  EXPECT_EQ(text(ev, b.build()),
            std::string(kHead) +
                "sys_openat(dfd: 0xffffff9c, filename: 0x7f4b16dcf0b1, flags: 0x80000, mode: 0)\n");
  RecordBuilder small(ev);
  small.ip(1).value(0, 3).value(1, 9).value(2, 10).value(3, 0x1b6);
  EXPECT_EQ(text(ev, small.build()),
            std::string(kHead) + "sys_openat(dfd: 3, filename: 9, flags: 0xa, mode: 0x1b6)\n");
}

TEST(FormatText, SyscallWithoutArgumentsAndExit) {
  EventDesc enter = syscall_event(EventSource::kSyscallEnter, {});
  enter.syscall_name = "getppid";
  EXPECT_EQ(text(enter, RecordBuilder(enter).ip(1).build()),
            std::string(kHead) + "sys_getppid()\n");
  const EventDesc exit = syscall_event(EventSource::kSyscallExit, {"ret"});
  // The result as 0x%lx: an error in two's complement, 0 as 0x0.
  EXPECT_EQ(text(exit, RecordBuilder(exit).ip(1).value(0, uint64_t(-2)).build()),
            std::string(kHead) + "sys_openat -> 0xfffffffffffffffe\n");
  EXPECT_EQ(text(exit, RecordBuilder(exit).ip(1).value(0, 0).build()),
            std::string(kHead) + "sys_openat -> 0x0\n");
}

TEST(FormatText, RawSyscallLines) {
  const EventDesc enter = syscall_event(
      EventSource::kRawSyscallEnter, {"id", "args0", "args1", "args2", "args3", "args4", "args5"});
  RecordBuilder b(enter);
  b.ip(1).value(0, 33).value(1, 0xb).value(2, 1).value(3, 0x55bf25e8d9bc).value(4, 0);
  b.value(5, 7).value(6, 0xb);
  EXPECT_EQ(text(enter, b.build()),
            std::string(kHead) + "sys_enter: NR 33 (b, 1, 55bf25e8d9bc, 0, 7, b)\n");
  const EventDesc exit = syscall_event(EventSource::kRawSyscallExit, {"id", "ret"});
  EXPECT_EQ(text(exit, RecordBuilder(exit).ip(1).value(0, 262).value(1, uint64_t(-2)).build()),
            std::string(kHead) + "sys_exit: NR 262 = -2\n");
}

TEST(FormatText, EventProbeNamesTheEventItIsOn) {
  EventDesc ev = make_event("open", false, {{"path", TypeId::kString}, {"flags", TypeId::kX32}});
  ev.source = EventSource::kSyscallEnter;
  ev.syscall_name = "openat";
  ev.event_probe = true;
  RecordBuilder b(ev);
  b.ip(1).string(0, "/etc/ld.so.cache").value(1, 0x80000);
  EXPECT_EQ(text(ev, b.build()), std::string(kHead) +
                                     "open: (syscalls.sys_enter_openat) "
                                     "path=\"/etc/ld.so.cache\" flags=0x80000\n");
}

// ---- Text: the kernel's lines ---------------------------------------------

TEST(FormatText, KernelEntryLine) {
  const EventDesc ev = make_event("opendir", false,
                                  {{"path", TypeId::kString},
                                   {"d", TypeId::kX64},
                                   {"c", TypeId::kChar},
                                   {"s", TypeId::kS32},
                                   {"cm", TypeId::kString},
                                   {"arr", TypeId::kX8, 3},
                                   {"bf", TypeId::kU8, 0, "b4@0/8"}});
  RecordBuilder b(ev);
  b.ip(kOpendir).string(0, "/tmp").value(1, 0x561ea4b8e250).value(2, 'P').value(3, 0);
  b.string(4, "ls").value(5, 0x2f, 0).value(5, 0x74, 1).value(5, 0x6d, 2).value(6, 11);
  const FakeSymbolizer symbols;
  EXPECT_EQ(text(ev, b.build(), &symbols),
            "              ls-1882    [000] .....    86.566478: opendir: (opendir+0x0/0x9a) "
            "path=\"/tmp\" d=0x561ea4b8e250 c='P' s=0 cm=\"ls\" arr={0x2f,0x74,0x6d} bf=11\n");
}

TEST(FormatText, KernelReturnLine) {
  const EventDesc ev = make_event("ropendir", true, {{"rv", TypeId::kX64}});
  RecordBuilder b(ev);
  b.header(0, 1880, 1882, 86566765000).func(kOpendir).ret_ip(kMainPlus5a).value(0, 0x561ea4b8e270);
  const FakeSymbolizer symbols;
  EXPECT_EQ(text(ev, b.build(), &symbols),
            "              ls-1882    [000] .....    86.566765: ropendir: "
            "(main+0x5a/0x120 <- opendir) rv=0x561ea4b8e270\n");
}

TEST(FormatText, UserStackBlockFollowsTheLine) {
  EventDesc ev = make_event("opendir", false, {{"d", TypeId::kX64}});
  add_stack_field(ev);
  RecordBuilder b(ev);
  b.ip(kOpendir).value(0, 1);
  std::vector<std::byte> record = b.build();
  const uint64_t frames[] = {kOpendir, kMainPlus5a, 0x1234, 0};
  const auto start = static_cast<uint32_t>(record.size());
  for (uint64_t pc : frames) {
    record.resize(record.size() + 8);
    store_field(record.data(), static_cast<uint32_t>(record.size() - 8), pc);
  }
  store_field(record.data(), ev.stack_offset, make_data_loc(start, sizeof(frames)));
  store_field(record.data(), 2, static_cast<uint16_t>(record.size()));
  const FakeSymbolizer symbols;
  EXPECT_EQ(text(ev, record, &symbols), std::string(kHead) + "opendir: (opendir+0x0/0x9a) d=0x1\n" +
                                            std::string(kHead) +
                                            "<user stack trace>\n"
                                            " => opendir+0x0/0x9a (libc.so.6)\n"
                                            " => main+0x5a/0x120 (ls)\n"
                                            " => 0x1234 (ls)\n"
                                            " => ??\n");
  // A stack field pointing outside the record prints the block with no frame.
  store_field(record.data(), ev.stack_offset, make_data_loc(start, 4096));
  EXPECT_EQ(text(ev, record, &symbols), std::string(kHead) + "opendir: (opendir+0x0/0x9a) d=0x1\n" +
                                            std::string(kHead) + "<user stack trace>\n");
}

TEST(FormatText, ReturnWithoutSymbols) {
  const EventDesc ev = make_event("r", true, {});
  const std::vector<std::byte> record = RecordBuilder(ev).func(0x1000).ret_ip(0x2abc).build();
  EXPECT_EQ(text(ev, record), std::string(kHead) + "r: (0x2abc <- 0x1000)\n");
  // A symbolizer that knows neither address changes nothing.
  const FakeSymbolizer symbols;
  EXPECT_EQ(text(ev, record, &symbols), std::string(kHead) + "r: (0x2abc <- 0x1000)\n");
}

TEST(FormatText, ReturnWithOnlyTheCallerKnown) {
  const EventDesc ev = make_event("r", true, {});
  const FakeSymbolizer symbols;
  EXPECT_EQ(text(ev, RecordBuilder(ev).func(0x1000).ret_ip(kMainPlus5a).build(), &symbols),
            std::string(kHead) + "r: (main+0x5a/0x120 <- 0x1000)\n");
}

TEST(FormatText, EntryWithoutSymbolizer) {
  const EventDesc ev = make_event("p", false, {});
  EXPECT_EQ(text(ev, RecordBuilder(ev).ip(kOpendir + 4).build()),
            std::string(kHead) + "p: (0x7fdc221d4e94)\n");
  const FakeSymbolizer symbols;
  EXPECT_EQ(text(ev, RecordBuilder(ev).ip(kOpendir + 4).build(), &symbols),
            std::string(kHead) + "p: (opendir+0x4/0x9a)\n");
}

// ---- Text: the line head ----------------------------------------------------

TEST(FormatText, TimestampSplitsIntoTruncatedMicroseconds) {
  const EventDesc ev = make_event("p", false, {});
  auto head = [&](uint64_t ts) {
    const std::string line = text(ev, RecordBuilder(ev).header(0, 1, 1882, ts).ip(1).build());
    const size_t start = std::string_view("              ls-1882    [000] ..... ").size();
    return line.substr(start, line.find(": p:") - start);
  };
  EXPECT_EQ(head(86566478123), "   86.566478");
  EXPECT_EQ(head(86566478999), "   86.566478");  // truncated, not rounded
  EXPECT_EQ(head(0), "    0.000000");
  EXPECT_EQ(head(5000), "    0.000005");
  EXPECT_EQ(head(99999999999999), "99999.999999");
  EXPECT_EQ(head(123456789012345), "123456.789012");
}

TEST(FormatText, CommIsRightAlignedInSixteen) {
  const EventDesc ev = make_event("p", false, {});
  const std::vector<std::byte> record = RecordBuilder(ev).ip(1).build();
  EXPECT_EQ(text(ev, record, nullptr, "a"),
            "               a-1882    [000] .....    86.566478: p: (0x1)\n");
  EXPECT_EQ(text(ev, record, nullptr, "abcdefghijklmnop"),
            "abcdefghijklmnop-1882    [000] .....    86.566478: p: (0x1)\n");
  EXPECT_EQ(text(ev, record, nullptr, "kworker/u16:2"),
            "   kworker/u16:2-1882    [000] .....    86.566478: p: (0x1)\n");
  // Padding counts bytes, as printf's %16s: "é" is two of them.
  EXPECT_EQ(text(ev, record, nullptr, "caf\xc3\xa9"),
            "           caf\xc3\xa9-1882    [000] .....    86.566478: p: (0x1)\n");
}

TEST(FormatText, WideTidAndCpu) {
  const EventDesc ev = make_event("p", false, {});
  EXPECT_EQ(text(ev, RecordBuilder(ev).header(12, 1, 123456789, 86566478123).ip(1).build()),
            "              ls-123456789 [012] .....    86.566478: p: (0x1)\n");
  EXPECT_EQ(text(ev, RecordBuilder(ev).header(1234, 1, 1234567, 86566478123).ip(1).build()),
            "              ls-1234567 [1234] .....    86.566478: p: (0x1)\n");
  EXPECT_EQ(text(ev, RecordBuilder(ev).header(3, 1, 1, 86566478123).ip(1).build()),
            "              ls-1       [003] .....    86.566478: p: (0x1)\n");
}

TEST(FormatText, AppendsToWhatIsThere) {
  const EventDesc ev = make_event("p", false, {});
  const std::vector<std::byte> record = RecordBuilder(ev).ip(1).build();
  std::string out = "x";
  const TraceFormatter formatter;
  formatter.format_text(ev, record, "ls", out);
  formatter.format_text(ev, record, "ls", out);
  EXPECT_EQ(out, "x" + std::string(kHead) + "p: (0x1)\n" + std::string(kHead) + "p: (0x1)\n");
}

// ---- Text: values -----------------------------------------------------------

TEST(FormatText, UnsignedDecimal) {
  EXPECT_EQ(one_value(TypeId::kU8, 255), "255");
  EXPECT_EQ(one_value(TypeId::kU16, 65535), "65535");
  EXPECT_EQ(one_value(TypeId::kU32, 4294967295), "4294967295");
  EXPECT_EQ(one_value(TypeId::kU64, std::numeric_limits<uint64_t>::max()), "18446744073709551615");
  EXPECT_EQ(one_value(TypeId::kU64, 0), "0");
}

TEST(FormatText, SignedDecimalIsSignExtendedFromTheFieldSize) {
  EXPECT_EQ(one_value(TypeId::kS8, 0xff), "-1");
  EXPECT_EQ(one_value(TypeId::kS8, 0x80), "-128");
  EXPECT_EQ(one_value(TypeId::kS8, 0x7f), "127");
  EXPECT_EQ(one_value(TypeId::kS16, 0x8000), "-32768");
  EXPECT_EQ(one_value(TypeId::kS32, 0xfffffffe), "-2");
  EXPECT_EQ(one_value(TypeId::kS32, 42), "42");
  EXPECT_EQ(one_value(TypeId::kS64, 0x8000000000000000), "-9223372036854775808");
  EXPECT_EQ(one_value(TypeId::kS64, static_cast<uint64_t>(-5)), "-5");
}

TEST(FormatText, HexIsLowerCaseUnpadded) {
  EXPECT_EQ(one_value(TypeId::kX8, 0x0a), "0xa");
  EXPECT_EQ(one_value(TypeId::kX16, 0xbeef), "0xbeef");
  EXPECT_EQ(one_value(TypeId::kX32, 0), "0x0");
  EXPECT_EQ(one_value(TypeId::kX64, 0xDEADBEEFCAFEF00D), "0xdeadbeefcafef00d");
}

TEST(FormatText, CharIsTheRawByte) {
  EXPECT_EQ(one_value(TypeId::kChar, 'P'), "'P'");
  EXPECT_EQ(one_value(TypeId::kChar, '\''), "'''");
  EXPECT_EQ(one_value(TypeId::kChar, 0xe9), "'\xe9'");
}

TEST(FormatText, Strings) {
  const EventDesc ev = make_event("p", false,
                                  {{"s", TypeId::kString},
                                   {"u", TypeId::kUString},
                                   {"f", TypeId::kString},
                                   {"e", TypeId::kString},
                                   {"raw", TypeId::kString}});
  RecordBuilder b(ev);
  b.ip(1).string(0, "hello world").string(1, "user").fault(2).string(3, "");
  b.string(4, std::string_view("a\"b\\c\n\xff", 7));
  EXPECT_EQ(text(ev, b.build()), std::string(kHead) +
                                     "p: (0x1) s=\"hello world\" u=\"user\" f=(fault) e=\"\" "
                                     "raw=\"a\"b\\c\n\xff\"\n");
}

TEST(FormatText, StringStopsAtItsNul) {
  const EventDesc ev = make_event("p", false, {{"s", TypeId::kString}});
  EXPECT_EQ(text(ev, RecordBuilder(ev).ip(1).string(0, std::string_view("ab\0cd", 5)).build()),
            std::string(kHead) + "p: (0x1) s=\"ab\"\n");
}

TEST(FormatText, Symbols) {
  const EventDesc ev = make_event("p", false,
                                  {{"known", TypeId::kSymbol},
                                   {"unknown", TypeId::kSymbol},
                                   {"ks", TypeId::kSymStr},
                                   {"us", TypeId::kSymStr}});
  RecordBuilder b(ev);
  b.ip(1).value(0, kMainPlus5a).value(1, 0x42).value(2, kOpendir + 0x99).value(3, 0);
  const FakeSymbolizer symbols;
  EXPECT_EQ(
      text(ev, b.build(), &symbols),
      std::string(kHead) +
          "p: (0x1) known=main+0x5a/0x120 unknown=0x42 ks=\"opendir+0x99/0x9a\" us=\"0x0\"\n");
  EXPECT_EQ(text(ev, b.build()),
            std::string(kHead) +
                "p: (0x1) known=0x561ea4b8e05a unknown=0x42 ks=\"0x7fdc221d4f29\" "
                "us=\"0x0\"\n");
}

TEST(FormatText, BitfieldPrintsAsUnsignedDecimal) {
  const EventDesc ev = make_event("p", false, {{"b", TypeId::kU32, 0, "b4@2/32"}});
  EXPECT_EQ(text(ev, RecordBuilder(ev).ip(1).value(0, 15).build()),
            std::string(kHead) + "p: (0x1) b=15\n");
}

TEST(FormatText, Arrays) {
  const EventDesc ev = make_event("p", false,
                                  {{"a", TypeId::kU32, 4},
                                   {"s", TypeId::kString, 3},
                                   {"n", TypeId::kS16, 2},
                                   {"c", TypeId::kChar, 2}});
  RecordBuilder b(ev);
  b.ip(1).value(0, 1, 0).value(0, 2, 1).value(0, 4294967295, 2).value(0, 0, 3);
  b.string(1, "a", 0).fault(1, 1).string(1, "ccc", 2);
  b.value(2, 0xffff, 0).value(2, 7, 1).value(3, 'o', 0).value(3, 'k', 1);
  EXPECT_EQ(text(ev, b.build()), std::string(kHead) +
                                     "p: (0x1) a={1,2,4294967295,0} s={\"a\",(fault),\"ccc\"} "
                                     "n={-1,7} c={'o','k'}\n");
}

// ---- Text: malformed records ------------------------------------------------

TEST(FormatText, TruncatedRecordPrintsBadFields) {
  const EventDesc ev =
      make_event("p", false, {{"a", TypeId::kX32}, {"b", TypeId::kX64}, {"c", TypeId::kU32, 2}});
  std::vector<std::byte> record = RecordBuilder(ev).ip(1).value(0, 0xa).value(1, 0xb).build();
  record.resize(ev.args[1].offset + 4);  // cut in the middle of b
  EXPECT_EQ(text(ev, record), std::string(kHead) + "p: (0x1) a=0xa b=(bad) c={(bad),(bad)}\n");
}

TEST(FormatText, HeaderSizeShorterThanTheBufferLimitsTheRecord) {
  const EventDesc ev = make_event("p", false, {{"a", TypeId::kX32}});
  std::vector<std::byte> record = RecordBuilder(ev).ip(1).value(0, 0xa).build();
  store_field(record.data(), 2, static_cast<uint16_t>(ev.args[0].offset));
  EXPECT_EQ(text(ev, record), std::string(kHead) + "p: (0x1) a=(bad)\n");
}

TEST(FormatText, DataLocOutsideTheRecord) {
  const EventDesc ev = make_event(
      "p", false, {{"past", TypeId::kString}, {"long", TypeId::kString}, {"ok", TypeId::kString}});
  RecordBuilder b(ev);
  b.ip(1).value(0, make_data_loc(0xfff0, 4)).string(2, "fine");
  std::vector<std::byte> record = b.build();
  // "fine\0" is the last 5 bytes; claim 6.
  store_field(record.data(), ev.args[1].offset,
              make_data_loc(static_cast<uint32_t>(record.size() - 5), 6));
  EXPECT_EQ(text(ev, record), std::string(kHead) + "p: (0x1) past=(bad) long=(bad) ok=\"fine\"\n");
}

TEST(FormatText, RecordShorterThanItsHeader) {
  const EventDesc ev = make_event("p", false, {{"a", TypeId::kX32}, {"s", TypeId::kString}});
  std::vector<std::byte> record = RecordBuilder(ev).ip(1).build();
  record.resize(10);
  EXPECT_EQ(text(ev, record),
            "              ls-0       [000] .....     0.000000: p: (bad) a=(bad) s=(bad)\n");
  EXPECT_EQ(text(ev, {}),
            "              ls-0       [000] .....     0.000000: p: (bad) a=(bad) s=(bad)\n");
}

TEST(FormatText, ReturnRecordMissingItsReturnAddress) {
  const EventDesc ev = make_event("r", true, {});
  std::vector<std::byte> record = RecordBuilder(ev).func(1).ret_ip(2).build();
  record.resize(EventDesc::kRetIpOffset + 4);
  EXPECT_EQ(text(ev, record), std::string(kHead) + "r: (bad)\n");
}

}  // namespace
}  // namespace dprobe::trace
