//! Declarations: the program, classes, members (fields and methods) and types.

use super::{syntax_error, PResult, Parser, MAX_DEPTH};
use crate::ast::*;
use crate::lexer::TokKind;
use crate::span::Span;

impl<'s> Parser<'s> {
    pub(super) fn parse_program(&mut self) -> Program {
        let mut items = Vec::new();
        let mut main = None;
        while !self.at_eof() {
            let before = self.pos;
            if self.is_punct("{") {
                match self.parse_block() {
                    Ok(b) => main = Some(b),
                    Err(_) => self.recover(false),
                }
            } else if self.is_word("class") || (self.at_clause() && self.class_after_clauses()) {
                match self.parse_class() {
                    Ok(c) => items.push(Item::Class(c)),
                    Err(_) => self.recover(false),
                }
            } else if self.is_word("adt")
                && self.tok_at(1).kind == TokKind::Word
                && (self.is_punct_at(2, "{") || self.is_punct_at(2, "<"))
            {
                match self.parse_adt() {
                    Ok(a) => items.push(Item::Adt(a)),
                    Err(_) => self.recover(false),
                }
            } else if self.is_word("enum") && self.tok_at(1).kind == TokKind::Word {
                match self.parse_enum() {
                    Ok(a) => items.push(Item::Adt(a)),
                    Err(_) => self.recover(false),
                }
            } else if self.is_word("kernel")
                || self.is_word("seq_program")
                || self.at_v2_global_decl()
            {
                items.push(Item::Opaque(self.parse_opaque_decl()));
            } else {
                match self.parse_member(None) {
                    Ok(Member::Method(m)) => items.push(Item::Method(m)),
                    Ok(Member::Field(f)) => items.push(Item::Field(f)),
                    Err(_) => self.recover(false),
                }
            }
            if self.pos == before {
                // A token nothing can start with: report once and skip it.
                if !self.at_eof() {
                    self.error_expected("a class, method or field declaration");
                    self.bump();
                }
            }
        }
        Program { items, main, span: Span::new(0, self.src.len()), memo: Memo::default() }
    }

    /// VerCors 2 global declarations that the pipeline keeps as text (and the encoder and the
    /// interpreter refuse by name): `model`, `adt`, `axiom`, `prover_type`, `prover_function`,
    /// VeyMont's `choreography` and `vesuv_entry`. Each is recognised by its shape, so that the
    /// words stay usable as names elsewhere.
    fn at_v2_global_decl(&self) -> bool {
        let word = |i: usize| self.tok_at(i).kind == TokKind::Word;
        match self.text() {
            "model" | "axiom" => word(1) && self.is_punct_at(2, "{"),
            "prover_type" => word(1) && self.text_of(self.tok_at(2)).starts_with('\\'),
            "prover_function" => word(1) && word(2),
            "choreography" => word(1) && self.is_punct_at(2, "("),
            "vesuv_entry" => self.is_punct_at(1, "{"),
            _ => false,
        }
    }

    fn parse_opaque_decl(&mut self) -> Opaque {
        let lo = self.tok().span.start();
        let kw = self.text().to_string();
        self.bump();
        // Up to and including the first balanced `{ … }`, or a `;` outside parentheses before
        // it (`prover_type Real \smtlib Real;`, with the interpretation in backticks).
        let mut parens = 0;
        while !self.at_eof() && !self.is_punct("{") {
            if self.is_punct("(") {
                parens += 1;
            } else if self.is_punct(")") {
                parens -= 1;
            } else if self.is_punct(";") && parens == 0 {
                self.bump();
                return self.opaque_from(lo, kw);
            }
            self.bump();
        }
        let mut depth = 0;
        while !self.at_eof() {
            if self.is_punct("{") {
                depth += 1;
            } else if self.is_punct("}") {
                depth -= 1;
                if depth == 0 {
                    self.bump();
                    break;
                }
            }
            self.bump();
        }
        self.opaque_from(lo, kw)
    }

