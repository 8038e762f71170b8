// What `cape run` checks about the program before any node starts, so that a program that
// cannot run as a CAPE job is said once, by the launcher, with what to do.
#pragma once

#include <string>

namespace cape::cli {

// execvp's search for `prog`: throws UserError "cannot run PROG: why" with a shell's status
// (127: not found, 126: found but not runnable). Returns the path found.
std::string find_program(const std::string& prog);

// What `path` is, as far as CAPE is concerned.
enum class ProgramKind {
  cape,           // holds libcape (linked by cape-cc): the nodes cooperate
  plain_openmp,   // an ELF executable linked with an OpenMP runtime (gcc -fopenmp) but not libcape
  plain,          // an ELF executable without libcape
  not_elf,        // a script or anything else: the kernel decides what runs (not checked)
};
ProgramKind program_kind(const std::string& path);

// Refuses a program that does not hold libcape (UserError, status 1), naming `prog` as the
// user wrote it and the fix. `nodes`: the job's size, for the message.
void require_libcape(const std::string& prog, const std::string& path, int nodes);

}  // namespace cape::cli
