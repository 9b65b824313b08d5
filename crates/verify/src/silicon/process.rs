//! Verifier child processes (Silicon JVMs and the z3 processes they start), which must not outlive
//! alpine-rs, and processes run to completion with a deadline.
//!
//! Left alone, a JVM whose alpine-rs was stopped (by `timeout`, a CI runner, an editor, Ctrl-C)
//! keeps running with its z3 processes, detached, for hours. Three things prevent that:
//!
//! - every child leads its own process group ([`GroupChild`]), which its z3 processes inherit,
//!   so one `killpg` reaches them all; the group is killed when the [`GroupChild`] is dropped;
//! - SIGTERM, SIGINT and SIGHUP run a handler that kills every live group, then re-raises the
//!   signal with its default action, so alpine-rs still ends with the conventional status;
//! - on Linux each child also gets `PR_SET_PDEATHSIG(SIGKILL)`, for the deaths no handler sees
//!   (SIGKILL, a crash): the JVM is killed when alpine-rs dies. Its z3 processes are not (they are
//!   the JVM's children); a z3 blocked in a query only notices on its next read from the pipe.

use std::io::{self, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

// ------------------------------------------------------------------------------------------------
// Registry of live process groups

/// Slots for the process groups of live children. One `Backend` holds at most one JVM; 64 is far
/// beyond the JVMs one alpine-rs runs at a time. A child that finds no slot still has its
/// death signal (Linux) and is still killed on drop.
const SLOTS: usize = 64;

/// Process-group ids of live children, 0 for a free slot. Atomics rather than a lock: the signal
/// handler reads them, and it may interrupt a thread that holds any lock.
///
/// Invariant: a group is listed only while its leader has not been reaped. Until it is, the
/// leader's pid (the group id) cannot be reused, so the handler never signals a stranger.
static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

fn register(pgid: i32) -> Option<usize> {
    GROUPS
        .iter()
        .position(|g| g.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst).is_ok())
}

/// SIGKILL to every listed group. Async-signal-safe: atomic loads and kill(2) only.
#[cfg(unix)]
fn kill_all_groups() {
    for g in &GROUPS {
        let pgid = g.load(Ordering::SeqCst);
        if pgid > 0 {
            kill_group(pgid);
        }
    }
}

fn kill_group(pgid: i32) {
    #[cfg(unix)]
    // SAFETY: kill(2) with a negative pid signals the process group; no memory is involved.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

// ------------------------------------------------------------------------------------------------
// Signals

/// Installs the handler for SIGTERM, SIGINT and SIGHUP, once per process, before the first child
/// is started (a signal before that has nothing to clean up and keeps its default action).
fn install_signal_handlers() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                // SAFETY: sigaction(2) on zeroed, then filled, structs; the handler only calls
                // async-signal-safe functions.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                        continue;
                    }
                    // A signal ignored by whoever started us (`nohup` ignores SIGHUP) does not
                    // stop us, so there is nothing to clean up for it: leave it ignored.
                    if old.sa_sigaction == libc::SIG_IGN {
                        continue;
                    }
                    let mut sa: libc::sigaction = std::mem::zeroed();
                    sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                    // One shot: the default action is back in place when the handler re-raises.
                    sa.sa_flags = libc::SA_RESETHAND;
                    libc::sigemptyset(&mut sa.sa_mask);
                    libc::sigaction(sig, &sa, std::ptr::null_mut());
                }
            }
        });
    }
}

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    kill_all_groups();
    // SA_RESETHAND restored the default action (terminate). The signal is blocked while this
    // handler runs, so the re-raised one is delivered when it returns and ends the process with
    // the status a shell reports as 128 + sig, as if there had been no handler.
    // SAFETY: raise(3) is async-signal-safe.
    unsafe {
        libc::raise(sig);
    }
}

// ------------------------------------------------------------------------------------------------
// Children in their own process group

/// A child process leading its own process group, listed for the signal handler while it runs.
/// Dropping it kills the group.
pub struct GroupChild {
    child: Child,
    /// The registry slot, `None` once unlisted (or when no slot was free).
    slot: Option<usize>,
    /// Whether the group may still be signalled: its leader has not been reaped.
    live: bool,
}

