// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Placing checked definitions in a process, from the objects it reports:
// run-time addresses, functions for the boundary check, fetch symbols made
// addresses, and the errors of objects the process has not loaded.
#include "cli/plan/probe_plan.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/plan/definitions.h"
#include "symbols/lookup.h"
#include "unit/symbols/fixture_build.h"

namespace dprobe::cli {
namespace {

using symbols::test_support::host_libc;

protocol::LoadedObject loaded(const std::string& path, uint64_t bias) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return {path, bias, st.st_dev, st.st_ino, false};
}

struct Planned {
  Result<Plan, std::vector<lang::ProbeError>> result;
};

Planned plan(const std::vector<std::string>& definitions,
             const std::vector<protocol::LoadedObject>& objects, TargetResolver& resolver) {
  std::ostringstream errors;
  auto set = load_definitions({definitions, {}, {}, {}, {}}, errors);
  EXPECT_TRUE(set) << errors.str();
  ProcessObjects process(objects, resolver);
  return {plan_probes(*set, process, resolver)};
}

constexpr uint64_t kLibcBias = 0x7f0000000000;

TEST(ProbePlan, SymbolsBecomeRunTimeAddresses) {
  TargetResolver resolver("");
  const std::vector<protocol::LoadedObject> objects = {loaded(host_libc(), kLibcBias)};
  Planned planned = plan({"p libc.so.6:malloc+4 %di"}, objects, resolver);
  ASSERT_TRUE(planned.result);
  const auto file = resolver.load("libc.so.6");
  ASSERT_TRUE(file);
  const auto malloc = (*file)->table.find("malloc");
  ASSERT_FALSE(malloc.empty());
  const protocol::ProbeRequest& request = planned.result->requests.at(0);
  EXPECT_EQ(request.address, kLibcBias + malloc.front().address + 4);
  EXPECT_EQ(request.function_address, kLibcBias + malloc.front().address);
  EXPECT_EQ(request.function_size, malloc.front().size);
}

TEST(ProbePlan, FetchSymbolsAndFileOffsetsBecomeImmediates) {
  TargetResolver resolver("");
  const std::vector<protocol::LoadedObject> objects = {loaded(host_libc(), kLibcBias)};
  Planned planned =
      plan({"p libc.so.6:malloc env=@libc.so.6:environ+8 raw=@+0x1000:u8"}, objects, resolver);
  ASSERT_TRUE(planned.result);
  const trace::EventDesc& event = planned.result->requests.at(0).spec.event;
  const auto file = resolver.load("libc.so.6");
  uint64_t environ_address = 0;
  for (const auto& variable : (*file)->variables) {
    if (variable.name == "environ") environ_address = variable.address;
  }
  ASSERT_NE(environ_address, 0u);
  EXPECT_EQ(event.args[0].code[0].op, trace::FetchOp::kImm);
  EXPECT_EQ(static_cast<uint64_t>(event.args[0].code[0].imm), kLibcBias + environ_address + 8);
  EXPECT_TRUE(event.args[0].symbols.empty());
  const auto vaddr = (*file)->elf.vaddr_of_file_offset(0x1000);
  ASSERT_TRUE(vaddr);
  EXPECT_EQ(event.args[1].code[0].op, trace::FetchOp::kImm);
  EXPECT_EQ(static_cast<uint64_t>(event.args[1].code[0].imm), kLibcBias + *vaddr);
}

// Two files' `static int calls` are two variables of one name: which one a
// fetch means cannot be told, so it is refused, not guessed.
TEST(ProbePlan, AVariableNameTwoFilesUseIsRefused) {
  const auto& fx = symbols::test_support::fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  TargetResolver resolver("");
  const std::vector<protocol::LoadedObject> objects = {loaded(fx.lib, 0x7e0000000000)};
  Planned planned =
      plan({"p " + fx.lib + ":call_a n=@" + fx.lib + ":calls:s32"}, objects, resolver);
  ASSERT_FALSE(planned.result);
  ASSERT_EQ(planned.result.error().size(), 1u);
  EXPECT_EQ(planned.result.error()[0].code, lang::ErrorCode::NON_UNIQ_SYMBOL);
  EXPECT_NE(planned.result.error()[0].detail.find("calls names more than one variable"),
            std::string::npos);
}

TEST(ProbePlan, AProbeOnAnObjectNotLoadedYetIsPending) {
  TargetResolver resolver("");
  const std::vector<protocol::LoadedObject> objects = {loaded(host_libc(), kLibcBias)};
  const auto& fx = symbols::test_support::fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  Planned planned = plan({"p libc.so.6:malloc", "p " + fx.lib + ":call_a"}, objects, resolver);
  ASSERT_TRUE(planned.result);
  EXPECT_EQ(planned.result->requests.size(), 1u);
  EXPECT_EQ(planned.result->pending, std::vector<size_t>{1});
}

TEST(ProbePlan, PlacingAgainOnlyTheProbesOfObjectsJustLoaded) {
  TargetResolver resolver("");
  const auto& fx = symbols::test_support::fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  std::ostringstream errors;
  auto set =
      load_definitions({{"p libc.so.6:malloc", "p " + fx.lib + ":call_a"}, {}, {}, {}, {}}, errors);
  ASSERT_TRUE(set) << errors.str();
  const std::vector<protocol::LoadedObject> objects = {loaded(host_libc(), kLibcBias),
                                                       loaded(fx.lib, 0x10000000)};
  ProcessObjects process(objects, resolver);
  const std::vector<protocol::LoadedObject> just_loaded = {objects[1]};
  auto plan = plan_probes(*set, process, resolver, &just_loaded);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->requests.size(), 1u);
  EXPECT_EQ(plan->requests[0].spec.event.name, "p_call_a_0");
  EXPECT_TRUE(plan->pending.empty());
}

