// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A cap on the address space of the test's process, for as long as it is
// in scope: the current size plus `room`. A decoder that believed a length
// of four billion and reserved for it fails to allocate under it (new
// throws, the test fails), where a timed assertion would only guess.
//
//   const AddressSpaceCap cap(64 << 20);
//   EXPECT_FALSE(decode(bytes_claiming_four_billion_entries));
#ifndef DPROBE_TESTS_SUPPORT_ADDRESS_SPACE_H_
#define DPROBE_TESTS_SUPPORT_ADDRESS_SPACE_H_

#include <sys/resource.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace dprobe::support {

class AddressSpaceCap {
 public:
  explicit AddressSpaceCap(uint64_t room) {
    getrlimit(RLIMIT_AS, &saved_);
    rlimit capped = saved_;
    capped.rlim_cur = static_cast<rlim_t>(current_bytes() + room);
    applied_ = capped.rlim_cur < saved_.rlim_cur && setrlimit(RLIMIT_AS, &capped) == 0;
  }
  ~AddressSpaceCap() {
    if (applied_) setrlimit(RLIMIT_AS, &saved_);
  }
  AddressSpaceCap(const AddressSpaceCap&) = delete;
  AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;

  bool applied() const { return applied_; }

 private:
  // VmSize of /proc/self/status, in bytes.
  static uint64_t current_bytes() {
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
      if (key == "VmSize:") {
        uint64_t kib = 0;
        status >> kib;
        return kib * 1024;
      }
    }
    return 0;
  }

  rlimit saved_{};
  bool applied_ = false;
};

}  // namespace dprobe::support

#endif  // DPROBE_TESTS_SUPPORT_ADDRESS_SPACE_H_
