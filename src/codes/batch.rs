//! Codes of this area: see [`super`].

use super::{Code, ExitClass};
use crate::diag::Severity;

pub static CODES: &[Code] = &[
    Code {
        code: "A0701",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "invalid plan: YAML error, unknown key or missing key",
        explanation: r#"
The plan is not a valid `batch` plan: the YAML does not parse, a required key is missing (a job's
`files`, a step's `opt` or `at`), a value has the wrong type, or a key is unknown (a job takes
`name`, `files`, `steps`, `output`, `in_place`, `verify`, `validate`, `entry`, `keep_going`,
`dialect`; a step takes `opt`, `at` and the optimization's parameters). The whole plan is checked
before anything runs, and nothing runs.

```yaml
jobs:
  - files: ["*.pvl"]
    outptu: out
```

Fix the key or the syntax at the label (here `output`).
"#,
        reserved: false,
    },
    Code {
        code: "A0702",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "unknown optimization in a plan step",
        explanation: r#"
A step's `opt` names no optimization. The known names are `unroll`, `merge`, `prefetch`,
`linearize`, `tile` and `fuse`, and Alpinist's `loop_unroll`, `iter_merge`, `glob_to_reg` and
`matrix_lin`. The plan is rejected before anything runs.

```yaml
jobs:
  - files: ["*.pvl"]
    steps:
      - { opt: vectorize, at: "line:6" }
```

Use one of the known names.
"#,
        reserved: false,
    },
    Code {
        code: "A0703",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "invalid parameter in a plan step or job",
        explanation: r#"
A step gives a parameter of another optimization, the same parameter twice (under two names),
a missing or malformed value (a factor that is not a number, an `at` that is not `line:N` or
`line:N:COL`), or a job's `dialect` is not `auto`, `v1` or `v2`; the plan is then rejected. A
step expression that parses in neither dialect is caught here too; one that does not parse in a
file's own dialect fails that file only, when the plan runs.

```yaml
jobs:
  - files: ["*.pvl"]
    steps:
      - { opt: merge, at: "line:6", factor: two }
```

Give the parameters the optimization takes, as `alpine-rs apply --help` lists them.
"#,
        reserved: false,
    },
    Code {
        code: "A0704",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "a job's `files` is empty, or a pattern matches no file",
        explanation: r#"
Each job needs at least one pattern in `files`, and every pattern must match at least one file.
Patterns are relative to the plan's directory, not to the current one, so a pattern that matches
nothing usually means a wrong base. The plan is rejected before anything runs.

```yaml
jobs:
  - files: ["nothing/*.pvl"]
```

Fix the pattern, relative to the folder that holds the plan.
"#,
        reserved: false,
    },
    Code {
        code: "A0705",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "invalid glob pattern",
        explanation: r#"
A pattern in `files` is not a valid glob pattern, for example an unclosed `[`. Patterns use `*`,
`**` (any directories), `?` and `[abc]`. The plan is rejected before anything runs.

```yaml
jobs:
  - files: ["kernels/[a-*.pvl"]
```

Fix the pattern; quote it in the YAML so that `*` and `[` are not read as YAML syntax.
"#,
        reserved: false,
    },
    Code {
        code: "A0706",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "`output` and `in_place` exclude each other",
        explanation: r#"
A job writes its results either below an `output` directory (mirroring the input tree) or over
its inputs (`in_place: true`); it cannot do both. The plan is rejected before anything runs.

```yaml
jobs:
  - files: ["*.pvl"]
    output: out
    in_place: true
```

Keep one of them. With neither, the job only reports.
"#,
        reserved: false,
    },
    Code {
        code: "A0707",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "two writers for one file, or an output that overwrites an input",
        explanation: r#"
Files of a plan are optimized in parallel, so no two of them may be written to one path, and a
job without `in_place` may not write over a file that is an input of the plan. The plan is
rejected before anything runs.

```yaml
jobs:
  - files: ["*.pvl"]
    output: out
  - files: ["k.pvl"]
    output: out
```

Give the jobs different output directories, let one job do both, or use `in_place: true` to
rewrite inputs on purpose.
"#,
        reserved: false,
    },
    Code {
        code: "A0708",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "the plan has no jobs",
        explanation: r#"
The plan's `jobs` list is empty, so there is nothing to run. This is reported as an error
rather than a silent success, since it is usually a mistake in the plan.

```yaml
jobs: []
```

Add a job, e.g. `- files: ["*.pvl"]`.
"#,
        reserved: false,
    },
    Code {
        code: "A0709",
        severity: Severity::Note,
        exit: ExitClass::None,
        title: "output not written because a check did not pass",
        explanation: r#"
Outputs are written only when their checks passed: a rewrite whose proof or behaviour is in
doubt must not replace anything. The file's `verify` or `validate` check failed or could not
decide (its own diagnostics say why), so its output was not written; other files and jobs go on.
For example, with a `k.pvl` that does not verify:

```yaml
jobs:
  - files: ["*.pvl"]
    output: out
    verify: true
```

Look at the file's verify or validate diagnostics; fix the input or the steps and run again.
"#,
        reserved: false,
    },
];
