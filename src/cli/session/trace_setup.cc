// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/session/trace_setup.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <ostream>

#include "cli/output/function_graph.h"
#include "cli/output/perfetto.h"
#include "cli/output/strace_format.h"
#include "cli/output/syscall_summary.h"
#include "cli/output/terminal_text.h"
#include "trace/trace_file.h"

namespace dprobe::cli {
namespace {

constexpr int kExitFailure = 1;

// -o OUT opened close-on-exec ("e"): the program does not inherit it.
Result<std::unique_ptr<OutputFile>, SetupFailure> open_output(const std::string& path) {
  auto output = std::make_unique<OutputFile>();
  if (path.empty()) return output;
  output->file = std::fopen(path.c_str(), "we");
  if (output->file == nullptr) {
    output->file = stdout;
    return unexpected(
        SetupFailure{kExitFailure, printable(path) + ": " + std::string(std::strerror(errno))});
  }
  return output;
}

// `dprobe record`: the trace file's header, written before the program
// runs, so that an output that takes nothing (-o /dev/full) stops it there.
Result<void, SetupFailure> write_file_header(std::FILE* file, const std::string& path) {
  std::string header;
  trace::append_file_header(header);
  if (std::fwrite(header.data(), 1, header.size(), file) != header.size() ||
      std::fflush(file) != 0) {
    return unexpected(
        SetupFailure{kExitFailure, printable(path) + ": " + std::string(std::strerror(errno))});
  }
  return {};
}

// --perfetto and --graph: a temporary file for the records until the end.
Result<void, SetupFailure> open_records(TraceSetup& trace, const char* why) {
  trace.records = std::make_unique<OutputFile>();
  trace.records->file = std::tmpfile();
  if (trace.records->file == nullptr) {
    trace.records->file = stdout;
    return unexpected(SetupFailure{kExitFailure, "a temporary file for " + std::string(why) + ": " +
                                                     std::string(std::strerror(errno))});
  }
  return write_file_header(trace.records->file, "a temporary file");
}

// --perfetto: OUT.json opened now (an unwritable path stops the trace
// before it starts).
Result<void, SetupFailure> open_perfetto(const std::string& path, TraceSetup& trace) {
  auto perfetto = open_output(path);
  if (!perfetto) return unexpected(perfetto.error());
  trace.perfetto = std::move(*perfetto);
  return open_records(trace, "--perfetto");
}

// --graph, --format strace: the records kept, the lines thrown away.
Result<void, SetupFailure> open_graph(TraceSetup& trace, const char* why) {
  if (!trace.records) {
    if (auto opened = open_records(trace, why); !opened) return opened;
  }
  trace.no_lines = std::make_unique<OutputFile>();
  trace.no_lines->file = std::fopen("/dev/null", "we");
  if (trace.no_lines->file == nullptr) {
    trace.no_lines->file = stdout;
    return unexpected(SetupFailure{kExitFailure, "/dev/null for " + std::string(why) + ": " +
                                                     std::string(std::strerror(errno))});
  }
  return {};
}

// What the temporary file of records holds; 0 or the errno that stopped
// reading it.
int read_records(TraceSetup& trace, trace::TraceFileContents& contents) {
  std::FILE* records = trace.records->file;
  if (trace.tracer->records_error() != 0) return trace.tracer->records_error();
  std::string data;
  char buffer[1 << 16];
  std::rewind(records);
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), records)) > 0;) data.append(buffer, n);
  if (std::ferror(records)) return errno != 0 ? errno : EIO;
  contents = trace::read_trace_file(data);
  return 0;
}

// CLOCK_REALTIME less CLOCK_MONOTONIC (the trace clock), now: what turns
// a record's time into strace's time of day.
int64_t wall_clock_offset_ns() {
  constexpr int64_t kNsPerSecond = 1000000000;
  timespec wall{};
  timespec monotonic{};
  ::clock_gettime(CLOCK_MONOTONIC, &monotonic);
  ::clock_gettime(CLOCK_REALTIME, &wall);
  return (wall.tv_sec - monotonic.tv_sec) * kNsPerSecond + (wall.tv_nsec - monotonic.tv_nsec);
}

int write_text(std::FILE* out, const std::string& text) {
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0) {
    return errno != 0 ? errno : EIO;
  }
  return 0;
}

// The records as OUT.json, and as the function graph where the lines
// would have gone; 0 or the errno that stopped it.
int write_from_records(TraceSetup& trace, const TraceSettings& settings) {
  trace::TraceFileContents contents;
  if (const int error = read_records(trace, contents); error != 0) return error;
  if (trace.perfetto) {
    if (const int error = write_text(trace.perfetto->file, perfetto_json(contents)); error != 0) {
      return error;
    }
  }
  if (settings.graph) return write_text(trace.output->file, function_graph(contents));
  if (settings.strace) {
    StraceOptions options = *settings.strace;
    options.wall_offset_ns = wall_clock_offset_ns();
    return write_text(trace.output->file, strace_text(contents, options));
  }
  return 0;
}

// The profile and the notes as the file's last chunks; 0 or the errno of
// the write.
int write_closing_chunks(Tracer& tracer, const std::string& notes, std::FILE* file) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* memory = ::open_memstream(&text, &size);
  if (memory == nullptr) return errno;
  tracer.print_profile(memory);
  std::fclose(memory);
  std::string chunk;
  trace::append_profile_chunk(chunk, {text, size});
  std::free(text);
  if (!notes.empty()) trace::append_notes_chunk(chunk, notes);
  errno = 0;
  if (std::fwrite(chunk.data(), 1, chunk.size(), file) != chunk.size() || std::fflush(file) != 0) {
    return errno != 0 ? errno : EIO;
  }
  return 0;
}

}  // namespace

