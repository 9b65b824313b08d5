//! Codes of this area: see [`super`].

use super::{Code, ExitClass};
use crate::diag::Severity;

pub static CODES: &[Code] = &[
    Code {
        code: "E-BACKEND",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "the verification backend is missing or stopped without a verdict",
        explanation: r#"The Viper/Silicon backend could not be used, so nothing was verified: Java (17 or
newer), `silicon.jar`, z3 or the batch driver is missing, unreadable or too old; Silicon
stopped without a verdict (a crash, an out-of-memory JVM); `apply` or `batch` got no verdict
back; or `alpine-rs backend install` failed. The message says which.

```sh
ALPINE_SILICON_JAR=/nonexistent alpine-rs verify --no-cache prog.pvl
```

`alpine-rs backend doctor` lists each component and what is wrong with it, and
`alpine-rs backend install` provisions Silicon and z3 into the cache. The result is
inconclusive (exit 3), not a verdict on the program."#,
        reserved: false,
    },
    Code {
        code: "E-INTERNAL",
        severity: Severity::Error,
        exit: ExitClass::Internal,
        title: "the viper encoding was rejected or could not be produced",
        explanation: r#"A bug in alpine-rs: Silicon rejected the Viper program that alpine-rs generated (a parse,
type or consistency error, or an error outside every encoded member), or the encoder failed
without saying why. When several programs share one Silicon run, the others are reported with
this code too ("Silicon rejected another program of the same batch"). No PVL program should
cause it, so there is no example.

```sh
alpine-rs verify --keep-vpr vpr-out prog.pvl
```

Please report it with the PVL file and the kept `.vpr` file and position map; meanwhile,
verify the program with VerCors."#,
        reserved: false,
    },
    Code {
        code: "E-IO",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "a file could not be read or written",
        explanation: r#"`alpine-rs verify` could not read a source file (missing, unreadable, or not UTF-8;
exit 2), or could not write the `.vpr` file and position map into the directory given to
`--keep-vpr` (exit 3). `run` and `validate` report unreadable files as R-USAGE instead.

```sh
alpine-rs verify missing.pvl
alpine-rs verify --keep-vpr /proc/nope prog.pvl
```

Check the path and the permissions of the file or directory named in the message."#,
        reserved: false,
    },
];
