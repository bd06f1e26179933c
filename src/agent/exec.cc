// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A traced process that execs stays traced: the exec family is interposed,
// and while a session is on, the new program's environment brings the
// agent back (LD_PRELOAD, DPROBE_CONTROL, DPROBE_FOLLOW), so that it opens
// a session of its own before the new program's main, with the probes
// that resolve there. Children the program starts through the C library's
// own paths (posix_spawn, system) inherit the environment as it is:
// scrubbed at start-up unless children are followed.
//
// No heap here: the child of vfork runs this on its parent's memory. The
// new environment is built on the stack (alloca) of the interposer itself.
#include <alloca.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

#include <cstring>

#include "agent/agent.h"
#include "agent/controller.h"
#include "agent/held_directories.h"
#include "agent/interpose.h"
#include "arch/runtime/raw_syscall.h"

#define DPROBE_EXPORT extern "C" __attribute__((visibility("default")))

extern char** environ;

namespace {

using namespace dprobe::agent;

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvpeFn = int (*)(const char*, char* const[], char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
using ExecveatFn = int (*)(int, const char*, char* const[], char* const[], int);

constexpr const char* kPreload = "LD_PRELOAD=";

bool carries_agent() { return Controller::instance().running() && !agent_path().empty(); }

bool is_agent_entry(const char* entry) {
  for (const char* name : {kPreload, "DPROBE_CONTROL=", "DPROBE_FOLLOW=", "DPROBE_DIRS="}) {
    if (std::strncmp(entry, name, std::strlen(name)) == 0) return true;
  }
  return false;
}

const char* old_preload(char* const* env) {
  for (; env != nullptr && *env != nullptr; ++env) {
    if (std::strncmp(*env, kPreload, std::strlen(kPreload)) == 0)
      return *env + std::strlen(kPreload);
  }
  return "";
}

size_t entry_count(char* const* env) {
  size_t n = 0;
  while (env != nullptr && env[n] != nullptr) ++n;
  return n;
}

// Bytes traced_environment needs: the pointers, and the four entries.
size_t traced_environment_size(char* const* env) {
  const size_t pointers = (entry_count(env) + 5) * sizeof(char*);
  const size_t preload =
      std::strlen(kPreload) + agent_path().size() + 1 + std::strlen(old_preload(env)) + 1;
  const size_t control = std::strlen(kControlEnv) + 1 + control_path().size() + 1;
  const size_t follow = std::strlen(kFollowEnv) + 3;
  return pointers + preload + control + follow + held_entries_size() +
         std::strlen(old_preload(env)) + 1;
}

// "LD_PRELOAD=AGENT[:OTHERS]" into `text` (OTHERS: what `before` preloads
// but the agent; through the held directories, the agent and its
// libraries by /proc/self/fd); returns the end of the string.
// What `before` preloads but the agent's own entries (its path, or its
// held directories' /proc/self/fd ones), each after a ':' when `colon`.
char* write_others(char* text, const char* before, bool colon) {
  const std::string& agent = agent_path();
  while (*before != '\0') {
    const size_t length = std::strcspn(before, ": ");
    const bool is_agent =
        (length == agent.size() && std::strncmp(before, agent.c_str(), length) == 0) ||
        std::strncmp(before, "/proc/self/fd/", 14) == 0;
    if (length != 0 && !is_agent) {
      if (colon) *text++ = ':';
      colon = true;
      std::memcpy(text, before, length);
      text += length;
    }
    before += length;
    if (*before != '\0') ++before;
  }
  *text = '\0';
  return text;
}

char* write_preload(char* text, const char* before, bool held) {
  text = held ? write_held_preload(text) : ::stpcpy(::stpcpy(text, kPreload), agent_path().c_str());
  return write_others(text, before, /*colon=*/true);
}

// The program's environment with the agent first in LD_PRELOAD (where the
// program had its own, so that the environment the agent hands the new
// program once it takes itself out is the one it was given, in order) and
// its CLI named, built in `storage` (traced_environment_size bytes).
// `held`: from a root where the agent's paths reach nothing (a
// container's), through the directories it holds (held_directories.h).
char* const* traced_environment(void* storage, char* const* env, bool held) {
  char** out = static_cast<char**>(storage);
  char* text = reinterpret_cast<char*>(out + entry_count(env) + 5);
  size_t n = 0;
  bool preloaded = false;
  for (char* const* e = env; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, kPreload, std::strlen(kPreload)) == 0 && !preloaded) {
      preloaded = true;
      out[n++] = text;
      text = write_preload(text, *e + std::strlen(kPreload), held) + 1;
    } else if (!is_agent_entry(*e)) {
      out[n++] = *e;
    }
  }
  if (!preloaded) {
    out[n++] = text;
    text = write_preload(text, "", held) + 1;
  }
  out[n++] = text;
  text = held ? write_held_control(text)
              : ::stpcpy(::stpcpy(::stpcpy(text, kControlEnv), "="), control_path().c_str());
  out[n++] = ++text;
  text = ::stpcpy(::stpcpy(text, kFollowEnv), follow_children() ? "=1" : "=0");
  if (held) {
    out[n++] = ++text;
    write_held_list(text);
  }
  out[n] = nullptr;
  return out;
}

