// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/session/tracer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ostream>

#include "cli/clock/trace_clock.h"
#include "cli/output/terminal_text.h"
#include "cli/process/process_root.h"
#include "symbols/rooted_path.h"
#include "syscalls/syscall_table.h"
#include "trace/event_analysis.h"

namespace dprobe::cli {
namespace {

constexpr auto kIdleDrain = std::chrono::milliseconds(2);
// How long after its hit a record may still be being written (its time is
// taken first): lines younger than this wait for the next pass.
constexpr uint64_t kSettleNs = 1'000'000;

constexpr auto kAcceptWait = std::chrono::milliseconds(50);

// The --disable names that name an event of `set`.
std::vector<uint16_t> disabled_in(const std::vector<std::string>& names,
                                  const lang::DefinitionSet& set) {
  std::vector<uint16_t> ids;
  for (const std::string& name : names) {
    if (auto found = disabled_ids({name}, set)) ids.insert(ids.end(), found->begin(), found->end());
  }
  return ids;
}

}  // namespace

std::string executable_of(pid_t pid) { return program_of(pid); }

Tracer::Tracer(ControlServer& server, TraceOptions options, lang::DefinitionSet set,
               std::ostream& errors)
    : server_(server), options_(std::move(options)), errors_(errors) {
  auto& first = sets_[options_.sources.executable];
  first = std::make_unique<lang::DefinitionSet>(std::move(set));
  first_set_ = first.get();
}

Tracer::~Tracer() { finish(); }

void Tracer::adopt(std::unique_ptr<Session> session, const lang::DefinitionSet& set) {
  auto traced = std::make_unique<Traced>();
  traced->reader =
      std::make_unique<TraceReader>(session->memory(), session->events(), &session->symbolizer(),
                                    options_.format, options_.out, options_.records != nullptr);
  traced->reader->use_host_ids(HostIds(session->pid(), session->own_pid()));
  std::lock_guard lock(mutex_);
  traced->events =
      std::make_unique<EventSwitch>(session->memory(), disabled_in(options_.disabled, set), set);
  traced->events->apply(tracing_on_);
  if (!session->going()) {
    if (auto go = session->go(); !go) errors_ << "dprobe: error: " << go.error().message << "\n";
  }
  traced->session = std::move(session);
  traced->set = &set;
  traced_.push_back(std::move(traced));
}

void Tracer::start(pid_t root) {
  drainer_ = std::thread([this] { drain_loop(); });
  acceptor_ = std::thread([this, root] { accept_loop(root); });
}

size_t Tracer::drain_pass(bool final) {
  std::lock_guard lock(mutex_);
  // Records carry the time of their hit and are committed a moment later:
  // what this pass may write is what happened before it began, less that
  // moment.
  const uint64_t upto = final ? UINT64_MAX : TraceClock::get().now_ns() - kSettleNs;
  if (const int request = take_tracing_request(); request != 0) {
    tracing_on_ = request == 1;
    for (auto& traced : traced_) {
      if (traced->events) traced->events->apply(tracing_on_);
    }
  }
  // A session that had ended before this pass has nothing left to write
  // after it: read to the end here, it goes.
  std::vector<Traced*> ended;
  size_t written = 0;
  for (auto& traced : traced_) {
    if (!traced->reader) continue;
    const bool ending = traced->session->ended();
    if (ending) ended.push_back(traced.get());
    TracePass* records = options_.records ? &record_pass_ : nullptr;
    written += traced->reader->collect(pass_, records);
    // The JVM writes its JIT map as it exits: the names a recording
    // could not give before, it gives now.
    if (ending || final) traced->reader->collect_late_symbols(pass_, records);
  }
  // Once the output failed nothing more is written to it; the rings are
  // still drained, so that the program runs on as fast as before.
  if (output_error_ == 0) {
    output_error_ = pass_.write(options_.out, upto);
  } else {
    pass_.discard();
  }
  if (options_.records != nullptr && records_error_ == 0) {
    records_error_ = record_pass_.write(options_.records, upto);
  } else {
    record_pass_.discard();
  }
  for (Traced* traced : ended) let_go(*traced);
  hits_so_far_.store(sum_of_hits(), std::memory_order_relaxed);
  return written;
}

// Under the lock.
uint64_t Tracer::sum_of_hits() const {
  uint64_t hits = 0;
  for (const auto& traced : traced_) {
    for (size_t i = 0; i < traced->set->specs().size(); ++i) hits += count_of(*traced, i).hits;
  }
  return hits;
}

void Tracer::let_go(Traced& traced) {
  for (size_t i = 0; i < traced.set->specs().size(); ++i) {
    traced.counts.push_back(count_of(traced, i));
  }
  add_syscall_stats(traced.session->memory(), syscall_totals_);
  hists_.add(traced.session->memory(), *traced.set, traced.session->symbolizer());
  dispatch_refused_ +=
      __atomic_load_n(&traced.session->memory().header().dispatch_refused, __ATOMIC_RELAXED);
  lost_.add(*traced.reader);
  note_pending(traced);
  const std::vector<std::string> problems = traced.reader->problems();
  problems_.insert(problems_.end(), problems.begin(), problems.end());
  traced.ended = true;
  traced.events.reset();
  traced.reader.reset();
  traced.session.reset();
}

Tracer::EventCounts Tracer::count_of(const Traced& traced, size_t spec) const {
  if (traced.ended) return traced.counts[spec];
  const uint32_t id = traced.set->specs()[spec].event.id;
  const auto& counter = traced.session->memory().counter(id);
  if (traced.reader) {
    return {traced.reader->hits(id), traced.reader->misses(id), traced.reader->filtered(id)};
  }
  return {counter.hits.load(), counter.misses.load(), counter.filtered.load()};
}

void Tracer::drain_loop() {
  while (!stop_.load(std::memory_order_acquire)) {
    if (drain_pass() == 0) std::this_thread::sleep_for(kIdleDrain);
  }
}

void Tracer::accept_loop(pid_t root) {
  while (!stop_.load(std::memory_order_acquire)) {
    auto connection = server_.accept_any(kAcceptWait);
    if (!connection) continue;
    if (connection->pid != root && !options_.follow) {
      ::close(connection->socket);  // not a process of this trace
      continue;
    }
    take(*connection);
  }
}

// A process that connected: a child (--follow), or a traced process in the
// new program it exec'd. Its agent waits for its probes before it goes on.
void Tracer::take(const ControlServer::Connection& connection) {
  const std::string executable = executable_of(connection.pid);
  const lang::DefinitionSet& set = set_for(executable, connection.pid);
  SessionOptions options = options_.session;
  options.kill_on_abort = false;   // a refusal leaves it running, untraced
  options.report_pending = false;  // said once, for the first process
  auto session =
      Session::open_connected(connection.socket, connection.pid, set, executable, options, errors_);
  if (!session) return;
  adopt(std::make_unique<Session>(std::move(*session)), set);
}

// The definitions for another program: those that resolve there; what does
// not is said once per program.
const lang::DefinitionSet& Tracer::set_for(const std::string& executable, pid_t pid) {
  auto& set = sets_[executable];
  if (set) return *set;
  DefinitionSources sources = options_.sources;
  sources.executable = executable;
  std::vector<std::string> unresolved;
  set = std::make_unique<lang::DefinitionSet>(load_definitions_for(sources, &unresolved));
  // Named as the process names it: a container's program by its own path.
  const std::string root = symbols::root_of(executable);
  const std::string shown = executable.substr(root.size());
  for (const std::string& line : unresolved) {
    errors_ << "dprobe: " << printable(shown) << " (pid " << pid
            << "): not probed there: " << printable(line) << "\n";
  }
  return *set;
}

bool Tracer::all_ended() {
  std::lock_guard lock(mutex_);
  for (auto& traced : traced_) {
    if (!traced->ended && !traced->session->ended() && !traced->session->exiting()) return false;
  }
  return true;
}

void Tracer::let_exiting_go() {
  std::lock_guard lock(mutex_);
  for (auto& traced : traced_) {
    if (!traced->ended && traced->session->exiting()) (void)traced->session->let_exit();
  }
}

bool Tracer::detach_all(std::chrono::milliseconds timeout) {
  std::lock_guard lock(mutex_);
  bool all = true;
  for (auto& traced : traced_) {
    if (traced->ended || traced->session->ended()) continue;
    if (auto detached = traced->session->detach(timeout); !detached) {
      errors_ << "dprobe: error: pid " << traced->session->pid() << ": " << detached.error().message
              << "\n";
      all = false;
    }
  }
  return all;
}

void Tracer::finish() {
  if (stop_.exchange(true)) return;
  server_.stop_accepting();
  if (acceptor_.joinable()) acceptor_.join();
  if (drainer_.joinable()) drainer_.join();
  drain_pass(/*final=*/true);
  LostCounts lost = lost_;
  std::vector<std::string> problems = problems_;
  for (auto& traced : traced_) {
    if (traced->ended) continue;
    const std::vector<std::string> more = traced->reader->problems();
    problems.insert(problems.end(), more.begin(), more.end());
    lost.add(*traced->reader);
    note_pending(*traced);
  }
  if (output_error_ != 0 && output_error_ != EPIPE) {
    errors_ << "dprobe: error: " << printable(options_.out_name) << ": "
            << std::strerror(output_error_) << "\n";
  }
  for (const std::string& problem : problems) {
    warnings_ += "dprobe: warning: " + printable(problem) + "\n";
  }
  warnings_ += lost_events_message(lost, options_.session.ring_bytes, options_.session.max_threads);
  errors_ << warnings_;
}

void Tracer::note_pending(const Traced& traced) {
  const std::vector<size_t> pending = traced.session->pending();
  for (size_t i = 0; i < traced.set->specs().size(); ++i) {
    const trace::ProbeSpec& spec = traced.set->specs()[i];
    const std::string key = spec.event.group + "/" + spec.event.name;
    if (std::find(pending.begin(), pending.end(), i) == pending.end()) {
      placed_.insert(key);
    } else {
      pending_.emplace(key, spec.point.target.object);
    }
  }
}

std::vector<Tracer::Pending> Tracer::stayed_pending() const {
  std::vector<Pending> stayed;
  for (const auto& [event, object] : pending_) {
    if (placed_.count(event) == 0) stayed.push_back({event, object});
  }
  return stayed;
}

void LostCounts::add(const TraceReader& reader) {
  ring_full += reader.lost_ring_full();
  no_slot += reader.lost_no_slot();
}

std::string lost_events_message(const LostCounts& lost, uint64_t ring_bytes, uint32_t max_threads) {
  std::string out;
  if (lost.ring_full > 0) {
    out += "dprobe: " + std::to_string(lost.ring_full) + " events lost: a thread's ring (" +
           std::to_string(ring_bytes >> 10) +
           " KiB) was full; a larger --buffer-size gives each thread more room\n";
  }
  if (lost.no_slot > 0) {
    out += "dprobe: " + std::to_string(lost.no_slot) + " events lost: more than " +
           std::to_string(max_threads) +
           " threads traced at once took every ring; --max-threads raises that limit\n";
  }
  return out;
}

// Adds a process's per-number counts (--summary) to `totals`.
void Tracer::count_startup_syscalls(const std::vector<SyscallCount>& by_nr) {
  std::lock_guard lock(mutex_);
  if (syscall_totals_.size() < by_nr.size()) syscall_totals_.resize(by_nr.size());
  for (size_t nr = 0; nr < by_nr.size(); ++nr) {
    syscall_totals_[nr].calls += by_nr[nr].calls;
    syscall_totals_[nr].errors += by_nr[nr].errors;
    syscall_totals_[nr].total_ns += by_nr[nr].total_ns;
  }
}

void Tracer::add_syscall_stats(const trace::TraceMemory& memory,
                               std::vector<SyscallCount>& totals) {
  if (totals.size() < trace::kSyscallStatsCount) totals.resize(trace::kSyscallStatsCount);
  for (uint32_t nr = 0; nr < trace::kSyscallStatsCount; ++nr) {
    const trace::SyscallStats& stats = memory.syscall_stats(nr);
    totals[nr].calls += stats.calls.load(std::memory_order_relaxed);
    totals[nr].errors += stats.errors.load(std::memory_order_relaxed);
    totals[nr].total_ns += stats.total_ns.load(std::memory_order_relaxed);
  }
}

std::string Tracer::dispatch_refused_message() {
  std::lock_guard lock(mutex_);
  uint64_t refused = dispatch_refused_;
  for (auto& traced : traced_) {
    if (!traced->ended) {
      refused +=
          __atomic_load_n(&traced->session->memory().header().dispatch_refused, __ATOMIC_RELAXED);
    }
  }
  if (refused == 0) return {};
  return "dprobe: the program asked " + std::to_string(refused) +
         " time(s) for Syscall User Dispatch of its own (prctl PR_SET_SYSCALL_USER_DISPATCH); "
         "refused with EBUSY while its system calls were traced\n";
}

std::string Tracer::hist_text() {
  std::lock_guard lock(mutex_);
  HistCollector hists = hists_;
  for (auto& traced : traced_) {
    if (!traced->ended) {
      hists.add(traced->session->memory(), *traced->set, traced->session->symbolizer());
    }
  }
  return hists.render();
}

std::vector<SyscallCount> Tracer::syscall_counts() {
  std::lock_guard lock(mutex_);
  std::vector<SyscallCount> totals = syscall_totals_;
  for (auto& traced : traced_) {
    if (!traced->ended) add_syscall_stats(traced->session->memory(), totals);
  }
  std::vector<SyscallCount> counts;
  for (uint32_t nr = 0; nr < totals.size(); ++nr) {
    if (totals[nr].calls == 0) continue;
    const syscalls::SyscallInfo* info = syscalls::syscall_by_nr(arch::host_isa(), nr);
    totals[nr].name =
        info != nullptr ? strace_syscall_name(info->name) : "syscall_" + std::to_string(nr);
    counts.push_back(std::move(totals[nr]));
  }
  return counts;
}

uint64_t Tracer::hits_so_far() const { return hits_so_far_.load(std::memory_order_relaxed); }

void Tracer::print_profile(std::FILE* out, bool for_a_person) {
  std::lock_guard lock(mutex_);
  // Events in the order the first program defines them, then any only
  // another program's definitions have.
  std::vector<std::string> order;
  std::map<std::string, EventCounts> counts;
  bool filters = false;  // the filtered column, only where some event has a filter
  auto note = [&](const trace::EventDesc& event) {
    const std::string key = event.group + "/" + event.name;
    if (counts.emplace(key, EventCounts{}).second) order.push_back(key);
    if (event.analysis && !event.analysis->filter.empty()) filters = true;
    return key;
  };
  for (const trace::ProbeSpec& spec : first_set_->specs()) note(spec.event);
  for (auto& traced : traced_) {
    for (size_t i = 0; i < traced->set->specs().size(); ++i) {
      const EventCounts spec_counts = count_of(*traced, i);
      EventCounts& total = counts[note(traced->set->specs()[i].event)];
      total.hits += spec_counts.hits;
      total.misses += spec_counts.misses;
      total.filtered += spec_counts.filtered;
    }
  }
  if (for_a_person) {
    std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
      return counts[a].hits > counts[b].hits;
    });
    std::fprintf(out, "  %-44s %15s %15s", "EVENT", "HITS", "MISSES");
    if (filters) std::fprintf(out, " %15s", "FILTERED");
    std::fputc('\n', out);
  }
  for (const std::string& key : order) {
    const EventCounts& total = counts[key];
    std::fprintf(out, "  %-44s %15llu %15llu", key.substr(key.find('/') + 1).c_str(),
                 static_cast<unsigned long long>(total.hits),
                 static_cast<unsigned long long>(total.misses));
    if (filters) std::fprintf(out, " %15llu", static_cast<unsigned long long>(total.filtered));
    std::fputc('\n', out);
  }
}

}  // namespace dprobe::cli
