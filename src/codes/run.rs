//! Codes of this area: see [`super`].

use super::{Code, ExitClass};
use crate::diag::Severity;

pub static CODES: &[Code] = &[
    Code {
        code: "R-ASSERT",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "an assertion is false at run time",
        explanation: r#"An `assert` was false for this input (its permission parts count too: asserting
`Perm(x, write)` without holding it fails). The same code reports a false pure part of an
`exhale` statement, and of the body of a predicate being folded. The run goes on; the
input is printed with the run.

```pvl
class C {
  void m() {
    int x = 3;
    assert x == 4;
  }
}
```

Correct the code or the assertion, or require what it needs in the contract."#,
        reserved: false,
    },
    Code {
        code: "R-ASSUME",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "an inhaled fact is false at run time",
        explanation: r#"The pure part of an `inhale` statement was false for this input. The run reports it as
an error and goes on (a false `assume`, in contrast, ends the run as infeasible and
reports nothing).

```pvl
class C {
  void m() {
    int x = 3;
    inhale x == 4;
  }
}
```

Inhale only facts that hold; to restrict the inputs, use `requires` or `assume`."#,
        reserved: false,
    },
    Code {
        code: "R-BAR-INCONSISTENT",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a barrier hands out more permission than it received",
        explanation: r#"At a barrier the threads give their `requires` to a pool, then each takes its `ensures` from it;
a thread asked for more than was left, or for more than write (the run-time V-BAR-INCONSISTENT).

```pvl
class C {
  context_everywhere a != null && a.length == 2;
  requires (\forall* int i; 0 <= i && i < 2; Perm(a[i], write));
  void m(int[] a) {
    par k (int tid = 0 .. 2) requires Perm(a[tid], write);
    { barrier(k) { requires Perm(a[tid], 1\2); ensures Perm(a[tid], write); } }
  }
}
```

Make the barrier's `ensures` permissions match its `requires` ones."#,
        reserved: false,
    },
    Code {
        code: "R-BAR-POST",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a barrier's postcondition is false for a thread",
        explanation: r#"After a barrier has moved the permissions, the pure part of its `ensures` is checked for every
thread; it was false for the thread named.

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 2) {
      barrier(k) { ensures tid == 0; }
    }
  }
}
```

The barrier's `ensures` must follow from what the threads hold and know at the barrier."#,
        reserved: false,
    },
    Code {
        code: "R-BAR-PRE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a barrier's precondition is false for a thread",
        explanation: r#"A thread reached a barrier and the pure part of the barrier's `requires` was false for it.
(A permission the thread does not hold is reported as R-PERM-TRANSFER.)

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 2) {
      barrier(k) { requires tid == 0; }
    }
  }
}
```

Make the barrier's `requires` hold for every thread of the block when it reaches the barrier."#,
        reserved: false,
    },
    Code {
        code: "R-BARRIER-SCOPE",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "a barrier is outside its par block",
        explanation: r#"A barrier must be inside a `par` block, and its label must name the innermost enclosing
`par` block. The program is rejected before it runs (exit 2).

```pvl
class C {
  void m() {
    barrier(k) { }
  }
}
```

Move the barrier into the `par` block it synchronises, or correct its label."#,
        reserved: false,
    },
    Code {
        code: "R-DEADLOCK",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "threads wait at a barrier that others never reach",
        explanation: r#"Some warps of a `par` block wait at a barrier while the others finished without reaching
it, so the barrier can never be passed. The run stops. (A barrier reached by only part of
one warp is R-DIVERGENCE; warps have 32 threads.)

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 64) {
      if (tid < 32) { barrier(k) { } }
    }
  }
}
```

Every thread of the block must reach the barrier: make it unconditional in the block."#,
        reserved: false,
    },
    Code {
        code: "R-DIV0",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "division by zero",
        explanation: r#"A `/` or `%` had a zero divisor, or a fraction `p\q` a zero denominator, for this input.
The run stops at the first lane that hits it.

```pvl
class C {
  void m() {
    int z = 0;
    int x = 4 / z;
  }
}
```

Require the divisor to be non-zero in the contract, or guard the division."#,
        reserved: false,
    },
    Code {
        code: "R-DIVERGENCE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "barrier divergence",
        explanation: r#"Threads of one block disagree on a barrier: part of a warp reached it while the warp's other
lanes were inactive (a thread-dependent branch or loop), or two warps wait at different
barriers or in different loop iterations. The run stops.

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 4) {
      if (tid < 2) { barrier(k) { } }
    }
  }
}
```

