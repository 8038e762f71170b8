// `cape node`: one node of a job. The monitor runs the program; net::Node is its Exchange.
//
//   cape node --master HOST:PORT [--rank R --size N] [--secret-file F] -- ./prog args
//
// Rank and size come from the options or from the launcher's environment (mpirun, srun,
// PMI). Rank 0 listens on PORT; the others connect. `cape run` starts nodes with
// --secret-fd (a pipe), --listen-fd (a socket it bound) and --status-fd (where the master
// reports its region, so the launcher can name it if the master node itself dies).
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cli/command.h"
#include "cli/program_check.h"
#include "monitor/monitor.h"
#include "net/handshake.h"
#include "net/node.h"
#include "net/program_io.h"
#include "net/socket.h"
#include "util/error.h"
#include "util/files.h"
#include "util/log.h"
#include "util/scoped_fd.h"
#include "util/spin.h"
#include "util/wait_status.h"

namespace {

using namespace cape;

// CAPE_LOCK_SPIN_US, CAPE_TRAP_SPIN_US: microseconds, 0-1000 (a spin is bounded: it may take
// the CPU the answer needs; docs/critical.md, "Session 12").
long spin_us(const char* var, const std::string& v) {
  if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos || std::stol(v) > 1000)
    throw UserError(std::string(var) + "='" + v + "': give a number of microseconds from 0 to 1000");
  return std::stol(v);
}

struct NodeArgs {
  std::string master, listen, job;
  int rank = -1, size = -1;
  std::string secret_file;
  int secret_fd = -1, listen_fd = -1, status_fd = -1, unix_listen_fd = -1;
  std::string tracker = "uffd";
  std::string sync;  // --sync eager|lazy (docs/monitor.md, "Lazy synchronisation"); "": cli::choose_sync
  std::string keep;
  std::string trace;        // --trace FILE ("%r": the rank)
  double checkpoint_every = 0;  // the master's program's complete checkpoint (docs/cape1.md)
  std::string checkpoint_file = "cape.ckpt";
  int64_t trace_epoch = 0;  // --trace-epoch: the job's ts 0 (CLOCK_REALTIME us)
  std::string log;
  std::string output_dir = "cape-logs";
  bool tag_output = false;
  bool watch_stdin = false;
  bool env_stdin = false;
  bool encrypt = false;
  bool check_races = false;
  bool any_program = false;
  double timeout = 5, heartbeat = 0.5, connect_timeout = 60;
  std::vector<std::string> argv;
};

// The first of the launchers' variables that is set, as an int.
int env_int(std::initializer_list<const char*> names, const char** which) {
  for (const char* n : names) {
    const char* v = std::getenv(n);
    if (v && *v) {
      char* end = nullptr;
      long x = std::strtol(v, &end, 10);
      if (*end != '\0' || x < 0 || x > 1000000)
        throw UserError(std::string("bad value '") + v + "' in " + n);
      *which = n;
      return static_cast<int>(x);
    }
  }
  return -1;
}

// Reads exactly n bytes from fd (the ssh channel: nothing past what is ours is consumed).
std::string read_exactly(int fd, size_t n) {
  std::string out(n, '\0');
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::read(fd, out.data() + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw UserError("the launcher's channel ended in the middle of the environment");
    done += static_cast<size_t>(r);
  }
  return out;
}

// A decimal number and a newline, read byte by byte.
size_t read_count(int fd) {
  std::string digits;
  for (;;) {
    std::string c = read_exactly(fd, 1);
    if (c == "\n") break;
    if (c[0] < '0' || c[0] > '9' || digits.size() > 9) throw UserError("a malformed environment from the launcher");
    digits += c;
  }
  if (digits.empty()) throw UserError("a malformed environment from the launcher");
  return std::stoul(digits);
}

