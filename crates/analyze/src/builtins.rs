//! VerCors 2's built-in members of the value types — `xs.head`, `s.contains(x)`, `m.keys`,
//! `o.get`, … — as the core expressions they stand for. This is the one table of them: the type
//! checker finds the member uses whose receiver has a value type (`typeck`, which knows the
//! types), and [`desugar`] rewrites those uses into the core forms before the encoder and the
//! interpreter see the program, so both read the members from here and nowhere else.
//!
//! The core forms are VerCors 1's spellings, which every stage already handles: `head(xs)`,
//! `|xs|`, `x in xs`, slices, `keysMap(m)`, `getOption(o)`, ….

use front::ast::*;
use front::span::Span;
use front::visit::map_program;
use std::collections::HashMap;

/// The value types that have built-in members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recv {
    Seq,
    Set,
    Bag,
    Map,
    Opt,
}

/// What a user is told when a member is not among these.
pub const HELP: &str =
    "sequences have head, tail, size, isEmpty, nonEmpty, contains(x), slice(i, j), \
     take(n), drop(n), update(i, v) and removeAt(i); sets and bags size, isEmpty, nonEmpty and \
     contains(x); maps keys, values, items, size, isEmpty, get(k), add(k, v), remove(k), \
     disjoint(m) and equals(m); options get and getOrElse(d)";

/// The core expression that member `name` of `recv` (a value of kind `kind`) stands for: read
/// as a field when `args` is `None`, called with `args` otherwise (VerCors accepts both
/// `xs.isEmpty` and `xs.isEmpty()` for the members without arguments). `None` for a name that
/// is no member of that type.
pub fn member(kind: Recv, recv: &Expr, name: &str, args: Option<&[Expr]>) -> Option<Expr> {
    let args = args.unwrap_or(&[]);
    let o = || recv.clone();
    let len = || Expr::synth(ExprKind::Length(Box::new(recv.clone())));
    let lib = |f: &str, rest: &[Expr]| {
        let mut all = vec![recv.clone()];
        all.extend(rest.iter().cloned());
        Expr::synth(ExprKind::Call {
            recv: None,
            name: Ident::synth(f),
            args: all,
            ghost: Box::default(),
            null_safe: false,
        })
    };
    let slice = |lo: Option<&Expr>, hi: Option<&Expr>| {
        Expr::synth(ExprKind::Slice(
            Box::new(o()),
            lo.cloned().map(Box::new),
            hi.cloned().map(Box::new),
        ))
    };
    use Recv::*;
    Some(match (kind, name, args) {
        (Seq | Set | Bag | Map, "size", []) => len(),
        (Seq | Set | Bag, "isEmpty", []) => Expr::bin(BinOp::Eq, len(), Expr::int(0)),
        (Seq | Set | Bag, "nonEmpty", []) => Expr::bin(BinOp::Gt, len(), Expr::int(0)),
        (Seq | Set | Bag, "contains", [x]) => Expr::bin(BinOp::In, x.clone(), o()),
        (Seq, "head", []) => Expr::synth(ExprKind::Builtin(Builtin::Head, vec![o()])),
        (Seq, "tail", []) => Expr::synth(ExprKind::Builtin(Builtin::Tail, vec![o()])),
        (Seq, "slice", [lo, hi]) => slice(Some(lo), Some(hi)),
        (Seq, "take", [n]) => slice(None, Some(n)),
        (Seq, "drop", [n]) => slice(Some(n), None),
        (Seq, "update", [i, v]) => Expr::synth(ExprKind::SeqUpdate(
            Box::new(o()),
            Box::new(i.clone()),
            Box::new(v.clone()),
        )),
        (Seq, "removeAt", [i]) => Expr::bin(
            BinOp::Concat,
            slice(None, Some(i)),
            slice(Some(&Expr::bin(BinOp::Add, i.clone(), Expr::int(1))), None),
        ),
        (Map, "isEmpty", []) => lib("isEmpty", &[]),
        (Map, "keys", []) => lib("keysMap", &[]),
        (Map, "values", []) => lib("valuesMap", &[]),
        (Map, "items", []) => lib("itemsMap", &[]),
        (Map, "get", [k]) => lib("getFromMap", std::slice::from_ref(k)),
        (Map, "add", [k, v]) => lib("buildMap", &[k.clone(), v.clone()]),
        (Map, "remove", [k]) => lib("removeFromMap", std::slice::from_ref(k)),
        (Map, "disjoint", [b]) => lib("disjointMap", std::slice::from_ref(b)),
        (Map, "equals", [b]) => lib("equalsMap", std::slice::from_ref(b)),
        (Opt, "get", []) => lib("getOption", &[]),
        (Opt, "getOrElse", [d]) => lib("getOrElseOption", std::slice::from_ref(d)),
        _ => return None,
    })
}

/// The member uses the type checker resolved, by the span of the use (a field read `xs.head`
/// or a call `xs.contains(x)`), with what each stands for.
#[derive(Debug, Default)]
pub struct Uses(HashMap<(usize, usize), Expr>);

impl Uses {
    pub fn record(&mut self, at: Span, core: Expr) {
        // A synthesised use has no place to be found again by.
        if !at.is_dummy() {
            self.0.insert((at.start(), at.end()), Expr { span: at, ..core });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `prog` with every recorded member use replaced by its core form (`None`: none recorded).
pub fn desugar(prog: &Program, uses: &Uses) -> Option<Program> {
    if uses.is_empty() {
        return None;
    }
    let mut out = prog.clone();
    map_program(&mut out, &mut |e| {
        if matches!(e.kind, ExprKind::Field(..) | ExprKind::Call { recv: Some(_), .. }) {
            if let Some(core) = uses.0.get(&(e.span.start(), e.span.end())) {
                *e = core.clone();
            }
        }
        // Go on into the replacement: a receiver may itself be a member use (`xs.tail.head`).
        false
    });
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use front::printer::print_expr;
    use front::Dialect;

    fn show(kind: Recv, name: &str, args: Option<&[Expr]>) -> Option<String> {
        member(kind, &Expr::name("xs"), name, args).map(|e| print_expr(&e, Dialect::V1))
    }

    #[test]
    fn members_stand_for_core_forms() {
        let i = [Expr::name("i")];
        assert_eq!(show(Recv::Seq, "head", None).as_deref(), Some("head(xs)"));
        assert_eq!(show(Recv::Seq, "size", None).as_deref(), Some("|xs|"));
        assert_eq!(show(Recv::Set, "isEmpty", Some(&[])).as_deref(), Some("|xs| == 0"));
        assert_eq!(show(Recv::Seq, "contains", Some(&i)).as_deref(), Some("i in xs"));
        assert_eq!(
            show(Recv::Seq, "removeAt", Some(&i)).as_deref(),
            Some("xs[..i] ++ xs[i + 1..]")
        );
        assert_eq!(show(Recv::Map, "keys", None).as_deref(), Some("keysMap(xs)"));
        assert_eq!(show(Recv::Opt, "get", None).as_deref(), Some("getOption(xs)"));
        // Not members: a set has no head, a sequence no keys, and arities are checked.
        assert_eq!(show(Recv::Set, "head", None), None);
        assert_eq!(show(Recv::Seq, "keys", None), None);
        assert_eq!(show(Recv::Seq, "contains", None), None);
    }
}
