//! Codes of this area: see [`super`].

use super::{Code, ExitClass};
use crate::diag::Severity;

pub static CODES: &[Code] = &[
    Code {
        code: "V-ASSERT",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "an assertion may not hold",
        explanation: r#"Silicon could not prove the Viper `assert` that encodes a PVL `assert` statement
(`assert.failed`): for some state allowed by the contract and the code before it, the
asserted property is false or a permission it states is not held.

```pvl
class C {
  void m(int x) {
    assert x * x > 0;
  }
}
```

Here `x == 0` is allowed. Add the facts the assertion needs (`requires x != 0;`, a loop
invariant, an earlier assertion) or correct the assertion."#,
        reserved: false,
    },
    Code {
        code: "V-BAD-INPUT",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "the program has a name or type error",
        explanation: r#"The Viper encoder found an error in the program itself, so nothing was verified (exit 2):
an unknown name, field, method or class, `this` or an instance member in a static context,
`return` with a value in a `void` method, `Perm` on something that is not a heap location,
an `atomic` without an enclosing `invariant`, a non-pure method called in a specification.

```pvl
class C {
  void m() {
    int x = y + 1;
  }
}
```

Fix the program as the message says (here: declare `y`)."#,
        reserved: false,
    },
    Code {
        code: "V-BAR-INCONSISTENT",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a barrier hands out more than the threads hand in",
        explanation: r#"Each barrier gets a consistency check: assuming its `requires` for all threads, it must prove
its `ensures` for all threads. That failed: the `ensures` claim more permission than all
threads hand in, or state a fact that does not follow from the `requires` of all threads.

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 2) {
      barrier(k) { ensures tid == 0; }
    }
  }
}
```

Let the `ensures` hand out only what the `requires` of all threads provide (permissions, facts)."#,
        reserved: false,
    },
    Code {
        code: "V-BAR-PRE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a barrier's precondition may not hold",
        explanation: r#"When a thread reaches a barrier, the encoding asserts and exhales the barrier's `requires`
for that thread; Silicon could not prove one of its clauses (a fact, or a permission the
thread may not hold).

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 2) {
      barrier(k) { requires tid == 0; }
    }
  }
}
```

Establish the barrier's `requires` in every thread before the barrier, or weaken them."#,
        reserved: false,
    },
    Code {
        code: "V-DIV0",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a divisor may be zero",
        explanation: r#"Silicon reported `division.by.zero` for a `/`, `%` or fraction `\` in code: the
divisor may be zero in some state the contract allows. (In a contract clause the same
problem is reported as V-WELLFORMED.)

```pvl
class C {
  int div(int x, int y) { return x / y; }
}
```

State that the divisor is not zero (`requires y != 0;`) or guard the division."#,
        reserved: false,
    },
    Code {
        code: "V-EXHALE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "an exhaled assertion may not hold",
        explanation: r#"Silicon could not prove a clause that the encoding asserts or exhales with no more
specific role, in practice the pure part of a PVL `exhale` statement (`exhale.failed` or
`assert.failed`). A permission missing there is reported as V-PERM-READ.

```pvl
class C {
  void m(int x) {
    exhale x > 0;
  }
}
```

Establish the property before the point where it is given away (here
`requires x > 0;`), or exhale less."#,
        reserved: false,
    },
    Code {
        code: "V-FAIL",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "verification failed here",
        explanation: r#"Silicon reported a verification error that alpine-rs does not map to a more specific
code, for example a negative fraction in an `inhale`. The note "Silicon: …" carries
Silicon's own message.

```pvl
class C {
  int x;
  void m() { inhale Perm(x, -1\2); }
}
```

Read Silicon's message in the note; here, use a non-negative fraction."#,
        reserved: false,
    },
    Code {
        code: "V-FOLD",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "folding a predicate may fail",
        explanation: r#"A PVL `fold p(…)` becomes a Viper `fold`, which exhales the predicate's body and
inhales the predicate instance; Silicon reported `fold.failed`: the body (its permissions
or its facts) may not be held at this point.

```pvl
class C {
  int x;
  resource p() = Perm(x, write);
  requires Perm(x, 1\2);
  void m() { fold p(); }
}
```

Hold the whole body of the predicate before the `fold` (here `requires Perm(x, write);`)."#,
        reserved: false,
    },
    Code {
        code: "V-INV-ENTRY",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a loop invariant may not hold on entry",
        explanation: r#"Silicon reported `invariant.not.established`: a `loop_invariant` of the loop may be
false (or a permission it states not held) when the loop is first reached.

```pvl
class C {
  void m() {
    int i = 5;
    loop_invariant 0 <= i && i <= 3;
    while (i < 3) { i = i + 1; }
  }
}
```

Make the invariant hold before the loop (initialise the variables it mentions, hold the
permissions it states) or correct the invariant."#,
        reserved: false,
    },
    Code {
        code: "V-INV-KEEP",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a loop invariant may not be preserved",
        explanation: r#"Silicon reported `invariant.not.preserved`: starting from a state where the
`loop_invariant` and the loop condition hold, one iteration of the body may end in a state
where the invariant is false (or a permission it states is no longer held).

```pvl
class C {
  void m() {
    int i = 0;
    loop_invariant 0 <= i && i <= 3;
    while (i < 3) { i = i + 2; }
  }
}
```

Strengthen the invariant so that one iteration re-establishes it, or correct the body."#,
        reserved: false,
    },
    Code {
        code: "V-INVARIANT",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a resource invariant may not hold",
        explanation: r#"The resource `R` of `invariant name(R) { … }` is exhaled where it is given away: on entry to
the `invariant` block and at the end of each `atomic(name)` block. Silicon could not prove
one of its clauses there.

```pvl
class C {
  int x;
  context Perm(x, write) ** x == 1;
  void m() {
    invariant inv(Perm(x, write) ** x == 0) { }
  }
}
```

Establish the invariant before the block, and re-establish it at the end of every `atomic`."#,
        reserved: false,
    },
    Code {
        code: "V-NEG-PERM",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a permission fraction may be negative",
        explanation: r#"Reserved. verification.md §4.2 maps Silicon's `negative.permission` and
`permission.not.positive` reasons (a fraction in `Perm` that may be negative) to this code.
alpine-rs recognises the reason but reports the code of the failing statement instead:
V-EXHALE for an `exhale`, V-FAIL for an `inhale`, V-PRE for a call.

```pvl
class C {
  int x;
  requires Perm(x, write);
  void m() { exhale Perm(x, -1\2); }
}
```

Use non-negative fractions (`1\2`, `read`, `write`)."#,
        reserved: true,
    },
    Code {
        code: "V-NOT-INJECTIVE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "quantified permissions may denote one location twice",
        explanation: r#"A quantified permission (`\forall*`, or the per-thread contract of a `par` block, which
is quantified over the threads) needs distinct values of the variable to denote distinct
locations; Silicon reported `qp.not.injective`.

