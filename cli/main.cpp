// `cape`: the one command of the project (run, node, monitor, ckpt ...).
#include <cstdio>

#include "ckpt/checkpoint.h"
#include "cli/command.h"
#include "util/error.h"

int main(int argc, char** argv) {
  CLI::App app{"cape: run OpenMP programs on a cluster by checkpointing (CAPE)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cape 0.1.0");
  cape::cli::Context ctx;
  cape::cli::add_ckpt_command(app, ctx);
  cape::cli::add_monitor_command(app, ctx);
  cape::cli::add_node_command(app, ctx);
  cape::cli::add_run_command(app, ctx);
  cape::cli::add_checkpoint_command(app, ctx);
  cape::cli::add_restart_command(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const cape::UserError& e) {
    std::fprintf(stderr, "cape: %s\n", e.what());
    return e.status;
  } catch (const cape::ckpt::Error& e) {
    std::fprintf(stderr, "cape: %s\n", e.what());
    return 1;
  }
  return ctx.exit_status;
}
