// How the `cape` command is assembled: each cli/*_command.cpp defines one add_*_command()
// that adds its subcommand to the app; main() calls them, in the order --help lists them.
// (Explicit calls, not static registrars: those vanish when their file moves into a library.)
//
//   void add_ckpt_command(CLI::App& app, Context& ctx) {
//     auto* sub = app.add_subcommand("ckpt", "...");
//     sub->callback([&ctx] { ctx.exit_status = ...; });
//   }
#pragma once

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace cape::cli {

struct Context {
  int exit_status = 0;  // what `cape` exits with once the chosen subcommand has run
};

void add_ckpt_command(CLI::App& app, Context& ctx);     // ckpt_command.cpp
void add_checkpoint_command(CLI::App& app, Context& ctx);  // checkpoint_command.cpp
void add_restart_command(CLI::App& app, Context& ctx);     // restart_command.cpp
void add_monitor_command(CLI::App& app, Context& ctx);  // monitor_command.cpp
void add_node_command(CLI::App& app, Context& ctx);     // node_command.cpp
void add_run_command(CLI::App& app, Context& ctx);      // run_command.cpp

// The program and its arguments, as mpirun takes them: the first argument that is not an
// option (or not an option's value) is the program; everything after it is the program's,
// options included; a `--` before it is allowed. (program_args.cpp)
void add_program_positional(CLI::App* sub, std::vector<std::string>& argv);
// Refuses a --log spec that names an unknown module or level (util/log.h).
CLI::Validator log_spec_validator();
// --checkpoint-every SECONDS: a number above 0, said so plainly.
CLI::Validator seconds_validator();
// Rewrites mpirun's `-np N` into `--np N` among the options of a subcommand made with
// add_program_positional (before its program), for CLI11, which reads `-np` as `-n p`.
void mpirun_style_args(const CLI::App& app, std::vector<std::string>& args);

// How a job's region changes reach the other nodes (cape run/node --sync; docs/monitor.md,
// "Lazy synchronisation"): `given` when --sync was given; else $CAPE_SYNC (eager or lazy;
// anything else is refused, naming the variable); else the built-in default. Lazy needs the
// uffd or mprotect tracker: a default (not --sync lazy itself) falls back to eager with the
// others, which the callers then refuse only when lazy was asked for on the command line.
inline constexpr const char* kDefaultSync = "lazy";  // since session 9 (docs/monitor.md, "The default")
std::string choose_sync(const std::string& given, const std::string& tracker);

// An on/off environment variable: on when set, non-empty and not "0".
inline bool env_switch(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

}  // namespace cape::cli
