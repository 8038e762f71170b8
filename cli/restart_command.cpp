// `cape restart FILE [-- PROG [ARGS]]`: a new process from a complete checkpoint (CAPE-1,
// monitor/restart.h); cape waits for it and exits with its status. docs/cape1.md.
#include <sys/wait.h>

#include <cerrno>

#include "ckpt/format.h"
#include "cli/command.h"
#include "ckpt/process_image.h"
#include "monitor/monitor.h"
#include "monitor/restart.h"
#include "util/error.h"
#include "util/wait_status.h"

namespace cape::cli {

void add_restart_command(CLI::App& app, Context& ctx) {
  struct Args {
    std::string file;
    std::vector<std::string> command;
    int rank = 0;
    double checkpoint_every = 0;
    std::string checkpoint_file = "cape.ckpt";
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "restart",
      "Start a program again from a complete checkpoint (cape checkpoint, create()): same executable "
      "(build id checked), this node's standard streams; cape exits with the program's status");
  sub->add_option("file", args->file, "the complete checkpoint")->required();
  sub->add_option("--rank", args->rank,
                  "the node number cape_node_id() answers in the restarted program (CAPE-1's restart_on)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--checkpoint-every", args->checkpoint_every,
                  "go on taking complete checkpoints every SECONDS (the program runs under a monitor), as "
                  "cape monitor --checkpoint-every does: fault tolerance across restarts")
      ->check(cape::cli::seconds_validator());
  sub->add_option("--checkpoint-file", args->checkpoint_file, "where --checkpoint-every writes (default cape.ckpt)");
  sub->add_option("command", args->command,
                  "-- PROG [ARGS]: the executable to start when it is not at the recorded path (it must "
                  "have the same build id); the program keeps the argv it had");
  sub->callback([args, &ctx] {
    ckpt::Checkpoint c = ckpt::read_file(args->file);
    if (!c.process.empty() && (ckpt::decode_process(c.process).under_monitor || args->checkpoint_every > 0)) {
      // A CAPE program (its create() or a --checkpoint-every tick): its runtime calls need a
      // monitor, as when it was checkpointed; and periodic checkpoints are the monitor's.
      monitor::MonitorOptions mo;
      mo.argv = args->command;
      if (mo.argv.empty()) mo.argv = {ckpt::decode_process(c.process).exe};
      mo.restart = &c;
      mo.node_rank = args->rank;
      mo.checkpoint_every = args->checkpoint_every;
      mo.checkpoint_file = args->checkpoint_file;
      ctx.exit_status = monitor::run_monitor(mo, nullptr);
      return;
    }
    monitor::RestartOptions o;
    o.command = args->command;
    pid_t pid;
    try {
      pid = monitor::restart_process(c, o);
    } catch (const UserError& e) {
      throw UserError(args->file + ": " + e.what(), e.status);
    }
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0)
      if (errno != EINTR) fail_errno("waitpid");
    ctx.exit_status = WaitStatus{st}.shell_code();
  });
}

}  // namespace cape::cli