```pvl
class C {
  context_everywhere a != null && a.length == 4;
  context (\forall* int i; 0 <= i && i < 4; Perm(a[i / 2], 1\4));
  void m(int[] a) { }
}
```

Use an index that is injective in the variable (`a[i]`, `a[2 * i]`), or quantify over
the locations instead of over something that maps to them."#,
        reserved: false,
    },
    Code {
        code: "V-NULL",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "an array may be null",
        explanation: r#"Array elements are encoded through the prelude function `aloc(a, i)`, whose
precondition `a != anull()` failed: the array may be null where it is indexed, in code or
in a contract.

```pvl
class C {
  requires Perm(a[0], read);
  int first(int[] a) { return a[0]; }
}
```

State that the array is not null before it is indexed, e.g. `requires a != null;` before
the clauses that mention `a[…]` (with its length, see V-OOB)."#,
        reserved: false,
    },
    Code {
        code: "V-OOB",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "an array index may be out of bounds",
        explanation: r#"The precondition of the prelude function `aloc(a, i)` that encodes `a[i]` failed on
`0 <= i` ("the index may be negative") or on `i < alen(a)` ("the index may exceed the
length"), in code or in a contract.

```pvl
class C {
  requires a != null && a.length == 3;
  requires Perm(a[3], write);
  void m(int[] a) { a[3] = 1; }
}
```

State the bounds of the index and the length of the array (e.g. `a.length == n` and
`0 <= i && i < n`), or correct the index."#,
        reserved: false,
    },
    Code {
        code: "V-PAR-POST",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a par block's postcondition may not hold",
        explanation: r#"A `par` block is encoded as a thread method whose postcondition is the block's `ensures`
(and `context`) for one thread; Silicon could not prove it at the end of the body.

```pvl
class C {
  context_everywhere a != null && a.length == n;
  context (\forall* int i; 0 <= i && i < n; Perm(a[i], write));
  void m(int n, int[] a) {
    par k (int tid = 0 .. n) context Perm(a[tid], write); ensures a[tid] == tid;
    { a[tid] = 2 * tid; }
  }
}
```

Correct the body, or add the facts it needs to the block's precondition."#,
        reserved: false,
    },
    Code {
        code: "V-PAR-PRE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a par block's precondition may not hold for all threads",
        explanation: r#"Where a `par` block starts, its precondition is asserted and exhaled for all threads; Silicon
could not prove a clause (a fact, or a permission the enclosing context may not hold).

```pvl
class C {
  context_everywhere a != null && a.length == n;
  context (\forall* int i; 0 <= i && i < n; Perm(a[i], 1\2));
  void m(int n, int[] a) {
    par k (int tid = 0 .. n) context Perm(a[tid], write);
    { a[tid] = 0; }
  }
}
```

Make the state before the block provide the precondition of every thread, or weaken it."#,
        reserved: false,
    },
    Code {
        code: "V-PERM-READ",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "insufficient permission for a heap access",
        explanation: r#"Silicon reported `insufficient.permission` in a statement that has no more specific code:
for example the condition of an `if` or a loop, or an argument of a call, reads a location
without permission for it, or an `exhale` gives away a permission that is not held.

```pvl
class C {
  int x;
  void m() {
    if (x > 0) { }
  }
}
```

Hold a permission for the location there: `Perm(x, read)` or a fraction for a read, the
amount exhaled for an `exhale` (here `requires Perm(x, read);`)."#,
        reserved: false,
    },
    Code {
        code: "V-PERM-WRITE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "insufficient permission for an assignment",
        explanation: r#"Silicon reported `assignment.failed:insufficient.permission`: the assignment writes a
heap location without write permission for it. Every permission missing in an assignment
is reported this way, also one for a location that its right-hand side only reads
(`y = x;` without permission for `x`).

```pvl
class C {
  int x;
  context Perm(x, 1\2);
  void set() { x = 1; }
}
```

Hold `Perm(…, write)` for the location written, and a permission for each location read."#,
        reserved: false,
    },
    Code {
        code: "V-POST",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a postcondition may not hold",
        explanation: r#"Silicon reported `postcondition.violated` in a PVL method: an `ensures` (or `context`)
clause may be false, or a permission it states not held, when the method returns.

```pvl
class C {
  ensures \result == 2 * n;
  int twice(int n) { return n + n + 1; }
}
```

Correct the body, strengthen the loop invariants or intermediate assertions that lead to
the postcondition, or weaken it."#,
        reserved: false,
    },
    Code {
        code: "V-PRE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a precondition of a call may not hold",
        explanation: r#"Silicon reported `call.precondition` at a PVL method call, or `application.precondition`
at a call of a pure function: the callee's `requires` may not hold for the arguments and
the state at the call.

```pvl
class C {
  requires n > 0;
  int half(int n) { return n / 2; }

  void m() { int h = half(0); }
}
```

Establish the callee's precondition before the call (a guard, a caller contract, an
invariant), or weaken the callee's `requires`."#,
        reserved: false,
    },
    Code {
        code: "V-TIMEOUT",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "verification timed out",
        explanation: r#"Silicon did not reach a verdict within the time limit (`verify --timeout S`, or
`--verify-timeout S` of `apply` and `batch`); the result is inconclusive (exit 3), neither
verified nor refuted. Non-linear arithmetic is a common cause.

