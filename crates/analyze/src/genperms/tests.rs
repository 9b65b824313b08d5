use super::*;
use front::printer::print_expr;
use front::{parse, Dialect, ParseOptions};

fn program(src: &str) -> Program {
    let p = parse(src, &ParseOptions::default());
    assert!(!p.has_errors(), "{:?}", p.errors().collect::<Vec<_>>());
    p.program
}

const GLOBAL: &str = "
class Role {
  int x;
  int[] data;
  Role() { x = 0; data = new int[2]; }
  void step() { x = x + 1; }
  pure int get() = x;
}
class Main {
  Role a, b;
  Main() { a = new Role(); b = new Role(); }
  void run() {
    par { a.step(); } and { int y = b.x; }
  }
}
";

/// The clauses of `class.method` after generation, as `kind text` lines.
fn clauses(p: &Program, class: &str, method: &str) -> Vec<String> {
    let m = p
        .methods()
        .find(|(c, m)| c.is_some_and(|c| c.name.name == class) && m.name.name == method)
        .map(|(_, m)| m)
        .expect("the method");
    m.prefix
        .clauses
        .iter()
        .filter_map(|c| {
            Some(format!("{} {}", c.kind.keyword(), print_expr(c.expr()?, Dialect::V1)))
        })
        .collect()
}

#[test]
fn a_global_program_is_recognised_by_its_shape() {
    assert!(is_global_program(&program(GLOBAL)));
    // A permission anywhere: the program is written for the permission-based reading.
    let with_perm = GLOBAL.replace("void step()", "context Perm(x, write); void step()");
    assert!(!is_global_program(&program(&with_perm)));
    // No `run`, or `run` with parameters: not the shape.
    assert!(!is_global_program(&program(&GLOBAL.replace("void run()", "void go()"))));
    assert!(!is_global_program(&program(&GLOBAL.replace("void run()", "void run(int n)"))));
    // Threads per value in a par block, or locks: concurrency the generation does not share.
    let iterated =
        GLOBAL.replace("par {", "par (int t = 0 .. 2) {").replace(" and { int y = b.x; }", "");
    assert!(!is_global_program(&program(&iterated)));
    let locked = GLOBAL.replace("a.step();", "lock a; a.step(); unlock a;");
    assert!(!is_global_program(&program(&locked)));
    // No field of class type: nothing to run.
    let flat = "class Main { int x; Main() { x = 0; } void run() { x = 1; } }";
    assert!(!is_global_program(&program(flat)));
}

#[test]
fn methods_hold_all_their_object_reaches_and_functions_read_it() {
    let p = generate(&program(GLOBAL), GenPerms::Auto).expect("generated");
    let step = clauses(&p, "Role", "step");
    assert_eq!(
        step,
        [
            "requires Perm(this.x, write)",
            "requires Perm(this.data, write)",
            "requires this.data != null",
            "requires (\\forall* int gp__i; 0 <= gp__i && gp__i < this.data.length; Perm(this.data[gp__i], write))",
            "ensures Perm(this.x, write)",
            "ensures Perm(this.data, write)",
            "ensures this.data != null",
            "ensures (\\forall* int gp__i; 0 <= gp__i && gp__i < this.data.length; Perm(this.data[gp__i], write))",
        ]
    );
    let get = clauses(&p, "Role", "get");
    assert_eq!(get[0], "requires Perm(this.x, read)");
    assert!(get.iter().all(|c| c.starts_with("requires")), "{get:?}");
    // A constructor ensures them of the new object; the roles are non-null and reached.
    let ctor = clauses(&p, "Main", "Main");
    assert_eq!(
        &ctor[..4],
        [
            "ensures Perm(this.a, write)",
            "ensures this.a != null",
            "ensures Perm(this.a.x, write)",
            "ensures Perm(this.a.data, write)"
        ]
    );
    assert!(ctor.iter().all(|c| c.starts_with("ensures")), "{ctor:?}");
}

#[test]
fn par_arms_take_what_they_touch() {
    let p = generate(&program(GLOBAL), GenPerms::Auto).expect("generated");
    let run = p.methods().find(|(_, m)| m.name.name == "run").map(|(_, m)| m).expect("run");
    let MethodBody::Block(b) = &run.body else { panic!("a body") };
    let StmtKind::Par(par) = &b.stmts[0].kind else { panic!("a par block") };
    let arm = |i: usize| -> Vec<String> {
        par.arms[i]
            .contract
            .iter()
            .filter_map(|c| Some(print_expr(c.expr()?, Dialect::V1)))
            .collect()
    };
    // The first arm calls a method on `a`: all of `a`, written; `a` itself read.
    let first = arm(0);
    assert_eq!(first[0], "Perm(this.a, 1\\2)");
    assert_eq!(first[1], "this.a != null");
    assert!(first.contains(&"Perm(this.a.x, write)".to_string()), "{first:?}");
    assert!(!first.iter().any(|c| c.contains("this.b")), "{first:?}");
    // The second only reads `b.x`: a share of it, nothing of `a`.
    assert_eq!(arm(1), ["Perm(this.b, 1\\2)", "this.b != null", "Perm(this.b.x, 1\\2)"]);
}

#[test]
fn nothing_is_generated_when_not_asked_or_not_a_global_program() {
    assert!(generate(&program(GLOBAL), GenPerms::Never).is_none());
    let plain = "class C { int x; void set() { x = 1; } }";
    assert!(generate(&program(plain), GenPerms::Auto).is_none());
    let forced = generate(&program(plain), GenPerms::Always).expect("forced");
    assert_eq!(clauses(&forced, "C", "set")[0], "requires Perm(this.x, write)");
}

#[test]
fn a_recursive_class_stops_the_descent() {
    let src = "class Node { int v; Node next; void m() { v = 1; } }";
    let p = generate(&program(src), GenPerms::Always).expect("forced");
    assert_eq!(
        clauses(&p, "Node", "m")[..2],
        ["requires Perm(this.v, write)", "requires Perm(this.next, write)"]
    );
    assert_eq!(clauses(&p, "Node", "m").len(), 4, "{:?}", clauses(&p, "Node", "m"));
}
