//! Expressions: the ternary and binary operators by precedence climbing, unary and postfix
//! forms, primaries, quantifiers and binders, built-in calls and collection literals.

use super::{syntax_error, Fail, PResult, Parser};
use crate::ast::*;
use crate::dialect::Dialect;
use crate::keywords::HARD_KEYWORDS;
use crate::lexer::{TokKind, Token};
use crate::prec::{self, Assoc};
use crate::span::Span;
use diag::Diagnostic;
use num_bigint::BigInt;

impl<'s> Parser<'s> {
    pub(super) fn parse_expr(&mut self) -> PResult<Expr> {
        self.nested(Self::parse_expr_inner)
    }

    fn parse_expr_inner(&mut self) -> PResult<Expr> {
        let lo = self.tok().span.start();
        // v1 labelled expression `L: e`.
        if self.is_ident() && self.is_punct_at(1, ":") && !self.operand_mode {
            let t = self.bump();
            let label = self.ident_from(t);
            self.bump();
            let e = self.parse_expr()?;
            return Ok(Expr::new(ExprKind::Labelled(label, Box::new(e)), self.span_from(lo)));
        }
        // v2 prefix ghost block `with { … } f(x) [then { … }]`: the same call as v1's suffix
        // form `f(x) with { … } then { … }`.
        if self.is_word("with") && self.is_punct_at(1, "{") {
            self.bump();
            let block = self.parse_block()?;
            let mut e = self.parse_expr()?;
            match &mut e.kind {
                ExprKind::Call { ghost, .. } | ExprKind::NewObject(_, _, ghost)
                    if ghost.with.is_none() =>
                {
                    ghost.with = Some(block);
                }
                _ => {
                    self.error(
                        syntax_error(
                            "a `with` block must precede a call",
                            e.span,
                            "not a method call",
                        )
                        .with_help(
                            "`with { … }` supplies ghost arguments to the call that follows it",
                        ),
                    );
                    return Err(Fail);
                }
            }
            e.span = self.span_from(lo);
            return Ok(e);
        }
        if self.is_word("unfolding")
            || self.is_bsword("\\unfolding")
            || self.is_bsword("\\Unfolding")
        {
            self.bump();
            // The predicate stops before `in`, which is also the membership operator.
            let p = self.parse_binary(prec::IN + 1)?;
            if !(self.eat_word("in")
                || (self.is_bsword("\\in") && {
                    self.bump();
                    true
                }))
            {
                return Err(self.error_expected("`in`"));
            }
            let e = self.parse_expr()?;
            return Ok(Expr::new(
                ExprKind::Unfolding(Box::new(p), Box::new(e)),
                self.span_from(lo),
            ));
        }
        self.parse_cond()
    }

