//! Locks, threads and several files as one program under `verify` (`crates/viper/src/encode/locks.rs`,
//! `verify --program`). Each case states the verdict and, when it is not verified, the code of
//! its first diagnostic: a wrong program must fail for the reason it is wrong. Runs Silicon.

mod common;

use common::{run_cli, tmpdir};

/// A counter protected by its lock; `{BODY}` is the body of `m`, `{CTOR}` the constructor.
const COUNTER: &str = "class C {\n  int x;\n  resource lock_invariant() = Perm(x, write) ** x >= 0;\n  {CTOR}\n  void m() {\n    {BODY}\n  }\n}\n";

/// A thread class `T` whose `run` sets `x` to 5, and `{BODY}` as the body of `M.m`.
const THREAD: &str = "class T {\n  int x;\n  ensures Perm(x, write) ** x == v;\n  T(int v) { x = v; }\n  requires Perm(x, write);\n  ensures Perm(x, write) ** x == 5;\n  void run() { x = 5; }\n}\nclass M {\n  void m() {\n    T t = new T(0);\n    {BODY}\n  }\n}\n";

fn counter(ctor: &str, body: &str) -> String {
    COUNTER.replace("{CTOR}", ctor).replace("{BODY}", body)
}

fn thread(body: &str) -> String {
    THREAD.replace("{BODY}", body)
}

/// (file name, program, expected verdict, code of the first diagnostic when not verified).
fn cases() -> Vec<(&'static str, String, &'static str, &'static str)> {
    let ctor = "C() { x = 0; }";
    vec![
        (
            "lock_unlock.pvl",
            counter(ctor, "lock this; x = x + 1; unlock this;"),
            "Verified",
            "",
        ),
        // The invariant names the field `x`, not the method's local of the same name.
        (
            "lock_local_shadows_field.pvl",
            counter(ctor, "int x = -7; lock this; this.x = this.x + 1; unlock this;"),
            "Verified",
            "",
        ),
        (
            "unlock_breaks_invariant.pvl",
            counter(ctor, "lock this; x = -1; unlock this;"),
            "Failed",
            "V-LOCK-INV",
        ),
        ("unlock_without_lock.pvl", counter(ctor, "unlock this;"), "Failed", "V-SYNC"),
        ("notify_without_lock.pvl", counter(ctor, "notify this;"), "Failed", "V-SYNC"),
        // The lock's fields are not the method's: only `lock` gives them.
        ("write_without_lock.pvl", counter(ctor, "x = 1;"), "Failed", "V-PERM-WRITE"),
        (
            "constructor_breaks_invariant.pvl",
            counter("C() { x = -1; }", "lock this; unlock this;"),
            "Failed",
            "V-LOCK-INV",
        ),
        // The constructor hands the field to the lock: it cannot also keep it.
        (
            "constructor_keeps_lock_resource.pvl",
            counter("ensures Perm(x, write);\n  C() { x = 0; }", "lock this; unlock this;"),
            "Failed",
            "V-POST",
        ),
        // A class with a lock invariant must say in a constructor what its fields start as, as
        // VerCors requires (its `RequireConstructor` example): rejected before verification,
        // whether or not the defaults would establish the invariant.
        (
            "no_constructor_defaults_break_invariant.pvl",
            "class D {\n  int x;\n  resource lock_invariant() = Perm(x, write) ** x > 10;\n}\n"
                .to_string(),
            "Unsupported",
            "V-LOCK-CONSTRUCTOR",
        ),
        (
            "no_constructor_defaults_establish_invariant.pvl",
            "class D {\n  int x;\n  resource lock_invariant() = Perm(x, write) ** x == 0;\n  void m() { lock this; x = 0; unlock this; }\n}\n"
                .to_string(),
            "Unsupported",
            "V-LOCK-CONSTRUCTOR",
        ),
        (
            "lock_other_object.pvl",
            format!(
                "{}class U {{\n  requires c != null;\n  void m(C c) {{\n    lock c;\n    c.x = c.x + 1;\n    unlock c;\n  }}\n}}\n",
                counter(ctor, "")
            ),
            "Verified",
            "",
        ),
        // The invariant is established only when the constructor ends.
        (
            "lock_this_in_constructor.pvl",
            counter("C() { x = -1; lock this; }", ""),
            "Unsupported",
            "V-UNSUPPORTED",
        ),
        (
            "wait_notify.pvl",
            "class F {\n  boolean ready;\n  resource lock_invariant() = Perm(ready, write);\n  F() { ready = false; }\n  void await() {\n    lock this;\n    loop_invariant Perm(ready, write) ** held(this);\n    while (!ready) { wait this; }\n    notify this;\n    unlock this;\n  }\n}\n"
                .to_string(),
            "Verified",
            "",
        ),
        // `wait` gives the lock away: the loop cannot keep its permission without `held`.
        (
            "wait_without_held.pvl",
            "class F {\n  boolean ready;\n  resource lock_invariant() = Perm(ready, write);\n  F() { ready = false; }\n  void await() {\n    lock this;\n    loop_invariant Perm(ready, write);\n    while (!ready) { wait this; }\n    unlock this;\n  }\n}\n"
                .to_string(),
            "Failed",
            "V-SYNC",
        ),
        (
            "fork_join.pvl",
            thread(
                "assert idle(t);\n    fork t;\n    assert running(t);\n    join t;\n    assert t.x == 5 ** idle(t);\n    fork t;\n    join t;",
            ),
            "Verified",
            "",
        ),
        ("join_without_fork.pvl", thread("join t;"), "Failed", "V-SYNC"),
        ("fork_twice.pvl", thread("fork t;\n    fork t;"), "Failed", "V-PRE"),
        // The running thread holds `x`.
        ("read_while_running.pvl", thread("fork t;\n    int y = t.x;"), "Failed", "V-PERM-READ"),
        ("running_before_fork.pvl", thread("assert running(t);"), "Failed", "V-ASSERT"),
        ("join_gives_post_only.pvl", thread("fork t;\n    join t;\n    assert t.x == 6;"), "Failed", "V-ASSERT"),
        // `idle` is about threads; a class without `run` has none.
        (
            "idle_of_non_thread.pvl",
            "class N {\n  N() {}\n  void m() { N n = new N(); assert idle(n); }\n}\n".to_string(),
            "Unsupported",
            "V-BAD-INPUT",
        ),
        // `\old` in `run`'s postcondition would mean the state at `fork`: refused, not guessed.
        (
            "old_in_run_post.pvl",
            "class T {\n  int x;\n  requires Perm(x, write);\n  ensures Perm(x, write) ** x == \\old(x) + 1;\n  void run() { x = x + 1; }\n}\n"
                .to_string(),
            "Unsupported",
            "V-UNSUPPORTED",
        ),
        // In an instance method `this` is an object: a constructor asking for a non-null
        // argument accepts it.
        (
            "this_is_not_null.pvl",
            "class A {\n  requires a != null;\n  A(A a) { }\n  void m() { A b = new A(this); assert b != null; }\n}\n"
                .to_string(),
            "Verified",
            "",
        ),
        // An inline predicate of another object is about that object's fields (it once was
        // expanded on `this`, which made this precondition false and the method vacuous).
        (
            "inline_predicate_of_other_object.pvl",
            "class C {\n  int x;\n  inline resource r() = Perm(x, write);\n  requires Perm(x, write) ** o.r();\n  void m(C o) {\n    o.x = 1;\n    x = 2;\n    assert false;\n  }\n}\n"
                .to_string(),
            "Failed",
            "V-ASSERT",
        ),
    ]
}

