// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Format descriptions compared whole. The entry event has the arguments
// Linux was given for a uprobe p_ls_0x1000 on the machine these tests were
// written on; its events/.../format differs from the expected text below
// only in the common fields, and so in the offsets.
#include "trace/event_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace/event.h"
#include "unit/trace/event_records.h"

namespace dprobe::trace {
namespace {

using test_support::make_event;

constexpr const char* kCommonFields =
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned short common_size;\toffset:2;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned int common_cpu;\toffset:4;\tsize:4;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:int common_tid;\toffset:12;\tsize:4;\tsigned:1;\n"
    "\tfield:unsigned long long common_ts;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\n";

TEST(FormatDescription, EntryEventAsTheKernelPrintsIt) {
  const EventDesc ev = make_event("p_ls_0x1000", false,
                                  {{"arg1", TypeId::kX64},
                                   {"arg2", TypeId::kU32, 4},
                                   {"arg5", TypeId::kString},
                                   {"arg6", TypeId::kX64},
                                   {"arg8", TypeId::kU32},
                                   {"arg9", TypeId::kChar},
                                   {"y", TypeId::kS16},
                                   {"z", TypeId::kString, 2}},
                                  2326);
  EXPECT_EQ(format_description(ev),
            std::string("name: p_ls_0x1000\n"
                        "ID: 2326\n"
                        "format:\n") +
                kCommonFields +
                "\tfield:unsigned long __probe_ip;\toffset:24;\tsize:8;\tsigned:0;\n"
                "\tfield:u64 arg1;\toffset:32;\tsize:8;\tsigned:0;\n"
                "\tfield:u32 arg2[];\toffset:40;\tsize:16;\tsigned:0;\n"
                "\tfield:__data_loc char[] arg5;\toffset:56;\tsize:4;\tsigned:1;\n"
                "\tfield:u64 arg6;\toffset:60;\tsize:8;\tsigned:0;\n"
                "\tfield:u32 arg8;\toffset:68;\tsize:4;\tsigned:0;\n"
                "\tfield:u8 arg9;\toffset:72;\tsize:1;\tsigned:0;\n"
                "\tfield:s16 y;\toffset:73;\tsize:2;\tsigned:1;\n"
                "\tfield:__data_loc char[][2] z;\toffset:75;\tsize:8;\tsigned:1;\n"
                "\n"
                "print fmt: \"(%lx) arg1=0x%Lx arg2={%u,%u,%u,%u} arg5=\\\"%s\\\" arg6=0x%Lx "
                "arg8=%u arg9='%c' y=%d z={\\\"%s\\\",\\\"%s\\\"}\", REC->__probe_ip, REC->arg1, "
                "REC->arg2[0], REC->arg2[1], REC->arg2[2], REC->arg2[3], __get_str(arg5), "
                "REC->arg6, REC->arg8, REC->arg9, REC->y, __get_str(z[0]), __get_str(z[1])\n");
}

TEST(FormatDescription, ReturnEvent) {
  const EventDesc ev = make_event("r_main_0", true,
                                  {{"rv", TypeId::kX64},
                                   {"n", TypeId::kU64},
                                   {"d", TypeId::kS64},
                                   {"s", TypeId::kSymbol},
                                   {"ss", TypeId::kSymStr},
                                   {"u", TypeId::kUString},
                                   {"x", TypeId::kX16, 2}},
                                  12);
  EXPECT_EQ(format_description(ev),
            std::string("name: r_main_0\n"
                        "ID: 12\n"
                        "format:\n") +
                kCommonFields +
                "\tfield:unsigned long __probe_func;\toffset:24;\tsize:8;\tsigned:0;\n"
                "\tfield:unsigned long __probe_ret_ip;\toffset:32;\tsize:8;\tsigned:0;\n"
                "\tfield:u64 rv;\toffset:40;\tsize:8;\tsigned:0;\n"
                "\tfield:u64 n;\toffset:48;\tsize:8;\tsigned:0;\n"
                "\tfield:s64 d;\toffset:56;\tsize:8;\tsigned:1;\n"
                "\tfield:u64 s;\toffset:64;\tsize:8;\tsigned:0;\n"
                "\tfield:u64 ss;\toffset:72;\tsize:8;\tsigned:0;\n"
                "\tfield:__data_loc char[] u;\toffset:80;\tsize:4;\tsigned:1;\n"
                "\tfield:u16 x[];\toffset:84;\tsize:4;\tsigned:0;\n"
                "\n"
                "print fmt: \"(%lx <- %lx) rv=0x%Lx n=%Lu d=%Ld s=%pS ss=\\\"%pS\\\" "
                "u=\\\"%s\\\" x={0x%x,0x%x}\", REC->__probe_func, REC->__probe_ret_ip, REC->rv, "
                "REC->n, REC->d, REC->s, REC->ss, __get_str(u), REC->x[0], REC->x[1]\n");
}

TEST(FormatDescription, EventWithoutArguments) {
  const EventDesc ev = make_event("p_main_0", false, {}, 1);
  EXPECT_EQ(format_description(ev),
            std::string("name: p_main_0\nID: 1\nformat:\n") + kCommonFields +
                "\tfield:unsigned long __probe_ip;\toffset:24;\tsize:8;\tsigned:0;\n"
                "\n"
                "print fmt: \"(%lx)\", REC->__probe_ip\n");
}

TEST(FormatDescription, BitfieldIsItsContainerType) {
  EventDesc ev = make_event("p", false, {{"b", TypeId::kU32}}, 3);
  ev.args[0].type_text = "b4@2/32";
  const std::string text = format_description(ev);
  EXPECT_NE(text.find("\tfield:u32 b;\toffset:32;\tsize:4;\tsigned:0;\n"), std::string::npos);
  EXPECT_NE(text.find("print fmt: \"(%lx) b=%u\", REC->__probe_ip, REC->b\n"), std::string::npos);
}

}  // namespace
}  // namespace dprobe::trace
