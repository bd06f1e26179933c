// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A Rust program for tests/integration/rust_names_test.cc, built twice by
// rustc (tests/programs/CMakeLists.txt): rust_calls_legacy with Rust's
// legacy symbol names (C++-like, a hash at the end) and rust_calls_v0
// with its v0 names (_R...).
//   rust_calls [N]
// Sums fib(k) for k below N (default 10), each by plain recursion, and
// prints the sum.
use std::env;

#[inline(never)]
pub fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

fn main() {
    let n: u64 = env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let total: u64 = (0..n).map(fib).sum();
    println!("{}", total);
}