void TraceSetup::watch_children(pid_t root, bool follow) {
  if (!follow) children = std::make_unique<ChildWatch>(root);
}

Result<TraceSetup, SetupFailure> set_up_trace(const TraceSettings& settings,
                                              const std::string& executable, std::ostream& errors) {
  DefinitionSources sources = settings.sources;
  sources.executable = executable;
  auto set = load_definitions(sources, errors, settings.follow);
  if (!set) return unexpected(SetupFailure{kExitBadDefinition, ""});
  if (auto disabled = disabled_ids(settings.disabled, *set); !disabled) {
    return unexpected(SetupFailure{kExitBadDefinition, printable(disabled.error().message)});
  }
  auto output = open_output(settings.output);
  if (!output) return unexpected(output.error());
  if (settings.format == OutputFormat::kRecord) {
    if (auto header = write_file_header((*output)->file, settings.output); !header) {
      return unexpected(header.error());
    }
  }
  auto server = ControlServer::create();
  if (!server) {
    return unexpected(SetupFailure{kExitFailure, "control socket: " + server.error().message});
  }
  TraceSetup trace;
  trace.output = std::move(*output);
  if (!settings.perfetto.empty()) {
    if (auto opened = open_perfetto(settings.perfetto, trace); !opened) {
      return unexpected(opened.error());
    }
  }
  if (settings.graph || settings.strace) {
    if (auto opened = open_graph(trace, settings.graph ? "--graph" : "--format strace"); !opened) {
      return unexpected(opened.error());
    }
  }
  trace.server = std::make_unique<ControlServer>(std::move(*server));
  TraceOptions options{.sources = sources,
                       .session = settings.session,
                       .format = settings.format,
                       .out = trace.no_lines ? trace.no_lines->file : trace.output->file,
                       .disabled = settings.disabled,
                       .follow = settings.follow};
  if (!settings.output.empty()) options.out_name = settings.output;
  if (trace.records) options.records = trace.records->file;
  trace.tracer =
      std::make_unique<Tracer>(*trace.server, std::move(options), std::move(*set), errors);
  return trace;
}

int report(const SetupFailure& failure, std::ostream& errors) {
  if (!failure.message.empty()) errors << "dprobe: error: " << failure.message << "\n";
  return failure.status;
}

int finish_trace(TraceSetup& trace, const TraceSettings& settings, std::ostream& errors) {
  trace.tracer->finish();
  UntracedChildren children;
  if (trace.children) children = trace.children->stop();
  const std::string untraced =
      untraced_children_message(children) +
      stayed_pending_message(trace.tracer->stayed_pending(), children.count > 0);
  int output_error = trace.tracer->output_error();
  if (settings.format == OutputFormat::kRecord && output_error == 0) {
    output_error = write_closing_chunks(*trace.tracer, trace.tracer->warnings() + untraced,
                                        trace.output->file);
    if (output_error != 0) {
      errors << "dprobe: error: " << printable(settings.output) << ": "
             << std::strerror(output_error) << "\n";
    }
  }
  if (trace.records) {
    if (const int error = write_from_records(trace, settings); error != 0) {
      errors << "dprobe: error: "
             << printable(trace.perfetto    ? settings.perfetto
                          : settings.strace ? std::string("the strace lines")
                                            : std::string("the function graph"))
             << ": " << std::strerror(error) << "\n";
      if (output_error == 0) output_error = error;
    }
  }
  if (settings.profile) {
    // Never into the program's stdout, which is the trace's or its own.
    errors.flush();
    trace.tracer->print_profile(stderr, ::isatty(STDERR_FILENO) == 1);
    std::fflush(stderr);
  }
  // The hists go where the trace goes, text as the kernel's hist files;
  // beside a binary trace file, on stderr.
  if (const std::string hists = trace.tracer->hist_text(); !hists.empty()) {
    if (settings.format == OutputFormat::kText && output_error == 0) {
      std::fwrite(hists.data(), 1, hists.size(), trace.output->file);
      std::fflush(trace.output->file);
    } else {
      errors << hists;
    }
  }
  errors << trace.tracer->dispatch_refused_message();
  if (settings.session.syscall_summary) {
    errors << render_syscall_summary(trace.tracer->syscall_counts());
  }
  errors << untraced;
  return output_error;
}

std::string stayed_pending_message(const std::vector<Tracer::Pending>& pending,
                                   bool children_untraced) {
  if (pending.empty()) return {};
  // Grouped by object, in the order first named.
  std::vector<std::pair<std::string, std::string>> objects;  // object, its events
  for (const Tracer::Pending& probe : pending) {
    auto found = std::find_if(objects.begin(), objects.end(),
                              [&](const auto& object) { return object.first == probe.object; });
    if (found == objects.end()) {
      objects.emplace_back(probe.object, printable(probe.event));
    } else {
      found->second += ", " + printable(probe.event);
    }
  }
  const bool one = pending.size() == 1;
  std::string text = "dprobe: " + std::to_string(pending.size()) + (one ? " probe" : " probes") +
                     " stayed pending:";
  for (size_t i = 0; i < objects.size(); ++i) {
    text += (i == 0 ? " " : "; ") + printable(objects[i].first) + " never loaded (" +
            objects[i].second + ")";
  }
  if (children_untraced) text += "; a child process may have loaded it: --follow traces children";
  return text + "\n";
}

}  // namespace dprobe::cli