    /// `adt Name<T…> { pure R f(T x, …); axiom e; … }` (the `adt` is current).
    fn parse_adt(&mut self) -> PResult<Adt> {
        let lo = self.bump().span.start();
        let name = self.expect_ident("an ADT name")?;
        let type_params = self.parse_type_params()?;
        self.expect_punct("{")?;
        let mut functions = Vec::new();
        let mut axioms = Vec::new();
        while !self.eat_punct("}") {
            if self.at_eof() {
                return Err(self.error_expected("`}` closing the ADT"));
            }
            if self.eat_word("axiom") {
                axioms.push(self.parse_expr()?);
                self.expect_punct(";")?;
                continue;
            }
            let flo = self.tok().span.start();
            if !self.eat_word("pure") {
                return Err(self.error_expected("`pure` (an ADT function) or `axiom`"));
            }
            let ret = self.parse_type()?;
            let fname = self.expect_ident("a function name")?;
            let params = self.parse_params()?;
            self.expect_punct(";")?;
            functions.push(AdtFunction { ret, name: fname, params, span: self.span_from(flo) });
        }
        let span = self.span_from(lo);
        let text = span.text(self.src).to_string();
        Ok(Adt { name, type_params, functions, axioms, is_enum: false, text, span })
    }

    /// `enum E { A, B, }` (the `enum` is current): an ADT of constants.
    fn parse_enum(&mut self) -> PResult<Adt> {
        let lo = self.bump().span.start();
        let name = self.expect_ident("an enum name")?;
        self.expect_punct("{")?;
        let ty = Type { kind: TypeKind::Class(name.clone(), Vec::new()), span: name.span };
        let mut functions = Vec::new();
        while !self.eat_punct("}") {
            let c = self.expect_ident("an enum constant")?;
            functions.push(AdtFunction {
                ret: ty.clone(),
                name: c.clone(),
                params: Vec::new(),
                span: c.span,
            });
            if !self.eat_punct(",") {
                self.expect_punct("}")?;
                break;
            }
        }
        let span = self.span_from(lo);
        let text = span.text(self.src).to_string();
        Ok(Adt {
            name,
            type_params: Vec::new(),
            functions,
            axioms: Vec::new(),
            is_enum: true,
            text,
            span,
        })
    }