Move the barrier out of thread-dependent control flow."#,
        reserved: false,
    },
    Code {
        code: "R-FUEL",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "the run is out of fuel",
        explanation: r#"The run executed more lane-statements than `--fuel` allows (default 10^8), e.g. in a loop
that does not terminate. The run is inconclusive (exit 3): it says nothing about the program.

```pvl
class C {
  void m() {
    int i = 0;
    while (true) { i = i + 1; }
  }
}
```

`alpine-rs run --fuel 1000 prog.pvl` reports it quickly. Raise `--fuel`, use smaller
inputs, or make the loop terminate."#,
        reserved: false,
    },
    Code {
        code: "R-INT-RANGE",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "an integer left the 64-bit range",
        explanation: r#"PVL integers are unbounded, but the interpreter computes with 64-bit integers; an
arithmetic operation overflowed. This is not an error of the program: the run is
inconclusive (exit 3).

```pvl
class C {
  void m() {
    int x = 9223372036854775807;
    x = x + 1;
  }
}
```

Use smaller inputs (or smaller constants)."#,
        reserved: false,
    },
    Code {
        code: "R-INV-ENTRY",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a loop invariant is false on entry",
        explanation: r#"When the loop was first reached, a `loop_invariant` was false, or a permission it states
was not held, for this input and the thread named.

```pvl
class C {
  void m() {
    int i = 5;
    loop_invariant 0 <= i && i <= 3;
    while (i < 3) { i = i + 1; }
  }
}
```

Make the invariant hold before the loop (the code before it, the contract), or correct the
invariant."#,
        reserved: false,
    },
    Code {
        code: "R-INV-KEEP",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a loop invariant is not preserved",
        explanation: r#"After an iteration of the body, a `loop_invariant` was false, or a permission it states
was no longer held; the message names the iteration where it first failed. Permissions not
stated in the invariant are dropped at each iteration, as in the static proof.

```pvl
class C {
  void m() {
    int i = 0;
    loop_invariant 0 <= i && i <= 3;
    while (i < 3) { i = i + 2; }
  }
}
```

Correct the body, or the invariant so that one iteration re-establishes it."#,
        reserved: false,
    },
    Code {
        code: "R-INVARIANT",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a resource invariant is false",
        explanation: r#"The pure part of the resource `R` of `invariant name(R) { … }` was false where `R` is given
to the invariant: on entry to the block, or at the end of an `atomic(name)` block. (A missing
permission of `R` is reported as R-PERM-TRANSFER.)

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
        code: "R-LIMIT",
        severity: Severity::Note,
        exit: ExitClass::None,
        title: "further checker errors were suppressed",
        explanation: r#"A run lists at most 20 checker errors; this note counts the ones found after that (the
run went on, best effort, and they still make it fail).

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 30) ensures tid < 0; { }
  }
}
```

Fix the errors shown first: the later ones often have the same cause."#,
        reserved: false,
    },
    Code {
        code: "R-NAME",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "unknown name",
        explanation: r#"A name or a method that the program uses is not declared (not a local, parameter or
field; no such method). The program is rejected before it runs (exit 2).

```pvl
class C {
  void m() {
    int x = y + 1;
  }
}
```

Declare the name, or correct its spelling."#,
        reserved: false,
    },
    Code {
        code: "R-NEG-PERM",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a permission fraction is negative",
        explanation: r#"Reserved. semantics.md §3.3 and §8 give a negative fraction in `Perm(ℓ, p)` this code.
The interpreter reports it instead as a failed transfer with the message "negative
permission", under the permission code of the transfer: R-PERM-TRANSFER for an `exhale`,
a call or a `par` block, R-PERM-OVERFLOW for an `inhale`.

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
        code: "R-NEG-SIZE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "an array size is negative",
        explanation: r#"`new T[n]` was executed with `n < 0` for this input. The run stops.

```pvl
class C {
  void m() {
    int n = 0 - 1;
    int[] a = new int[n];
  }
}
```

Require array sizes to be non-negative in the contract, or correct the size."#,
        reserved: false,
    },
    Code {
        code: "R-NO-INPUT",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "no input satisfies the precondition",
        explanation: r#"Input generation found no input for the entry method that satisfies its precondition
(for example, the precondition's shape is unsatisfiable within the default bounds, or 50
candidates in a row violated it). Nothing ran: the result is inconclusive (exit 3).

```pvl
class C {
  requires n > 0 && n < 0;
  void m(int n) { }
}
```

Give an input that satisfies the precondition with `--input FILE`, or widen the
precondition."#,
        reserved: false,
    },
    Code {
        code: "R-NULL",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "access through null",
        explanation: r#"An array element, a field, `.length` or a method was accessed through `null` for this
input. The run stops.

```pvl
class C {
  void m() {
    int[] a = null;
    int x = a[0];
  }
}
```

Require the reference to be non-null in the contract (e.g. `a != null`), or allocate it."#,
        reserved: false,
    },
    Code {
        code: "R-OOB",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "index out of bounds",
        explanation: r#"An index was outside `[0, length)` of an array, or outside a sequence (index, slice,
update, head of an empty sequence), for this input. The message gives the index and the
length. The run stops.

```pvl
class C {
  void m() {
    int[] a = new int[3];
    a[3] = 1;
  }
}
```

Check the bounds in the code, or require them in the contract."#,
        reserved: false,
    },
    Code {
        code: "R-PAR-POST",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a par block's postcondition is false for a thread",
        explanation: r#"At the end of a `par` block, the pure part of its `ensures` (or `context`) was false for the
thread named, or a region postcondition written before `par` was false. (A permission a
thread does not hold is reported as R-PERM-TRANSFER.)

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 4) ensures tid < 3;
    { }
  }
}
```