```pvl
class C {
  requires 1 < a && 1 < b && 1 < c && 1 < d;
  ensures a * b * c * d * a * b * c * d != a * a * b * c * d * b * c * d + 1;
  void m(int a, int b, int c, int d) { }
}
```

Raise the timeout, or help the prover: linear index arithmetic, intermediate assertions,
smaller methods."#,
        reserved: false,
    },
    Code {
        code: "V-UNFOLD",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "unfolding a predicate may fail",
        explanation: r#"A PVL `unfold p(…)` becomes a Viper `unfold`, which exhales the predicate instance and
inhales its body; Silicon reported `unfold.failed`: the instance may not be held here.

```pvl
class C {
  int x;
  resource p() = Perm(x, write);
  void m() { unfold p(); }
}
```

Hold the predicate instance before unfolding it (here `requires p();`), e.g. by folding it
earlier or requiring it in the contract."#,
        reserved: false,
    },
    Code {
        code: "V-UNFRAMED",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a contract reads a location without permission",
        explanation: r#"Viper contracts must be self-framing: read left to right, every heap location they read
must be covered by a permission stated earlier. Silicon reported
`not.wellformed:insufficient.permission` for a contract clause.

```pvl
class C {
  int x;
  requires x > 0;
  requires Perm(x, read);
  void m() { }
}
```

State the permission for the location before the clause that reads it (here swap the two
`requires`), in the same contract or earlier."#,
        reserved: false,
    },
    Code {
        code: "V-UNSUPPORTED",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "a construct is not supported by the viper encoding",
        explanation: r#"The program uses a construct that `alpine-rs verify` cannot encode yet, so nothing was
verified (exit 2): `fork` and other opaque statements, a `return` before the end of the
method, `parallel`/`sequential` blocks, a region contract before `par`, a barrier with a
non-empty body, a quantifier over a non-`int` variable, among others (verification.md §5.13).

```pvl
class C {
  int abs(int x) {
    if (x < 0) { return -x; }
    return x;
  }
}
```

Rewrite the construct (here: one `return` at the end), or verify the file with VerCors."#,
        reserved: false,
    },
    Code {
        code: "V-WELLFORMED",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a contract may not be well-formed",
        explanation: r#"Silicon reported `not.wellformed` for a reason other than a missing permission: an
expression of a contract clause may be undefined, e.g. a division whose divisor may be zero.
(Out-of-bounds and null indices in contracts are reported as V-OOB and V-NULL, missing
permissions as V-UNFRAMED.)

```pvl
class C {
  requires 10 / n > 1;
  void m(int n) { }
}
```

Make every expression of the clause defined, e.g. guard it with an earlier conjunct:
`requires n != 0 && 10 / n > 1;`."#,
        reserved: false,
    },
];
