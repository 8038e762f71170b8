// How the `cape` command is assembled: each cli/*_command.cpp registers its subcommands
// with a static Registrar, so adding a command touches no shared file.
//
//   static cape::cli::Registrar reg("ckpt", [](CLI::App& app, cape::cli::Context& ctx) {
//     auto* sub = app.add_subcommand("ckpt", "...");
//     sub->callback([&ctx] { ctx.exit_status = ...; });
//   });
#pragma once

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <functional>
#include <string>

namespace cape::cli {

struct Context {
  int exit_status = 0;  // what `cape` exits with once the chosen subcommand has run
};

using AddCommand = std::function<void(CLI::App&, Context&)>;

// An on/off environment variable: on when set, non-empty and not "0".
inline bool env_switch(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

struct Registrar {
  Registrar(std::string order_key, AddCommand add);  // sorted by order_key in --help
};

}  // namespace cape::cli
