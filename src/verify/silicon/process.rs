//! Processes run to completion with a deadline; the process group (Silicon and its z3
//! processes) is killed when it is exceeded.

use std::io::{self, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

// ------------------------------------------------------------------------------------------------
// Processes with a deadline

/// Output of a finished process.
#[derive(Debug)]
pub(crate) struct Captured {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` to completion, capturing stdout and stderr. With a limit, the process group is
/// killed when it is exceeded and `Ok(None)` is returned.
pub(crate) fn run_with_deadline(
    mut cmd: Command,
    limit: Option<Duration>,
) -> io::Result<Option<Captured>> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    new_process_group(&mut cmd);
    let mut child = cmd.spawn()?;
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        kill_tree(&mut child);
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
            kill_tree(&mut child);
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(25));
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    Ok(Some(Captured { status, stdout, stderr }))
}

/// Puts the child in its own process group, so that killing the group also kills the z3
/// processes Silicon started.
pub(super) fn new_process_group(cmd: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(not(unix))]
    let _ = cmd;
}

pub(super) fn kill_tree(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group `pid`, which the child
        // leads (it was spawned with process_group(0)); no memory is involved.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}