TEST(ProbePlan, AFetchFromAnObjectNotLoadedIsReportedAtTheArgument) {
  TargetResolver resolver("");
  const std::vector<protocol::LoadedObject> objects = {loaded(host_libc(), kLibcBias)};
  const auto& fx = symbols::test_support::fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  // A short name for the library: an argument takes at most 63 characters.
  const std::string link = "/tmp/dprobe-plan-" + std::to_string(::getpid()) + ".so";
  ASSERT_EQ(::symlink(fx.lib.c_str(), link.c_str()), 0);
  const std::string definition = "p libc.so.6:malloc v=@" + link + ":fixture_counter:u32";
  Planned planned = plan({definition}, objects, resolver);
  ::unlink(link.c_str());
  ASSERT_FALSE(planned.result);
  ASSERT_EQ(planned.result.error().size(), 1u);
  const lang::ProbeError& error = planned.result.error()[0];
  EXPECT_EQ(error.code, lang::ErrorCode::OBJ_NOT_LOADED);
  EXPECT_EQ(error.column, definition.find("v="));  // under the argument
  EXPECT_NE(error.detail.find("is not mapped in the process"), std::string::npos);
}

TEST(ProbePlan, AbsoluteAddressesAreFoundInTheirObject) {
  TargetResolver resolver("");
  const std::vector<protocol::LoadedObject> objects = {loaded(host_libc(), kLibcBias)};
  const auto file = resolver.load("libc.so.6");
  const auto malloc = (*file)->table.find("malloc");
  char text[64];
  std::snprintf(text, sizeof(text), "p 0x%llx",
                static_cast<unsigned long long>(kLibcBias + malloc.front().address));
  Planned planned = plan({text}, objects, resolver);
  ASSERT_TRUE(planned.result);
  EXPECT_EQ(planned.result->requests.at(0).function_address, kLibcBias + malloc.front().address);
  Planned outside = plan({"p 0x1000"}, objects, resolver);
  ASSERT_FALSE(outside.result);
  EXPECT_EQ(outside.result.error()[0].code, lang::ErrorCode::NOT_TEXT_ADDR);
}

}  // namespace
}  // namespace dprobe::cli
