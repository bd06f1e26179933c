// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The fetch interpreter end to end: definitions compiled by the language,
// run against a fake register frame and a fake memory, checked in the
// record bytes and in the trace line the formatter prints from them.
#include "trace/hit/fetch_exec.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arch/arm64/regs.h"
#include "arch/x86_64/regs.h"
#include "lang/definition.h"
#include "trace/formatter.h"
#include "trace/record.h"

namespace dprobe::trace {
namespace {

using arch::Isa;
namespace x86 = arch::x86_64;
namespace a64 = arch::arm64;

// The traced program's memory: mapped bytes read, anything else faults.
class FakeMemory {
 public:
  void put(uint64_t address, const void* data, size_t size) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < size; ++i) bytes_[address + i] = bytes[i];
  }
  void put_u64(uint64_t address, uint64_t value) { put(address, &value, sizeof(value)); }
  void put_u32(uint64_t address, uint32_t value) { put(address, &value, sizeof(value)); }
  // The text and its NUL.
  void put_string(uint64_t address, std::string_view text) {
    put(address, text.data(), text.size());
    bytes_[address + text.size()] = 0;
  }
  void unmap(uint64_t address, size_t size) {
    for (size_t i = 0; i < size; ++i) bytes_.erase(address + i);
  }

  MemoryReader reader() { return {&FakeMemory::read, &FakeMemory::read_string, this}; }

 private:
  static bool read(void* context, void* dst, uint64_t src, size_t size) {
    const auto& bytes = static_cast<FakeMemory*>(context)->bytes_;
    for (size_t i = 0; i < size; ++i) {
      const auto it = bytes.find(src + i);
      if (it == bytes.end()) return false;
      static_cast<uint8_t*>(dst)[i] = it->second;
    }
    return true;
  }

  // As arch::safe_read_string.
  static int64_t read_string(void* context, char* dst, uint64_t src, size_t capacity) {
    const auto& bytes = static_cast<FakeMemory*>(context)->bytes_;
    if (capacity == 0) return 0;
    size_t n = 0;
    for (; n + 1 < capacity; ++n) {
      const auto it = bytes.find(src + n);
      if (it == bytes.end()) return -1;
      dst[n] = static_cast<char>(it->second);
      if (it->second == 0) return static_cast<int64_t>(n + 1);
    }
    dst[n] = '\0';
    return static_cast<int64_t>(n + 1);
  }

  std::map<uint64_t, uint8_t> bytes_;
};

// One probe hit, done: the record and its trace line.
struct Hit {
  EventDesc event;
  std::vector<std::byte> record;  // `size` bytes
  uint32_t size = 0;
  std::string args;  // the line after the ip fields: " a=1 b=2"

  uint64_t field(size_t arg, uint32_t element = 0) const {
    const uint32_t size_of = fetch_type(event.args[arg].type).size;
    const uint32_t offset = event.args[arg].offset + element * size_of;
    uint64_t value = 0;
    for (uint32_t i = 0; i < size_of; ++i) {
      value |= uint64_t{std::to_integer<uint8_t>(record[offset + i])} << (8 * i);
    }
    return value;
  }
  uint32_t data_loc(size_t arg, uint32_t element = 0) const {
    return load_field<uint32_t>(record.data(), event.args[arg].offset + element * 4);
  }
};

constexpr uint64_t kProbeIp = 0x401000;
constexpr uint64_t kReturnIp = 0x401234;
constexpr uint64_t kStackTop = 0x7ffd0000;
constexpr uint64_t kData = 0x10000;
constexpr std::byte kPoison{0xa5};

class FetchExecTest : public ::testing::Test {
 protected:
  // Compiles "KIND:test/ev libc.so.6:open ARGS", runs it and formats it.
  Hit run(const std::string& args, Isa isa = Isa::kX86_64, char kind = 'p',
          uint32_t capacity = kMaxRecordSize) {
    auto def =
        lang::parse_definition(std::string(1, kind) + ":test/ev libc.so.6:open " + args, {isa});
    EXPECT_TRUE(def) << (def ? "" : lang::render_error(def.error()));
    if (!def) return {};
    return run_event(def->spec.event, isa, capacity);
  }

