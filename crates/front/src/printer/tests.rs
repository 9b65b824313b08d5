//! Tests of the printer: parentheses, layout, names, statements, types, clauses and folding.

use super::*;
use crate::parser::parse_expr_text;
use num_bigint::BigInt;

fn pe(s: &str) -> Expr {
    parse_expr_text(s, Dialect::V1).unwrap_or_else(|d| panic!("{s}: {:?}", d))
}

fn canon(s: &str) -> String {
    print_expr(&pe(s), Dialect::V1)
}

#[test]
fn minimal_parentheses() {
    for (src, printed) in [
        ("(a + b) * c", "(a + b) * c"),
        ("a + (b * c)", "a + b * c"),
        ("(a - b) - c", "a - b - c"),
        ("a - (b - c)", "a - (b - c)"),
        ("a - -b", "a - (-b)"),
        ("-(-x)", "-(-x)"),
        ("!(a || b)", "!(a || b)"),
        ("-x * y", "-x * y"),
        ("x % 2 == 0 ==> y", "x % 2 == 0 ==> y"),
        ("c ? a : b ? d : e", "c ? a : b ? d : e"),
        ("(c ? a : b) ? d : e", "(c ? a : b) ? d : e"),
        ("x + (c ? 1 : 2)", "x + (c ? 1 : 2)"),
        ("(x :: s) ++ t", "(x :: s) ++ t"),
        ("x :: (s ++ t)", "x :: s ++ t"),
        ("(new A()).f", "(new A()).f"),
        ("(-a)[i]", "(-a)[i]"),
    ] {
        assert_eq!(canon(src), printed, "{src}");
    }
}

#[test]
fn dialect_neutral_parentheses() {
    // (`parse_expr_text` refuses the unparenthesised mixes: they draw warning A0010.)
    let (a, b, c) = (Expr::name("a"), Expr::name("b"), Expr::name("c"));
    let and_or = Expr::bin(BinOp::Or, Expr::bin(BinOp::And, a.clone(), b.clone()), c.clone());
    assert_eq!(print_expr(&and_or, Dialect::V1), "(a && b) || c");
    let or_and = Expr::bin(BinOp::Or, a.clone(), Expr::bin(BinOp::And, b.clone(), c.clone()));
    assert_eq!(print_expr(&or_and, Dialect::V2), "a || (b && c)");
    let imp = Expr::bin(BinOp::Implies, Expr::bin(BinOp::Implies, a, b), c);
    assert_eq!(print_expr(&imp, Dialect::V1), "(a ==> b) ==> c");
    for (src, printed) in [
        ("(a || b) && c", "(a || b) && c"),
        ("a ==> (b ==> c)", "a ==> (b ==> c)"),
        ("a && b ** c", "a && b ** c"),
        ("a && (b ** c)", "a && (b ** c)"),
    ] {
        assert_eq!(canon(src), printed, "{src}");
    }
}

