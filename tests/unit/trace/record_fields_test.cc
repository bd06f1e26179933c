// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/record_fields.h"

#include <gtest/gtest.h>

#include <cstring>

namespace dprobe::trace {
namespace {

EventArg arg(std::string name, TypeId type, uint32_t count = 0) {
  EventArg a;
  a.name = std::move(name);
  a.type = type;
  a.count = count;
  return a;
}

std::vector<std::string> names(const std::vector<RecordField>& fields) {
  std::vector<std::string> out;
  for (const RecordField& f : fields) out.push_back(f.name);
  return out;
}

TEST(RecordFields, EntryEventHasCommonFieldsIpAndScalarArgs) {
  EventDesc event;
  event.args = {arg("size", TypeId::kU64), arg("name", TypeId::kString),
                arg("vec", TypeId::kU32, 4), arg("fd", TypeId::kS32)};
  layout_event(event);
  const auto fields = record_fields(event);
  EXPECT_EQ(names(fields),
            (std::vector<std::string>{"common_pid", "cpu", "CPU", "common_cpu", "comm", "COMM",
                                      "__probe_ip", "size", "name", "fd"}));
  const RecordField* fd = find_record_field(fields, "fd");
  ASSERT_NE(fd, nullptr);
  EXPECT_TRUE(fd->is_signed);
  EXPECT_EQ(fd->size, 4);
  EXPECT_EQ(fd->offset, event.args[3].offset);
  EXPECT_TRUE(find_record_field(fields, "name")->is_string());
  EXPECT_EQ(find_record_field(fields, "vec"), nullptr);
  EXPECT_EQ(find_record_field(fields, "$duration"), nullptr);
}

TEST(RecordFields, ReturnEventHasFuncRetIpAndDuration) {
  EventDesc event;
  event.is_return = true;
  event.args = {arg("ret", TypeId::kX64)};
  layout_event(event);
  const auto fields = record_fields(event);
  EXPECT_NE(find_record_field(fields, "__probe_func"), nullptr);
  EXPECT_NE(find_record_field(fields, "__probe_ret_ip"), nullptr);
  EXPECT_EQ(find_record_field(fields, "__probe_ip"), nullptr);
  const RecordField* duration = find_record_field(fields, "$duration");
  ASSERT_NE(duration, nullptr);
  alignas(8) std::byte record[64] = {};
  EXPECT_EQ(read_number(*duration, {record, "x", 1234}), 1234u);
}

TEST(RecordFields, ReadsSignExtendedNumbersStringsAndComm) {
  EventDesc event;
  event.args = {arg("a", TypeId::kS8), arg("b", TypeId::kU16), arg("s", TypeId::kString)};
  layout_event(event);
  const auto fields = record_fields(event);
  alignas(8) std::byte record[128] = {};
  store_field<int8_t>(record, event.args[0].offset, -3);
  store_field<uint16_t>(record, event.args[1].offset, 0xfffe);
  std::memcpy(record + event.fixed_size, "hello", 6);
  store_field<uint32_t>(record, event.args[2].offset, make_data_loc(event.fixed_size, 6));
  RecordHeader header{1, 0, 3, 4242, 4243, 0};
  std::memcpy(record, &header, sizeof(header));
  char comm[16] = "python3";
  const HitFields hit{record, comm, 0};
  EXPECT_EQ(read_number(*find_record_field(fields, "a"), hit), static_cast<uint64_t>(-3));
  EXPECT_EQ(read_number(*find_record_field(fields, "b"), hit), 0xfffeu);
  // common_pid is the thread, as the kernel's task pid.
  EXPECT_EQ(read_number(*find_record_field(fields, "common_pid"), hit), 4243u);
  EXPECT_EQ(read_number(*find_record_field(fields, "cpu"), hit), 3u);
  const FieldString s = read_string(*find_record_field(fields, "s"), hit);
  EXPECT_EQ(std::string(s.data, s.length), "hello");
  const FieldString c = read_string(*find_record_field(fields, "comm"), hit);
  EXPECT_EQ(std::string(c.data, c.length), "python3");
  store_field<uint32_t>(record, event.args[2].offset, make_data_loc(event.fixed_size, 0));
  EXPECT_EQ(read_string(*find_record_field(fields, "s"), hit).length, 0u);
}

}  // namespace
}  // namespace dprobe::trace