  Hit run_event(EventDesc event, Isa isa = Isa::kX86_64, uint32_t capacity = kMaxRecordSize) {
    Hit hit;
    hit.event = std::move(event);
    hit.event.id = 3;
    // Poison everything: every argument byte must be written, nothing past
    // the capacity may be.
    std::vector<std::byte> buffer(capacity + 64, kPoison);
    const RecordHeader header{hit.event.id, 0, 1, 100, 101, 5'000'000'000};
    store_field(buffer.data(), 0, header);
    if (hit.event.is_return) {
      store_field(buffer.data(), EventDesc::kFuncOffset, kProbeIp);
      store_field(buffer.data(), EventDesc::kRetIpOffset, kReturnIp);
    } else {
      store_field(buffer.data(), EventDesc::kIpOffset, kProbeIp);
    }
    const FetchEnv env{regs_.data(),
                       isa,
                       entry_args_.empty() ? nullptr : entry_args_.data(),
                       static_cast<uint32_t>(entry_args_.size()),
                       comm_,
                       memory_.reader(),
                       duration_ns_};
    hit.size = store_event_args(hit.event, env, buffer.data(), capacity);
    for (uint32_t i = capacity; i < buffer.size(); ++i) {
      EXPECT_EQ(buffer[i], kPoison) << "written past the capacity at " << i;
    }
    if (hit.size == 0) return hit;
    store_field(buffer.data(), 2, static_cast<uint16_t>(hit.size));
    hit.record.assign(buffer.begin(), buffer.begin() + hit.size);
    hit.args = format_args(hit);
    return hit;
  }

  static std::string format_args(const Hit& hit) {
    std::string line;
    TraceFormatter().format_text(hit.event, hit.record, "worker", line);
    const std::string ip = hit.event.is_return ? "(0x401234 <- 0x401000)" : "(0x401000)";
    const size_t start = line.find(ip);
    EXPECT_NE(start, std::string::npos) << line;
    if (start == std::string::npos) return line;
    return line.substr(start + ip.size(), line.size() - start - ip.size() - 1);
  }

  uint64_t& x86_reg(x86::Reg reg) { return regs_[reg]; }
  uint64_t& a64_reg(unsigned reg) { return regs_[reg]; }

  std::array<uint64_t, 40> regs_{};
  FakeMemory memory_;
  std::vector<uint64_t> entry_args_;
  char comm_[16] = "worker";
  uint64_t duration_ns_ = 0;
};

// ---- Types ----------------------------------------------------------------

TEST_F(FetchExecTest, UnsignedTypesStoreTheLowBytes) {
  x86_reg(x86::kAx) = 0xfedcba9876543210;
  const Hit hit = run("a=%ax:u8 b=%ax:u16 c=%ax:u32 d=%ax:u64");
  EXPECT_EQ(hit.args, " a=16 b=12816 c=1985229328 d=18364758544493064720");
  EXPECT_EQ(hit.field(0), 0x10u);
  EXPECT_EQ(hit.field(1), 0x3210u);
  EXPECT_EQ(hit.field(2), 0x76543210u);
  EXPECT_EQ(hit.field(3), 0xfedcba9876543210u);
  EXPECT_EQ(hit.size, 32u + 1 + 2 + 4 + 8);
}

TEST_F(FetchExecTest, SignedTypesPrintNegative) {
  x86_reg(x86::kBx) = static_cast<uint64_t>(-2);
  x86_reg(x86::kDi) = kData;
  memory_.put_u32(kData, 0x80000000u);
  memory_.put(kData + 4, "\x80\x7f", 2);
  const Hit hit =
      run("a=%bx:s8 b=%bx:s16 c=%bx:s32 d=%bx:s64 e=+0(%di):s32 f=+4(%di):s8 g=+5(%di):s8");
  EXPECT_EQ(hit.args, " a=-2 b=-2 c=-2 d=-2 e=-2147483648 f=-128 g=127");
  EXPECT_EQ(hit.field(0), 0xfeu);
  EXPECT_EQ(hit.field(2), 0xfffffffeu);
}

TEST_F(FetchExecTest, HexTypesAndTheDefault) {
  x86_reg(x86::kCx) = 0x1122334455667788;
  const Hit hit = run("a=%cx:x8 b=%cx:x16 c=%cx:x32 d=%cx:x64 e=%cx");
  EXPECT_EQ(hit.args, " a=0x88 b=0x7788 c=0x55667788 d=0x1122334455667788 e=0x1122334455667788");
}

TEST_F(FetchExecTest, Char) {
  x86_reg(x86::kSi) = 0x4241;
  x86_reg(x86::kDi) = kData;
  memory_.put_string(kData, "Quit");
  const Hit hit = run("a=%si:char b=+0(%di):char c=+3(%di):char");
  EXPECT_EQ(hit.args, " a='A' b='Q' c='t'");
}

TEST_F(FetchExecTest, SymbolTypesStoreTheRawAddress) {
  x86_reg(x86::kIp) = kProbeIp + 5;
  x86_reg(x86::kSp) = kStackTop;
  memory_.put_u64(kStackTop, 0x7f0011223344);
  const Hit hit = run("a=%ip:symbol b=+0(%sp):symstr");
  EXPECT_EQ(hit.field(0), kProbeIp + 5);
  EXPECT_EQ(hit.field(1), 0x7f0011223344u);
  EXPECT_EQ(hit.args, " a=0x401005 b=\"0x7f0011223344\"");  // no symbolizer: raw
}

TEST_F(FetchExecTest, StringAndUstring) {
  x86_reg(x86::kDi) = kData;
  x86_reg(x86::kSi) = kData + 0x100;
  memory_.put_string(kData, "/etc/passwd");
  memory_.put_string(kData + 0x100, "user");
  const Hit hit = run("a=+0(%di):string b=+0(%si):ustring c=+u5(%di):string d=+5(%di):ustring");
  EXPECT_EQ(hit.args, " a=\"/etc/passwd\" b=\"user\" c=\"passwd\" d=\"passwd\"");
  const uint32_t fixed = hit.event.fixed_size;
  EXPECT_EQ(hit.data_loc(0), make_data_loc(fixed, 12));
  EXPECT_EQ(hit.data_loc(1), make_data_loc(fixed + 12, 5));
  EXPECT_EQ(hit.size, fixed + 12 + 5 + 7 + 7);
  EXPECT_EQ(std::to_integer<char>(hit.record[fixed]), '/');
  EXPECT_EQ(std::to_integer<char>(hit.record[fixed + 11]), '\0');
}

TEST_F(FetchExecTest, EmptyString) {
  x86_reg(x86::kDi) = kData;
  memory_.put_string(kData, "");
  const Hit hit = run("s=+0(%di):string");
  EXPECT_EQ(hit.args, " s=\"\"");
  EXPECT_EQ(data_loc_length(hit.data_loc(0)), 1u);
}

// ---- Sources --------------------------------------------------------------

TEST_F(FetchExecTest, EveryX86Register) {
  std::string args;
  for (uint16_t i = 0; i < x86::kRegCount; ++i) {
    regs_[i] = 0x1000 + i;
    args += std::string(" r") + std::to_string(i) + "=%" + std::string(x86::kRegisterNames[i]);
  }
  const Hit hit = run(args.substr(1));
  for (uint16_t i = 0; i < x86::kRegCount; ++i) EXPECT_EQ(hit.field(i), 0x1000u + i) << i;
}

TEST_F(FetchExecTest, EveryArm64Register) {
  std::string args;
  for (uint16_t i = 0; i < a64::kRegCount; ++i) {
    regs_[i] = 0x2000 + i;
    args += std::string(" r") + std::to_string(i) + "=%" + std::string(a64::kRegisterNames[i]);
  }
  const Hit hit = run(args.substr(1), Isa::kArm64);
  for (uint16_t i = 0; i < a64::kRegCount; ++i) EXPECT_EQ(hit.field(i), 0x2000u + i) << i;
}

TEST_F(FetchExecTest, StackWordsAndStackPointer) {
  x86_reg(x86::kSp) = kStackTop;
  for (uint64_t i = 0; i < 4; ++i) memory_.put_u64(kStackTop + 8 * i, 0xa0 + i);
  const Hit hit = run("sp=$stack s0=$stack0 s1=$stack1 s3=$stack3:u8");
  EXPECT_EQ(hit.args, " sp=0x7ffd0000 s0=0xa0 s1=0xa1 s3=163");
}

TEST_F(FetchExecTest, Arm64StackUsesSp) {
  a64_reg(a64::kSp) = kStackTop;
  memory_.put_u64(kStackTop + 16, 77);
  const Hit hit = run("sp=$stack s2=$stack2:u64", Isa::kArm64);
  EXPECT_EQ(hit.args, " sp=0x7ffd0000 s2=77");
}

TEST_F(FetchExecTest, X86ArgumentsInRegistersThenOnTheStack) {
  const x86::Reg order[] = {x86::kDi, x86::kSi, x86::kDx, x86::kCx, x86::kR8, x86::kR9};
  for (unsigned i = 0; i < 6; ++i) x86_reg(order[i]) = i + 1;
  x86_reg(x86::kSp) = kStackTop;
  memory_.put_u64(kStackTop, 0xdead);  // the return address, never an argument
  memory_.put_u64(kStackTop + 8, 7);
  memory_.put_u64(kStackTop + 16, 8);
  const Hit hit = run("$arg1:u8 $arg2:u8 $arg3:u8 $arg4:u8 $arg5:u8 $arg6:u8 $arg7:u8 $arg8:u8");
  EXPECT_EQ(hit.args, " arg1=1 arg2=2 arg3=3 arg4=4 arg5=5 arg6=6 arg7=7 arg8=8");
}

TEST_F(FetchExecTest, Arm64ArgumentsInRegistersThenOnTheStack) {
  for (unsigned i = 0; i < 8; ++i) a64_reg(a64::kX0 + i) = 10 + i;
  a64_reg(a64::kSp) = kStackTop;
  memory_.put_u64(kStackTop, 18);
  memory_.put_u64(kStackTop + 8, 19);
  std::string args;
  for (unsigned n = 1; n <= 10; ++n) args += " $arg" + std::to_string(n) + ":u32";
  const Hit hit = run(args.substr(1), Isa::kArm64);
  EXPECT_EQ(hit.args,
            " arg1=10 arg2=11 arg3=12 arg4=13 arg5=14 arg6=15 arg7=16 arg8=17 arg9=18 arg10=19");
}

TEST_F(FetchExecTest, ReturnProbeArgumentsComeFromTheEntry) {
  entry_args_ = {11, 22, 33};
  x86_reg(x86::kDi) = 999;  // clobbered by the time the function returns
  x86_reg(x86::kAx) = static_cast<uint64_t>(-9);
  const Hit hit = run("$arg1:u32 $arg3:u32 rv=$retval:s64 $arg4:u32", Isa::kX86_64, 'r');
  EXPECT_EQ(hit.args, " arg1=11 arg2=33 rv=-9 arg4=0");  // $arg4 was never fetched
  EXPECT_EQ(hit.event.args[0].offset, 40u);
}

TEST_F(FetchExecTest, DurationIsTheReturnInstancesElapsedTime) {
  duration_ns_ = 1'500'000;
  const Hit hit = run("lat=$duration:u64 us=$duration:u32", Isa::kX86_64, 'r');
  EXPECT_EQ(hit.args, " lat=1500000 us=1500000");
}

TEST_F(FetchExecTest, ReturnValueOnArm64) {
  a64_reg(a64::kX0) = 0x55;
  a64_reg(8) = 0x66;
  EXPECT_EQ(run("$retval:u8 %x8:u8", Isa::kArm64, 'r').args, " arg1=85 arg2=102");
}

TEST_F(FetchExecTest, Comm) {
  const Hit hit = run("c=$comm");
  EXPECT_EQ(hit.args, " c=\"worker\"");
  EXPECT_EQ(data_loc_length(hit.data_loc(0)), 7u);
}

TEST_F(FetchExecTest, CommIsAtMostFifteenCharacters) {
  for (char& c : comm_) c = 'n';  // no NUL in all 16 bytes
  const Hit hit = run("c=$comm");
  EXPECT_EQ(hit.args, " c=\"nnnnnnnnnnnnnnn\"");
  EXPECT_EQ(data_loc_length(hit.data_loc(0)), 16u);
}

TEST_F(FetchExecTest, Immediates) {
  const Hit hit = run("a=\\1234 b=\\-5:s32 c=\\0x10:u8 d=\\\"hello_world\"");
  EXPECT_EQ(hit.args, " a=0x4d2 b=-5 c=16 d=\"hello_world\"");
}

TEST_F(FetchExecTest, ImmediateAddressAsString) {
  memory_.put_string(0x5000, "at 0x5000");
  const Hit hit = run("a=\\0x5000:string b=@0x5000:string");
  EXPECT_EQ(hit.args, " a=\"at 0x5000\" b=\"at 0x5000\"");
}

TEST_F(FetchExecTest, MemoryAtAnAddress) {
  memory_.put_u64(0x5000, 0x0102030405060708);
  const Hit hit = run("a=@0x5000:u32 b=@0x5004:x8 c=@0x5000");
  EXPECT_EQ(hit.args, " a=84281096 b=0x4 c=0x102030405060708");
}

TEST_F(FetchExecTest, UnresolvedSymbolsAndFileOffsetsFault) {
  memory_.put_u64(0x6000, 42);
  Hit hit = run("a=@counter+8:u32 b=@+0x2000:u32 c=@counter:string");
  EXPECT_EQ(hit.args, " a=0 b=0 c=(fault)");
  // Armed, the agent turns the reference into an immediate address.
  EventDesc resolved = hit.event;
  resolved.args[0].code[0] = {FetchOp::kImm, 0, 0, 0, 0, 0x5ff8 + 8};  // counter at 0x5ff8
  resolved.args[1].code[0] = {FetchOp::kImm, 0, 0, 0, 0, 0x6000};
  EXPECT_EQ(run_event(resolved).args, " a=42 b=42 c=(fault)");
}

// ---- Dereferences ---------------------------------------------------------

TEST_F(FetchExecTest, NestedDereferencesAndNegativeOffsets) {
  // di -> { +0: p1 }, p1 -> { +16: p2 }, p2 -> { +8: 0xbeef }
  x86_reg(x86::kDi) = kData;
  memory_.put_u64(kData, kData + 0x100);
  memory_.put_u64(kData + 0x100 + 16, kData + 0x200);
  memory_.put_u32(kData + 0x200 + 8, 0xbeef);
  x86_reg(x86::kBp) = kData + 0x300;
  memory_.put_u64(kData + 0x300 - 8, static_cast<uint64_t>(-1234));
  memory_.put_u64(kData + 0x300 - 16, kData + 0x400);
  memory_.put_u64(kData + 0x400 - 24, 0x7);
  const Hit hit =
      run("a=+8(+16(+0(%di))):x32 b=-8(%bp):s64 c=-24(-16(%bp)):u16 d=+u8(+u16(+u0(%di))):u16");
  EXPECT_EQ(hit.args, " a=0xbeef b=-1234 c=7 d=48879");
}

TEST_F(FetchExecTest, FourteenLevelsDeep) {
  // Each word points to the next; the last holds the value.
  std::string arg = "%di";
  for (int i = 0; i < 14; ++i) arg = "+0(" + arg + ")";
  x86_reg(x86::kDi) = kData;
  for (uint64_t i = 0; i < 13; ++i) memory_.put_u64(kData + 8 * i, kData + 8 * (i + 1));
  memory_.put_u64(kData + 8 * 13, 99);
  EXPECT_EQ(run("v=" + arg + ":u8").args, " v=99");
}

// ---- Bitfields ------------------------------------------------------------

// b<width>@<offset>/<container>: the reference computed the obvious way.
uint64_t bitfield_reference(uint64_t value, unsigned width, unsigned offset) {
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  return (value >> offset) & mask;
}

TEST_F(FetchExecTest, BitfieldsMatchTheReference) {
  struct Case {
    unsigned width, offset, container;
  };
  const Case cases[] = {{4, 2, 32},  {1, 63, 64}, {8, 0, 8}, {3, 5, 8},   {16, 16, 32},
                        {12, 4, 16}, {64, 0, 64}, {1, 0, 8}, {7, 57, 64}, {32, 0, 32},
                        {5, 11, 16}, {31, 1, 32}, {2, 6, 8}, {33, 20, 64}};
  const uint64_t values[] = {0xdeadbeefcafebabe, ~uint64_t{0}, 0, 0x8000000000000001,
                             0x0123456789abcdef};
  x86_reg(x86::kDi) = kData;
  for (uint64_t value : values) {
    memory_.put_u64(kData, value);
    for (const Case& c : cases) {
      const std::string type = "b" + std::to_string(c.width) + "@" + std::to_string(c.offset) +
                               "/" + std::to_string(c.container);
      const uint64_t container =
          c.container == 64 ? value : value & ((uint64_t{1} << c.container) - 1);
      const uint64_t expected = bitfield_reference(container, c.width, c.offset);
      const Hit hit = run("f=+0(%di):" + type);
      EXPECT_EQ(hit.field(0), expected) << type << " of " << std::hex << value;
      EXPECT_EQ(hit.args, " f=" + std::to_string(expected)) << type;
    }
  }
}

TEST_F(FetchExecTest, BitfieldOfARegister) {
  x86_reg(x86::kAx) = 0xabcd;
  const Hit hit = run("lo=%ax:b4@0/8 hi=%ax:b4@4/8 mid=%ax:b8@4/16 top=%ax:b1@15/16");
  EXPECT_EQ(hit.args, " lo=13 hi=12 mid=188 top=1");
}

TEST_F(FetchExecTest, BitfieldArray) {
  x86_reg(x86::kDi) = kData;
  const uint8_t bytes[] = {0x12, 0x34, 0x56};
  memory_.put(kData, bytes, sizeof(bytes));
  EXPECT_EQ(run("f=+0(%di):b4@4/8[3]").args, " f={1,3,5}");
}

// ---- Arrays ---------------------------------------------------------------

TEST_F(FetchExecTest, ArraysOfNumbers) {
  x86_reg(x86::kDi) = kData;
  const uint8_t bytes[] = {1, 2, 3, 4, 5, 0, 0, 0};
  memory_.put(kData, bytes, sizeof(bytes));
  const uint32_t words[] = {100, 200, 0xffffffff};
  memory_.put(kData + 0x40, words, sizeof(words));
  const Hit hit = run("a=+0(%di):u8[5] b=+0x40(%di):u32[3] c=+0(%di):x8[2] d=+0x40(%di):s32[3]");
  EXPECT_EQ(hit.args, " a={1,2,3,4,5} b={100,200,4294967295} c={0x1,0x2} d={100,200,-1}");
  EXPECT_EQ(hit.field(1, 2), 0xffffffffu);
}

TEST_F(FetchExecTest, ArrayElementsFaultOneByOne) {
  x86_reg(x86::kDi) = kData;
  const uint32_t words[] = {1, 2, 3, 4};
  memory_.put(kData, words, sizeof(words));
  memory_.unmap(kData + 9, 1);  // one byte of the third element
  const Hit hit = run("a=+0(%di):u32[4]");
  EXPECT_EQ(hit.args, " a={1,2,0,4}");
}

TEST_F(FetchExecTest, ArrayOfStrings) {
  // +0(%di):string[3] reads three pointers at di, di+8, di+16.
  x86_reg(x86::kDi) = kData;
  memory_.put_u64(kData, kData + 0x100);
  memory_.put_u64(kData + 8, kData + 0x200);
  memory_.put_u64(kData + 16, kData + 0x300);
  memory_.put_string(kData + 0x100, "a");
  memory_.put_string(kData + 0x200, "bb");
  memory_.put_string(kData + 0x300, "ccc");
  const Hit hit = run("s=+0(%di):string[3]");
  EXPECT_EQ(hit.args, " s={\"a\",\"bb\",\"ccc\"}");
  const uint32_t fixed = hit.event.fixed_size;
  EXPECT_EQ(hit.data_loc(0, 0), make_data_loc(fixed, 2));
  EXPECT_EQ(hit.data_loc(0, 1), make_data_loc(fixed + 2, 3));
  EXPECT_EQ(hit.data_loc(0, 2), make_data_loc(fixed + 5, 4));
  EXPECT_EQ(hit.size, fixed + 9);
}

TEST_F(FetchExecTest, ArrayOfStringsBehindAPointer) {
  // argv-like: +8(+0(%di)) follows di once; the pointer array starts 8
  // bytes into what it points to, so the pointers are at +8 and +16.
  x86_reg(x86::kDi) = kData;
  memory_.put_u64(kData, kData + 0x80);
  memory_.put_u64(kData + 0x80 + 8, kData + 0x100);
  memory_.put_u64(kData + 0x80 + 16, kData + 0x200);
  memory_.put_string(kData + 0x100, "first");
  memory_.put_string(kData + 0x200, "second");
  EXPECT_EQ(run("s=+8(+0(%di)):string[2]").args, " s={\"first\",\"second\"}");
}

TEST_F(FetchExecTest, ArrayOfStringsFaultsOneByOne) {
  x86_reg(x86::kDi) = kData;
  memory_.put_u64(kData, kData + 0x100);
  memory_.put_u64(kData + 8, 0x999000);  // points nowhere
  // the third pointer itself is unmapped
  memory_.put_u64(kData + 24, kData + 0x200);
  memory_.put_string(kData + 0x100, "ok");
  memory_.put_string(kData + 0x200, "last");
  const Hit hit = run("s=+0(%di):string[4]");
  EXPECT_EQ(hit.args, " s={\"ok\",(fault),(fault),\"last\"}");
  EXPECT_EQ(hit.size, hit.event.fixed_size + 3 + 5);
}

// ---- Faults at each stage -------------------------------------------------

TEST_F(FetchExecTest, DereferenceFault) {
  x86_reg(x86::kDi) = kData;
  memory_.put_u64(kData, 0x999000);  // a wild pointer
  const Hit hit = run("a=+0(+0(%di)):u32 b=+0(+0(%di)):string c=+0(+0(%si)):x64 d=+0(%di):u8[2]");
  EXPECT_EQ(hit.args, " a=0 b=(fault) c=0x0 d={0,144}");  // d reads the pointer's bytes
  EXPECT_EQ(hit.size, hit.event.fixed_size);
}

TEST_F(FetchExecTest, StoreFault) {
  x86_reg(x86::kDi) = 0x999000;
  x86_reg(x86::kSp) = 0x999000;
  const Hit hit = run("a=+0(%di):u64 b=+4(%di):s8 c=+0(%di):char d=$stack2 e=+0(%di):u8[3]");
  EXPECT_EQ(hit.args, std::string(" a=0 b=0 c='") + '\0' + "' d=0x0 e={0,0,0}");
  for (size_t i = 0; i < hit.event.args.size(); ++i) {
    for (uint32_t e = 0; e < (hit.event.args[i].count ? hit.event.args[i].count : 1); ++e) {
      EXPECT_EQ(hit.field(i, e), 0u) << i;
    }
  }
}

TEST_F(FetchExecTest, StringFault) {
  x86_reg(x86::kDi) = kData;
  memory_.put(kData, "no NUL here", 11);  // runs into unmapped memory
  x86_reg(x86::kSi) = kData + 0x100;
  memory_.put_string(kData + 0x100, "fine");
  const Hit hit = run("a=+0(%di):string b=+0(%si):string c=+0(%bx):string");
  EXPECT_EQ(hit.args, " a=(fault) b=\"fine\" c=(fault)");
  EXPECT_EQ(hit.data_loc(0), 0u);
  // The faulted string takes no room: the next one starts at fixed_size.
  EXPECT_EQ(hit.data_loc(1), make_data_loc(hit.event.fixed_size, 5));
}

// ---- Limits ---------------------------------------------------------------

TEST_F(FetchExecTest, StringLongerThanMaxStringSizeIsCut) {
  x86_reg(x86::kDi) = kData;
  memory_.put_string(kData, std::string(5000, 'x'));
  const Hit hit = run("s=+0(%di):string t=$comm");
  EXPECT_EQ(data_loc_length(hit.data_loc(0)), kMaxStringSize);
  EXPECT_EQ(hit.args, " s=\"" + std::string(kMaxStringSize - 1, 'x') + "\" t=\"worker\"");
  EXPECT_EQ(hit.size, hit.event.fixed_size + kMaxStringSize + 7);
}

TEST_F(FetchExecTest, StringsThatDoNotFitAreFaults) {
  x86_reg(x86::kDi) = kData;
  x86_reg(x86::kSi) = kData + 0x100;
  x86_reg(x86::kDx) = kData + 0x200;
  memory_.put_string(kData, "abc");               // 4 bytes
  memory_.put_string(kData + 0x100, "too long");  // 9 bytes
  memory_.put_string(kData + 0x200, "de");        // 3 bytes
  const std::string args = "a=+0(%di):string b=+0(%si):string c=+0(%dx):string";
  const uint32_t fixed = first_arg_offset(false) + 12;
  // Room for "abc" and "de" but not "too long".
  Hit hit = run(args, Isa::kX86_64, 'p', fixed + 4 + 8);
  EXPECT_EQ(hit.args, " a=\"abc\" b=(fault) c=\"de\"");
  EXPECT_EQ(hit.size, fixed + 7);
  // Exactly enough for all three.
  hit = run(args, Isa::kX86_64, 'p', fixed + 16);
  EXPECT_EQ(hit.args, " a=\"abc\" b=\"too long\" c=\"de\"");
  EXPECT_EQ(hit.size, fixed + 16);
  // No room at all.
  hit = run(args, Isa::kX86_64, 'p', fixed);
  EXPECT_EQ(hit.args, " a=(fault) b=(fault) c=(fault)");
  EXPECT_EQ(hit.size, fixed);
}

TEST_F(FetchExecTest, HostStringsThatDoNotFitAreFaults) {
  const std::string args = "c=$comm d=\\\"0123456789\"";
  const uint32_t fixed = first_arg_offset(false) + 8;
  Hit hit = run(args, Isa::kX86_64, 'p', fixed + 7 + 10);
  EXPECT_EQ(hit.args, " c=\"worker\" d=(fault)");
  hit = run(args, Isa::kX86_64, 'p', fixed + 7 + 11);
  EXPECT_EQ(hit.args, " c=\"worker\" d=\"0123456789\"");
}

TEST_F(FetchExecTest, FixedFieldsThatDoNotFitStoreNothing) {
  x86_reg(x86::kAx) = 1;
  const Hit hit = run("a=%ax b=%ax", Isa::kX86_64, 'p', first_arg_offset(false) + 15);
  EXPECT_EQ(hit.size, 0u);
}

TEST_F(FetchExecTest, NoArguments) {
  const Hit hit = run("");
  EXPECT_EQ(hit.size, first_arg_offset(false));
  EXPECT_EQ(hit.args, "");
  // A return record: the ip fields, then the entry time.
  EXPECT_EQ(run("", Isa::kX86_64, 'r').size, first_arg_offset(true) + 8);
}

TEST_F(FetchExecTest, RecordCapacityIsCappedAtTheLargestRecord) {
  // Sixteen 4095-byte strings would need 64 KiB; the last ones must fault
  // rather than get offsets a __data_loc cannot hold.
  x86_reg(x86::kDi) = kData;
  memory_.put_string(kData, std::string(4095, 'y'));
  std::string args;
  for (int i = 0; i < 17; ++i) args += " s" + std::to_string(i) + "=+0(%di):string";
  const Hit hit = run(args.substr(1), Isa::kX86_64, 'p', 100000);
  EXPECT_LE(hit.size, kMaxRecordSize);
  EXPECT_EQ(data_loc_length(hit.data_loc(0)), 4096u);
  EXPECT_EQ(data_loc_length(hit.data_loc(16)), 0u);
  EXPECT_EQ(data_loc_length(hit.data_loc(15)), 0u);
}

// ---- Malformed programs ---------------------------------------------------

TEST_F(FetchExecTest, MalformedProgramsStoreZero) {
  x86_reg(x86::kAx) = 0x1234;
  x86_reg(x86::kDi) = kData;
  memory_.put_u32(kData, 0x00090008);
  const Hit good = run("a=%ax:u32 b=%ax:u32 c=%ax:u32 d=%ax:u32 e=+0(%di):u16[2]");
  ASSERT_EQ(good.args, " a=4660 b=4660 c=4660 d=4660 e={8,9}");
  EventDesc bad = good.event;
  bad.args[0].code.pop_back();                                         // no kEnd
  bad.args[1].code[0].param = 1000;                                    // no such register
  bad.args[2].code[1].size = 8;                                        // store wider than the field
  bad.args[3].code.insert(bad.args[3].code.begin(), {FetchOp::kEnd});  // no source
  bad.args[4].code[2].param = 100;  // more elements than the field
  const Hit hit = run_event(bad);
  EXPECT_EQ(hit.args, " a=0 b=0 c=0 d=0 e={0,0}");
}

TEST_F(FetchExecTest, WholeLine) {
  x86_reg(x86::kDi) = kData;
  x86_reg(x86::kSi) = 0x41;
  x86_reg(x86::kDx) = static_cast<uint64_t>(-3);
  memory_.put_string(kData, "/tmp");
  const Hit hit = run("path=+0(%di):string flags=%si:x32 mode=%dx:s16 c=$comm");
  std::string line;
  TraceFormatter().format_text(hit.event, hit.record, "worker", line);
  EXPECT_EQ(line,
            "          worker-101     [001] .....     5.000000: ev: (0x401000) "
            "path=\"/tmp\" flags=0x41 mode=-3 c=\"worker\"\n");
}

}  // namespace
}  // namespace dprobe::trace
