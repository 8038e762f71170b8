// `cape monitor`: one node alone: run a program under the monitor (monitor/monitor.h).
#include <cstdlib>

#include "cli/command.h"
#include "monitor/monitor.h"
#include "util/error.h"
#include "util/log.h"

namespace {

struct MonitorArgs {
  std::string tracker = "uffd";
  std::string keep, log, trace;
  std::vector<std::string> loads;
  std::vector<std::string> argv;
  bool check_races = false;
  cape::monitor::TrackerOptions variant;
  bool two_stops = false, uffd_read = false, uffd_copy_all = false;
  double checkpoint_every = 0;
  std::string checkpoint_file = "cape.ckpt";
};

}  // namespace

namespace cape::cli {

void add_monitor_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<MonitorArgs>();
  auto* sub = app.add_subcommand(
      "monitor", "Run a CAPE program alone (it is the master of a 1-node job) under the monitor");
  sub->add_option("--tracker", args->tracker,
                  "How written pages are found: uffd (userfaultfd WP_ASYNC, default), "
                  "mprotect (CAPE-2's read-only pages and SIGSEGV), full (compare everything), "
                  "inproc (the program protects itself and handles SIGSEGV, 000 Sect. 3.3)")
      ->check(CLI::IsMember({"mprotect", "uffd", "full", "inproc"}));
  sub->add_option("--keep-checkpoints", args->keep,
                  "Write every checkpoint made as DIR/<node>.<sequence>.<name>.dickpt");
  sub->add_option("--trace", args->trace,
                  "Write the program's timeline to FILE: Chrome trace-event JSON (Perfetto, chrome://tracing; "
                  "docs/trace.md)");
  sub->add_option("--load", args->loads,
                  "NAME=FILE: give the program the checkpoint FILE under NAME (repeatable)")
      ->allow_extra_args(false);  // one value each time: what follows may be the program
  sub->add_flag("--check-races", args->check_races,
                "Report two nodes writing different values to one shared word without a "
                "reduction (Bernstein's conditions; docs/tickpt.md)");
  sub->add_option("--checkpoint-every", args->checkpoint_every,
                  "CAPE-1: a complete checkpoint of the program every SECONDS (outside parallel regions), "
                  "for `cape restart` (docs/cape1.md)")
      ->check(cape::cli::seconds_validator());
  sub->add_option("--checkpoint-file", args->checkpoint_file,
                  "where --checkpoint-every writes (replaced each time; default cape.ckpt)");
  const char* variants = "Tracker variants (benchmarks, tests)";
  sub->add_option("--mprotect-ahead", args->variant.mprotect_ahead,
                  "mprotect: pages unprotected at once for a sequential writer, at most (default 16; 1 = one)")
      ->check(CLI::Range(1, 256))
      ->group(variants);
  sub->add_flag("--mprotect-two-stops", args->two_stops,
                "mprotect: two ptrace stops per fault, CAPE-2's way (no resume stub)")
      ->group(variants);
  sub->add_flag("--uffd-read", args->uffd_read,
                "uffd: the monitor reads written pages (the program does not copy them)")
      ->group(variants);
  sub->add_option("--uffd-copy-threads", args->variant.uffd_copy_threads,
                  "uffd: threads copying the tracked set at start() (default 2)")
      ->check(CLI::Range(1, 16))
      ->group(variants);
  sub->add_flag("--uffd-copy-all", args->uffd_copy_all,
                "uffd: every start() registers, protects and copies the whole tracked set, every "
                "stop() unregisters it (no copies kept between windows)")
      ->group(variants);
  sub->add_option("--log", args->log, "Log levels, as CAPE_LOG (e.g. monitor:debug,calls:info)")
      ->check(cape::cli::log_spec_validator());
  cape::cli::add_program_positional(sub, args->argv);
  sub->callback([args, &ctx] {
    // Before the first log line: the log configuration is read once.
    if (!args->log.empty()) {
      if (::setenv("CAPE_LOG", args->log.c_str(), 1) != 0) throw cape::UserError(cape::errno_message("setenv"));
      (void)cape::util::log_level("monitor");  // parsed now; the program does not inherit it
      ::unsetenv("CAPE_LOG");
    }
    cape::monitor::MonitorOptions o;
    o.tracker = cape::monitor::parse_tracker_kind(args->tracker);
    o.keep_checkpoints_dir = args->keep;
    o.trace_file = args->trace;
    o.checkpoint_every = args->checkpoint_every;
    o.checkpoint_file = args->checkpoint_file;
    for (const std::string& l : args->loads) {
      auto eq = l.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == l.size())
        throw cape::UserError("--load wants NAME=FILE, got '" + l + "'");
      o.loads.emplace_back(l.substr(0, eq), l.substr(eq + 1));
    }
    o.argv = args->argv;
    o.tracker_options = args->variant;
    o.tracker_options.mprotect_one_stop = !args->two_stops;
    o.tracker_options.uffd_copy = !args->uffd_read;
    o.tracker_options.uffd_keep = !args->uffd_copy_all;
    // CAPE_CHECK_RACES=1 in the environment does the same as the flag (docs/tickpt.md).
    o.check_races = args->check_races || cape::cli::env_switch("CAPE_CHECK_RACES");
    ctx.exit_status = cape::monitor::run_monitor(o, nullptr);
  });
}

}  // namespace cape::cli
