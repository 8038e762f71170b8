// The program's place on the command line (cli/command.h): as mpirun and mpiexec, options
// end at the program's name. CLI11's positionals_at_end() does that once the program is
// seen; mpirun's `-np` needs a rewrite first.
#include "cli/command.h"

#include <cstdlib>

#include "monitor/lazy.h"
#include "util/error.h"
#include "util/log.h"

namespace cape::cli {

void add_program_positional(CLI::App* sub, std::vector<std::string>& argv) {
  sub->positionals_at_end();
  sub->add_option("program", argv, "PROG [ARGS...]: the options end at PROG (`--` before it is optional)")
      ->required();
}

CLI::Validator log_spec_validator() {
  return CLI::Validator([](std::string& spec) { return util::log_spec_problem(spec); }, "SPEC", "log spec");
}

CLI::Validator seconds_validator() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        char* end = nullptr;
        double d = std::strtod(v.c_str(), &end);
        if (end == v.c_str() || *end || !(d > 0) || d > 1e9)
          return "'" + v + "' is not a number of seconds above 0 (e.g. 5 or 0.5)";
        return "";
      },
      "SECONDS", "seconds");
}

std::string choose_sync(const std::string& given, const std::string& tracker) {
  std::string sync = given.empty() ? kDefaultSync : given;
  if (const char* v = std::getenv("CAPE_SYNC"); given.empty() && v && *v) {
    sync = v;
    if (sync != "eager" && sync != "lazy")
      throw UserError("CAPE_SYNC='" + sync + "' is not eager or lazy (it sets cape run's --sync default): " +
                      "unset it or give eager or lazy");
  }
  if (given.empty()) sync = sync == "lazy" && tracker != "uffd" && tracker != "mprotect" ? "eager" : sync;
  // A bad CAPE_LAZY_* value (CAPE_LAZY_PROGRAM_COPY ...) stops the job here, before any node starts.
  if (sync == "lazy") monitor::check_lazy_env();
  return sync;
}

void mpirun_style_args(const CLI::App& app, std::vector<std::string>& args) {
  if (args.empty()) return;
  const CLI::App* sub = nullptr;
  try {
    sub = app.get_subcommand(args[0]);
  } catch (const CLI::OptionNotFound&) {
    return;
  }
  if (!sub->get_positionals_at_end()) return;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--" || a.size() < 2 || a[0] != '-') return;  // the program, or `--` before it
    if (a == "-np" && sub->get_option_no_throw("--np")) args[i] = "--np";
    if (args[i].find('=') != std::string::npos) continue;  // --opt=value
    if (args[i][1] != '-' && args[i].size() > 2) continue;  // -n3
    const CLI::Option* opt = sub->get_option_no_throw(args[i]);
    if (opt && opt->get_items_expected_min() > 0) ++i;  // its value, which may start with '-'
  }
}

}  // namespace cape::cli
