//! Codes of this area: see [`super`].

use super::{Code, ExitClass};
use crate::diag::Severity;

pub static CODES: &[Code] = &[
    Code {
        code: "A0000",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "usage error, or a file that cannot be read or written",
        explanation: r#"
The command line does not fit together, or a file cannot be read or written. Examples: `--opt`
without its own `--at line:N`, a missing or malformed parameter flag (`--opt unroll` needs
`--factor`), a parameter flag that no `--opt` and no annotation of the file takes,
`--annotations-only` without `--diff` or `--check`, `batch --jobs 0`, `explain` of an unknown code,
a path that cannot be read, or an output that cannot be written (writes are atomic: a file given to
`--in-place` is then unchanged). Nothing is written.

    alpine-rs apply --opt unroll --at line:4 f.pvl     # --opt unroll needs --factor

Fix the command as the help line says (`alpine-rs apply --help` lists each optimization's flags),
or the path and its permissions.
"#,
        reserved: false,
    },
    Code {
        code: "A0001",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "syntax error",
        explanation: r#"
The file is not valid PVL in the selected dialect: an unexpected token or character, unbalanced
braces, contract clauses that no loop or `par` block follows, a keyword used as a name, or bytes
that are not UTF-8. alpine-rs rewrites spans of a parsed program, so it never guesses a structure.
In a VerCors 1.4 (v1) file the words `loop_unroll`, `iter_merge`, `matrix_lin`, `glob_to_reg`,
`tile`, `fuse`, `inter` and `intra` are reserved:

```pvl
void f(int n) {
  int tile = n;
}
```

Fix the text at the label; for a VerCors 2 file, pass `--dialect v2`.
"#,
        reserved: false,
    },
    Code {
        code: "A0002",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "dangling annotation: nothing to attach to",
        explanation: r#"
A `gpuopt` annotation in a method body is not followed by a construct it can annotate: a loop
(with its `loop_invariant` clauses) or a `par` block. Alpinist silently ignored such an
annotation; alpine-rs reports it, so a request is never lost without a word.

```pvl
void f(int n) {
  int x = 0;
  gpuopt loop_unroll i 2;
  x = n;
}
```

Move the annotation directly before the loop or `par` block it is meant for, or remove it.
"#,
        reserved: false,
    },
    Code {
        code: "A0003",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "malformed annotation: unknown optimization or bad operands",
        explanation: r#"
A `gpuopt` annotation does not read: the optimization name is unknown (known: `loop_unroll`,
`iter_merge`, `glob_to_reg`, `matrix_lin`, `tile`, `fuse`, and the synonyms `unroll`, `merge`,
`prefetch`, `linearize`), an operand is missing, extra or of the wrong kind (a negative factor,
`tile` without `inter` or `intra`), or the `;` is missing. In source `fuse` needs both numbers,
`gpuopt fuse F B;`. A prefetch location that cannot be rewritten is refused with this code too.

```pvl
void f(int n) {
  int i = 0;
  gpuopt loop_unroll i;
  while (i < n) { i = i + 1; }
}
```

Write the annotation as the help line's syntax shows (here `gpuopt loop_unroll i 2;`).
"#,
        reserved: false,
    },
    Code {
        code: "A0004",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "annotation on the wrong kind of construct, or an optimization it does not apply to",
        explanation: r#"
The annotation sits on a construct its optimization does not apply to: `loop_unroll` and
`iter_merge` annotate loops; `matrix_lin` a method; `glob_to_reg` and `tile` a method or a `par`
block; `fuse` the first `par` block of a group. As a refusal of a step (construct left unchanged)
it also reports a request the optimization cannot take: `fuse` with fewer than 2 kernels or 0
thread blocks, a `par` body that is not a block, or a refusal without a more precise code. With
the help "report this as a bug" it stands for an internal error (see A0099).

```pvl
void f(int n) {
  gpuopt loop_unroll i 2;
  par lanes (int t = 0 .. n) { }
}
```

Place the annotation as the help line says, or fix the parameter value.
"#,
        reserved: false,
    },
    Code {
        code: "A0005",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "`--at` selects no construct, or several",
        explanation: r#"
`--opt KIND --at line:N[:COL]` picks a construct of the kind's target (a loop for unroll and
merge, a `par` block for tile and fuse, a method for linearize, either for prefetch): one whose
header region (annotations and contract down to its keyword) holds line N, else the innermost
one whose span holds it (for tile, a method's only `par` block; for fuse, its first). None: the
nearest candidate is shown. Several headers on the line: add the keyword's column. In a run of
several `--opt`, a step whose target an earlier step rewrote is refused with this code too.

    alpine-rs apply --opt unroll --at line:1 --factor 1 f.pvl   # no loop at line 1

Use the line (and column) the diagnostic suggests; for a rewritten target, run again on the output.
"#,
        reserved: false,
    },
    Code {
        code: "A0006",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "two loop annotations on one loop",
        explanation: r#"
Unrolling and merging each rewrite the whole loop, so one loop takes at most one of
`loop_unroll` and `iter_merge` (including two of the same kind): the second would apply to code
that the first has already replaced.

```pvl
void f(int n) {
  int i = 0;
  gpuopt loop_unroll i 1;
  gpuopt iter_merge i 2;
  loop_invariant 0 <= i && i <= n;
  while (i < n) { i = i + 1; }
}
```

Keep one annotation; to combine the two, run alpine-rs twice (the second run on the output).
"#,
        reserved: false,
    },
    Code {
        code: "A0010",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "expression read differently by VerCors 1.4 and VerCors 2",
        explanation: r#"
Without parentheses, a `&&` or `**` operand of `||` (or the reverse) and a chain of `==>` or
`-*` group differently in the two generations of PVL. alpine-rs parses the file in the selected
dialect (`--dialect`, or `auto`: v2 when the file has only v2 markers, else v1) and shows the
other reading. The program is not changed.

```pvl
requires a || b && c;
void f(boolean a, boolean b, boolean c) { }
```

Add the parentheses the help line gives (here `(a || b) && c` keeps the v1 meaning).
"#,
        reserved: false,
    },
    Code {
        code: "A0011",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a transformation needs an expression whose dialect reading is not settled",
        explanation: r#"
Reserved (pvl.md §1.2). When the dialect is not settled (no `--dialect`, and `auto` finds markers
of neither or both generations), a dialect-sensitive expression (see A0010) is meant to be opaque
to reasoning. If a transformation needs its logical structure, for example when it is the loop's
bound invariant, the step is to be refused with this code:

```pvl
gpuopt loop_unroll i 1;
loop_invariant 0 <= i && i <= n || n < 0 && i == 0;
while (i < n) { i = i + 1; }
```

This version warns with A0010 and does not emit A0011. Add parentheses or pass `--dialect`.
"#,
        reserved: true,
    },
    Code {
        code: "A0012",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "integer division of two literals in a permission",
        explanation: r#"
Reserved (pvl.md §2.5). In PVL `/` is integer division and `\` is rational division, so
`Perm(a[i], 1/2)` asks for the permission 0, which is almost always a typo for `1\2`. The warning
is to be raised when `/` with two literal operands appears in a permission argument:

```pvl
context Perm(a[t], 1/2);
```

This version does not emit it. Write the fraction with `\` (`1\2`).
"#,
        reserved: true,
    },
    Code {
        code: "A0020",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "could not decide applicability: the solver gave up, or a term cannot be encoded",
        explanation: r#"
Applicability is proven with Z3 from the program's own annotations. A timeout, an `unknown`, or
a guard, step, location or range that cannot be encoded (sets, bags and maps are opaque) leaves
it unproven; alpine-rs never applies on a guess, so the step is refused. The message says which.

```pvl
requires n >= 2;
void f(int n, set<int> done) {
  int i = 0;
  gpuopt loop_unroll i 1;
  loop_invariant 0 <= i && i <= n;
  while (i < n && !(i in done)) { i = i + 1; }
}
```

Raise `--z3-timeout MS` (default 2000), or simplify the guard or the facts so they can be encoded.
"#,
        reserved: false,
    },
    Code {
        code: "A0030",
        severity: Severity::Note,
        exit: ExitClass::None,
        title: "generated name made fresh with a suffix",
        explanation: r#"
Reserved (optimizations.md §1.5). A name that alpine-rs generates (`vct_mi_l`, `a_reg_0`,
`vct_tile_counter`, `vct_fused_tid`, …) must differ from every identifier of the file and from
every name generated earlier in the run; otherwise the smallest free suffix `_1`, `_2`, … is
appended. This note is to say so:

```pvl
int vct_tile_counter = 0;   // the tiling loop variable becomes vct_tile_counter_1
```

Names are made fresh this way already; this version does not emit the note. Nothing to fix.
"#,
        reserved: true,
    },
    Code {
        code: "A0031",
        severity: Severity::Note,
        exit: ExitClass::None,
        title: "in-source annotation superseded by `--opt`",
        explanation: r#"
With `--opt`, only the command-line step runs, with its own parameters: an in-source annotation
of that optimization on the selected construct (for `tile`, also on the method of its only `par`)
is removed. Here with `alpine-rs apply --opt unroll --at line:6 --factor 2 f.pvl`:

```pvl
requires n >= 2;
void f(int n) {
  int i = 0;
  gpuopt loop_unroll i 1;
  loop_invariant 0 <= i && i <= n;
  while (i < n) { i = i + 1; }
}
```

Drop `--opt` to apply the file's own annotation instead.
"#,
        reserved: false,
    },
    Code {
        code: "A0099",
        severity: Severity::Error,
        exit: ExitClass::Internal,
        title: "internal error",
        explanation: r#"
A bug in alpine-rs, reported as such: an optimization produced text that does not parse (every
output is parsed again before it is written), an earlier step left an annotation that no longer
reads, an edit could not be applied, a parameter the checks guarantee was missing, or a `batch`
worker failed while optimizing or validating a file. The file is left unchanged, and nothing is
written for it. No input is meant to produce this code, so there is no example.

Please report it with the input file and the command line. Until it is fixed, leaving out the
step that fails may avoid it.
"#,
        reserved: false,
    },
];
