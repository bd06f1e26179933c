// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What every tracing subcommand does around its first process: before it,
// the definitions loaded for the program, --disable checked, the output
// opened and the control socket made (set_up_trace); after the last, the
// rest of the trace written, then on stderr the warnings, the profile and
// what went untraced (finish_trace). Each subcommand adds only how it gets
// its first process: `run` starts it, `attach` injects the agent.
//
//   auto trace = set_up_trace(settings, executable, std::cerr);
//   if (!trace) return report(trace.error());   // its status, its message
//   ... launch, Session::open, trace->tracer->adopt(...), start(pid) ...
//   const int output_error = finish_trace(*trace, settings, std::cerr);
#ifndef DPROBE_CLI_SESSION_TRACE_SETUP_H_
#define DPROBE_CLI_SESSION_TRACE_SETUP_H_

#include <sys/types.h>

#include <iosfwd>
#include <memory>
#include <string>

#include "base/result.h"
#include "cli/command/trace_options.h"
#include "cli/process/child_watch.h"
#include "cli/process/control_server.h"
#include "cli/session/trace_loop.h"
#include "cli/session/tracer.h"

namespace dprobe::cli {

// Why a trace could not begin: the exit status, and a message (empty when
// it was reported already, as bad definitions are, with their carets).
struct SetupFailure {
  int status = 1;
  std::string message;
};

// In this order, so that the tracer goes first and the output last.
struct TraceSetup {
  std::unique_ptr<OutputFile> output;
  // --perfetto: the file, and the trace file's chunks until the end (a
  // temporary file), turned into its JSON by finish_trace.
  std::unique_ptr<OutputFile> perfetto;
  std::unique_ptr<OutputFile> records;  // --perfetto, --graph
  // --graph: where the trace lines go meanwhile (nowhere).
  std::unique_ptr<OutputFile> no_lines;
  std::unique_ptr<ControlServer> server;
  std::unique_ptr<Tracer> tracer;
  // Without --follow, from watch_children(): the processes that ran
  // untraced.
  std::unique_ptr<ChildWatch> children;

  // Starts watching the descendants of `root` (nothing with --follow:
  // they are traced). Call it before `root` can start any.
  void watch_children(pid_t root, bool follow);
};

// `executable`: the program of the first process, whose objects the
// definitions name.
Result<TraceSetup, SetupFailure> set_up_trace(const TraceSettings& settings,
                                              const std::string& executable, std::ostream& errors);

// Prints "dprobe: error: MESSAGE" unless the failure was reported already;
// returns its status.
int report(const SetupFailure& failure, std::ostream& errors);

// Ends the trace (tracer->finish()) and says on `errors` what there is to
// say: warnings and lost events, the --perfetto file, the profile with --profile, the children
// that ran untraced and the probes that stayed pending. Returns 0 or the
// errno that stopped the output (EPIPE: its reader went away).
int finish_trace(TraceSetup& trace, const TraceSettings& settings, std::ostream& errors);

// "dprobe: 2 probes stayed pending: libsqlite3.so.0 never loaded
// (sqlite/prepare, sqlite/step)", with --follow advised when children ran
// untraced (one of them may have loaded it); "" when none stayed.
std::string stayed_pending_message(const std::vector<Tracer::Pending>& pending,
                                   bool children_untraced);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_SESSION_TRACE_SETUP_H_