/// The shapes a precedence table gets wrong most easily, in both dialects: printing keeps
/// the parentheses the reading needs, and re-parsing the print gives the same tree.
#[test]
fn precedence_shapes_round_trip_in_both_dialects() {
    let cases = [
        ("(a ==> b) ==> c", "(a ==> b) ==> c"),
        ("a ==> (b ==> c)", "a ==> (b ==> c)"),
        ("(a -* b) ==> c", "(a -* b) ==> c"),
        ("(a * b) ^^ c", "(a * b) ^^ c"),
        ("a * (b ^^ c)", "a * b ^^ c"),
        ("(a ^^ b) ^^ c", "a ^^ b ^^ c"),
        ("a ^^ (b ^^ c)", "a ^^ (b ^^ c)"),
        ("(a + b) :: s", "(a + b) :: s"),
        ("(a \\ b) :: s", "(a\\b) :: s"),
        ("x :: (y :: s)", "x :: y :: s"),
        ("(x :: y) :: s", "(x :: y) :: s"),
        ("!(a || b)", "!(a || b)"),
        ("!(a && b)", "!(a && b)"),
        ("!(a == b)", "!(a == b)"),
        ("!((a || b) && c)", "!((a || b) && c)"),
        ("!(a || (b && c))", "!(a || (b && c))"),
        ("!((tid < 2 || tid > 5) && tid % 2 == 0)", "!((tid < 2 || tid > 5) && tid % 2 == 0)"),
        ("(a || b) == (c && d)", "(a || b) == (c && d)"),
        ("(a == b) == c", "a == b == c"),
        ("a == (b == c)", "a == (b == c)"),
        ("(a == b) < c", "(a == b) < c"),
        ("(a < b) == (c < d)", "a < b == c < d"),
        ("(a + b) == (c * d)", "a + b == c * d"),
        ("(a ? b : c) == d", "(a ? b : c) == d"),
        ("(c ? a : b) ? d : e", "(c ? a : b) ? d : e"),
        ("c ? (a ? b : d) : e", "c ? (a ? b : d) : e"),
        ("c ? a : (b ? d : e)", "c ? a : b ? d : e"),
        ("((a || b) && c) ? x : y", "(a || b) && c ? x : y"),
        ("(a ==> b) ? x : y", "a ==> b ? x : y"),
        ("c ? (a ==> b) : (d ==> e)", "c ? a ==> b : d ==> e"),
        ("!(c ? a : b)", "!(c ? a : b)"),
        (
            "(\\forall* int k; (k < 2 || k > 5) && k % 2 == 0; Perm(a[k], 1\\4))",
            "(\\forall* int k; (k < 2 || k > 5) && k % 2 == 0; Perm(a[k], 1\\4))",
        ),
        (
            "(\\forall* int k; k < 2 || (k > 5 && k % 2 == 0); Perm(a[k], 1\\4))",
            "(\\forall* int k; k < 2 || (k > 5 && k % 2 == 0); Perm(a[k], 1\\4))",
        ),
        ("a - (b - c)", "a - (b - c)"),
        ("a - (-b)", "a - (-b)"),
    ];
    for d in [Dialect::V1, Dialect::V2] {
        for (src, want) in cases {
            let e =
                parse_expr_text(src, d).unwrap_or_else(|x| panic!("{src} ({}): {x:?}", d.name()));
            let printed = print_expr(&e, d);
            assert_eq!(printed, want, "{src} printed in {}", d.name());
            let again = parse_expr_text(&printed, d)
                .unwrap_or_else(|x| panic!("{printed} ({}): {x:?}", d.name()));
            assert_eq!(again, e, "{src}: the print `{printed}` reads differently in {}", d.name());
        }
    }
    // Generated negative literals (the parser writes `-2` as a negation) print like one.
    let neg = Expr::synth(ExprKind::Int(BigInt::from(-2)));
    let a = Expr::name("a");
    for d in [Dialect::V1, Dialect::V2] {
        let sub = Expr::bin(BinOp::Sub, a.clone(), neg.clone());
        assert_eq!(print_expr(&sub, d), "a - (-2)");
        let minus = Expr::synth(ExprKind::Unary(UnOp::Neg, Box::new(neg.clone())));
        assert_eq!(print_expr(&minus, d), "-(-2)");
        let field = Expr::synth(ExprKind::Field(Box::new(neg.clone()), Ident::synth("f")));
        assert_eq!(print_expr(&field, d), "(-2).f");
    }
}

#[test]
fn fractions_and_spacing() {
    for (src, printed) in [
        ("Perm(a[i], 1 \\ 2)", "Perm(a[i], 1\\2)"),
        ("Perm(a[i], 1\\(2 * n))", "Perm(a[i], 1\\(2 * n))"),
        ("write \\ 2", "write\\2"),
    ] {
        assert_eq!(canon(src), printed, "{src}");
    }
    // `1\length` would lex as the backslash word `\length`.
    let e = Expr::bin(BinOp::Frac, Expr::int(1), Expr::name("length"));
    assert_eq!(print_expr(&e, Dialect::V1), "1\\(length)");
    assert_eq!(canon("| s |"), "|s|");
    assert_eq!(canon("|(a && b)|"), "|(a && b)|");
}

#[test]
fn names_that_need_backticks() {
    let e = Expr::name("tile");
    assert_eq!(print_expr(&e, Dialect::V1), "`tile`");
    assert_eq!(print_expr(&e, Dialect::V2), "tile");
    assert_eq!(print_expr(&Expr::name("par"), Dialect::V2), "`par`");
    assert_eq!(print_expr(&Expr::name("merge"), Dialect::V1), "merge");
}

#[test]
fn statements_and_barriers() {
    let b = Stmt {
        kind: StmtKind::Barrier(Barrier {
            label: Ident::synth("blk"),
            tags: Vec::new(),
            contract: vec![Clause {
                kind: ClauseKind::Requires,
                body: ClauseBody::Expr(pe("Perm(x[t], write)")),
                span: Default::default(),
            }],
            contract_in_braces: true,
            body: None,
            keyword: Default::default(),
        }),
        span: Default::default(),
    };
    assert_eq!(
        print_stmt(&b, "    ", "  ", "\r\n"),
        "    barrier(blk) {\r\n      requires Perm(x[t], write);\r\n    }"
    );
    let inc = Stmt {
        kind: StmtKind::Assign {
            target: Expr::name("x"),
            value: Expr::bin(BinOp::Add, Expr::name("x"), Expr::int(1)),
        },
        span: Default::default(),
    };
    assert_eq!(print_stmt(&inc, "", "  ", "\n"), "x = x + 1;");
}

