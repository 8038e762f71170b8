// What cape-cc and cape-translate need of the world outside the translator: cape's headers
// and libraries, the C compiler ($CC), running it (interruptibly: SIGINT/SIGTERM stop the
// compiler and everything it started), and its preprocessor, whose output is what the
// translator reads (docs/translator.md, "Preprocessing").
#pragma once

#include <string>
#include <vector>

namespace cape::tr {

struct Resources {
  std::vector<std::string> includes;  // -I dirs: cape/cc.h, cape's omp.h, cape/cape.h
  std::vector<std::string> libs;      // libcape_cc.a, libcape.a
};

// Installed: <prefix>/bin/<tool> beside <prefix>/include and <prefix>/<libdir>; else the
// build tree this binary came from. `need_libs`: libraries must exist too (cape-cc links).
bool find_resources(Resources& r, bool need_libs, std::string& why);

// $CC split into words (default "gcc").
std::vector<std::string> c_compiler();

// cape's version and the first line of `$CC --version`.
std::string version_text(const std::string& tool);

// Runs argv and waits; its exit status (128 + signal when killed). The child runs in its own
// process group, so interrupt_children() can stop it and whatever it started (cc1, as, ld).
// `verbose`: the command is printed first. `show_only`: printed, not run (status 0).
int run_command(const std::vector<std::string>& argv, bool verbose, bool show_only = false);

// SIGINT and SIGTERM: the running child's process group gets the signal too, and
// interrupted() turns true; the caller cleans up and calls die_of_signal().
void install_interrupt_handlers();
int interrupted();  // the signal received, 0 when none
[[noreturn]] void die_of_signal(int sig);

// The preprocessor's command: $CC -E with cape's include dirs first (its omp.h), -fopenmp
// (which defines _OPENMP and macro-expands `#pragma omp` lines, as OpenMP says), the user's
// preprocessing flags, the source, and `-o out`. Line markers are kept: they map every
// token back to the user's file and line.
std::vector<std::string> preprocess_command(const Resources& res, const std::vector<std::string>& pp_flags,
                                            const std::string& src, const std::string& out);

// A gcc option that matters to preprocessing (include paths, macros, the language
// standard, target and optimisation flags that predefine macros). `takes_value`: its
// value is the next argument.
bool preprocessor_option(const std::string& a, bool& takes_value);
// An option that only preprocessing uses: left out of the compile of the translation,
// where the macros are already expanded and the headers already read.
bool preprocessing_only_option(const std::string& a);

// gcc's line markers (`# 12 "prog.c" 2`) become `#line 12 "prog.c"`: under -pedantic gcc warns
// at every marker of a file it preprocesses (the translation is such a file). What is lost:
// the system-header flag, so warnings gcc keeps quiet in system headers may show.
void markers_to_line_directives(std::string& text);
// -pedantic, -Wpedantic or -pedantic-errors among the flags.
bool pedantic(const std::vector<std::string>& flags);

// Reads a whole file; false with errno set when it cannot.
bool read_file(const std::string& path, std::string& out);

}  // namespace cape::tr
