// One node of a cape job: the star of TCP connections between the master (rank 0) and the
// slaves, and the checkpoint operations of the papers served over it
// (001_3036025dc34c4021.txt Sect. III.B, 004_9e6a480351e099dd.txt 3.2).
//
//            slave 1          slave 2  ...  slave N-1
//                 \              |              /
//                  +------ master (rank 0) ----+      one TCP connection per slave,
//                                                     authenticated with the job secret
//
// Threads: the caller (the monitor) sends and blocks in receive/wait_for; one reader per
// connection files arriving checkpoints into queues by name (early arrivals wait there,
// names may be reused region after region). Who reads: while the monitor waits in
// receive/wait_for/fetch_pages, it reads the sockets it waits on itself and their readers
// stand aside (issue 14: a reader's handoff cost a wakeup and a cross-CPU switch per frame);
// between its waits the readers serve everything (heartbeats, page requests, lock frames,
// arrivals while the monitor works). A heartbeat thread keeps quiet links alive; the
// master's acceptor handshakes joining slaves and refuses (and logs) anyone else, for the
// whole job. A peer that closes without an exit report, sends a bad frame, or says nothing
// for `timeout` fails the job: every blocked call throws cape::UserError with one message
// naming the node, its exit status or signal, and its region, and `on_failure` runs once so
// the node can stop its program even when the monitor is not in a network call.
//
//   NodeOptions o; o.rank = 0; o.size = 3; o.secret = Secret::generate(); ...
//   Node n(std::move(o));       // master: listens now (port() is known)
//   n.start();                  // master: every slave has joined; slave: connected
//   n.broadcast(ck); n.wait_for("after", [&](Checkpoint&& part, int from) { ... });
//   n.program_exited(status);   // tells the peers; the master waits for slaves to finish
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ckpt/checkpoint.h"
#include "net/auth.h"
#include "net/frame.h"
#include "net/handshake.h"
#include "net/lock_service.h"
#include "net/mailboxes.h"
#include "net/peer.h"
#include "net/program_io.h"
#include "net/socket.h"
#include "util/proven_reads.h"
#include "util/scoped_fd.h"