#[test]
fn dangling_else_is_braced() {
    let open_if = Stmt {
        kind: StmtKind::If {
            cond: Expr::name("b"),
            then: Box::new(Stmt { kind: StmtKind::Return(None), span: Default::default() }),
            els: None,
        },
        span: Default::default(),
    };
    let s = Stmt {
        kind: StmtKind::If {
            cond: Expr::name("a"),
            then: Box::new(open_if),
            els: Some(Box::new(Stmt {
                kind: StmtKind::Return(Some(Expr::int(1))),
                span: Default::default(),
            })),
        },
        span: Default::default(),
    };
    assert_eq!(
        print_stmt(&s, "", "  ", "\n"),
        "if (a) {\n  if (b)\n    return;\n} else\n  return 1;"
    );
}

/// The first method of `class A { <member> }`, parsed.
fn method_of(member: &str) -> Method {
    let src = format!("class A {{ {member} }}");
    let p = crate::parse(&src, &Default::default());
    assert!(!p.has_errors(), "{member}: {:?}", p.diagnostics);
    match &p.program.items[..] {
        [Item::Class(c)] => match &c.members[..] {
            [Member::Method(m)] => m.clone(),
            _ => panic!("{member}: not one method"),
        },
        _ => panic!("{member}: not one class"),
    }
}

#[test]
fn types() {
    let m = method_of("void m(int[M][N] a, seq<seq<int>> s, map<int, boolean> f, Box<int>[] b);");
    let tys: Vec<String> = m.params.iter().map(|p| print_type(&p.ty, Dialect::V1)).collect();
    assert_eq!(tys, ["int[M][N]", "seq<seq<int>>", "map<int, boolean>", "Box<int>[]"]);
}

#[test]
fn clauses_and_annotations() {
    let m = method_of(
        "gpuopt glob_to_reg a [i] (t+1) -t;\n\
         gpuopt tile intra (n - 1);\n\
         requires   Perm( a[ t ] , 1 \\ 2 );\n\
         decreases;\n\
         signals (E e) e != null;\n\
         void m();",
    );
    let anns: Vec<String> =
        m.prefix.annotations.iter().map(|a| print_annotation(a, Dialect::V1)).collect();
    // Operands are kept as written (the optimization reads them; see transforms/params.rs),
    // with single spaces where the source had space.
    assert_eq!(anns, ["gpuopt glob_to_reg a [i] (t+1) -t;", "gpuopt tile intra (n - 1);"]);
    let clauses: Vec<String> =
        m.prefix.clauses.iter().map(|c| print_clause(c, Dialect::V1)).collect();
    assert_eq!(clauses, ["requires Perm(a[t], 1\\2);", "decreases;", "signals (E e) e != null;"]);
}

fn simp(s: &str) -> String {
    print_expr(&simplify_arith(&pe(s)), Dialect::V1)
}

#[test]
fn arithmetic_folding() {
    assert_eq!(simp("0 + 5"), "5");
    assert_eq!(simp("2 * 3"), "6");
    assert_eq!(simp("2 - 5"), "-3");
    assert_eq!(simp("x + 0"), "x");
    assert_eq!(simp("x - 0"), "x");
    assert_eq!(simp("0 + x"), "x");
    assert_eq!(simp("x * 1"), "x");
    assert_eq!(simp("x / 1"), "x");
    assert_eq!(simp("x + -5"), "x - 5");
    assert_eq!(simp("x - -5"), "x + 5");
    assert_eq!(simp("i + 1 + 1"), "i + 2");
    assert_eq!(simp("i + 1 - 1"), "i");
    assert_eq!(simp("i - 2 + 1"), "i - 1");
    assert_eq!(simp("a[t + 0 * 4]"), "a[t]");
    assert_eq!(simp("7 / 2 + 7 % 2"), "4");
    // Never reordered, never folded across a non-literal, no fractions, no negative division.
    assert_eq!(simp("n - 1 - t"), "n - 1 - t");
    assert_eq!(simp("1 + i + 1"), "1 + i + 1");
    assert_eq!(simp("1 * x"), "1 * x");
    assert_eq!(simp("1\\2"), "1\\2");
    assert_eq!(simp("-7 / 2"), "-7 / 2");
    assert_eq!(simp("x / 0"), "x / 0");
}
