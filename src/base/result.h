// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Errors as values: Result<T, E> holds either a T or an E, in the manner of
// C++23's std::expected, which our C++20 toolchain does not ship.
//
//   Result<int> parse(std::string_view s) {
//     if (s.empty()) return fail("empty input");
//     return 42;
//   }
//   auto r = parse(text);
//   if (!r) report(r.error().message);
#ifndef DPROBE_BASE_RESULT_H_
#define DPROBE_BASE_RESULT_H_

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace dprobe {

// The general error of the CLI, symbols and registry: a message for humans.
struct Error {
  std::string message;
};

// Marks a value as the error alternative when constructing a Result.
template <typename E>
struct Unexpected {
  E error;
};

template <typename E>
Unexpected<std::decay_t<E>> unexpected(E&& error) {
  return {std::forward<E>(error)};
}

inline Unexpected<Error> fail(std::string message) { return {Error{std::move(message)}}; }

template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): implicit like std::expected
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  Result(Unexpected<E> error) : storage_(std::in_place_index<1>, std::move(error.error)) {}

  bool has_value() const { return storage_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(storage_); }
  const T& value() const& { return std::get<0>(storage_); }
  T&& value() && { return std::get<0>(std::move(storage_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  E& error() & { return std::get<1>(storage_); }
  const E& error() const& { return std::get<1>(storage_); }

 private:
  std::variant<T, E> storage_;
};

template <typename E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  // NOLINTNEXTLINE(google-explicit-constructor)
  Result(Unexpected<E> error) : error_(std::move(error.error)), ok_(false) {}

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  E& error() & { return error_; }
  const E& error() const& { return error_; }

 private:
  E error_{};
  bool ok_ = true;
};

}  // namespace dprobe

#endif  // DPROBE_BASE_RESULT_H_