    fn parse_cond(&mut self) -> PResult<Expr> {
        let lo = self.tok().span.start();
        let c = self.parse_binary(0)?;
        if self.is_punct("?") {
            self.bump();
            let a = self.parse_binary(0)?;
            self.expect_punct(":")?;
            let b = self.nested(Self::parse_cond)?;
            return Ok(Expr::new(
                ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)),
                self.span_from(lo),
            ));
        }
        Ok(c)
    }

    /// The binary operator at the cursor with its precedence level and right-associativity.
    fn binop(&self) -> Option<(BinOp, u8, bool)> {
        let t = self.tok();
        let s = self.text_of(t);
        let op = match (t.kind, s) {
            (TokKind::Punct, "==>") => BinOp::Implies,
            (TokKind::Punct, "-*") => BinOp::Wand,
            (TokKind::Punct, "&&") => BinOp::And,
            (TokKind::Punct, "||") => BinOp::Or,
            (TokKind::Punct, "**") => BinOp::Star,
            (TokKind::Punct, "==") => BinOp::Eq,
            (TokKind::Punct, "!=") => BinOp::Ne,
            (TokKind::Punct, "<") => BinOp::Lt,
            (TokKind::Punct, "<=") => BinOp::Le,
            (TokKind::Punct, ">") => BinOp::Gt,
            (TokKind::Punct, ">=") => BinOp::Ge,
            (TokKind::Word, "in") => BinOp::In,
            // v1's `\memberof` is membership, as `\in`.
            (TokKind::BsWord, "\\in" | "\\memberof") => BinOp::In,
            (TokKind::Punct, "+") => BinOp::Add,
            (TokKind::Punct, "-") => BinOp::Sub,
            (TokKind::Punct, "*") => BinOp::Mul,
            (TokKind::Punct, "/") => BinOp::Div,
            (TokKind::Punct, "%") => BinOp::Mod,
            (TokKind::Punct, "\\") => BinOp::Frac,
            (TokKind::Punct, "^^") => BinOp::Pow,
            (TokKind::Punct, "::") => BinOp::Cons,
            (TokKind::Punct, "++") | (TokKind::Punct, "--") => {
                // `x++;` / `x++)` is an increment statement, not concatenation.
                let n = self.tok_at(1);
                if n.kind == TokKind::Punct && matches!(self.text_of(n), ";" | ")" | ",") {
                    return None;
                }
                if s == "--" {
                    return None;
                }
                BinOp::Concat
            }
            _ => return None,
        };
        let p = prec::binary(op, self.dialect);
        Some((op, p.level, p.assoc == Assoc::Right))
    }

    /// Precedence climbing over the binary operators of levels ≥ `min` ([`prec`], levels 3–12
    /// of pvl.md §4); `0` takes them all.
    pub(super) fn parse_binary(&mut self, min: u8) -> PResult<Expr> {
        self.enter()?;
        let saved = self.depth;
        let r = self.parse_binary_inner(min);
        // The loop enters once per operator (each nests the tree deeper); undo them all.
        self.depth = saved;
        self.leave();
        r
    }

    fn parse_binary_inner(&mut self, min: u8) -> PResult<Expr> {
        let lo = self.tok().span.start();
        let mut lhs = self.parse_unary()?;
        while let Some((op, level, right)) = self.binop() {
            if level < min {
                break;
            }
            self.enter()?;
            let op_span = self.bump().span;
            let next_min = if right { level } else { level + 1 };
            let rhs = self.parse_binary(next_min)?;
            let e =
                Expr::new(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), self.span_from(lo));
            self.check_sensitive(&e, op_span);
            lhs = e;
        }
        Ok(lhs)
    }

    fn is_paren(&self, e: &Expr) -> bool {
        self.paren_spans.contains(&(e.span.lo, e.span.hi))
    }

    /// Record dialect-sensitive mixes (pvl.md §1.2): `a || b && c` and `a ==> b ==> c`.
    fn check_sensitive(&mut self, e: &Expr, op_span: Span) {
        let ExprKind::Binary(op, l, r) = &e.kind else {
            return;
        };
        let side = if self.dialect == Dialect::V1 { l } else { r };
        let ExprKind::Binary(inner, _, _) = &side.kind else {
            return;
        };
        if self.is_paren(side) {
            return;
        }
        let sensitive = prec::dialect_sensitive(*op, *inner);
        // In v2 `a && b || c` is read the same way by both dialects.
        let sensitive =
            sensitive && !(self.dialect == Dialect::V2 && matches!(op, BinOp::And | BinOp::Star));
        if !sensitive {
            return;
        }
        let text = e.span.text(self.src).to_string();
        let (reading, other) = if self.dialect == Dialect::V1 {
            (
                format!("({}) {} …", side.span.text(self.src), op.symbol()),
                format!("… {} (…)", inner.symbol()),
            )
        } else {
            (
                format!("… {} ({})", op.symbol(), side.span.text(self.src)),
                format!("(…) {} …", inner.symbol()),
            )
        };
        self.sensitive.push(e.span);
        self.diags.push(
            Diagnostic::warning(
                "A0010",
                format!("`{text}` is read differently by VerCors 1.4 and VerCors 2"),
            )
            .with_primary(
                op_span,
                format!("read as {reading} in the {} dialect", self.dialect.name()),
            )
            .with_secondary(side.span, "this operand")
            .with_note(format!("the other dialect reads it as {other}"))
            .with_help(format!("add parentheses to keep the current meaning: {reading}")),
        );
    }

    pub(super) fn parse_unary(&mut self) -> PResult<Expr> {
        self.nested(Self::parse_unary_inner)
    }

    fn parse_unary_inner(&mut self) -> PResult<Expr> {
        let lo = self.tok().span.start();
        if self.is_punct("!") || self.is_punct("-") {
            let op = if self.is_punct("!") { UnOp::Not } else { UnOp::Neg };
            self.bump();
            let e = self.parse_unary()?;
            return Ok(Expr::new(ExprKind::Unary(op, Box::new(e)), self.span_from(lo)));
        }
        if self.is_word("new") {
            return self.parse_new(lo);
        }
        // v2 pointer dereference `*p` and address-of `&x` (C-style; kept as text). A `*` before
        // an operand: `[*]` and `(*)` are the wildcard, which no operand follows.
        if (self.is_punct("*") || self.is_punct("&"))
            && (self.is_ident_tok(self.tok_at(1)) || self.is_punct_at(1, "("))
        {
            let op = self.bump();
            self.parse_unary()?;
            return Ok(self.opaque_expr_from(lo, self.text_of(op).to_string()));
        }
        let prim = self.parse_primary()?;
        self.parse_postfix(lo, prim)
    }

    fn parse_new(&mut self, lo: usize) -> PResult<Expr> {
        self.bump();
        // `new C(args)`, v2 `new C<T>(args)`, or `new T[e]…`
        if self.is_ident() && (self.is_punct_at(1, "(") || self.is_punct_at(1, "<")) {
            let save = self.pos;
            let t = self.bump();
            let name = self.ident_from(t);
            let type_args = self.try_type_args();
            if self.is_punct("(") {
                let args = self.parse_args()?;
                let mut ghost = self.parse_ghost_args()?;
                ghost.type_args = type_args;
                return Ok(Expr::new(ExprKind::NewObject(name, args, ghost), self.span_from(lo)));
            }
            self.pos = save;
        }
        // Element type without dimensions, then sized dimensions.
        let t = self.tok();
        let w = self.text_of(t);
        let base = match w {
            "int" => TypeKind::Int,
            "boolean" => TypeKind::Boolean,
            "bool" => TypeKind::Bool,
            "frac" => TypeKind::Frac,
            "zfrac" => TypeKind::ZFrac,
            "rational" => TypeKind::Rational,
            "float32" => TypeKind::Float32,
            "float64" => TypeKind::Float64,
            "char" => TypeKind::Char,
            _ if self.is_ident() => TypeKind::Class(self.ident_from(t), Vec::new()),
            _ => return Err(self.error_expected("a type after `new`")),
        };
        self.bump();
        let ty = Type { kind: base, span: t.span };
        let mut dims = Vec::new();
        while self.is_punct("[") {
            self.bump();
            dims.push(self.parse_expr()?);
            self.expect_punct("]")?;
        }
        if dims.is_empty() {
            return Err(self.error_expected("`[` or `(` after `new`"));
        }
        Ok(Expr::new(ExprKind::NewArray(ty, dims), self.span_from(lo)))
    }

    fn parse_args(&mut self) -> PResult<Vec<Expr>> {
        self.expect_punct("(")?;
        self.parse_list_until(")")
    }

    /// The arguments and ghost arguments of a call to `name`, which started at `lo`.
    fn parse_call(
        &mut self,
        lo: usize,
        recv: Option<Box<Expr>>,
        name: Ident,
        null_safe: bool,
    ) -> PResult<Expr> {
        let type_args = self.try_type_args();
        // Fields are evaluated in order: the arguments, then the ghost arguments.
        let args = self.parse_args()?;
        let mut ghost = self.parse_ghost_args()?;
        ghost.type_args = type_args;
        let kind = ExprKind::Call { recv, name, args, ghost, null_safe };
        Ok(Expr::new(kind, self.span_from(lo)))
    }

    fn call_paren_follows(&mut self) -> bool {
        (self.is_punct("(") && !(self.operand_mode && self.tok().space_before))
            || self.type_args_then_paren()
    }

    /// v2 explicit type arguments `<T, …>` directly followed by `(`: `f<int>(xs)`. Read
    /// speculatively: `a < b > (c)` would compare a boolean with an integer, so a list of types
    /// closed by `>` and followed by `(` is taken as type arguments.
    fn type_args_then_paren(&mut self) -> bool {
        if !self.is_punct("<") || self.operand_mode {
            return false;
        }
        let save = self.pos;
        let yes = !self.try_type_args().is_empty() && self.is_punct("(");
        self.pos = save;
        yes
    }

    /// `<T, …>` at the cursor as type arguments, or nothing (the cursor unchanged).
    pub(super) fn try_type_args(&mut self) -> Vec<Type> {
        if !self.is_punct("<") {
            return Vec::new();
        }
        let save = self.pos;
        self.bump();
        let mut out = Vec::new();
        while let Some(t) = self.try_type() {
            out.push(t);
            if !self.eat_punct(",") {
                break;
            }
        }
        if out.is_empty() || !self.eat_punct(">") {
            self.pos = save;
            return Vec::new();
        }
        out
    }

    fn parse_postfix(&mut self, lo: usize, e: Expr) -> PResult<Expr> {
        // Each suffix nests the tree one level deeper: count them against the depth limit.
        let saved = self.depth;
        let r = self.parse_postfix_chain(lo, e);
        self.depth = saved;
        r
    }

    fn parse_postfix_chain(&mut self, lo: usize, mut e: Expr) -> PResult<Expr> {
        loop {
            if self.is_punct(".") && !self.is_punct_at(1, ".") {
                self.enter()?;
                self.bump();
                let name = self.expect_ident("a field or method name")?;
                if self.call_paren_follows() {
                    e = self.parse_call(lo, Some(Box::new(e)), name, false)?;
                } else if let Some(b) =
                    e.as_name().and_then(|b| crate::cuda::builtin_name(b, &name.name))
                {
                    // CUDA's `threadIdx.x` is one name, as the C front end reads it, so that an
                    // annotation or a command-line expression means the same variable.
                    let span = self.span_from(lo);
                    e = Expr::new(ExprKind::Name(Ident::new(b, span)), span);
                } else {
                    e = Expr::new(ExprKind::Field(Box::new(e), name), self.span_from(lo));
                }
            } else if ((self.is_punct("->") && !self.map_key) || self.is_punct("?."))
                && self.is_ident_tok(self.tok_at(1))
                && self.is_punct_at(2, "(")
            {
                self.enter()?;
                self.bump();
                let t = self.bump();
                let name = self.ident_from(t);
                e = self.parse_call(lo, Some(Box::new(e)), name, true)?;
            } else if self.is_punct("[") {
                self.enter()?;
                self.bump();
                if self.eat_punct("..") {
                    let hi = self.parse_expr()?;
                    self.expect_punct("]")?;
                    e = Expr::new(
                        ExprKind::Slice(Box::new(e), None, Some(Box::new(hi))),
                        self.span_from(lo),
                    );
                    continue;
                }
                let i = self.parse_expr()?;
                if self.eat_punct("..") {
                    let hi =
                        if self.is_punct("]") { None } else { Some(Box::new(self.parse_expr()?)) };
                    self.expect_punct("]")?;
                    e = Expr::new(
                        ExprKind::Slice(Box::new(e), Some(Box::new(i)), hi),
                        self.span_from(lo),
                    );
                } else if self.eat_punct("->") {
                    let v = self.parse_expr()?;
                    self.expect_punct("]")?;
                    e = Expr::new(
                        ExprKind::SeqUpdate(Box::new(e), Box::new(i), Box::new(v)),
                        self.span_from(lo),
                    );
                } else {
                    self.expect_punct("]")?;
                    e = Expr::new(ExprKind::Index(Box::new(e), Box::new(i)), self.span_from(lo));
                }
            } else {
                break;
            }
        }
        Ok(e)
    }

    /// The `{ name = value, … }` of `given` or `yields` (the keyword is current), a trailing `,`
    /// allowed.
    fn parse_ghost_pairs<V>(
        &mut self,
        name_what: &str,
        mut value: impl FnMut(&mut Self) -> PResult<V>,
    ) -> PResult<Vec<(Ident, V)>> {
        self.bump();
        self.bump();
        let mut out = Vec::new();
        while !self.is_punct("}") {
            let n = self.expect_ident(name_what)?;
            self.expect_punct("=")?;
            out.push((n, value(self)?));
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct("}")?;
        Ok(out)
    }

    /// `with { … } then { … }` (v1) and `given { … } yields { … }` (v2) after a call.
    fn parse_ghost_args(&mut self) -> PResult<Box<GhostArgs>> {
        let mut g = Box::<GhostArgs>::default();
        loop {
            if self.is_word("with") && self.is_punct_at(1, "{") {
                self.bump();
                g.with = Some(self.parse_block()?);
            } else if self.is_word("then") && self.is_punct_at(1, "{") {
                self.bump();
                g.then = Some(self.parse_block()?);
            } else if self.is_word("given") && self.is_punct_at(1, "{") {
                let pairs = self.parse_ghost_pairs("a ghost parameter", Self::parse_expr)?;
                g.given.extend(pairs);
            } else if self.is_word("yields") && self.is_punct_at(1, "{") {
                let pairs = self
                    .parse_ghost_pairs("a variable", |p| p.expect_ident("a yielded parameter"))?;
                g.yields.extend(pairs);
            } else {
                break;
            }
        }
        Ok(g)
    }

    fn parse_primary(&mut self) -> PResult<Expr> {
        let t = self.tok();
        let lo = t.span.start();
        let s = self.text_of(t);
        match t.kind {
            TokKind::Int => {
                self.bump();
                let v = s.parse::<BigInt>().unwrap_or_default();
                Ok(Expr::new(ExprKind::Int(v), t.span))
            }
            TokKind::Decimal | TokKind::Str | TokKind::Char => {
                self.bump();
                Ok(self.opaque_expr_from(lo, "literal"))
            }
            TokKind::BsWord => self.parse_bsword(t),
            TokKind::QuotedWord => {
                self.bump();
                let id = self.ident_from(t);
                self.finish_name(lo, id)
            }
            TokKind::Word => self.parse_word_primary(t),
            TokKind::Punct => match s {
                "(" => self.parse_paren(lo),
                "|" => {
                    self.bump();
                    // The operators above `||` (in v1, `&&`/`**` share its level and stay out too).
                    let e = self.parse_binary(prec::OR + 1)?;
                    self.expect_punct("|")?;
                    Ok(Expr::new(ExprKind::Length(Box::new(e)), self.span_from(lo)))
                }
                "[" => self.parse_bracket(lo),
                "{" => self.parse_brace(lo, CollKind::Set),
                "{:" => {
                    self.bump();
                    // v2 `{:<<1: e :}`: each `<` moves the pattern to the next enclosing
                    // quantifier; patterns with the same number form one multi-pattern.
                    let save = self.pos;
                    let mut tag = TriggerTag::default();
                    while self.is_punct("<") || self.is_punct("<<") {
                        tag.parent += if self.is_punct("<<") { 2 } else { 1 };
                        self.bump();
                    }
                    if self.tok().kind == TokKind::Int && self.is_punct_at(1, ":") {
                        tag.group = self.text_of(self.tok()).parse().ok();
                        self.bump();
                        self.bump();
                    } else if tag.parent > 0 && self.is_punct(":") {
                        self.bump();
                    } else {
                        self.pos = save;
                        tag = TriggerTag::default();
                    }
                    let e = self.parse_expr()?;
                    self.expect_punct(":}")?;
                    Ok(Expr::new(ExprKind::Trigger(tag, Box::new(e)), self.span_from(lo)))
                }
                "*" => {
                    self.bump();
                    Ok(Expr::new(ExprKind::Wildcard, t.span))
                }
                "?" if self.is_ident_tok(self.tok_at(1)) && !self.tok_at(1).space_before => {
                    self.bump();
                    self.bump();
                    Ok(self.opaque_expr_from(lo, "?"))
                }
                _ => Err(self.error_expected("an expression")),
            },
            TokKind::Eof => Err(self.error_expected("an expression")),
        }
    }

    fn parse_word_primary(&mut self, t: Token) -> PResult<Expr> {
        let lo = t.span.start();
        let s = self.text_of(t);
        let simple = match s {
            "true" => Some(ExprKind::Bool(true)),
            "false" => Some(ExprKind::Bool(false)),
            "null" => Some(ExprKind::Null),
            "this" => Some(ExprKind::This),
            "write" => Some(ExprKind::Write),
            "read" => Some(ExprKind::Read),
            "none" => Some(ExprKind::NoPerm),
            "empty" => Some(ExprKind::Empty),
            "None" => Some(ExprKind::NoneOpt),
            "current_thread" => Some(ExprKind::ThreadId(s.to_string())),
            _ => None,
        };
        if let Some(k) = simple {
            self.bump();
            return Ok(Expr::new(k, t.span));
        }
        // Typed collection literals `seq<T>{…}`, `set<T>{…}`, `bag<T>{…}`, map literals
        // `map<K,V>{k -> v, …}`; tuple literals are opaque.
        if matches!(s, "seq" | "set" | "bag" | "map" | "tuple" | "vector")
            && self.is_punct_at(1, "<")
        {
            let save = self.pos;
            if let Some(ty) = self.try_type() {
                if self.is_punct("{") {
                    return match ty.kind {
                        TypeKind::Generic1(Generic1::Set, inner)
                            if self.comprehension_follows() =>
                        {
                            self.parse_comprehension(lo, *inner)
                        }
                        TypeKind::Generic1(g, inner) => {
                            let kind = match g {
                                Generic1::Seq => CollKind::Seq,
                                Generic1::Set => CollKind::Set,
                                _ => CollKind::Bag,
                            };
                            self.bump();
                            let elems = self.parse_list_until("}")?;
                            Ok(Expr::new(
                                ExprKind::Collection { kind, elem_ty: Some(*inner), elems },
                                self.span_from(lo),
                            ))
                        }
                        TypeKind::Map(key_ty, val_ty) => {
                            self.bump();
                            let entries = self.parse_map_entries()?;
                            Ok(Expr::new(
                                ExprKind::MapLit { key_ty: *key_ty, val_ty: *val_ty, entries },
                                self.span_from(lo),
                            ))
                        }
                        TypeKind::Tuple(..) => {
                            self.bump();
                            let a = self.parse_expr()?;
                            self.expect_punct(",")?;
                            let b = self.parse_expr()?;
                            self.expect_punct("}")?;
                            Ok(Expr::new(
                                ExprKind::TupleLit(ty, Box::new(a), Box::new(b)),
                                self.span_from(lo),
                            ))
                        }
                        _ => {
                            // vector<T>{…}: keep as text.
                            self.skip_balanced("{", "}");
                            Ok(self.opaque_expr_from(lo, s))
                        }
                    };
                }
            }
            self.pos = save;
        }
        // Bag literal `b{…}` / `b{t: T}`: `b` directly followed by `{`.
        if s == "b" && self.is_punct_at(1, "{") && !self.tok_at(1).space_before {
            self.bump();
            return self.parse_brace(lo, CollKind::Bag);
        }
        // `Reducible(x, +)` (an operator as argument) and VeyMont's `Perm[p](x, f)`: text.
        if (s == "Reducible" && self.is_punct_at(1, "("))
            || (s == "Perm" && self.is_punct_at(1, "["))
        {
            self.bump();
            if self.is_punct("[") {
                self.skip_balanced("[", "]");
            }
            self.skip_balanced("(", ")");
            return Ok(self.opaque_expr_from(lo, s));
        }
        if let Some(b) = Builtin::from_name(s) {
            if self.is_punct_at(1, "(") {
                self.bump();
                return self.finish_builtin(lo, b, t.span);
            }
        }
        // `in` is an operator between operands; where an operand starts it can only be a name
        // (a C parameter `int *in`, as VerCors' own CUDA examples call one).
        let c_name = s == "in" && t.kind == TokKind::Word;
        if !self.is_ident_tok(t) && !c_name {
            let found = self.describe(t);
            let mut d = syntax_error(
                format!("expected an expression, found {found}"),
                t.span,
                "expected an expression",
            );
            if HARD_KEYWORDS.contains(&s) {
                d = d.with_help(format!(
                    "`{s}` is a keyword; write `` `{s}` `` to use it as a name"
                ));
            }
            self.error(d);
            return Err(Fail);
        }
        self.bump();
        let id = self.ident_from(t);
        self.check_reserved(&id, t);
        self.finish_name(lo, id)
    }

    fn finish_name(&mut self, lo: usize, id: Ident) -> PResult<Expr> {
        // A function of a generic ADT `Adt<int>.f(…)`: a call on the ADT's name whose type
        // arguments are the ADT's (its functions have none of their own), as the monomorphiser
        // reads them (analyze/generics.rs); printed back as `Adt.f<int>(…)`.
        if self.is_punct("<") && !self.operand_mode {
            let save = self.pos;
            let targs = self.try_type_args();
            if !targs.is_empty()
                && self.is_punct(".")
                && self.is_ident_tok(self.tok_at(1))
                && self.is_punct_at(2, "(")
            {
                self.bump();
                let t = self.tok();
                self.bump();
                let f = self.ident_from(t);
                let recv = Expr::new(ExprKind::Name(id.clone()), id.span);
                let args = self.parse_args()?;
                let mut ghost = self.parse_ghost_args()?;
                ghost.type_args = targs;
                let kind = ExprKind::Call {
                    recv: Some(Box::new(recv)),
                    name: f,
                    args,
                    ghost,
                    null_safe: false,
                };
                return Ok(Expr::new(kind, self.span_from(lo)));
            }
            self.pos = save;
        }
        if self.call_paren_follows() {
            return self.parse_call(lo, None, id, false);
        }
        let span = id.span;
        Ok(Expr::new(ExprKind::Name(id), span))
    }

    fn finish_builtin(&mut self, lo: usize, b: Builtin, name_span: Span) -> PResult<Expr> {
        let args = self.parse_args()?;
        let (min, max) = b.arity();
        if args.len() < min || args.len() > max {
            let span = self.span_from(lo);
            self.error(
                syntax_error(
                    format!(
                        "`{}` takes {} argument{}, found {}",
                        b.name(),
                        min,
                        if min == 1 { "" } else { "s" },
                        args.len()
                    ),
                    span,
                    "wrong number of arguments",
                )
                .with_secondary(name_span, "built-in function")
                .with_help(builtin_usage(b)),
            );
            return Err(Fail);
        }
        crate::lint::permission_amount(b, &args, &mut self.diags);
        Ok(Expr::new(ExprKind::Builtin(b, args), self.span_from(lo)))
    }

    pub(super) fn skip_balanced(&mut self, open: &str, close: &str) {
        let mut depth = 0;
        while !self.at_eof() {
            if self.is_punct(open) {
                depth += 1;
            } else if self.is_punct(close) {
                depth -= 1;
                if depth <= 0 {
                    self.bump();
                    return;
                }
            }
            self.bump();
        }
    }

    pub(super) fn parse_list_until(&mut self, close: &str) -> PResult<Vec<Expr>> {
        let v = self.comma_list_unless(close, Self::parse_expr)?;
        self.expect_punct(close)?;
        Ok(v)
    }

    fn parse_bsword(&mut self, t: Token) -> PResult<Expr> {
        let lo = t.span.start();
        let s = self.text_of(t);
        match s {
            "\\result" => {
                self.bump();
                Ok(Expr::new(ExprKind::Result, t.span))
            }
            "\\current_thread" | "\\ltid" | "\\gtid" => {
                self.bump();
                Ok(Expr::new(ExprKind::ThreadId(s.to_string()), t.span))
            }
            "\\old" => {
                self.bump();
                let label = if self.is_punct("[") {
                    self.bump();
                    let l = self.expect_ident("a label")?;
                    self.expect_punct("]")?;
                    Some(l)
                } else {
                    None
                };
                self.expect_punct("(")?;
                let e = self.parse_expr()?;
                self.expect_punct(")")?;
                Ok(Expr::new(ExprKind::Old(Box::new(e), label), self.span_from(lo)))
            }
            "\\unfolding" | "\\Unfolding" => self.parse_expr_inner(),
            // `\replacing(e) body \replacing_done`: kept as text.
            "\\replacing" => {
                self.bump();
                if self.is_punct("(") {
                    self.skip_balanced("(", ")");
                }
                self.parse_expr()?;
                if !self.is_bsword("\\replacing_done") {
                    return Err(self.error_expected("`\\replacing_done`"));
                }
                self.bump();
                Ok(self.opaque_expr_from(lo, s))
            }
            _ => {
                if let Some(b) = Builtin::from_name(s) {
                    self.bump();
                    return self.finish_builtin(lo, b, t.span);
                }
                // Other backslash words (`\typeof`, `\sum(a, b)`, v2 extras): opaque call.
                self.bump();
                if self.is_punct("(") {
                    self.skip_balanced("(", ")");
                }
                Ok(self.opaque_expr_from(lo, s))
            }
        }
    }
}

fn builtin_usage(b: Builtin) -> String {
    match b {
        Builtin::Perm => "usage: Perm(location, fraction)".into(),
        Builtin::PointsTo => "usage: PointsTo(location, fraction, value)".into(),
        Builtin::Value => "usage: Value(location)".into(),
        Builtin::Array => "usage: \\array(a, n)".into(),
        Builtin::Matrix => "usage: \\matrix(m, rows, cols)".into(),
        _ => {
            let (min, _) = b.arity();
            format!("`{}` takes {min} argument(s)", b.name())
        }
    }
}