#[test]
fn locks_and_threads_verify_only_when_the_protocol_is_kept() {
    common::assert_cases("viper-locks", &cases());
}

const LIB: &str = "class Counter {\n  int x;\n  requires Perm(x, write);\n  ensures Perm(x, write) ** x == \\old(x) + 1;\n  void incr() { x = x + 1; }\n}\n";

#[test]
fn several_files_form_one_program_with_program() {
    let d = tmpdir("viper-locks", "program");
    let lib = d.join("lib.pvl");
    let user = d.join("user.pvl");
    std::fs::write(&lib, LIB).expect("writable");
    std::fs::write(
        &user,
        "class User {\n  void m() {\n    Counter c = new Counter();\n    c.x = 1;\n    c.incr();\n    assert c.x == 2;\n  }\n}\n",
    )
    .expect("writable");
    let (u, l) = (user.to_string_lossy(), lib.to_string_lossy());

    // On their own, the user file does not know `Counter`, and the help says how to fix that.
    let (code, out, _) = run_cli(&["verify", "--format", "json", &u, &l]);
    assert_eq!(code, 2, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let d0 = &v[0]["diagnostics"][0];
    assert_eq!(d0["code"], "V-BAD-INPUT", "{out}");
    let help = d0["help"].as_str().unwrap_or("");
    assert!(help.contains("--program") && help.contains("lib.pvl"), "{out}");

    let (code, out, err) = run_cli(&["verify", "--program", &u, &l]);
    assert_eq!(code, 0, "{out}\n{err}");

    // A failure in the second file is reported in that file, at its own line.
    let bad = d.join("bad_lib.pvl");
    std::fs::write(&bad, LIB.replace("x = x + 1;", "x = x + 2;")).expect("writable");
    let (code, out, err) =
        run_cli(&["verify", "-p", "--format", "json", &u, &bad.to_string_lossy()]);
    assert_eq!(code, 1, "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v[0]["files"].as_array().map(Vec::len), Some(2), "{out}");
    let spans = &v[0]["diagnostics"][0]["spans"];
    let at_post =
        spans.as_array().into_iter().flatten().any(|s| {
            s["file"].as_str().is_some_and(|f| f.ends_with("bad_lib.pvl")) && s["line"] == 4
        });
    assert!(at_post, "{out}");
    let _ = err;

    // A class restated in another file (as VerCors' examples do with a shared class) is one
    // class: the members both declare must be the same, the others are joined.
    let restated = d.join("restated.pvl");
    std::fs::write(
        &restated,
        "class Counter {\n  int x; // as in lib.pvl\n}\nclass Twice {\n  requires c != null ** Perm(c.x, write);\n  ensures Perm(c.x, write) ** c.x == \\old(c.x) + 2;\n  void m(Counter c) { c.incr(); c.incr(); }\n}\n",
    )
    .expect("writable");
    let (code, out, err) = run_cli(&["verify", "--program", &restated.to_string_lossy(), &l]);
    assert_eq!(code, 0, "{out}\n{err}");
    // A member declared differently in the two files is a conflict, shown at both, not a
    // choice of one of them.
    let (code, out, err) = run_cli(&["verify", "--program", &l, &bad.to_string_lossy()]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("declared in two files with different `incr`"), "{err}");
    assert!(err.contains("bad_lib.pvl") && err.contains("lib.pvl:"), "{err}");
    // Two declarations in one file stay an error.
    let twice = d.join("twice.pvl");
    std::fs::write(&twice, format!("{LIB}{LIB}")).expect("writable");
    let (code, _, err) = run_cli(&["verify", "--program", &twice.to_string_lossy(), &u]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("declared twice"), "{err}");
}
