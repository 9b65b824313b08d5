//! Expression types. Every sub-expression is visited once; errors are reported where they are
//! certain, and anything not modelled has the type `Unknown`.

use super::{env::Sig, Checker, Ty};
use diag::Diagnostic;
use front::ast::{BinOp, Builtin, CollKind, Expr, ExprKind, QuantKind, UnOp};
use front::span::Span;

fn coll(k: CollKind, t: Ty) -> Ty {
    match k {
        CollKind::Seq => Ty::Seq(Box::new(t)),
        CollKind::Set => Ty::Set(Box::new(t)),
        CollKind::Bag => Ty::Bag(Box::new(t)),
    }
}

impl Checker {
    /// `e` must be a boolean (a condition, an operand of `&&`, a plain quantifier's body).
    pub fn boolean(&mut self, e: &Expr, what: &str) {
        let t = self.ty(e);
        if t.not_bool() {
            let help = if t == Ty::Resource {
                "a resource (permission) is not a boolean: use `**` to join resources, and \
                 `\\forall*` to quantify over them"
            } else {
                "use a boolean expression here"
            };
            self.mismatch(
                e.span,
                format!("{what} must be a boolean, found `{}`", t.name()),
                format!("this has type `{}`", t.name()),
                help,
            );
        }
    }

    /// `e` must be a resource or a boolean (a contract clause, an assertion).
    pub fn resource(&mut self, e: &Expr, what: &str) {
        let t = self.ty(e);
        if t.not_resource() {
            self.mismatch(
                e.span,
                format!("{what} must be a boolean or a resource, found `{}`", t.name()),
                format!("this has type `{}`", t.name()),
                "state a property (a boolean) or a permission here",
            );
        }
    }