// The environment the ssh launcher sends down the channel after the secret (issue 16, item
// 6: not on the remote command line, where the host's process list shows it): "env N\n",
// then N entries "LEN\nNAME=VALUE". It replaces this process's environment, which the
// program inherits.
void take_environment(int fd) {
  if (read_exactly(fd, 4) != "env ") throw UserError("a malformed environment from the launcher");
  size_t n = read_count(fd);
  if (n > 100000) throw UserError("an environment of " + std::to_string(n) + " variables from the launcher");
  std::vector<std::string> entries;
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t len = read_count(fd);
    total += len;
    if (total > (size_t{64} << 20)) throw UserError("an environment larger than 64 MiB from the launcher");
    entries.push_back(read_exactly(fd, len));
  }
  if (::clearenv() != 0) throw UserError("clearenv failed");
  for (const std::string& e : entries) {
    size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    if (::setenv(e.substr(0, eq).c_str(), e.c_str() + eq + 1, 1) != 0)
      throw UserError(errno_message("setenv " + e.substr(0, eq)));
  }
}

// Rank 0 binds the --master address. A host name that resolves to loopback only here
// (Debian's /etc/hosts maps the host's own name to 127.0.1.1) would keep other hosts out:
// say so, and how to listen elsewhere.
void warn_if_loopback_only(const std::string& host) {
  in6_addr a6;
  in_addr a4;
  if (host.empty() || host == "localhost" || ::inet_pton(AF_INET, host.c_str(), &a4) == 1 ||
      ::inet_pton(AF_INET6, host.c_str(), &a6) == 1)
    return;  // an address: the user said it
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return;  // listen_tcp says why
  bool loopback_only = true;
  for (addrinfo* r = res; r; r = r->ai_next) {
    if (r->ai_family == AF_INET) {
      uint32_t ip = ntohl(reinterpret_cast<sockaddr_in*>(r->ai_addr)->sin_addr.s_addr);
      loopback_only = loopback_only && (ip >> 24) == 127;
    } else if (r->ai_family == AF_INET6) {
      loopback_only = loopback_only && IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<sockaddr_in6*>(r->ai_addr)->sin6_addr);
    }
  }
  ::freeaddrinfo(res);
  if (loopback_only)
    CAPE_LOG_AT(warn, "net") << "--master " << host << " is a loopback address here: rank 0 listens on it, so only "
                             << "this host can join; give --listen 0.0.0.0:PORT (or this host's address) for others";
}

