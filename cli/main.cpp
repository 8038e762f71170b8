// `cape`: the one command of the project (run, node, monitor, ckpt ...).
#include <algorithm>
#include <cstdio>

#include "ckpt/checkpoint.h"
#include "cli/command.h"
#include "util/error.h"

int main(int argc, char** argv) {
  CLI::App app{"cape: run OpenMP programs on a cluster by checkpointing (CAPE)"};
  app.name("cape");
  app.require_subcommand(1);
  app.set_version_flag("--version", "cape 0.1.0");
  cape::cli::Context ctx;
  cape::cli::add_ckpt_command(app, ctx);
  cape::cli::add_monitor_command(app, ctx);
  cape::cli::add_node_command(app, ctx);
  cape::cli::add_run_command(app, ctx);
  cape::cli::add_checkpoint_command(app, ctx);
  cape::cli::add_restart_command(app, ctx);
  std::vector<std::string> args(argv + 1, argv + argc);
  cape::cli::mpirun_style_args(app, args);
  std::reverse(args.begin(), args.end());  // CLI11's order
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // A usage error: status 2 (as getopt's tools), said with the subcommand it concerns.
    std::string where = "cape";
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      where += " " + sub->get_name();
    }
    std::fprintf(stderr, "%s: %s\nRun `%s --help` for the options.\n", where.c_str(), e.what(), where.c_str());
    return 2;
  } catch (const cape::UserError& e) {
    std::fprintf(stderr, "cape: %s\n", e.what());
    return e.status;
  } catch (const cape::ckpt::Error& e) {
    std::fprintf(stderr, "cape: %s\n", e.what());
    return 1;
  }
  return ctx.exit_status;
}
