// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C++ names for the demangling tests (tests/integration/cxx_names_test.cc):
// namespaces, a class with overloaded methods, a template instance and an
// operator. Each function is called ROUNDS times (argv[1], default 3).
#include <cstdio>
#include <cstdlib>

#define NOINLINE __attribute__((noinline))

namespace ns {

class Klass {
 public:
  NOINLINE int method(int x) { return total_ += x; }
  NOINLINE double method(double x) { return static_cast<double>(total_) + x; }
  NOINLINE int value() const { return total_; }

 private:
  int total_ = 0;
};

struct Vec {
  int x;
  int y;
};

NOINLINE Vec operator+(const Vec& a, const Vec& b) { return Vec{a.x + b.x, a.y + b.y}; }

template <typename T>
NOINLINE T twice(T value) {
  return value + value;
}

NOINLINE int f(int x) { return x * 3; }
NOINLINE double f(double x) { return x * 1.5; }

namespace inner {
NOINLINE long helper(long x) { return x - 1; }
}  // namespace inner

}  // namespace ns

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  ns::Klass klass;
  ns::Vec sum{0, 0};
  double real = 0;
  long count = 0;
  for (int i = 0; i < rounds; ++i) {
    klass.method(i);
    real += klass.method(0.5 * i);
    sum = sum + ns::Vec{i, 1};
    count += ns::twice(i) + ns::f(i) + ns::inner::helper(i);
    real += ns::twice(0.25) + ns::f(0.5 * i);
  }
  std::printf("%d %d %d %ld %.2f\n", klass.value(), sum.x, sum.y, count, real);
  return 0;
}
