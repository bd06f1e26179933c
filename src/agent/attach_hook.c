// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// How `dprobe attach` starts the agent's session inside the dynamic
// loader's lock. The CLI copies this library into its private directory as
// attach.so (attach-follow.so to follow children) and has the process
// dlopen the copy: a new file each time, so that the loader runs this
// constructor on every attach, and runs it holding its lock. The session
// (dprobe_agent_attach, in the agent the process loaded just before with
// RTLD_GLOBAL) places its probes by the objects loaded now, and no other
// thread can load or unload one meanwhile; they run on otherwise, so none
// is stopped holding a lock the session needs (malloc's, the loader's).
// The control socket is `ctl` beside the copy.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <string.h>

typedef int (*AttachFn)(const char* control, int follow);

__attribute__((constructor)) static void dprobe_attach_hook(void) {
  Dl_info info;
  if (dladdr((void*)&dprobe_attach_hook, &info) == 0 || info.dli_fname == NULL) return;
  const char* slash = strrchr(info.dli_fname, '/');
  if (slash == NULL || (size_t)(slash - info.dli_fname) + sizeof("/ctl") > PATH_MAX) return;
  char control[PATH_MAX];
  memcpy(control, info.dli_fname, (size_t)(slash - info.dli_fname));
  strcpy(control + (slash - info.dli_fname), "/ctl");
  const int follow = strcmp(slash + 1, "attach-follow.so") == 0;
  AttachFn attach = (AttachFn)dlsym(RTLD_DEFAULT, "dprobe_agent_attach");
  if (attach != NULL) attach(control, follow);
}
