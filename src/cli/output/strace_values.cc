// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/strace_values.h"

#include <fmt/format.h>

#include <cstring>

namespace dprobe::cli::strace {
namespace {

bool is_octal_digit(char c) { return c >= '0' && c <= '7'; }

// One byte strace does not print as itself: \ and up to three octal
// digits; the short form only where the next byte cannot be read as a
// fourth digit.
void append_octal(std::string& out, unsigned char byte, bool digit_follows) {
  out.push_back('\\');
  const unsigned high = byte >> 6u;
  const unsigned middle = (byte >> 3u) & 7u;
  if (digit_follows || high != 0) out.push_back(static_cast<char>('0' + high));
  if (digit_follows || high != 0 || middle != 0) out.push_back(static_cast<char>('0' + middle));
  out.push_back(static_cast<char>('0' + (byte & 7u)));
}

void append_quoted_byte(std::string& out, char c, bool digit_follows) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\v':
      out += "\\v";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\r':
      out += "\\r";
      return;
    default:
      break;
  }
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte <= 0x7e) {
    out.push_back(c);
  } else {
    append_octal(out, byte, digit_follows);
  }
}

// The kernel's own codes for a call to be restarted
// (include/linux/errno.h): a traced call can end with one when a signal
// interrupts it. Not in the C library's table.
struct KernelErrno {
  int number;
  const char* name;
  const char* message;
};
constexpr KernelErrno kKernelErrnos[] = {
    {512, "ERESTARTSYS", "To be restarted if SA_RESTART is set"},
    {513, "ERESTARTNOINTR", "To be restarted"},
    {514, "ERESTARTNOHAND", "To be restarted if no handler"},
    {515, "ENOIOCTLCMD", "No ioctl command"},
    {516, "ERESTART_RESTARTBLOCK", "Interrupted by signal"},
    {517, "EPROBE_DEFER", "Requested probe deferral"},
};

constexpr const char* kSignalNames[] = {
    nullptr,     "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
    "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
    "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
    "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS"};
constexpr uint64_t kSigRtMin = 32;
constexpr uint64_t kSigRtMax = 64;

}  // namespace

std::string quote_string(std::string_view bytes, size_t limit) {
  const bool cut = bytes.size() > limit;
  const std::string_view shown = cut ? bytes.substr(0, limit) : bytes;
  std::string out = "\"";
  for (size_t i = 0; i < shown.size(); ++i) {
    // The byte after the last shown one still decides the escape's
    // length: strace looks at the next byte of what it fetched.
    const bool digit_follows = i + 1 < bytes.size() && is_octal_digit(bytes[i + 1]);
    append_quoted_byte(out, shown[i], digit_follows);
  }
  out += '"';
  if (cut) out += "...";
  return out;
}

std::string flags_text(uint64_t value, std::span<const Named> names, const char* zero) {
  if (value == 0) {
    for (const Named& named : names) {
      if (named.value == 0) return named.name;
    }
    return zero;
  }
  std::string out;
  uint64_t left = value;
  for (const Named& named : names) {
    if (named.value == 0 || (left & named.value) != named.value) continue;
    if (!out.empty()) out += '|';
    out += named.name;
    left &= ~named.value;
  }
  if (left != 0) {
    if (!out.empty()) out += '|';
    out += fmt::format("{:#x}", left);
  }
  return out;
}

std::string constant_text(uint64_t value, std::span<const Named> names,
                          const std::string& fallback) {
  for (const Named& named : names) {
    if (named.value == value) return named.name;
  }
  return fallback;
}

std::string pointer_text(uint64_t value) {
  return value == 0 ? std::string("NULL") : fmt::format("{:#x}", value);
}

std::string octal_text(uint64_t value) { return fmt::format("0{:02o}", value); }

std::string errno_text(int error) {
  for (const KernelErrno& kernel : kKernelErrnos) {
    if (kernel.number == error) return fmt::format("{} ({})", kernel.name, kernel.message);
  }
  const char* name = ::strerrorname_np(error);
  const char* message = ::strerrordesc_np(error);
  if (name == nullptr || message == nullptr) return fmt::format("E??? (Unknown error {})", error);
  return fmt::format("{} ({})", name, message);
}

std::string signal_name(uint64_t signal) {
  if (signal > 0 && signal < kSigRtMin) return kSignalNames[signal];
  if (signal == kSigRtMin) return "SIGRTMIN";
  if (signal > kSigRtMin && signal <= kSigRtMax) return fmt::format("SIGRT_{}", signal - kSigRtMin);
  return std::to_string(signal);
}

}  // namespace dprobe::cli::strace