    pub fn ty(&mut self, e: &Expr) -> Ty {
        match &e.kind {
            ExprKind::Int(_) => Ty::Int,
            ExprKind::Opaque(_) if front::exprtext::float_literal(e).is_some() => Ty::Float,
            ExprKind::Bool(_) => Ty::Bool,
            ExprKind::Null => Ty::Null,
            ExprKind::This => self.class.clone().map_or(Ty::Unknown, Ty::Class),
            ExprKind::Write | ExprKind::Read | ExprKind::NoPerm => Ty::Frac,
            ExprKind::Result => self.ret.clone(),
            ExprKind::Name(id) => self.name(&id.name, e.span),
            ExprKind::Unary(op, a) => {
                let t = self.ty(a);
                match op {
                    UnOp::Not => {
                        if t.not_bool() {
                            self.expect(a.span, &Ty::Bool, &t, "the operand of `!`");
                        }
                        Ty::Bool
                    }
                    _ => t,
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b),
            ExprKind::Cond(c, a, b) => {
                self.boolean(c, "the condition of `?:`");
                let (ta, tb) = (self.ty(a), self.ty(b));
                match (&ta, &tb) {
                    (Ty::Null, _) | (Ty::Unknown, _) => tb,
                    (_, Ty::Null) | (_, Ty::Unknown) => ta,
                    (Ty::Int, Ty::Frac) | (Ty::Frac, Ty::Int) => Ty::Frac,
                    (Ty::Int, Ty::Float) | (Ty::Float, Ty::Int) => Ty::Float,
                    (Ty::Bool, Ty::Resource) | (Ty::Resource, Ty::Bool) => Ty::Resource,
                    _ if ta == tb => ta,
                    // `c ? 0 : x <= y` has no type (Silicon rejects its encoding).
                    _ if !self.fits(&ta, &tb) && !self.fits(&tb, &ta) => {
                        self.mismatch(
                            b.span,
                            format!(
                                "the branches of `?:` have different types: `{}` and `{}`",
                                ta.name(),
                                tb.name()
                            ),
                            format!("this has type `{}`", tb.name()),
                            "give both branches the same type",
                        );
                        Ty::Unknown
                    }
                    _ => Ty::Unknown,
                }
            }
            ExprKind::Field(o, f) => self.field(o, &f.name, f.span, e.span),
            ExprKind::Index(a, i) => {
                let ta = self.ty(a);
                let ti = self.ty(i);
                // Arrays and sequences are indexed by integers, maps by their keys.
                match ta {
                    Ty::Array(t) | Ty::Seq(t) => {
                        self.expect(i.span, &Ty::Int, &ti, "an index");
                        *t
                    }
                    Ty::Map(k, v) => {
                        self.expect(i.span, &k, &ti, "a map key");
                        *v
                    }
                    _ => Ty::Unknown,
                }
            }
            ExprKind::Slice(s, lo, hi) => {
                for x in [lo, hi].into_iter().flatten() {
                    let t = self.ty(x);
                    self.expect(x.span, &Ty::Int, &t, "a slice bound");
                }
                self.ty(s)
            }
            ExprKind::SeqUpdate(s, i, v) => {
                let ts = self.ty(s);
                let ti = self.ty(i);
                if matches!(ts, Ty::Seq(_)) {
                    self.expect(i.span, &Ty::Int, &ti, "an index");
                }
                self.ty(v);
                ts
            }
            ExprKind::Call { recv, name, args, ghost, .. } => {
                // Ghost argument values are expressions like the others (their built-in
                // members are resolved here too).
                for (_, g) in &ghost.given {
                    self.ty(g);
                }
                let ts: Vec<(Ty, Span)> = args.iter().map(|a| (self.ty(a), a.span)).collect();
                let Some(sig) = self.callee(recv.as_deref(), &name.name, name.span) else {
                    return match recv {
                        None => self.map_library(&name.name, &ts),
                        Some(r) => {
                            // `callee` typed the receiver and reported its errors already.
                            let saved = self.diags.len();
                            let tr = self.receiver(r);
                            self.diags.truncate(saved);
                            self.builtin_member(&tr, r, &name.name, Some(args), e.span)
                                .unwrap_or(Ty::Unknown)
                        }
                    };
                };
                self.arguments(&sig, &ts, &name.name, e.span);
                sig.ret
            }
            ExprKind::Builtin(b, args) => self.builtin(*b, args),
            ExprKind::Old(x, _) | ExprKind::Trigger(_, x) | ExprKind::Labelled(_, x) => self.ty(x),
            ExprKind::Length(x) => {
                self.ty(x);
                Ty::Int
            }
            ExprKind::Quant { kind, bindings, cond, body } => {
                self.scopes.push(Default::default());
                for b in bindings {
                    if let Some((lo, hi)) = &b.range {
                        self.ty(lo);
                        self.ty(hi);
                    }
                    self.declare(&b.name, Ty::of(&b.ty), false);
                }
                if let Some(c) = cond {
                    self.boolean(c, "a quantifier's condition");
                }
                let r = match kind {
                    QuantKind::ForallStar => {
                        self.resource(body, "the body of `\\forall*`");
                        Ty::Resource
                    }
                    _ => {
                        self.boolean(body, &format!("the body of `{}`", kind.symbol()));
                        Ty::Bool
                    }
                };
                self.scopes.pop();
                r
            }
            ExprKind::Let { ty, name, value, body } => {
                let tv = self.ty(value);
                let t = Ty::of(ty);
                self.expect(value.span, &t, &tv, "the value of `\\let`");
                self.scopes.push(Default::default());
                self.declare(name, t, false);
                let r = self.ty(body);
                self.scopes.pop();
                r
            }
            ExprKind::Sum { ty, name, cond, body } => {
                self.scopes.push(Default::default());
                self.declare(name, Ty::of(ty), false);
                self.boolean(cond, "the condition of `\\sum`");
                let r = self.ty(body);
                self.scopes.pop();
                r
            }
            ExprKind::NewObject(c, args, _) => {
                let ts: Vec<(Ty, Span)> = args.iter().map(|a| (self.ty(a), a.span)).collect();
                // An unknown class is the encoder's to report (V-BAD-INPUT): it may be declared
                // in another file of the command line, and `verify` then points to `--program`.
                let Some(ce) = self.env.classes.get(&c.name) else {
                    return Ty::Class(c.name.clone());
                };
                // Without a declared constructor, `new C()` allocates the fields.
                let ctors = ce.ctors.clone();
                match ctors.as_slice() {
                    [] => self.arity(args.len(), 0, &c.name, e.span),
                    [one] => self.arguments(one, &ts, &c.name, e.span),
                    _ => {}
                }
                Ty::Class(c.name.clone())
            }
            ExprKind::NewArray(t, dims) => {
                let mut r = Ty::of(t);
                for d in dims {
                    let td = self.ty(d);
                    self.expect(d.span, &Ty::Int, &td, "an array size");
                    r = Ty::Array(Box::new(r));
                }
                r
            }
            ExprKind::Collection { kind, elem_ty, elems } => {
                let ts: Vec<Ty> = elems.iter().map(|x| self.ty(x)).collect();
                // Elements are checked against a declared element type only (an untyped
                // literal's type is that of its first element, which may be too narrow).
                let et = match elem_ty {
                    Some(t) => {
                        let et = Ty::of(t);
                        for (x, t) in elems.iter().zip(&ts) {
                            self.expect(x.span, &et, t, "a collection element");
                        }
                        et
                    }
                    None => ts.first().cloned().unwrap_or(Ty::Unknown),
                };
                coll(*kind, et)
            }
            ExprKind::EmptyCollection(k, t) => coll(*k, Ty::of(t)),
            ExprKind::MapLit { key_ty, val_ty, entries } => {
                let (kt, vt) = (Ty::of(key_ty), Ty::of(val_ty));
                for (k, v) in entries {
                    let t = self.ty(k);
                    self.expect(k.span, &kt, &t, "a map key");
                    let t = self.ty(v);
                    self.expect(v.span, &vt, &t, "a map value");
                }
                Ty::Map(Box::new(kt), Box::new(vt))
            }
            ExprKind::Range(k, lo, hi) => {
                for x in [lo, hi] {
                    let t = self.ty(x);
                    self.expect(x.span, &Ty::Int, &t, "a range bound");
                }
                coll(*k, Ty::Int)
            }
            ExprKind::Unfolding(p, b) => {
                self.resource(p, "the predicate of `unfolding`");
                self.ty(b)
            }
            ExprKind::Scale(f, r) => {
                self.ty(f);
                self.resource(r, "a scaled resource");
                Ty::Resource
            }
            // Not modelled (thread ids, options, process algebra, opaque text, and whatever
            // later front ends add): fits everywhere.
            _ => Ty::Unknown,
        }
    }

    fn name(&mut self, n: &str, span: Span) -> Ty {
        if let Some(v) = self.lookup(n) {
            return v.ty.clone();
        }
        let field = self.class.as_ref().and_then(|c| self.env.classes.get(c)?.fields.get(n));
        if let Some((t, _)) = field {
            return t.clone();
        }
        // A class name (the receiver of a static call or field).
        if self.env.classes.contains_key(n) {
            return Ty::Unknown;
        }
        self.undeclared(span, format!("unknown name `{n}`"), "declare it, or correct the name");
        Ty::Unknown
    }

    /// The type of a receiver (`r.f`, `r.m()`): a bare name that resolves to nothing may be a
    /// class of another file (a static member), not an error here.
    fn receiver(&mut self, r: &Expr) -> Ty {
        if let ExprKind::Name(id) = &r.kind {
            let field =
                self.class.as_ref().and_then(|c| self.env.classes.get(c)?.fields.get(&id.name));
            if self.lookup(&id.name).is_none() && field.is_none() {
                return Ty::Unknown;
            }
        }
        self.ty(r)
    }

    /// A built-in member of a value type (`analyze::builtins`), used at `at`: recorded, and
    /// typed as the core form it stands for. `None` when `to` has no such member.
    fn builtin_member(
        &mut self,
        to: &Ty,
        o: &Expr,
        f: &str,
        args: Option<&[Expr]>,
        at: Span,
    ) -> Option<Ty> {
        use crate::builtins::{member, Recv};
        let kind = match to {
            Ty::Seq(_) => Recv::Seq,
            Ty::Set(_) => Recv::Set,
            Ty::Bag(_) => Recv::Bag,
            Ty::Map(..) => Recv::Map,
            Ty::Option(_) => Recv::Opt,
            _ => return None,
        };
        let Some(core) = member(kind, o, f, args) else {
            let shown = if args.is_some() { format!("{f}(…)") } else { f.to_string() };
            let msg = format!("the type `{}` has no member `{shown}`", to.name());
            self.undeclared(at, msg, crate::builtins::HELP);
            return Some(Ty::Unknown);
        };
        // The receiver and the arguments were typed (and their errors reported) already: the
        // core form is typed for its result alone.
        let saved = self.diags.len();
        let t = self.ty(&core);
        self.diags.truncate(saved);
        self.members.record(at, core);
        Some(t)
    }

    fn field(&mut self, o: &Expr, f: &str, span: Span, at: Span) -> Ty {
        // An enum constant `E.C` (`if (Phase.Compute)` reached Silicon, found by the encoder
        // fuzzer with Silicon).
        if let ExprKind::Name(id) = &o.kind {
            if self.lookup(&id.name).is_none() && self.env.enums.contains(&id.name) {
                return Ty::Class(id.name.clone());
            }
        }
        let to = self.receiver(o);
        if f != "length" {
            if let Some(t) = self.builtin_member(&to, o, f, None, at) {
                return t;
            }
        }
        match &to {
            Ty::Array(_) | Ty::Seq(_) if f == "length" => Ty::Int,
            Ty::Tuple(a, _) if f == "fst" => (**a).clone(),
            Ty::Tuple(_, b) if f == "snd" => (**b).clone(),
            Ty::Class(c) => {
                let Some(ce) = self.env.classes.get(c) else { return Ty::Unknown };
                match ce.fields.get(f) {
                    Some((t, _)) => t.clone(),
                    None => {
                        let msg = format!("the class `{c}` has no field `{f}`");
                        self.undeclared(span, msg, "declare the field, or correct the name");
                        Ty::Unknown
                    }
                }
            }
            _ => Ty::Unknown,
        }
    }

    /// VerCors' library functions on maps (`keysMap(m)`, `getFromMap(m, k)`, …) applied to a
    /// map, and on options (`getOption(o)`, `getOrElseOption(o, d)`) applied to an option, for
    /// a program that declares no member of that name; anything else is not modelled.
    fn map_library(&mut self, name: &str, ts: &[(Ty, Span)]) -> Ty {
        // VerCors' option functions: the element type (the default must fit it).
        if let Some((Ty::Option(e), _)) = ts.first() {
            return match (name, ts) {
                ("getOption", [_]) => *e.clone(),
                ("getOrElseOption", [_, (t, sp)]) => {
                    self.expect(*sp, e, t, "the default of `getOrElseOption`");
                    *e.clone()
                }
                _ => Ty::Unknown,
            };
        }
        let Some((Ty::Map(kt, vt), _)) = ts.first() else {
            return Ty::Unknown;
        };
        let (kt, vt) = (*kt.clone(), *vt.clone());
        let map = Ty::Map(Box::new(kt.clone()), Box::new(vt.clone()));
        let arg = |me: &mut Self, i: usize, want: &Ty, what: &str| {
            if let Some((t, sp)) = ts.get(i) {
                me.expect(*sp, want, t, what);
            }
        };
        match (name, ts.len()) {
            ("keysMap", 1) => Ty::Set(Box::new(kt)),
            ("valuesMap", 1) => Ty::Set(Box::new(vt)),
            ("isEmpty", 1) => Ty::Bool,
            ("getFromMap", 2) => {
                arg(self, 1, &kt, "a map key");
                vt
            }
            ("removeFromMap", 2) => {
                arg(self, 1, &kt, "a map key");
                map
            }
            ("buildMap", 3) => {
                arg(self, 1, &kt, "a map key");
                arg(self, 2, &vt, "a map value");
                map
            }
            ("disjointMap" | "equalsMap", 2) => {
                arg(self, 1, &map, "a map");
                Ty::Bool
            }
            _ => Ty::Unknown,
        }
    }

    /// The callee of `recv.name(…)`, when it is known and not overloaded.
    fn callee(&mut self, recv: Option<&Expr>, name: &str, span: Span) -> Option<Sig> {
        let class = match recv {
            None => self.class.clone(),
            Some(r) => match (&r.kind, self.receiver(r)) {
                (_, Ty::Class(c)) => Some(c),
                // `C.m()`: a static member through its class name.
                (ExprKind::Name(id), Ty::Unknown)
                    if self.lookup(&id.name).is_none()
                        && self.env.classes.contains_key(&id.name) =>
                {
                    Some(id.name.clone())
                }
                _ => return None,
            },
        };
        let found = match recv {
            None => self.env.methods(class.as_deref(), name),
            Some(_) => class.as_deref().and_then(|c| self.env.classes.get(c)?.methods.get(name)),
        };
        match found.map(Vec::as_slice) {
            Some([one]) => Some(one.clone()),
            Some(_) => None,
            // Without a receiver the name may be one of VerCors' built-in functions (`perm`,
            // `isEmpty`, `removeAt`, …) or an ADT's: not an error here (the encoder refuses
            // what it cannot encode). A known class's missing method is.
            None => {
                if let (Some(_), Some(c)) = (recv, &class) {
                    if self.env.classes.contains_key(c) {
                        let msg = format!("the class `{c}` has no method `{name}`");
                        self.undeclared(span, msg, "declare the method, or correct the name");
                    }
                }
                None
            }
        }
    }

    pub fn arity(&mut self, got: usize, want: usize, name: &str, span: Span) {
        if got != want {
            self.diags.push(
                Diagnostic::error(
                    "V-ARITY",
                    format!("`{name}` takes {want} argument(s), but {got} are given"),
                )
                .with_primary(span, format!("{got} argument(s) here"))
                .with_help(format!("pass exactly {want} argument(s)")),
            );
        }
    }

    /// Argument count and types of a call of `sig`.
    pub fn arguments(&mut self, sig: &Sig, args: &[(Ty, Span)], name: &str, span: Span) {
        if args.len() != sig.params.len() {
            self.arity(args.len(), sig.params.len(), name, span);
            return;
        }
        for ((t, sp), p) in args.iter().zip(&sig.params) {
            self.expect(*sp, p, t, &format!("an argument of `{name}`"));
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Ty {
        match op {
            // Our parser gives `&&` and `**` one level (left-associative), VerCors binds `&&`
            // tighter: `R ** x != null && y` is `R ** (x != null && y)` there, which is well
            // typed; only the last factor of a left `**` chain is an operand of `&&`.
            BinOp::And => {
                let mut left = a;
                while let ExprKind::Binary(BinOp::Star, r, last) = &left.kind {
                    self.resource(r, "a factor of `**`");
                    left = last;
                }
                self.boolean(left, "an operand of `&&`");
                self.boolean(b, "an operand of `&&`");
                return if std::ptr::eq(left, a) { Ty::Bool } else { Ty::Resource };
            }
            BinOp::Or => {
                self.boolean(a, "an operand of `||`");
                self.boolean(b, "an operand of `||`");
                return Ty::Bool;
            }
            // Magic wands: not modelled.
            BinOp::Wand => {
                self.ty(a);
                self.ty(b);
                return Ty::Resource;
            }
            BinOp::Implies => {
                self.boolean(a, "the left side of `==>`");
                let tb = self.ty(b);
                if tb.not_resource() {
                    self.mismatch(
                        b.span,
                        format!(
                            "the right side of `==>` must be a boolean or a resource, found `{}`",
                            tb.name()
                        ),
                        format!("this has type `{}`", tb.name()),
                        "state a property (a boolean) or a permission here",
                    );
                }
                return if tb == Ty::Resource { Ty::Resource } else { Ty::Bool };
            }
            _ => {}
        }
        let (ta, tb) = (self.ty(a), self.ty(b));
        let operands = |me: &mut Checker, ok: &dyn Fn(&Ty) -> bool, what: &str| {
            for (x, t) in [(a, &ta), (b, &tb)] {
                if !ok(t) {
                    me.mismatch(
                        x.span,
                        format!("`{}` cannot be applied to `{}`", op.symbol(), t.name()),
                        format!("this has type `{}`", t.name()),
                        what,
                    );
                }
            }
        };
        match op {
            BinOp::Star => {
                operands(self, &|t| !t.not_resource(), "`**` joins resources and booleans");
                if ta == Ty::Bool && tb == Ty::Bool {
                    Ty::Bool
                } else {
                    Ty::Resource
                }
            }
            BinOp::Eq | BinOp::Ne => {
                // `b == Perm(…)` reached Silicon (found by the encoder fuzzer with Silicon).
                if ta == Ty::Resource || tb == Ty::Resource {
                    self.mismatch(
                        a.span.to(b.span),
                        format!("`{}` cannot compare resources", op.symbol()),
                        "a resource is held, not compared".into(),
                        "compare values; join resources with `**`",
                    );
                } else if !self.fits(&ta, &tb) && !self.fits(&tb, &ta) {
                    self.mismatch(
                        a.span.to(b.span),
                        format!("`{}` and `{}` cannot be compared", ta.name(), tb.name()),
                        format!("`{}` compared with `{}`", ta.name(), tb.name()),
                        "compare values of the same type",
                    );
                }
                Ty::Bool
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let ok = |t: &Ty| t.numeric() || t.collection();
                operands(self, &ok, "compare numbers (or sets and bags, for inclusion)");
                Ty::Bool
            }
            BinOp::In => {
                // The element must fit the collection's: `g in g` on a `seq<seq<int>>` reached
                // Silicon as an ill-typed program (found by the fuzzer, `fixtures/fuzz/`).
                if let Ty::Seq(e) | Ty::Set(e) | Ty::Bag(e) = &tb {
                    self.expect(a.span, e, &ta, "the element of `in`");
                }
                match tb {
                    Ty::Bag(_) => Ty::Int,
                    Ty::Unknown => Ty::Unknown,
                    _ => Ty::Bool,
                }
            }
            _ if op.is_arith() => {
                // Sequences have `+` (concatenation) only; sets and bags their algebra.
                let seq_ok = op == BinOp::Add;
                let ok = |t: &Ty| {
                    t.numeric() || (t.collection() && (seq_ok || !matches!(t, Ty::Seq(_))))
                };
                operands(self, &ok, "arithmetic needs numbers (sequences have `+` and `++` only)");
                // A number and a collection do not mix: `a[k] + [k]` reached Silicon (found by
                // the encoder fuzzer with Silicon).
                let num = |t: &Ty| matches!(t, Ty::Int | Ty::Frac | Ty::Float);
                if (num(&ta) && tb.collection()) || (ta.collection() && num(&tb)) {
                    self.mismatch(
                        a.span.to(b.span),
                        format!(
                            "`{}` cannot combine `{}` and `{}`",
                            op.symbol(),
                            ta.name(),
                            tb.name()
                        ),
                        format!("`{}` and `{}`", ta.name(), tb.name()),
                        "arithmetic combines two numbers, or two collections of one kind",
                    );
                }
                match (&ta, &tb) {
                    _ if op == BinOp::Frac => Ty::Frac,
                    (Ty::Float, _) | (_, Ty::Float) => Ty::Float,
                    (Ty::Frac, _) | (_, Ty::Frac) => Ty::Frac,
                    (Ty::Int, Ty::Int) => Ty::Int,
                    (t, _) if t.collection() => ta,
                    _ => Ty::Unknown,
                }
            }
            BinOp::Cons => {
                if !matches!(tb, Ty::Seq(_) | Ty::Unknown) {
                    self.mismatch(
                        b.span,
                        format!("`::` cannot be applied to `{}`", tb.name()),
                        format!("this has type `{}`", tb.name()),
                        "`x :: xs` prepends to a sequence",
                    );
                }
                tb
            }
            // `m ++ (k, v)`: the map with one entry updated.
            BinOp::Concat => {
                // `j ++ 2` on integers reached Silicon as an ill-typed program (found by the
                // encoder fuzzer with Silicon). `s ++ x` appends an element: one side suffices.
                let seqish = |t: &Ty| matches!(t, Ty::Seq(_) | Ty::Map(..) | Ty::Unknown);
                if !seqish(&ta) && !seqish(&tb) {
                    self.mismatch(
                        a.span.to(b.span),
                        format!("`++` cannot be applied to `{}` and `{}`", ta.name(), tb.name()),
                        format!("`{}` and `{}`", ta.name(), tb.name()),
                        "`++` concatenates sequences, appends to one, or updates a map",
                    );
                }
                if let (Ty::Map(kt, vt), ExprKind::Tuple(kv)) = (&ta, &b.kind) {
                    if let [k, v] = kv.as_slice() {
                        let (tk, tv) = (self.ty(k), self.ty(v));
                        self.expect(k.span, kt, &tk, "a map key");
                        self.expect(v.span, vt, &tv, "a map value");
                    }
                }
                ta
            }
            _ => Ty::Unknown,
        }
    }

    fn builtin(&mut self, b: Builtin, args: &[Expr]) -> Ty {
        let ts: Vec<Ty> = args.iter().map(|a| self.ty(a)).collect();
        match b {
            _ if b.is_resource() => {
                // The amount of `Perm`/`PointsTo`: a fraction (an integer is one).
                if matches!(b, Builtin::Perm | Builtin::PointsTo) {
                    if let (Some(x), Some(t)) = (args.get(1), ts.get(1)) {
                        self.expect(x.span, &Ty::Frac, t, "a permission amount");
                    }
                }
                Ty::Resource
            }
            Builtin::Array | Builtin::Matrix => Ty::Bool,
            Builtin::LengthFn => Ty::Int,
            Builtin::PermOf => Ty::Frac,
            Builtin::Head => match ts.first() {
                Some(Ty::Seq(t)) => (**t).clone(),
                _ => Ty::Unknown,
            },
            Builtin::Tail => ts.first().cloned().unwrap_or(Ty::Unknown),
            _ => Ty::Unknown,
        }
    }
}