namespace cape::net {

struct NodeOptions {
  int rank = 0;
  int size = 1;
  HostPort master;           // slaves connect here; the master listens here (port 0 = any)
  int listen_fd = -1;        // master: an already listening socket to use (taken over)
  // Nodes on one host talk over an abstract Unix socket (socket.h, local_unix_name): the
  // master listens there too (on `unix_listen_fd` when given: `cape run` binds it before any
  // slave starts, so none races to TCP), a slave tries it first. false: TCP only
  // (CAPE_LOCAL_UNIX=0).
  bool local_unix = true;
  int unix_listen_fd = -1;   // master: an already listening Unix socket to use (taken over)
  Secret secret;
  // The job's identity, the same on every node of the job (its id, program and arguments:
  // cli/node_command.cpp): nodes of another job that holds the same secret are refused.
  std::string job;
  // Master: encrypt every frame after the handshake (they are always authenticated); the
  // slaves learn it in the handshake.
  bool encrypt = false;
  std::string label;         // this node's host name, for messages
  std::chrono::milliseconds heartbeat{500};
  std::chrono::milliseconds timeout{5000};          // silence or a stalled write = failure;
                                                    // also bounds each whole handshake
  std::chrono::milliseconds connect_timeout{30000}; // for every slave to join
  uint64_t max_payload = kDefaultMaxPayload;
  // Slave: ask for lock leases (docs/critical.md, "Lock leases"): a lock nobody else asked
  // for stays with the node after its exit, and re-entering it needs no round trip.
  // CAPE_LOCK_LEASE=0 in the environment turns them off (cli/node_command.cpp).
  bool lock_lease = true;
  // Slave: a lease used in a window and never asked back is kept into the next one (a
  // renewal, docs/critical.md); CAPE_LOCK_RENEW=0 turns that off.
  bool lock_renew = true;
  // The monitor reads the sockets it waits on itself (above, "Who reads"); false: every frame
  // through the reader threads, as before session 10 (CAPE_WAITER_READS=0).
  bool waiter_reads = true;
  // Slave: a lock release another node is probably waiting for (a lease asked back; a plain
  // grant of a lock the node asked to lease, i.e. contended, or an ordered ticket) is sent at
  // once on the calling thread instead of by the heartbeat thread (its wake-up was on the
  // waiter's path). CAPE_LOCK_SEND_NOW=0: every small release through the heartbeat thread.
  bool lock_send_now = true;
  // Slave: how long the monitor polls its socket without sleeping for a lock's grant before it
  // blocks (0: blocks at once; CAPE_LOCK_SPIN_US). Bounded, and only while no other task wants
  // a CPU (util/spin.h): the CPU it spins on may be the one the answer needs. On by default
  // since session 13: the grant's wake-up of the slave's halted vCPU was ~45 of a first entry's
  // ~150 us (docs/critical.md, "Session 13").
  std::chrono::microseconds grant_spin{200};
  // Master, in a job whose slaves asked for locks: how long its monitor, waiting for the
  // slaves' parts, polls their sockets without sleeping, from the start of the wait and again
  // after each lock frame it serves (CAPE_MASTER_SPIN_US; 0, the default: it sleeps at once).
  // Like grant_spin, only while no other task wants a CPU (util/spin.h). Off by default: a
  // slave's first request of a region mostly reaches the master before its wait begins (it
  // is still in its own calls of the region), so it saved ~5 us of ~100 per first entry for
  // +14% of the job's CPU (docs/critical.md, "Session 13").
  std::chrono::microseconds wait_spin{0};
  // Runs once, on a network thread, when the job fails. `report` is true on exactly one
  // node per failure (the master, or slave 1 when the master is gone): print it there.
  std::function<void(const std::string& message, bool report)> on_failure;
  // Slaves: the master ended the job while this node's program was still running.
  std::function<void()> on_shutdown;
  // Master: what slave `from`'s program printed inside a parallel region, whole lines
  // (program_io.h). Runs on the connection's reader thread, before anything that slave
  // sends later (its checkpoint of the region) is filed. `region`: the count of regions that
  // node had begun when its program printed them.
  std::function<void(int from, Stream stream, uint64_t region, std::string_view bytes)> on_output;
  // Slaves: the next chunk of the job's stdin (`eof`: it has ended).
  std::function<void(std::string_view chunk, bool eof)> on_input;
  // Slaves: polled while connecting to the master; true stops start() with an error (the
  // launcher's channel closed: no point joining a job that is gone).
  std::function<bool()> cancelled;
};

class Node {
 public:
  explicit Node(NodeOptions options);  // master: binds and listens (throws UserError)
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Master: returns once every slave has joined (or throws after connect_timeout, naming
  // the missing ranks). Slave: connects and authenticates (throws UserError).
  void start();

  int rank() const { return opt_.rank; }
  int size() const { return opt_.size; }
  uint16_t port() const { return port_; }  // master's listening port

  void send(const ckpt::Checkpoint& ck, int node);
  ckpt::Checkpoint receive(const std::string& name);
  void broadcast(const ckpt::Checkpoint& ck);
  void wait_for(const std::string& name,
                const std::function<void(ckpt::Checkpoint&& part, int from)>& on_part);
  // Slave: what its program printed inside a region (whole lines), to the master's
  // terminal, with the count of regions begun when it printed them. Master: the job's stdin,
  // to every slave (program_io.h).
  void send_output(Stream stream, uint64_t region, std::string_view bytes);
  void broadcast_input(std::string_view chunk, bool eof);
  // The determinism check (monitor/determinism.h). Slave: the digest of its memory as its
  // `begin`-th region begins, to the master. Master: the digests the slaves sent for it,
  // by rank (older ones are dropped).
  void report_state(uint64_t begin, const std::vector<uint8_t>& digest);
  std::vector<std::pair<int, std::vector<uint8_t>>> states(uint64_t begin);
  // Master: tells the slaves, waits up to `timeout` for those still running to finish,
  // then shuts the rest down. A failing status fails the job. Slave: reports and leaves.
  // `in_window`: the program ended inside a parallel region's window. A slave whose program
  // ends outside one with a failing status does not fail the job at once: the master runs
  // the same sequential code and ends the same way, printing what it printed first (the
  // job fails when the master needs that slave, or ends differently).
  // `crash`: the first frames of the crash report when a signal killed it (a slave sends
  // them to the master, whose message shows them).
  void program_exited(int wait_status, bool in_window = true, const std::string& crash = "");
  // This node failed itself (its monitor stopped with an error, not the program's end):
  // the job fails with `why`, named after this node and its region, and `exit_code`.
  // Slave: reported to the master (which then ends the job), instead of looking as if the
  // node had vanished. Master: fails the job at once.
  void node_failed(int exit_code, const std::string& why);
  void set_region(const std::string& where);

  // Locks across nodes (net/node_locks.cpp, docs/critical.md): the service runs on the
  // master, whose own program asks it in-process. lock_acquire blocks until this node holds
  // `name` (in its region `region`) and returns the grant (LockService::grant: the stamp as
  // its timestamp, the writes other holders made since); lock_release gives it back with the
  // writes made holding it. A failed job throws, as the other calls do.
  // `wait` false (omp_test_lock): returns at once; a grant with timestamp 0 says the lock was
  // busy (stamps start at 1).
  // `ticket` >= 0: an ordered loop's iteration (LockService::request).
  // `meanwhile` (if any) runs while the request travels (a slave's: between sending it and
  // awaiting the grant; the master's: first).
  ckpt::Checkpoint lock_acquire(const std::string& name, uint64_t region, bool wait = true, int64_t ticket = -1,
                                const std::function<void()>& meanwhile = {});
  void lock_release(const std::string& name, const ckpt::Checkpoint& writes);
  // Slave, trap-free re-entry (docs/critical.md, "Trap-free re-entry"): the stamp of the
  // lease this node keeps of `name` and nobody asked back (0: none); lock_lease_writes lays
  // bodies' writes the monitor read later over the lease's (false: the lease is gone, they
  // went with it or it was asked back and they go now); the hook, called by a reader thread
  // (mu_ held) when a lease is asked back, closes the program's word for it and says whether
  // the program is outside with nothing logged (kLeaseIdle: give it back now), has bodies'
  // targets logged (kLeaseLogged) or runs a body (kLeaseInside): then the monitor sends it
  // (lock_lease_writes), at its next runtime call.
  static constexpr int kLeaseNone = 0, kLeaseIdle = 1, kLeaseLogged = 2, kLeaseInside = 3;
  uint64_t lock_lease_stamp(const std::string& name, uint64_t region);
  // (`kept` runs under mu_ when they were laid over the lease: the hook sees it done.)
  bool lock_lease_writes(const std::string& name, const ckpt::Checkpoint& writes, const std::function<void()>& kept);
  // A body entered with a trap under lease `name` goes on in the program's word (the monitor's
  // Criticals::enter): `to_slot` runs under mu_, then the lease is left (no release). False when
  // the lease was asked back (or is not this region's): the body's exit traps as before.
  bool lock_lease_hand_over(const std::string& name, uint64_t region, const std::function<bool()>& to_slot);
  void set_lease_hook(std::function<int(const std::string&)> hook) {
    std::lock_guard lk(mu_);
    lease_hook_ = std::move(hook);
  }

  // --sync=lazy (net/node_pages.cpp; docs/net.md, "Lazy synchronisation"). Every node keeps
  // `count` pages from `first` as `version` (their bytes as this node's memory held them
  // after a region), which other nodes may then ask for; the reader threads answer, also
  // after the program has ended. The last two versions of a page are kept. fetch_pages asks
  // node `owner` for `count` pages from `first` (the newest version <= `version`) and blocks
  // until `out` (count * 4096 bytes) holds them; a slave asks through the master, which
  // passes the request on to a slave owner; a failed job throws, as the other calls do. One
  // request at a time per node (the monitor's lazy module serialises them).
  void publish_pages(uint64_t first, uint64_t count, const uint8_t* bytes, uint64_t version);
  // The same, the caller writing the bytes: where each page's copy of `version` goes (valid
  // for the node's life; nobody asks for `version` before the caller has told another node
  // of it, so the caller fills them without the lock).
  // `in_arena`: the slots come from the arena set_page_arena() gave, when it has room (the
  // program itself copies into them, monitor/publish_arena.h); a page's slot, once in the
  // arena, stays there. Check each slot's address to know which.
  std::vector<uint8_t*> publish_slots(uint64_t first, uint64_t count, uint64_t version, bool in_arena = false);
  // Where arena slots come from: `take` gives a 4096-byte slot or nullptr when full; it (and
  // the memory it hands out) lives as long as this node (its captures keep the mapping).
  void set_page_arena(std::function<uint8_t*()> take);
  void fetch_pages(uint64_t first, uint64_t count, uint8_t* out, int owner, uint64_t version);
  // Master: the pages slave `rank` asked for since the last call (their addresses; from the
  // master or, through it, from another slave).
  std::vector<uint64_t> fetched_pages(int rank);
  // This node's newest copy of `page` into `out` (4096 bytes; null: only whether it has one).
  bool read_published(uint64_t page, uint8_t* out);
  // The monitor fills the copies of what it publishes after it sent the list that names them
  // (the other nodes go on meanwhile): until end_publishing(), requests for this node's pages
  // wait.
  void begin_publishing();
  // `complete` false: the copies were not all filled (the program died while it copied
  // them); a request for this node's pages then fails the job instead of being answered.
  void end_publishing(bool complete = true);
  // Slave, once its program has ended: serves its pages until the master's connection closes
  // (the master's program and the other slaves may still need them) or the job fails.
  void serve_pages_until_the_master_leaves();

  // The failure message once the job has failed.
  std::optional<std::string> failure() const;
  // Once the job has failed: the status every node of the job exits with, the same on all
  // (the master sends it with the abort), so cape run, mpirun and srun all report it: the
  // failing program's own status (its exit code, or 128+signal like a shell), 1 when no
  // program status is known (a node vanished or stopped answering, a bad frame). The
  // failure message ends with "(job exit status N)".
  std::optional<int> failure_exit_code() const;

 private:
  // Joining (node.cpp). Each incoming connection is handshaken on its own thread, at most
  // kMaxHandshakes at once, each within opt_.timeout: strangers cannot hold up a join.
  struct Handshake {
    util::ScopedFd fd;  // guarded by mu_; moved into the Peer when the slave joins
    std::thread thread;
    std::atomic<bool> done{false};
  };
  static constexpr size_t kMaxHandshakes = 64;
  void acceptor_loop();
  void handshake_incoming(Handshake& h);
  void connect_to_master();
  // A connection to the master: its local Unix socket when there is one, else TCP; retried
  // until `deadline_after` passes (connect_tcp's errors).
  util::ScopedFd connect_master(std::chrono::milliseconds deadline_after);
  void start_peer(Peer& p);
  // Receiving: one reader per connection (node_reader.cpp).
  void reader_loop(Peer& p);
  void on_frame(Peer& p, Frame& f);
  // One frame from `p`, read_mu held: read (not waiting for one to begin) and handled.
  // `closed`: the connection is over (its end, a failure, the node stopping; p.closed set).
  enum class Got { frame, nothing, closed };
  Got read_one(Peer& p);
  // The connection's end after a failed read (read_mu held): a normal end, or the job fails
  // ("vanished", "stopped answering", ...); p.closed set.
  Got end_of(Peer& p, const IoResult& r);
  // In place of cv_.wait(lk) (mu_ held on entry and return): reads the sockets of `from`
  // itself until something a waiter may wait for changed (a frame filed, a failure: the
  // count of wake_waiters() moved), their reader threads standing aside meanwhile.
  // `spin_until` (steady ns, 0: none): until then it polls without sleeping (a lock's grant).
  // `rearm_ns` (0: none): after each lock frame read here, the spin goes on for that long again.
  void read_while_waiting(std::unique_lock<std::mutex>& lk, const std::vector<Peer*>& from, int64_t spin_until = 0,
                          int64_t rearm_ns = 0);
  ckpt::Checkpoint receive_until(const std::string& name, int64_t spin_until);
  // What cv_.notify_all() was: wakes the waiters on cv_ and one reading its sockets.
  void wake_waiters();
  // Heartbeats (heartbeat.cpp).
  void heartbeat_loop();
  // Failure (node_failure.cpp). Fails the job once: records `message`, wakes every waiter,
  // aborts the slaves (master), runs on_failure. Later calls do nothing. `exit_code`
  // becomes failure_exit_code(); the message gets "(job exit status N)".
  void fail(const std::string& message, bool report, int exit_code = 1);
  void fail_as_is(const std::string& full_message, bool report, int exit_code);
  [[noreturn]] void throw_failure();
  // Slave: sends a request frame (a lock, pages) to the master; a send that fails fails the job
  // with "asking <master> for <what>: <why>" and throws.
  void ask_master(FrameType type, const std::vector<uint8_t>& payload, const std::string& what);
  void wait_while_failing(std::unique_lock<std::mutex>& lk) const;  // node_failure.cpp
  // "in <the peer's region>", or this node's, or "outside any parallel region", for
  // messages; mu_ held (node_reader.cpp).
  std::string region_of(const Peer& p) const;
  // Why a node's program may have ended badly outside a region while another's did not: "
  // (their sequential parts differ)", unless a signal sent from outside (SIGKILL, SIGTERM,
  // ...) ended it, which says nothing about the program.
  static std::string differ_hint(int wait_status);
  // Waiting (node.cpp).
  ckpt::Checkpoint decode(Mail&& m, const std::string& name);
  bool can_still_arrive(int from) const;  // mu_ held
  // The lock frames (node_locks.cpp): the master's side of a slave's request and release,
  // a slave's grant; sending a checkpoint-shaped lock frame.
  void on_lock_frame(Peer& p, Frame& f);
  // `quiet`: a failure only says so (false) instead of failing the job.
  bool send_lock_frame(Peer& p, FrameType type, const std::string& head, const ckpt::Checkpoint& ck, bool quiet = false);
  void grant_to(int rank, const std::string& name);  // mu_ not held; the service says rank holds it
  void revoke(int rank, const std::string& name);    // mu_ not held: asks a lease's holder for it back
  void revoke_own(const std::string& name);          // master, mu_ not held: its own program's lease
  void give_back(const std::string& name, const ckpt::Checkpoint& writes);  // slave: a lease goes back
  void return_leases();                              // slave: every lease goes back (before a part)
  // The page frames (node_pages.cpp): the master's answer to a request, a slave's reply.
  void on_page_frame(Peer& p, Frame& f);
  void send_page_frame(Peer& to, FrameType type, const std::vector<uint8_t>& payload);

  NodeOptions opt_;
  JobSession session_;                       // master: what its challenges carry
  std::atomic<uint64_t> broadcast_seq_{0};  // master: the broadcast stream's numbers
  uint16_t port_ = 0;
  util::ScopedFd listen_fd_;
  util::ScopedFd unix_listen_fd_;  // invalid: TCP only
  util::ScopedFd wake_rd_, wake_wr_;  // wakes the acceptor at shutdown
  // By rank: the connection to that node, or null (this node; on a slave, the other
  // slaves: the master has one per slave, a slave one to rank 0).
  std::vector<std::unique_ptr<Peer>> peers_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  // read_while_waiting: the count of wake_waiters() calls, the waiters in poll(), and the
  // eventfd that wakes them.
  std::atomic<uint64_t> wakes_{0};
  std::atomic<int> polling_{0};
  util::ScopedFd waiter_wake_;
  std::condition_variable heartbeat_cv_;  // the heartbeat thread's: notified when stopping
  bool flush_soon_ = false;  // a frame waits in a Peer::later() queue to go out now; guarded by mu_
  // A slave's lock release of at most this many bytes is sent by the heartbeat thread.
  static constexpr uint64_t kReleaseLaterBytes = 64 << 10;
  Mailboxes mail_;  // guarded by mu_
  std::map<uint64_t, std::vector<std::pair<int, std::vector<uint8_t>>>> states_;  // guarded by mu_
  LockService locks_;  // master; guarded by mu_
  // Slave: the leases it holds (node_locks.cpp), by lock name; guarded by mu_. A lease is
  // recorded by the reader when its grant arrives (a revoke may follow right behind it).
  struct Lease {
    uint64_t region = 0;
    uint64_t stamp = 0;    // the grant's stamp, reused by every re-entry
    bool inside = true;    // the program is in a body under it
    bool revoked = false;  // asked back while inside: the exit releases it
    bool returning = false;  // asked back outside: the reader is sending its release
    ckpt::Checkpoint writes;  // its bodies' writes, laid over each other (sent when it goes)
    bool have_writes = false;
    bool used = true;  // entered in its window (a renewed one: not yet), so worth renewing
  };
  std::map<std::string, Lease> leases_;
  std::map<std::string, bool> lease_asked_;  // requests for a lease in flight -> asked back already
  // Slave: locks held under a plain grant whose release someone probably waits for (the node
  // asked for a lease and the master said no: contended; or an ordered ticket).
  std::set<std::string> awaited_;
  // For the log at the end: releases sent at once / left to the heartbeat thread; grants
  // caught while polling without sleeping / after sleeping (grant_spin).
  uint64_t releases_now_ = 0, releases_later_ = 0, grants_spun_ = 0, grants_slept_ = 0;
  // Master (wait_spin): lock frames read while its monitor polled without sleeping / after it
  // slept; the steady time of the last lock frame served (the spin's re-arming).
  std::atomic<uint64_t> lock_frames_spun_{0}, lock_frames_slept_{0};
  std::atomic<int64_t> lock_frame_ns_{0};
  std::atomic<bool> slave_locks_{false};  // a slave asked for a lock in this job (the spin's scope)
  // The last frame a waiting thread read came while it polled without sleeping (for the counts).
  std::atomic<bool> read_spinning_{false};
  uint64_t lease_entries_ = 0, lease_grants_ = 0, lease_revokes_ = 0, lease_renewals_ = 0;  // for the log at the end
  std::function<int(const std::string&)> lease_hook_;  // set_lease_hook; guarded by mu_
  // --sync=lazy: the pages this node publishes, by address (4096 bytes each, the last two
  // versions).
  // A copy is either on the heap (`heap` owns it) or an arena slot (set_page_arena()).
  struct PageCopies {
    std::array<uint64_t, 2> version{};
    std::array<uint8_t*, 2> bytes{};                 // [0] the newest
    std::array<std::unique_ptr<uint8_t[]>, 2> heap;  // bytes[k] when it is on the heap
  };
  std::mutex pages_mu_;
  // By runs of 64 neighbouring pages: a publication walks its pages in order, one hash lookup
  // a chunk instead of a page (Jacobi 2000: ~2,600 a node and sweep; issue 14, session 14).
  static constexpr uint64_t kPagesPerChunk = 64;
  struct PageChunk {
    std::array<PageCopies, kPagesPerChunk> pages;
  };
  std::unordered_map<uint64_t, std::unique_ptr<PageChunk>> pages_;  // by page / 64; guarded by pages_mu_
  PageChunk* page_chunk(uint64_t page, bool make);  // the chunk holding `page` (nullptr: none yet); pages_mu_ held
  bool publishing_ = false;                          // guarded by pages_mu_
  bool pages_torn_ = false;                          // end_publishing(false) came; guarded by pages_mu_
  std::function<uint8_t*()> arena_take_;             // guarded by pages_mu_
  std::condition_variable pages_cv_;                 // publishing_ became false
  std::map<int, std::vector<uint64_t>> fetched_;     // master: by rank, the pages it read; guarded by pages_mu_
  std::map<int, util::ProvenReads> read_by_;         // master: by rank, its requests so far; guarded by pages_mu_
  void note_asked(int rank, uint64_t first, uint64_t count);  // pages_mu_ held
  // The answer to this node's page request, once it came (guarded by mu_).
  std::optional<std::vector<uint8_t>> page_reply_;
  std::optional<std::string> failure_;
  bool failing_ = false;  // fail_as_is() under way or done: later failures are dropped
  int failure_exit_code_ = 1;
  std::string region_;
  int joined_ = 0;
  bool stopping_ = false;
  bool program_done_ = false;

  std::thread acceptor_;
  std::list<Handshake> handshakes_;  // the acceptor's
  std::thread heartbeat_;
};

}  // namespace cape::net
