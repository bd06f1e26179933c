// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C++ source variables for the debug-information tests
// (tests/integration/dwarf_vars_test.cc, tests/oracle/dwarf_values.sh): a
// class whose methods read members through `this`, a base class, a
// template instance, references. Prints what the tests expect.
#include <cstdio>
#include <cstdlib>

#define NOINLINE __attribute__((noinline))

namespace shapes {

struct Named {
  const char* name;
  int serial;
};

class Counter : public Named {
 public:
  Counter(const char* n, int s) : Named{n, s} {}
  NOINLINE int bump(int by) {
    count_ += by;
    return count_;
  }

 private:
  int count_ = 0;
};

template <typename T>
struct Box {
  T value;
  int uses;
};

template <typename T>
NOINLINE T unbox(Box<T>& box, const T& fallback) {
  box.uses++;
  return box.uses > 2 ? fallback : box.value;
}

}  // namespace shapes

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  shapes::Counter counter("clicks", 7);
  shapes::Box<long> box{40, 0};
  long sum = 0;
  for (int i = 0; i < rounds; ++i) {
    sum += counter.bump(i + 1);
    sum += shapes::unbox(box, 2L);
  }
  std::printf("%ld\n", sum);
  return 0;
}