// The environment without the agent's entries, in `storage`
// (traced_environment_size bytes).
char* const* untraced_environment(void* storage, char* const* env) {
  char** out = static_cast<char**>(storage);
  char* text = reinterpret_cast<char*>(out + entry_count(env) + 5);
  size_t n = 0;
  for (char* const* e = env; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, kPreload, std::strlen(kPreload)) == 0) {
      char* const entry = text;
      char* const list = ::stpcpy(text, kPreload);
      text = write_others(list, *e + std::strlen(kPreload), /*colon=*/false);
      if (text == list) {
        text = entry;  // nothing of the program's own: no LD_PRELOAD
      } else {
        out[n++] = entry;
        ++text;
      }
    } else if (!is_agent_entry(*e)) {
      out[n++] = *e;
    }
  }
  out[n] = nullptr;
  return out;
}

// What the new program's environment gets: nothing changed (no session),
// the agent, or none of it where the agent cannot reach the new program
// (so that its loader says nothing about a preload it cannot open).
enum class ExecAgent { kUnchanged, kTraced, kUntraced };

ExecAgent exec_agent() {
  if (!carries_agent()) return ExecAgent::kUnchanged;
  if (exec_needs_held_directories()) {
    return held_directories_reach() ? ExecAgent::kTraced : ExecAgent::kUntraced;
  }
  // Its path reaches nothing from here (a root of its own that holds no
  // directories, an agent loaded from a memfd by attach): a preload the
  // new program's loader could not open, and would say so on its stderr.
  const bool reaches = !dprobe::arch::raw_failed(dprobe::arch::raw_syscall(
      SYS_faccessat, AT_FDCWD, dprobe::arch::raw_arg(agent_path().c_str()), R_OK));
  return reaches ? ExecAgent::kTraced : ExecAgent::kUntraced;
}

// What an exec passes the new program, decided once, before it: its
// environment as it is, with the agent, or without the agent's entries;
// and where the agent comes through held directories, those open across
// the exec, closed at exec again when it failed and the program goes on.
class ExecPlan {
 public:
  ExecPlan()
      : agent_(exec_agent()), held_(agent_ == ExecAgent::kTraced && exec_needs_held_directories()) {
    if (held_) open_held_for_exec();
  }
  ~ExecPlan() {
    if (held_) rest_held_after_failed_exec();
  }
  ExecPlan(const ExecPlan&) = delete;
  ExecPlan& operator=(const ExecPlan&) = delete;

  bool changes_environment() const { return agent_ != ExecAgent::kUnchanged; }
  // Into `storage` (traced_environment_size bytes).
  char* const* environment(void* storage, char* const* env) const {
    return agent_ == ExecAgent::kTraced ? traced_environment(storage, env, held_)
                                        : untraced_environment(storage, env);
  }

 private:
  ExecAgent agent_;
  bool held_;
};