Each thread must establish the block's postcondition from its own body."#,
        reserved: false,
    },
    Code {
        code: "R-PAR-PRE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a par block's precondition is false for a thread",
        explanation: r#"When a `par` block started, the pure part of its `requires` (or `context`) was false for
the thread named; also a false region precondition written before `par`. (A permission
the launching code does not hold is reported as R-PERM-TRANSFER.)

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 4) requires tid < 3; { }
  }
}
```

The block's precondition must follow, for every thread, from what holds before the block."#,
        reserved: false,
    },
    Code {
        code: "R-PERM-OVERFLOW",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "an inhale creates more than write permission",
        explanation: r#"An `inhale` statement left its holder with more than write permission (1) for a location
(or inhaled a negative amount). Total permission per location can never exceed 1; Viper
would silently assume false here.

```pvl
class C {
  int x;
  context Perm(x, write);
  void m() { inhale Perm(x, 1\2); }
}
```

Inhale only permission that nobody holds; two holders claiming the same write permission
is the usual cause."#,
        reserved: false,
    },
    Code {
        code: "R-PERM-READ",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "read without permission",
        explanation: r#"A thread read a heap location (array element or field) while its current holder (the
frame of its method, block or loop) held no permission for it. This is the run-time
counterpart of V-PERM-READ.

```pvl
class C {
  int x;
  int get() { return x; }
}
```

Add a read permission for the location (`Perm(x, read)` or a fraction) to the contract that
covers the read (method, `par` block or loop invariant)."#,
        reserved: false,
    },
    Code {
        code: "R-PERM-TRANSFER",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a contract asks for a permission that is not held",
        explanation: r#"A transfer lacked permission (a call's precondition, a method's postcondition, a `par` contract,
a barrier's `requires`, an `exhale`, `fold`/`unfold`, a resource invariant); what is held moves.

```pvl
class C {
  int x;
  requires Perm(x, write);
  void need() { }

  requires Perm(x, 1\2);
  void m() { need(); }
}
```

Add the permission to the contract of the giver (the caller, the thread, the block)."#,
        reserved: false,
    },
    Code {
        code: "R-PERM-WRITE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "write without write permission",
        explanation: r#"A thread wrote a heap location while its current holder did not have the whole (write)
permission for it. This is the run-time counterpart of V-PERM-WRITE.

```pvl
class C {
  int x;
  context Perm(x, 1\2);
  void set() { x = 1; }
}
```

Writing needs the whole permission: give the writer `Perm(x, write)` for the location."#,
        reserved: false,
    },
    Code {
        code: "R-POST",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a postcondition is false at run time",
        explanation: r#"When a method returned, the pure part of its `ensures` (or `context`) was false for this
input. (A permission not held is reported as R-PERM-TRANSFER.)

```pvl
class C {
  ensures \result == 2 * n;
  int twice(int n) { return n + n + 1; }
}
```

The body does not establish its postcondition for this input: correct the body or weaken
the `ensures` clause."#,
        reserved: false,
    },
    Code {
        code: "R-PRE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "a precondition of a call is false at run time",
        explanation: r#"At a call, the pure part of the callee's `requires` (or `context`) was false for the
arguments passed; a pure function's precondition is checked the same way. The entry
method's precondition is different: a generated input that violates it is redrawn, and a
given one is reported as "input violates precondition".

```pvl
class C {
  requires n > 0;
  int half(int n) { return n / 2; }