// The job's identity, the same on every node of one job and different between jobs that
// share a secret file (issue 16, item 3): the launcher's job id (--job from cape run, or
// mpirun's, srun's, PMIx's), the program and its arguments.
std::string job_identity(const NodeArgs& a, bool lazy) {
  std::string id = a.job;
  if (id.empty())
    if (const char* s = std::getenv("SLURM_JOB_ID"); s && *s) {
      id = std::string("slurm ") + s;
      if (const char* step = std::getenv("SLURM_STEP_ID"); step && *step) id += std::string(".") + step;
    }
  for (const char* var : {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"})
    if (const char* s = std::getenv(var); id.empty() && s && *s) id = std::string(var) + "=" + s;
  std::string program;
  for (const auto& w : a.argv) program += (program.empty() ? "" : " ") + w;
  std::string job = (id.empty() ? "" : "job " + id + ", ") + "program " + program;
  // Nodes that disagree on --sync (a CAPE_SYNC set on some hosts only) would misread each
  // other's checkpoints: they are refused as another job's.
  if (lazy) job += ", --sync lazy";
  if (job.size() > net::kMaxJobLength) {
    // Too long to travel whole: its digest stands for the rest.
    net::Mac d = net::job_value(net::Secret(std::vector<uint8_t>(job.begin(), job.end())), "job");
    static const char* hex = "0123456789abcdef";
    std::string tail = " ... #";
    for (int i = 0; i < 8; ++i) tail += {hex[d[i] >> 4], hex[d[i] & 15]};
    job = job.substr(0, net::kMaxJobLength - tail.size()) + tail;
  }
  return job;
}

// The monitor's view of the network.
class NetExchange : public monitor::Exchange {
 public:
  explicit NetExchange(net::Node& n, int status_fd) : n_(n), status_fd_(status_fd) {
    // `cape run`'s memfd: mapped, so that the line is a memcpy, not a pwrite at every
    // exchange call (issue 14: 6 system calls per region on the master).
    struct stat st;
    if (status_fd_ >= 0 && ::fstat(status_fd_, &st) == 0 && S_ISREG(st.st_mode) &&
        ::ftruncate(status_fd_, kStatusBytes) == 0) {
      void* m = ::mmap(nullptr, kStatusBytes, PROT_READ | PROT_WRITE, MAP_SHARED, status_fd_, 0);
      if (m != MAP_FAILED) status_map_ = static_cast<char*>(m);
    }
  }
  ~NetExchange() override {
    if (status_map_) ::munmap(status_map_, kStatusBytes);
  }
  NetExchange(const NetExchange&) = delete;
  NetExchange& operator=(const NetExchange&) = delete;
  int rank() const override { return n_.rank(); }
  int size() const override { return n_.size(); }
  void send(const ckpt::Checkpoint& ck, int node) override {
    n_.send(ck, node);
    mark("send('" + ck.name + "', " + std::to_string(node) + ")");
  }
  ckpt::Checkpoint receive(const std::string& name) override {
    mark("receive('" + name + "')");
    return n_.receive(name);
  }
  void broadcast(const ckpt::Checkpoint& ck) override {
    n_.broadcast(ck);
    mark("broadcast('" + ck.name + "')");
  }
  void wait_for(const std::string& name,
                const std::function<void(ckpt::Checkpoint&&, int)>& on_part) override {
    mark("wait_for('" + name + "')");
    n_.wait_for(name, on_part);
  }
  void program_crashed(const std::string& first_frames) override {
    std::lock_guard lk(mu_);
    crash_ = first_frames;
  }
  void program_exited(int wait_status, bool in_window) override {
    std::string crash;
    {
      std::lock_guard lk(mu_);
      status_ = wait_status;
      if (!crash_.empty()) crash = crash_ + "  (the whole report: " + report_place_ + ")\n";
    }
    n_.program_exited(wait_status, in_window, crash);
  }
  // Where this node's crash report goes ("cape-logs/node.1.log on host"), for the master's message.
  void set_report_place(std::string place) { report_place_ = std::move(place); }
  void report_state(uint64_t begin, std::vector<uint8_t> digest) override { n_.report_state(begin, digest); }
  std::vector<std::pair<int, std::vector<uint8_t>>> states(uint64_t begin) override { return n_.states(begin); }
  ckpt::Checkpoint lock_acquire(const std::string& name, uint64_t region, bool wait, int64_t ticket,
                                const std::function<void()>& meanwhile) override {
    return n_.lock_acquire(name, region, wait, ticket, meanwhile);
  }
  void publish_pages(uint64_t first, uint64_t count, const uint8_t* bytes, uint64_t version) override {
    n_.publish_pages(first, count, bytes, version);
  }
  std::vector<uint8_t*> publish_slots(uint64_t first, uint64_t count, uint64_t version, bool in_arena) override {
    return n_.publish_slots(first, count, version, in_arena);
  }
  void set_page_arena(std::function<uint8_t*()> take) override { n_.set_page_arena(std::move(take)); }
  void fetch_pages(uint64_t first, uint64_t count, uint8_t* out, int owner, uint64_t version) override {
    n_.fetch_pages(first, count, out, owner, version);
  }
  std::vector<uint64_t> fetched_pages(int rank) override { return n_.fetched_pages(rank); }
  bool read_published(uint64_t page, uint8_t* out) override { return n_.read_published(page, out); }
  void begin_publishing() override { n_.begin_publishing(); }
  void end_publishing(bool complete) override { n_.end_publishing(complete); }
  void lock_release(const std::string& name, const ckpt::Checkpoint& writes) override {
    n_.lock_release(name, writes);
  }
  uint64_t lock_lease_stamp(const std::string& name, uint64_t region) override {
    return n_.lock_lease_stamp(name, region);
  }
  bool lock_lease_writes(const std::string& name, const ckpt::Checkpoint& writes,
                         const std::function<void()>& kept) override {
    return n_.lock_lease_writes(name, writes, kept);
  }
  void set_lease_hook(std::function<int(const std::string&)> hook) override { n_.set_lease_hook(std::move(hook)); }
  bool lock_lease_hand_over(const std::string& name, uint64_t region, const std::function<bool()>& to_slot) override {
    return n_.lock_lease_hand_over(name, region, to_slot);
  }
  void program_streams(bool was_in_window, bool now_in_window, bool drain) override {
    net::OutputPump::at_call_all(pumps_, was_in_window, now_in_window, drain);
  }
  void set_pumps(std::vector<net::OutputPump*> pumps) { pumps_ = std::move(pumps); }
  void region_begun(uint64_t region) override {
    if (on_region_begun) on_region_begun(region);
  }
  std::function<void(uint64_t)> on_region_begun;
  // The monitor names the region when it starts ("parallel region 2 (start() at prog.c:12)");
  // the exchange call the node is in is added to it ("..., in wait_for('after')"). A new
  // region starts with no call. Until the monitor names regions, the last exchange call
  // alone says where the node is ("the region of wait_for('after')").
  void set_region(const std::string& where) override {
    std::string now;
    {
      std::lock_guard lk(mu_);
      monitor_sets_region_ = true;
      region_ = where;
      call_.clear();
      now = where_locked();
    }
    report(now);
  }
  void mark(const std::string& call) {
    std::string now;
    {
      std::lock_guard lk(mu_);
      call_ = call;
      now = where_locked();
    }
    report(now);
  }
  std::string where_locked() const {
    if (!monitor_sets_region_) return "the region of " + call_;
    if (region_.empty()) return call_;  // between regions: just the call, if any
    return call_.empty() ? region_ : region_ + ", in " + call_;
  }
  void report(const std::string& where) {
    n_.set_region(where);
    if (status_map_) {
      // Read only if this node is killed (cli/run_command.cpp: up to the first newline).
      std::string line = "region " + where;
      line.resize(std::min<size_t>(line.size(), kStatusBytes - 1));
      std::memcpy(status_map_, line.data(), line.size());
      status_map_[line.size()] = '\n';
    } else if (status_fd_ >= 0) {
      std::string line = "region " + where + "\n";
      // `cape run` gives a memfd that it reads only if this node is killed: the line is
      // written over the last one, and no thread of the launcher wakes up at every call
      // (issue 14: 5 wakeups per region). A pipe (ESPIPE) gets the line appended.
      // The launcher may be gone; the status line is a courtesy, never a failure.
      ssize_t n = ::pwrite(status_fd_, line.data(), line.size(), 0);
      if (n < 0 && errno == ESPIPE) n = ::write(status_fd_, line.data(), line.size());
      if (n < 0) {
        CAPE_LOG_AT(debug, "net") << errno_message("status fd");
      }
    }
  }
  std::optional<int> status() const {
    std::lock_guard lk(mu_);
    return status_;
  }

 private:
  net::Node& n_;
  int status_fd_;
  static constexpr size_t kStatusBytes = 4096;
  char* status_map_ = nullptr;  // status_fd_ mapped (a memfd), or null: written
  std::vector<net::OutputPump*> pumps_;  // the program's stdout and stderr
  mutable std::mutex mu_;
  std::optional<int> status_;
  bool monitor_sets_region_ = false;
  std::string region_;  // as the monitor named it
  std::string call_;    // the exchange call in progress or last made
  std::string crash_;   // the first frames of the program's crash report, if it crashed
  std::string report_place_ = "the node's stderr";
};

int run_node(const NodeArgs& a) {
  const bool lazy = cli::choose_sync(a.sync, a.tracker) == "lazy";
  // Rank and size: options first, then the launcher's environment.
  const char* rank_src = "--rank";
  const char* size_src = "--size";
  int rank = a.rank >= 0 ? a.rank
                         : env_int({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"},
                                   &rank_src);
  int size = a.size >= 0 ? a.size
                         : env_int({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, &size_src);
  if (rank < 0 || size < 1)
    throw UserError("cape node needs its rank and the job size: give --rank/--size or start it "
                    "with mpirun/srun (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE, "
                    "SLURM_PROCID/SLURM_NTASKS)");
  if (rank >= size)
    throw UserError("rank " + std::to_string(rank) + " (from " + rank_src + ") is not below the size " +
                    std::to_string(size) + " (from " + size_src + ")");
  util::set_log_rank(rank);
  // The launcher's descriptors reach this process without close-on-exec (that is how they
  // are inherited); the program must not inherit them in turn (issue 16, item 12).
  for (int fd : {a.listen_fd, a.status_fd, a.secret_fd, a.unix_listen_fd})
    if (fd > STDERR_FILENO && ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 && errno != EBADF)
      throw UserError(errno_message("fcntl FD_CLOEXEC on fd " + std::to_string(fd)));
  // EPIPE, not death, when an output's reader goes away; the program still gets SIGPIPE.
  net::catch_sigpipe();

  // Slaves keep everything they print (theirs and their program's) in a per-node log.
  int out_fd = STDOUT_FILENO, err_fd = STDERR_FILENO;
  util::ScopedFd log_fd;
  if (rank != 0 && !a.output_dir.empty()) {
    // An existing directory is used; the log replaces what was at its name (an old log, or
    // a symlink planted there: replaced, never followed).
    util::ensure_directory(a.output_dir, 0755, "--output-dir");
    std::string path = a.output_dir + "/node." + std::to_string(rank) + ".log";
    log_fd = util::create_replacing(path, 0644);
    if (::dup2(log_fd.get(), STDOUT_FILENO) < 0 || ::dup2(log_fd.get(), STDERR_FILENO) < 0)
      throw UserError(errno_message("dup2 log"));
  }
  // Under mpirun or srun, as under cape run: a program without libcape is refused (every
  // node does; a slave says it in its log, so the terminal shows rank 0's line once). One
  // that cannot be found is the monitor's to report, as before.
  if (!a.any_program) {
    std::string found;
    try {
      found = cli::find_program(a.argv.at(0));
    } catch (const UserError&) {
    }
    if (!found.empty()) cli::require_libcape(a.argv.at(0), found, size);
  }

  net::NodeOptions o;
  o.rank = rank;
  o.size = size;
  if (a.secret_fd >= 0) {
    o.secret = net::Secret::from_fd(a.secret_fd);
    if (a.env_stdin) take_environment(a.secret_fd);
    if (a.secret_fd != STDIN_FILENO) ::close(a.secret_fd);  // stdin stays: --watch-stdin
  } else if (!a.secret_file.empty()) {
    o.secret = net::Secret::from_file(a.secret_file);
  } else if (const char* s = std::getenv("CAPE_SECRET")) {
    o.secret = net::Secret::from_string(s);
  } else {
    throw UserError("no job secret: give --secret-file F (mode 600, on a shared file system) or "
                    "set CAPE_SECRET in every node's environment (see docs/net.md)");
  }
  // Not the program's business, and every node must give it the same environment.
  ::unsetenv("CAPE_SECRET");
  // Where a slave's sequential part writes its private copies of files (libcape's files.c,
  // docs/monitor.md "Files"): the same string on every node (the rank is libcape's to ask);
  // this node's copies of an earlier job go first. A user's CAPE_FILES_DIR is kept.
  {
    const char* given = std::getenv("CAPE_FILES_DIR");
    std::string dir = given && *given ? given : (a.output_dir.empty() ? std::string("cape-logs") : a.output_dir);
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(dir, ec);
    if (!ec) {
      std::filesystem::remove_all(abs / ("node." + std::to_string(rank) + ".files"), ec);
      if (ec) throw UserError("cannot remove " + (abs / ("node." + std::to_string(rank) + ".files")).string() + ": " + ec.message());
      if (::setenv("CAPE_FILES_DIR", abs.c_str(), 1) != 0) throw UserError(errno_message("setenv CAPE_FILES_DIR"));
    }
  }
  o.job = job_identity(a, lazy);
  o.encrypt = a.encrypt;
  if (const char* l = std::getenv("CAPE_LOCK_LEASE"); l && std::string(l) == "0") o.lock_lease = false;
  if (const char* l = std::getenv("CAPE_LOCK_RENEW"); l && std::string(l) == "0") o.lock_renew = false;
  if (const char* l = std::getenv("CAPE_WAITER_READS"); l && std::string(l) == "0") o.waiter_reads = false;
  if (const char* l = std::getenv("CAPE_LOCK_SEND_NOW"); l && std::string(l) == "0") o.lock_send_now = false;
  if (const char* l = std::getenv("CAPE_LOCK_SPIN_US")) o.grant_spin = std::chrono::microseconds(spin_us("CAPE_LOCK_SPIN_US", l));
  if (const char* l = std::getenv("CAPE_TRAP_SPIN_US")) spin_us("CAPE_TRAP_SPIN_US", l);  // (read by the supervisor)
  if (const char* l = std::getenv("CAPE_MASTER_SPIN_US")) o.wait_spin = std::chrono::microseconds(spin_us("CAPE_MASTER_SPIN_US", l));
  try {
    util::spin_gate_from_env();  // (read again where the spins ask it: util/spin.h)
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  o.local_unix = net::local_unix_wanted();
  o.unix_listen_fd = a.unix_listen_fd;
  if (a.listen_fd >= 0) {
    o.listen_fd = a.listen_fd;
  } else {
    if (a.master.empty()) throw UserError("cape node needs --master HOST:PORT");
    o.master = net::parse_host_port(a.master);
    // Rank 0 listens where it was told (issue 16, item 2): --listen, else the --master
    // address itself (127.0.0.1 stays on loopback). --listen 0.0.0.0:PORT for every interface.
    if (rank == 0 && !a.listen.empty()) o.master = net::parse_host_port(a.listen);
    if (rank == 0 && a.listen.empty()) warn_if_loopback_only(o.master.host);
  }
  auto ms = [](double s) { return std::chrono::milliseconds(static_cast<long>(s * 1000)); };
  o.timeout = ms(a.timeout);
  o.heartbeat = ms(a.heartbeat);
  o.connect_timeout = ms(a.connect_timeout);

  // Shared: the stdin watcher may outlive this function.
  auto kill_switch = std::make_shared<monitor::KillSwitch>();
  o.on_failure = [kill_switch](const std::string& msg, bool) { kill_switch->kill(msg); };
  o.on_shutdown = [kill_switch] { kill_switch->kill("the master ended the job"); };
  // The launcher's channel closed while joining (--watch-stdin): stop trying (item 6).
  o.cancelled = [kill_switch] { return kill_switch->killed(); };

  // The program's streams (net/program_io.h): pipes on every node (the determinism
  // contract: the same kind of stdout and stdin everywhere). The master's terminal is its
  // own stdout/stderr, where the slaves' region lines arrive too; a slave's is its log.
  // stdin: the master's own, streamed to every slave.
  int po[2], pe[2], pi[2];
  if (::pipe2(po, O_CLOEXEC) != 0 || ::pipe2(pe, O_CLOEXEC) != 0 || ::pipe2(pi, O_CLOEXEC) != 0)
    throw UserError(errno_message("pipe2"));
  util::ScopedFd po_r(po[0]), po_w(po[1]), pe_r(pe[0]), pe_w(pe[1]), pi_r(pi[0]), pi_w(pi[1]);
  net::Terminal terminal(out_fd, err_fd, a.tag_output);
  net::SlaveLines slave_lines(terminal);   // master: slaves' lines wait for their region
  std::atomic<uint64_t> region_now{0};     // slave: the regions its program has begun
  std::unique_ptr<net::InputPump> input;
  if (rank != 0) {
    input = std::make_unique<net::InputPump>(std::move(pi_w));
    o.on_input = [in = input.get()](std::string_view chunk, bool eof) { in->push(chunk, eof); };
  } else {
    o.on_output = [&slave_lines](int from, net::Stream s, uint64_t region, std::string_view bytes) {
      slave_lines.write(from, s, region, bytes);
    };
  }
  // Every node's program gets the same AT_RANDOM bytes: the same stack canaries everywhere.
  net::Mac at_random = net::job_value(o.secret, "AT_RANDOM");

  if (a.watch_stdin) {
    // Started over ssh: stdin is the launcher's channel. Its end means the launcher is gone
    // (or ended the job): stop the program. Detached: it may block in read until exit.
    std::thread([kill_switch] {
      char c[256];
      for (;;) {
        ssize_t r = ::read(STDIN_FILENO, c, sizeof c);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
      }
      kill_switch->kill("the launcher closed the connection; stopping");
    }).detach();
  }

  net::Node node(std::move(o));
  node.start();
  NetExchange exchange(node, a.status_fd);
  exchange.on_region_begun = [&](uint64_t region) {
    if (rank == 0)
      slave_lines.reached(region);  // after its own output before the region (serve())
    else
      region_now = region;
  };
  if (rank != 0 && !a.output_dir.empty()) {
    char host[256] = "?";
    (void)::gethostname(host, sizeof host - 1);
    exchange.set_report_place(a.output_dir + "/node." + std::to_string(rank) + ".log on " + host);
  }
  if (rank == 0)
    input = std::make_unique<net::InputPump>(STDIN_FILENO, std::move(pi_w), [&node](std::string_view chunk, bool eof) {
      node.broadcast_input(chunk, eof);
    });

  int status;
  {
    auto forward = [&node, &region_now](net::Stream s, std::string_view bytes) {
      node.send_output(s, region_now.load(), bytes);
    };
    net::OutputPump out(std::move(po_r), {net::Stream::out, rank, &terminal, rank == 0,
                                          rank == 0 ? nullptr : std::function(forward)});
    net::OutputPump err(std::move(pe_r), {net::Stream::err, rank, &terminal, rank == 0,
                                          rank == 0 ? nullptr : std::function(forward)});
    exchange.set_pumps({&out, &err});
    monitor::MonitorOptions mo;
    mo.tracker = monitor::parse_tracker_kind(a.tracker);
    mo.sync_lazy = lazy;
    mo.keep_checkpoints_dir = a.keep;
    if (rank == 0) {  // the master's program: restartable alone with `cape restart` (docs/cape1.md)
      mo.checkpoint_every = a.checkpoint_every;
      mo.checkpoint_file = a.checkpoint_file;
    }
    mo.trace_file = a.trace;
    if (size_t r = mo.trace_file.find("%r"); r != std::string::npos)
      mo.trace_file.replace(r, 2, std::to_string(rank));
    mo.trace_epoch_us = a.trace_epoch;
    // CAPE_CHECK_RACES=1 in the environment does the same as the flag (docs/tickpt.md).
    mo.check_races = a.check_races || cli::env_switch("CAPE_CHECK_RACES");
    mo.argv = a.argv;
    mo.node_rank = rank;
    mo.node_count = size;
    mo.stdin_fd = pi_r.get();
    mo.stdout_fd = po_w.get();
    mo.stderr_fd = pe_w.get();
    mo.kill_switch = kill_switch.get();
    mo.at_random.emplace();
    std::copy_n(at_random.begin(), 16, mo.at_random->begin());
    status = monitor::run_monitor(mo, &exchange);
    slave_lines.release_all();
    exchange.set_pumps({});
    input->stop();
    po_w.reset();  // the pumps end when the program's copies close too
    pe_w.reset();
  }
  // The monitor ended without the program ending on its own and without the job failing or
  // being stopped: the monitor itself failed (it printed why). Say so to the master, rather
  // than vanish.
  if (!exchange.status() && !node.failure() && !kill_switch->killed()) {
    std::string why = "its monitor failed with status " + std::to_string(status);
    if (rank != 0 && !a.output_dir.empty())
      why += " (message in " + a.output_dir + "/node." + std::to_string(rank) + ".log)";
    node.node_failed(status ? status : 1, why);
  }
  // --sync=lazy: the master's program and the other slaves may still fetch the pages this
  // slave alone wrote (docs/monitor.md, "Lazy synchronisation"): it serves them until the
  // master leaves.
  if (rank != 0 && lazy && !node.failure()) node.serve_pages_until_the_master_leaves();
  // The job failed: every node exits with the failing program's status (128+signal, like
  // a shell; 1 for a lost node), so cape run, mpirun and srun all report it.
  if (auto code = node.failure_exit_code()) return *code;
  // The master's own program ended badly: its status, not the monitor's 1.
  if (auto st = exchange.status(); st && rank == 0 && !WaitStatus{*st}.ok())
    status = WaitStatus{*st}.shell_code();
  return status;
}

}  // namespace

namespace cape::cli {

void add_node_command(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<NodeArgs>();
  auto* sub = app.add_subcommand(
      "node", "Run one node of a CAPE job (started by `cape run`, mpirun, srun or by hand)");
  sub->add_option("--master", a->master,
                  "HOST:PORT of rank 0 (rank 0 listens there: 127.0.0.1 stays on loopback)");
  sub->add_option("--listen", a->listen,
                  "Rank 0: listen on HOST:PORT instead of the --master address (0.0.0.0:PORT: every interface)");
  sub->add_flag("--encrypt", a->encrypt,
                "Rank 0: encrypt every frame after the handshake (AES-256-GCM); they are always authenticated");
  sub->add_option("--job", a->job,
                  "The job's id, the same on every node (default: from srun/mpirun/PMIx); nodes of other jobs are refused");
  sub->add_option("--rank", a->rank, "This node's rank (default: from mpirun/srun/PMI)");
  sub->add_option("--size", a->size, "Number of nodes (default: from mpirun/srun/PMI)");
  sub->add_option("--secret-file", a->secret_file,
                  "File holding the job secret (mode 600); default: $CAPE_SECRET");
  sub->add_option("--secret-fd", a->secret_fd, "Read the job secret (one line) from this fd");
  sub->add_option("--listen-fd", a->listen_fd, "Rank 0: use this listening socket")->group("");
  sub->add_option("--listen-unix-fd", a->unix_listen_fd, "Rank 0: use this listening local Unix socket")->group("");
  sub->add_option("--status-fd", a->status_fd, "Report the region on this fd")->group("");
  sub->add_flag("--watch-stdin", a->watch_stdin, "Stop when stdin closes (ssh launcher)")->group("");
  sub->add_flag("--env-stdin", a->env_stdin, "Take the environment from the secret's fd, after it (ssh launcher)")
      ->group("");
  sub->add_option("--tracker", a->tracker, "uffd (default), mprotect, full or inproc")
      ->check(CLI::IsMember({"mprotect", "uffd", "full", "inproc"}));
  sub->add_option("--sync", a->sync, std::string("eager or lazy: how a region's changes reach the slaves (docs/monitor.md); default: "
                              "$CAPE_SYNC, else ") + kDefaultSync + " (lazy needs --tracker uffd or mprotect: with full or inproc "
                              "the default is eager)")
      ->check(CLI::IsMember({"eager", "lazy"}));
  sub->add_option("--keep-checkpoints", a->keep, "Write every checkpoint into DIR");
  sub->add_option("--checkpoint-every", a->checkpoint_every,
                  "Rank 0: a complete checkpoint of the program every SECONDS, outside parallel regions (CAPE-1)")
      ->check(cape::cli::seconds_validator());
  sub->add_option("--checkpoint-file", a->checkpoint_file, "Where --checkpoint-every writes (default cape.ckpt)");
  sub->add_option("--trace", a->trace,
                  "Write this node's timeline to FILE (%r: the rank): Chrome trace-event JSON (docs/trace.md)");
  sub->add_option("--trace-epoch", a->trace_epoch, "The trace's time 0, CLOCK_REALTIME microseconds")->group("");
  sub->add_flag("--check-races", a->check_races,
                "Master: report two nodes writing different values to one word; exit 66 if any (docs/tickpt.md)");
  sub->add_option("--log", a->log, "Log levels, as CAPE_LOG (e.g. net:info,monitor:debug)")
      ->check(log_spec_validator());
  sub->add_option("--output-dir", a->output_dir,
                  "Slaves write their output and logs to DIR/node.RANK.log (default cape-logs)");
  sub->add_flag("--tag-output", a->tag_output, "Prefix every output line with [rank]<stream>:");
  sub->add_flag("--any-program", a->any_program,
                "Run a program not built with cape-cc anyway: every node runs all of it, alone");
  sub->add_option("--timeout", a->timeout,
                  "Seconds of silence after which a peer is declared dead (default 5)");
  sub->add_option("--heartbeat", a->heartbeat, "Seconds between heartbeats (default 0.5)");
  sub->add_option("--connect-timeout", a->connect_timeout,
                  "Seconds for every node to join (default 60)");
  add_program_positional(sub, a->argv);
  sub->callback([a, &ctx] {
    // Before the first log line: the log configuration is read once.
    if (!a->log.empty()) {
      if (::setenv("CAPE_LOG", a->log.c_str(), 1) != 0) throw UserError(errno_message("setenv"));
      (void)util::log_level("net");  // parsed now; the program does not inherit it
      ::unsetenv("CAPE_LOG");
    }
    ctx.exit_status = run_node(*a);
  });
}

}  // namespace cape::cli