// execl's arguments, up to the NULL, into `storage` (count + 1 pointers).
size_t list_count(va_list args) {
  size_t n = 1;  // the first argument, named
  while (va_arg(args, char*) != nullptr) ++n;
  return n;
}

char* const* collect_list(void* storage, const char* first, va_list args) {
  char** out = static_cast<char**>(storage);
  size_t n = 0;
  out[n++] = const_cast<char*>(first);
  while (char* arg = va_arg(args, char*)) out[n++] = arg;
  out[n] = nullptr;
  return out;
}

}  // namespace

// alloca must run in the interposer's own frame: the storage has to live
// until the exec, which does not return when it works.
#define DPROBE_TRACED_ENV(plan, env)                                                            \
  ((plan).changes_environment() ? (plan).environment(alloca(traced_environment_size(env)), env) \
                                : (env))

using ChrootFn = int (*)(const char*);

// A new root: the agent's directories are held first, while their paths
// still reach (held_directories.h).
DPROBE_EXPORT int chroot(const char* path) {
  static const auto real = next_function<ChrootFn>("chroot");
  if (carries_agent()) hold_directories_now();
  return real(path);
}

DPROBE_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  static const auto real = next_function<ExecveFn>("execve");
  const ExecPlan plan;
  return real(path, argv, DPROBE_TRACED_ENV(plan, envp));
}

DPROBE_EXPORT int execv(const char* path, char* const argv[]) {
  static const auto real = next_function<ExecveFn>("execve");
  const ExecPlan plan;
  return real(path, argv, DPROBE_TRACED_ENV(plan, environ));
}

DPROBE_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  static const auto real = next_function<ExecvpeFn>("execvpe");
  const ExecPlan plan;
  return real(file, argv, DPROBE_TRACED_ENV(plan, envp));
}

DPROBE_EXPORT int execvp(const char* file, char* const argv[]) {
  static const auto real = next_function<ExecvpeFn>("execvpe");
  const ExecPlan plan;
  return real(file, argv, DPROBE_TRACED_ENV(plan, environ));
}

DPROBE_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  static const auto real = next_function<FexecveFn>("fexecve");
  const ExecPlan plan;
  return real(fd, argv, DPROBE_TRACED_ENV(plan, envp));
}

DPROBE_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                           int flags) {
  static const auto real = next_function<ExecveatFn>("execveat");
  const ExecPlan plan;
  return real(dirfd, path, argv, DPROBE_TRACED_ENV(plan, envp), flags);
}

#define DPROBE_COLLECT_ARGS(argv, first)    \
  va_list counting;                         \
  va_start(counting, first);                \
  const size_t argc = list_count(counting); \
  va_end(counting);                         \
  va_list args;                             \
  va_start(args, first);                    \
  char* const* argv = collect_list(alloca((argc + 1) * sizeof(char*)), first, args)

// The list forms call the C library's vector forms themselves: a call to
// execv from here could bind to the C library's own when the agent was
// loaded by dlopen (attach), not preloaded.
DPROBE_EXPORT int execl(const char* path, const char* arg, ...) {
  static const auto real = next_function<ExecveFn>("execve");
  DPROBE_COLLECT_ARGS(argv, arg);
  va_end(args);
  const ExecPlan plan;
  return real(path, argv, DPROBE_TRACED_ENV(plan, environ));
}

DPROBE_EXPORT int execlp(const char* file, const char* arg, ...) {
  static const auto real = next_function<ExecvpeFn>("execvpe");
  DPROBE_COLLECT_ARGS(argv, arg);
  va_end(args);
  const ExecPlan plan;
  return real(file, argv, DPROBE_TRACED_ENV(plan, environ));
}

DPROBE_EXPORT int execle(const char* path, const char* arg, ...) {
  static const auto real = next_function<ExecveFn>("execve");
  DPROBE_COLLECT_ARGS(argv, arg);
  char* const* envp = va_arg(args, char* const*);  // after the NULL
  va_end(args);
  const ExecPlan plan;
  return real(path, argv, DPROBE_TRACED_ENV(plan, envp));
}