  void m() { int h = half(0); }
}
```

The caller must establish the precondition for the values it passes."#,
        reserved: false,
    },
    Code {
        code: "R-QUANT-LIMIT",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "a quantifier's domain is too large to enumerate",
        explanation: r#"Quantifiers are evaluated by enumerating their variable between its bounds; this one
ranges over more than 10^7 values. The run is inconclusive (exit 3).

```pvl
class C {
  void m() {
    assert (\forall int i; 0 <= i && i < 100000000; i >= 0);
  }
}
```

Use smaller inputs, or a tighter range for the quantified variable."#,
        reserved: false,
    },
    Code {
        code: "R-QUANT-UNBOUNDED",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "a quantifier has no bound to enumerate",
        explanation: r#"Quantifiers are evaluated by enumerating their variable; the condition gives it no
lower or no upper bound (conjuncts such as `lo <= i` and `i < hi`). The run is
inconclusive (exit 3).

```pvl
class C {
  void m() {
    assert (\forall int i; i >= 0; i + 1 > 0);
  }
}
```

Give the quantified variable explicit bounds: `(\forall int i; 0 <= i && i < n; …)`."#,
        reserved: false,
    },
    Code {
        code: "R-RACE",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "data race",
        explanation: r#"Two threads accessed one location, at least one writing, with no barrier between them (same
block and barrier interval, or sibling blocks of one launch), not both in `atomic` blocks of
one invariant. `validate` compares no racy run.

```pvl
class C {
  context_everywhere a != null && a.length == 5;
  void m(int[] a) {
    par k (int tid = 0 .. 4) { a[tid + 1] = a[tid]; }
  }
}
```

Run with `--checks races` to see it (permission checks report R-PERM-READ first). Separate
the accesses with a barrier, give them disjoint locations, or make them atomic."#,
        reserved: false,
    },
    Code {
        code: "R-SCHEDULE",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "the result depends on the warp schedule",
        explanation: r#"`validate --schedules K` reruns each input under K random warp orders; a rerun ended
differently although no race was reported (`atomic` blocks, e.g., are not races). That input
is inconclusive (exit 3 unless something else differs).

```pvl
class C {
  int x;
  context Perm(x, write);
  void m() {
    invariant inv(Perm(x, write)) { par k (int tid = 0 .. 64) { atomic(inv) { x = tid; } } }
  }
}
```

Make the result independent of the warp order; `run --schedule S` shows each result."#,
        reserved: false,
    },
    Code {
        code: "R-TYPE",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "a value of the wrong type",
        explanation: r#"A value of the wrong kind reached the interpreter: an integer where a boolean is
expected, indexing something that is not an array, a field the object does not have, a
sequence operation on a non-sequence. The run stops, inconclusive (exit 3).

```pvl
class C {
  void m() {
    int x = 1;
    if (x) { x = 2; }
  }
}
```

Correct the types in the program (here `if (x != 0)`)."#,
        reserved: false,
    },
    Code {
        code: "R-UNFRAMED",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "an inhaled assertion reads a location before permission for it",
        explanation: r#"Reserved. semantics.md §5.1 and §8 give this code to a heap read in an inhaled assertion
(an `inhale`, a barrier's `ensures`) before the assertion has given permission for the
location: assertions must be self-framing, as in Viper (see V-UNFRAMED). The interpreter
reports such a read as R-PERM-READ.

```pvl
class C {
  int x;
  void m() { inhale x * x >= 0 ** Perm(x, write); }
}
```

State the permission before the clause that reads the location."#,
        reserved: true,
    },
    Code {
        code: "R-UNSUPPORTED",
        severity: Severity::Error,
        exit: ExitClass::Undecided,
        title: "a construct the interpreter does not run",
        explanation: r#"The run reached a construct the interpreter does not execute: `fork`, `join`, `lock`
and other opaque statements, magic wands, calls of abstract methods or functions, recursion
deeper than 10 000 calls, an array of more than 2^26 elements, more than 2^22 threads in a
block, among others. The run is inconclusive (exit 3).

```pvl
class C {
  void m() {
    fork this;
  }
}
```

`alpine-rs verify` may still check the program; or rewrite the construct."#,
        reserved: false,
    },
    Code {
        code: "R-USAGE",
        severity: Severity::Error,
        exit: ExitClass::BadInput,
        title: "bad usage of run or validate",
        explanation: r#"The command line of `run` or `validate` is wrong: a file cannot be read, `--checks`
names an unknown check, an `--input` file is not a valid YAML or JSON map, the entry
method does not exist or is ambiguous, or no method can be run. Nothing ran (exit 2).

```sh
alpine-rs run prog.pvl --checks speed
```

See `alpine-rs run --help` and `alpine-rs validate --help`."#,
        reserved: false,
    },
    Code {
        code: "W-BAR-LEAK",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "a barrier discards permission",
        explanation: r#"Reserved. semantics.md §5.7 and §8: after a barrier resolution, the permission left in
the pool (given by the threads' `requires`, taken by no `ensures`) is discarded; with a
`--warn-leaks` option (not implemented) this would be reported as W-BAR-LEAK.

```pvl
class C {
  context_everywhere a != null && a.length == 2;
  requires (\forall* int i; 0 <= i && i < 2; Perm(a[i], 1\2));
  void m(int[] a) {
    par k (int tid = 0 .. 2) requires Perm(a[tid], 1\2); {
      barrier(k) { requires Perm(a[tid], 1\2); ensures Perm(a[tid], 1\4); }
    }
  }
}
```"#,
        reserved: true,
    },
    Code {
        code: "W-LEAK",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "a method discards permission",
        explanation: r#"Reserved. semantics.md §4.3 and §8: when a call returns, whatever its frame holds
beyond the postcondition is discarded, a leak that Viper allows; with a `--warn-leaks`
option (not implemented) this would be reported as W-LEAK.

```pvl
class C {
  int x;
  requires Perm(x, write);
  void drop() { }
}
```

Return the permission in the postcondition (`ensures Perm(x, write);`) if the caller needs
it back."#,
        reserved: true,
    },
    Code {
        code: "W-NEGDIV",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "division with a negative operand",
        explanation: r#"Reserved. semantics.md §4.8 and §8: PVL's `/` and `%` are Euclidean (`-7 / 2 == -4`),
CUDA's truncate (`-7 / 2 == -3`); with a `--warn-negdiv` option (not implemented) a
division or remainder with a negative operand in kernel code would be reported as W-NEGDIV.

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 4) { int q = (tid - 2) / 2; }
  }
}
```