impl GroupChild {
    /// Spawns `cmd` in a new process group (with a parent-death signal on Linux), from the
    /// spawner thread, and lists the group for the signal handler.
    pub fn spawn(mut cmd: Command) -> io::Result<GroupChild> {
        install_signal_handlers();
        new_process_group(&mut cmd);
        let child = spawn_from_long_lived_thread(cmd)?;
        let slot = i32::try_from(child.id()).ok().and_then(register);
        Ok(GroupChild { child, slot, live: true })
    }

    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Whether the leader has exited; on Linux, first kills what is left of its group (the z3
    /// processes of a JVM that died) while its pid still reserves the group id.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if !self.live {
            return self.child.try_wait();
        }
        #[cfg(target_os = "linux")]
        {
            if !leader_exited(&self.child)? {
                return Ok(None);
            }
            self.kill();
            self.child.try_wait()
        }
        #[cfg(not(target_os = "linux"))]
        {
            // Asking reaps the leader: from then on its group id may be reused, so the group
            // is only unlisted, not signalled.
            let status = self.child.try_wait()?;
            if status.is_some() {
                self.unlist();
                self.live = false;
            }
            Ok(status)
        }
    }

    /// Kills the whole group and reaps the leader.
    pub fn kill(&mut self) {
        if self.live {
            if let Ok(pgid) = i32::try_from(self.child.id()) {
                kill_group(pgid);
            }
            // Unlisted before the leader is reaped, keeping the registry's invariant.
            self.unlist();
            self.live = false;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn unlist(&mut self) {
        if let Some(i) = self.slot.take() {
            GROUPS[i].store(0, Ordering::SeqCst);
        }
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether the child has exited, without reaping it (so that its pid, the group id, stays
/// reserved while the rest of the group is killed).
#[cfg(target_os = "linux")]
fn leader_exited(child: &Child) -> io::Result<bool> {
    let pid = child.id() as libc::id_t;
    // SAFETY: waitid(2) writes into the zeroed siginfo it is given.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        if libc::waitid(libc::P_PID, pid, &mut info, flags) != 0 {
            return Err(io::Error::last_os_error());
        }
        // With WNOHANG, si_pid stays 0 while the child runs.
        Ok(info.si_pid() != 0)
    }
}

/// Puts the child in its own process group, so that killing the group also kills the z3
/// processes Silicon started, and on Linux asks for SIGKILL when alpine-rs dies.
fn new_process_group(cmd: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        {
            let parent = std::process::id();
            // SAFETY: only async-signal-safe calls between fork and exec, and no allocation
            // (io::Error from an errno does not allocate).
            unsafe {
                cmd.pre_exec(move || {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0)
                        != 0
                    {
                        return Err(io::Error::last_os_error());
                    }
                    // alpine-rs may have died between fork and prctl, leaving no one to send
                    // the signal: then do not start.
                    if libc::getppid() as u32 != parent {
                        return Err(io::Error::from_raw_os_error(libc::ESRCH));
                    }
                    Ok(())
                });
            }
        }
    }
    #[cfg(not(unix))]
    let _ = cmd;
}

/// The "parent" of PR_SET_PDEATHSIG is the thread that forked, not the process: a JVM started
/// from a short-lived thread (a `batch` or `sweep` worker) would be killed when that thread ends,
/// although its `Backend` lives on. So every child is spawned by one thread that lives as long as
/// the process (its channel's sender is a static, never dropped).
fn spawn_from_long_lived_thread(cmd: Command) -> io::Result<Child> {
    type Request = (Command, mpsc::Sender<io::Result<Child>>);
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Request>>> = OnceLock::new();
    static START: Mutex<()> = Mutex::new(());
    let spawner = match SPAWNER.get() {
        Some(s) => s,
        None => {
            // Only one thread starts the spawner; the others wait here, then find it.
            let _guard = START.lock().unwrap_or_else(|p| p.into_inner());
            match SPAWNER.get() {
                Some(s) => s,
                None => {
                    let (tx, rx) = mpsc::channel::<Request>();
                    thread::Builder::new().name("alpine-spawner".into()).spawn(move || {
                        for (mut cmd, reply) in rx {
                            let _ = reply.send(cmd.spawn());
                        }
                    })?;
                    SPAWNER.get_or_init(|| Mutex::new(tx))
                }
            }
        }
    };
    let (reply, answer) = mpsc::channel();
    spawner
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((cmd, reply))
        .map_err(|_| io::Error::other("the process spawner thread is gone"))?;
    answer.recv().map_err(|_| io::Error::other("the process spawner thread is gone"))?
}

// ------------------------------------------------------------------------------------------------
// Processes with a deadline

/// Output of a finished process.
#[derive(Debug)]
pub struct Captured {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` to completion, capturing stdout and stderr. With a limit, the process group is
/// killed when it is exceeded and `Ok(None)` is returned.
pub fn run_with_deadline(
    mut cmd: Command,
    limit: Option<Duration>,
) -> io::Result<Option<Captured>> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = GroupChild::spawn(cmd)?;
    let (Some(out), Some(err)) = (child.child_mut().stdout.take(), child.child_mut().stderr.take())
    else {
        return Err(io::Error::other("cannot capture the output"));
    };
    let read_all = |mut s: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut v = Vec::new();
            let _ = s.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out_t = read_all(Box::new(out));
    let err_t = read_all(Box::new(err));
    let deadline = limit.map(|l| Instant::now() + l);
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            child.kill();
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(25));
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    Ok(Some(Captured { status, stdout, stderr }))
}
