// `cape run`'s command line as a new user meets it (issue 17): it reads its options the way
// mpirun does, refuses a program that was not built with cape-cc, and refuses a log spec it
// does not know; `cape monitor` takes --log too. Real programs, built with cape-cc (and
// gcc -fopenmp), real jobs on this machine; every test checks the message and the status.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "../net/job_util.h"

namespace cape::net::test {
namespace {

using namespace std::chrono_literals;

// tests/cli/programs/args.c built with `cape-cc -O2` (or `gcc -fopenmp` when `plain`).
std::string build_args(const TempDir& d, bool plain = false) {
  std::string exe = d.path + (plain ? "/args_omp" : "/args");
  Proc cc = plain ? Proc::start({"gcc", "-O2", "-fopenmp", ARGS_C, "-o", exe}, d.path)
                  : Proc::start({CAPE_CC, "-O2", ARGS_C, "-o", exe}, d.path);
  EXPECT_EQ(cc.wait(120s), 0) << cc.err();
  return exe;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

const char* kRefusedHint =
    ": each of the 3 nodes would run the whole program alone. Build it with cape-cc, as you would with mpicc "
    "(cape-cc -O2 prog.c -o prog), or give --any-program to run it on every node anyway\n";

// `cape run -n 3 ./args -v -n 2`: the options end at the program; -v, -n and 2 are its own.
TEST(RunCli, ArgumentsAfterTheProgramAreTheProgramsLikeMpirun) {
  TempDir d;
  std::string args = build_args(d);
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs", args, "-v", "-n", "2"}, d.path);
  EXPECT_EQ(p.wait(60s), 0) << p.err();
  EXPECT_EQ(p.out(), "argv[1]=-v\nargv[2]=-n\nargv[3]=2\nsum=5050\n");
  EXPECT_EQ(p.err(), "");
  // Every node ran the same command line.
  EXPECT_EQ(read_file(d.path + "/logs/node.2.log"), "argv[1]=-v\nargv[2]=-n\nargv[3]=2\n");
}

// `--` before the program is optional; after it, `--` is the program's argument (mpirun).
TEST(RunCli, DoubleDashIsOptionalAndAfterTheProgramItIsAnArgument) {
  TempDir d;
  std::string args = build_args(d);
  Proc a = Proc::start({CAPE_BIN, "run", "-n", "2", "--output-dir", d.path + "/logs", "--", args, "x"}, d.path);
  EXPECT_EQ(a.wait(60s), 0) << a.err();
  EXPECT_EQ(a.out(), "argv[1]=x\nsum=5050\n");
  Proc b = Proc::start({CAPE_BIN, "run", "-n", "2", "--output-dir", d.path + "/logs", args, "--", "--log", "x"},
                       d.path);
  EXPECT_EQ(b.wait(60s), 0) << b.err();
  EXPECT_EQ(b.out(), "argv[1]=--\nargv[2]=--log\nargv[3]=x\nsum=5050\n");
}

// mpirun's `-np N`, followed by more options.
TEST(RunCli, NpWorksAsInMpirun) {
  TempDir d;
  std::string args = build_args(d);
  Proc p = Proc::start({CAPE_BIN, "run", "-np", "2", "--output-dir", d.path + "/logs", args, "a"}, d.path);
  EXPECT_EQ(p.wait(60s), 0) << p.err();
  EXPECT_EQ(p.out(), "argv[1]=a\nsum=5050\n");
  EXPECT_EQ(read_file(d.path + "/logs/node.1.log"), "argv[1]=a\n");
  EXPECT_FALSE(exists(d.path + "/logs/node.2.log"));
}

// A plain `gcc -fopenmp` binary would run whole on every node, each with its own threads:
// refused before any node starts (no log directory made), with what to do.
TEST(RunCli, APlainOpenmpBinaryIsRefused) {
  TempDir d;
  std::string omp = build_args(d, /*plain=*/true);
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "3", omp}, d.path);
  EXPECT_EQ(p.wait(30s), 1);
  EXPECT_EQ(p.err(), "cape: " + omp + " was built with OpenMP (it needs libgomp) but not with cape-cc" + kRefusedHint);
  EXPECT_EQ(p.out(), "");
  EXPECT_FALSE(exists(d.path + "/cape-logs"));
}

// Under mpirun, every `cape node` refuses it; the slaves say so in their logs, so the terminal
// shows rank 0's line once.
TEST(RunCli, UnderMpirunAPlainOpenmpBinaryIsRefusedOnce) {
  TempDir d;
  std::string omp = build_args(d, /*plain=*/true);
  Proc p = Proc::start({"mpirun", "--oversubscribe", "--allow-run-as-root", "-n", "3", "-x", "CAPE_SECRET", CAPE_BIN,
                        "node", "--master", "127.0.0.1:" + std::to_string(free_port()), "--output-dir",
                        d.path + "/logs", "--", omp},
                       d.path, {"CAPE_SECRET=" + std::string(64, 'k')});
  EXPECT_NE(p.wait(60s), 0);
  std::string line = "cape: " + omp + " was built with OpenMP (it needs libgomp) but not with cape-cc" + kRefusedHint;
  size_t at = p.err().find(line);
  EXPECT_NE(at, std::string::npos) << p.err();
  EXPECT_EQ(p.err().find(line, at + 1), std::string::npos) << p.err();
  EXPECT_EQ(p.out(), "");
  // (A slave's log has the line too, unless mpirun stopped it first, when rank 0 ended.)
}

// Any executable without libcape is refused the same way; --any-program runs it anyway
// (each node runs it; the job's status is the master's program's).
TEST(RunCli, AProgramWithoutLibcapeIsRefusedUnlessAnyProgram) {
  TempDir d;
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs", "true"}, d.path);
  EXPECT_EQ(p.wait(30s), 1);
  EXPECT_EQ(p.err(), std::string("cape: true was not built with cape-cc (it holds no libcape)") + kRefusedHint);
  Proc q = Proc::start({CAPE_BIN, "run", "-n", "2", "--any-program", "--output-dir", d.path + "/logs", "/bin/sh",
                        "-c", "exit 7"},
                       d.path);
  EXPECT_EQ(q.wait(60s), 7) << q.err();
}

// --log names modules and levels; a spec that names anything else is a usage error (2),
// said with the choices, by every command that takes --log.
TEST(RunCli, AnUnknownLogModuleOrLevelIsRefused) {
  TempDir d;
  std::string args = build_args(d);
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "2", "--log", "bogus:info", args}, d.path);
  EXPECT_EQ(p.wait(30s), 2);
  EXPECT_EQ(p.err(),
            "cape run: --log: unknown log module 'bogus' in 'bogus:info' (modules: calls, critical, locks, monitor, net, traffic)\n"
            "Run `cape run --help` for the options.\n");
  EXPECT_FALSE(exists(d.path + "/cape-logs"));
  Proc q = Proc::start({CAPE_BIN, "monitor", "--log", "net:loud", args}, d.path);
  EXPECT_EQ(q.wait(30s), 2);
  EXPECT_EQ(q.err(),
            "cape monitor: --log: unknown log level 'loud' in 'net:loud' (levels: error, warn, info or debug)\n"
            "Run `cape monitor --help` for the options.\n");
  Proc r = Proc::start({CAPE_BIN, "node", "--log", "bogus", "--", args}, d.path);
  EXPECT_EQ(r.wait(30s), 2);
  EXPECT_NE(r.err().find("cape node: --log: unknown log level 'bogus'"), std::string::npos) << r.err();
}

// An option cape does not know, before the program, is a usage error naming it.
TEST(RunCli, AnUnknownOptionBeforeTheProgramIsRefused) {
  TempDir d;
  std::string args = build_args(d);
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "2", "--bogus", args}, d.path);
  EXPECT_EQ(p.wait(30s), 2);
  EXPECT_EQ(p.err(),
            "cape run: The following argument was not expected: --bogus\nRun `cape run --help` for the options.\n");
}

// `cape monitor --log`: the monitor's log lines on stderr, the program's output untouched.
TEST(MonitorCli, LogOptionSetsTheLevels) {
  TempDir d;
  std::string args = build_args(d);
  Proc p = Proc::start({CAPE_BIN, "monitor", "--log", "calls:info", args, "-v"}, d.path);
  EXPECT_EQ(p.wait(60s), 0) << p.err();
  EXPECT_EQ(p.out(), "argv[1]=-v\nsum=5050\n");
  EXPECT_NE(p.err().find("[cape calls pid "), std::string::npos) << p.err();
  EXPECT_NE(p.err().find("runtime calls in"), std::string::npos) << p.err();
}

}  // namespace
}  // namespace cape::net::test