Keep the operands of `/` and `%` non-negative in code meant for a GPU."#,
        reserved: true,
    },
    Code {
        code: "W-NONUNIFORM",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "a barrier contract uses a variable that differs between threads",
        explanation: r#"At a barrier, a non-iterator local that its contract mentions differed between two threads: the
static proof assumes one common value (verification.md §5.10), so it may be unsound.

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 4) {
      int v = tid % 2;
      barrier(k) { requires v >= 0; ensures v >= 0; }
    }
  }
}
```

Make the contract depend on uniform values only, or on the iterators."#,
        reserved: false,
    },
    Code {
        code: "W-NONUNIFORM-BARRIER",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "a barrier contract mentions a thread-dependent local",
        explanation: r#"Reserved. verification.md §5.10 (d): a static uniformity analysis of `verify` would taint the
locals that may depend on an iterator (through assignments and conditions) and warn about a
tainted local in a barrier contract, which the encoding treats as one value for all threads.
The interpreter checks the same property at run time (W-NONUNIFORM).

```pvl
class C {
  void m() {
    par k (int tid = 0 .. 4) {
      int v = tid % 2;
      barrier(k) { requires v >= 0; ensures v >= 0; }
    }
  }
}
```"#,
        reserved: true,
    },
    Code {
        code: "W-UNINIT",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "read of an uninitialised value",
        explanation: r#"Reserved. semantics.md §4.9 and §8: locals without an initializer and new array elements hold
`0`/`false`/`null`; with a `--poison` option (not implemented) they would hold random values,
and reading one before its first write would be reported as W-UNINIT.

```pvl
class C {
  void m() {
    int[] a = new int[2];
    int x = a[0];
  }
}
```

Write a value before reading it."#,
        reserved: true,
    },
];