    /// Do the contract clauses from here on stand before `class` (a VerCors 2 class contract,
    /// `lock_invariant R; class C { … }`) rather than before a method?
    fn class_after_clauses(&self) -> bool {
        let mut depth = 0i32;
        let mut i = 0;
        loop {
            let t = self.tok_at(i);
            if t.kind == TokKind::Eof {
                return false;
            }
            match self.text_of(t) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                ";" if depth == 0 => {
                    let next = self.tok_at(i + 1);
                    let word = self.text_of(next);
                    if next.kind != TokKind::Word {
                        return false;
                    }
                    if word == "class" {
                        return true;
                    }
                    if !crate::keywords::CLAUSE_WORDS.contains(&word) {
                        return false;
                    }
                }
                _ => {}
            }
            if depth < 0 {
                return false;
            }
            i += 1;
        }
    }

    fn parse_class(&mut self) -> PResult<Class> {
        let contract = self.parse_prefix()?.clauses;
        let lo = self.bump().span.start(); // `class`
        let name = self.expect_ident("a class name")?;
        let type_params = self.parse_type_params()?;
        self.expect_punct("{")?;
        // A class cut off by the end of the file keeps the members read so far.
        let (members, _) = self.parse_braced(
            |p| p.parse_member(Some(&name.name)),
            false,
            "a field or method declaration",
            |eof| {
                syntax_error(
                    format!(
                        "unbalanced braces: end of file reached inside the body of class `{}`",
                        name.name
                    ),
                    eof,
                    "expected `}` before the end of the file",
                )
                .with_secondary(name.span, "class declared here")
                .with_help("close the class body with `}`")
            },
        );
        Ok(Class { contract, name, type_params, members, span: self.span_from(lo) })
    }

    fn parse_type_params(&mut self) -> PResult<Vec<Ident>> {
        if !self.eat_punct("<") {
            return Ok(Vec::new());
        }
        let out = self.comma_list(|p| p.expect_ident("a type parameter"))?;
        self.expect_punct(">")?;
        Ok(out)
    }

    fn parse_modifiers(&mut self) -> Vec<Modifier> {
        let mut mods = Vec::new();
        loop {
            let m = match self.text() {
                "static" => Modifier::Static,
                "pure" => Modifier::Pure,
                "inline" => Modifier::Inline,
                "thread_local" => Modifier::ThreadLocal,
                "bip_annotation" => Modifier::BipAnnotation,
                _ => break,
            };
            if self.tok().kind != TokKind::Word {
                break;
            }
            // `pure` etc. are contextual: `int pure;` is not a modifier use.
            if m != Modifier::Static
                && !(self.is_ident_tok(self.tok_at(1)) || self.tok_at(1).kind == TokKind::Word)
            {
                break;
            }
            self.bump();
            mods.push(m);
        }
        mods
    }

    fn parse_member(&mut self, class: Option<&str>) -> PResult<Member> {
        let lo = self.tok().span.start();
        let prefix = self.parse_prefix()?;
        let mods = self.parse_modifiers();
        // v2 `ghost` before a declaration: a ghost member verifies like any other.
        if self.is_word("ghost")
            && self.tok_at(1).kind == TokKind::Word
            && matches!(self.tok_at(2).kind, TokKind::Word | TokKind::QuotedWord)
        {
            self.bump();
        }
        let is_final = self.is_word("final") && self.tok_at(1).kind == TokKind::Word;
        if is_final {
            self.bump();
        }
        // v2 thread body `run { … }` (or abstract `run;`), the method `void run()`.
        if class.is_some()
            && self.is_word("run")
            && (self.is_punct_at(1, "{") || self.is_punct_at(1, ";"))
        {
            let kw = self.bump();
            let body = if self.eat_punct(";") {
                MethodBody::Abstract
            } else {
                MethodBody::Block(self.parse_block()?)
            };
            return Ok(Member::Method(Method {
                prefix,
                modifiers: mods,
                kind: MethodKind::Run,
                ret: Type::new(TypeKind::Void),
                name: Ident::new("run", kw.span),
                type_params: Vec::new(),
                params: Vec::new(),
                body,
                span: self.span_from(lo),
            }));
        }
        // Constructors.
        let ctor = if self.is_word("constructor")
            && (self.is_punct_at(1, "(") || self.is_punct_at(1, "<"))
        {
            let kw = self.bump();
            Some((MethodKind::CtorV2, Ident::new("constructor", kw.span)))
        } else if self.is_ident() && self.is_punct_at(1, "(") && class.is_some() {
            let t = self.bump();
            Some((MethodKind::CtorV1, self.ident_from(t)))
        } else {
            None
        };
        if let Some((kind, name)) = ctor {
            let void = Type::new(TypeKind::Void);
            return self.finish_method(lo, prefix, mods, kind, void, name);
        }
        let ty = self.parse_type()?;
        // v2 operator methods `T +(T x) …` and `T right+(T x) …` (`o + x`, `x + o`).
        if class.is_some()
            && (self.is_punct("+") || (self.is_word("right") && self.is_punct_at(1, "+")))
            && (self.is_punct_at(1, "(") || self.is_punct_at(2, "("))
        {
            let first = self.bump();
            let mut span = first.span;
            let word = if self.is_punct("+") {
                span = span.to(self.bump().span);
                "right+"
            } else {
                "+"
            };
            let name = Ident::new(word, span);
            return self.finish_method(lo, prefix, mods, MethodKind::Method, ty, name);
        }
        let name = self.expect_ident("a member name")?;
        if self.is_punct("(") || self.is_punct("<") {
            return self.finish_method(lo, prefix, mods, MethodKind::Method, ty, name);
        }
        // Field declaration.
        if !prefix.is_empty() {
            self.error(
                syntax_error(
                    "a contract or annotation cannot precede a field",
                    prefix.span,
                    "this prefix has no method to attach to",
                )
                .with_help("move the clauses in front of a method"),
            );
        }
        let mut names = vec![name];
        while self.eat_punct(",") {
            names.push(self.expect_ident("a field name")?);
        }
        self.expect_punct(";")?;
        Ok(Member::Field(Field { is_final, ty, names, span: self.span_from(lo) }))
    }

    /// `(T x, U y)`: a parameter list, parentheses included.
    fn parse_params(&mut self) -> PResult<Vec<Param>> {
        self.expect_punct("(")?;
        let params = self.comma_list_unless(")", |p| {
            let plo = p.tok().span.start();
            let ty = p.parse_type()?;
            let name = p.expect_ident("a parameter name")?;
            Ok(Param { ty, name, span: p.span_from(plo) })
        })?;
        self.expect_punct(")")?;
        Ok(params)
    }

    fn finish_method(
        &mut self,
        lo: usize,
        prefix: Prefix,
        modifiers: Vec<Modifier>,
        kind: MethodKind,
        ret: Type,
        name: Ident,
    ) -> PResult<Member> {
        let type_params = self.parse_type_params()?;
        let params = self.parse_params()?;
        let body = if self.is_punct("{") {
            MethodBody::Block(self.parse_block()?)
        } else if self.eat_punct("=") {
            let e = self.parse_expr()?;
            self.expect_punct(";")?;
            MethodBody::Expr(e)
        } else if self.eat_punct(";") {
            MethodBody::Abstract
        } else {
            return Err(self.error_expected("a method body `{`, `= expression;` or `;`"));
        };
        Ok(Member::Method(Method {
            prefix,
            modifiers,
            kind,
            ret,
            name,
            type_params,
            params,
            body,
            span: self.span_from(lo),
        }))
    }

    // -----------------------------------------------------------------------------------------
    // Types
    // -----------------------------------------------------------------------------------------

    pub(super) fn parse_type(&mut self) -> PResult<Type> {
        match self.try_type() {
            Some(t) => Ok(t),
            None => Err(self.error_expected("a type")),
        }
    }

    /// Parse a type without reporting errors; restores the position on failure.
    pub(super) fn try_type(&mut self) -> Option<Type> {
        let start = self.pos;
        // Type arguments and array dimensions nest the type; a speculative parse stops silently
        // at the depth limit (the caller then reports what it expected).
        let saved = self.depth;
        let r = if self.depth < MAX_DEPTH {
            self.depth += 1;
            self.try_type_inner()
        } else {
            None
        };
        self.depth = saved;
        if r.is_none() {
            self.pos = start;
        }
        r
    }

    fn try_type_inner(&mut self) -> Option<Type> {
        let t = self.tok();
        if t.kind != TokKind::Word && t.kind != TokKind::QuotedWord {
            return None;
        }
        let lo = t.span.start();
        let w = self.text_of(t);
        let simple = match w {
            "int" => Some(TypeKind::Int),
            "boolean" => Some(TypeKind::Boolean),
            "bool" => Some(TypeKind::Bool),
            "void" => Some(TypeKind::Void),
            "string" => Some(TypeKind::String),
            "resource" => Some(TypeKind::Resource),
            "process" => Some(TypeKind::Process),
            "frac" => Some(TypeKind::Frac),
            "zfrac" => Some(TypeKind::ZFrac),
            "rational" => Some(TypeKind::Rational),
            "float32" => Some(TypeKind::Float32),
            "float64" => Some(TypeKind::Float64),
            "char" => Some(TypeKind::Char),
            _ => None,
        };
        let mut ty = if let Some(k) = simple.filter(|_| t.kind == TokKind::Word) {
            self.bump();
            Type { kind: k, span: t.span }
        } else {
            let g1 = match w {
                "seq" => Some(Generic1::Seq),
                "set" => Some(Generic1::Set),
                "bag" => Some(Generic1::Bag),
                "option" => Some(Generic1::Option),
                "loc" => Some(Generic1::Loc),
                "pointer" => Some(Generic1::Pointer),
                _ => None,
            };
            if let (Some(g), true) = (g1, self.is_punct_at(1, "<")) {
                self.bump();
                self.bump();
                let inner = self.try_type()?;
                if !self.eat_punct(">") {
                    return None;
                }
                Type { kind: TypeKind::Generic1(g, Box::new(inner)), span: self.span_from(lo) }
            } else if w == "vector" && self.is_punct_at(1, "<") {
                self.bump();
                self.bump();
                let a = self.try_type()?;
                let mut size = None;
                if self.is_punct(",") && self.tok_at(1).kind == TokKind::Int {
                    self.bump();
                    size = self.text().parse::<num_bigint::BigInt>().ok();
                    self.bump();
                }
                if !self.eat_punct(">") {
                    return None;
                }
                Type { kind: TypeKind::Vector(Box::new(a), size), span: self.span_from(lo) }
            } else if (w == "map" || w == "tuple") && self.is_punct_at(1, "<") {
                self.bump();
                self.bump();
                let a = self.try_type()?;
                if !self.eat_punct(",") {
                    return None;
                }
                let b = self.try_type()?;
                if !self.eat_punct(">") {
                    return None;
                }
                let kind = if w == "map" {
                    TypeKind::Map(Box::new(a), Box::new(b))
                } else {
                    TypeKind::Tuple(Box::new(a), Box::new(b))
                };
                Type { kind, span: self.span_from(lo) }
            } else if self.is_ident() {
                self.bump();
                let name = self.ident_from(t);
                let mut args = Vec::new();
                if self.is_punct("<") {
                    let save = self.pos;
                    self.bump();
                    let mut ok = true;
                    loop {
                        match self.try_type() {
                            Some(a) => args.push(a),
                            None => {
                                ok = false;
                                break;
                            }
                        }
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                    if !(ok && self.eat_punct(">")) {
                        self.pos = save;
                        args.clear();
                    }
                }
                Type { kind: TypeKind::Class(name, args), span: self.span_from(lo) }
            } else {
                return None;
            }
        };
        // Array dimensions: `[]`* or sized `[E]`+.
        let mut sizes: Vec<Option<Expr>> = Vec::new();
        while self.is_punct("[") && self.depth < MAX_DEPTH {
            self.depth += 1;
            if self.is_punct_at(1, "]") {
                self.bump();
                self.bump();
                sizes.push(None);
            } else {
                // A sized dimension; only part of a type if a declaration follows, which the
                // caller checks. Errors inside are not reported in this speculative parse.
                let save_pos = self.pos;
                let save_diags = self.diags.len();
                let save_count = self.error_count;
                let save_last = self.last_error_at;
                self.bump();
                let e = self.parse_expr().ok();
                let closed = e.is_some() && self.eat_punct("]");
                if !closed || self.diags.len() != save_diags {
                    self.pos = save_pos;
                    self.diags.truncate(save_diags);
                    self.error_count = save_count;
                    self.last_error_at = save_last;
                    break;
                }
                sizes.push(e);
            }
        }
        // Innermost dimension last: `int[M][N]` is Array(Array(int, N), M).
        for size in sizes.into_iter().rev() {
            let span = self.span_from(lo);
            ty = Type { kind: TypeKind::Array(Box::new(ty), size.map(Box::new)), span };
        }
        if let TypeKind::Array(..) = ty.kind {
            ty.span = self.span_from(lo);
        }
        Some(ty)
    }
}
