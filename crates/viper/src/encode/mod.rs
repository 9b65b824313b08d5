//! PVL → Viper encoding (`verification.md` §5).
//!
//! The encoder walks the PVL AST directly: normalisation (context splitting, `for` → `while`,
//! `x++`, hoisting of calls and locals) happens on the fly while Viper nodes are built.

mod adts;
mod alloc;
mod calls;
mod coerce;
mod comprehension;
mod contracts;
mod exprs;
mod fixed;
pub mod floats;
mod functions;
mod inject;
mod locks;
mod maps;
mod matrix;
mod names;
mod order;
mod products;
mod quant;
mod sat;
mod stmts;
mod sum;
mod triggers;
mod typing;
mod values;

pub use quant::{quantify, same, text};
pub use sat::settle as settle_sat;

use crate::ast::*;
use diag::{Diagnostic, SourceFile};
use front::ast::{self, ClauseKind, Expr, MethodBody, Type, TypeKind};
use front::span::Span;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Options that change the produced text.
#[derive(Clone, Debug, Default)]
pub struct EncodeOptions {
    /// Prepended to every generated member and field name, so that several programs can share
    /// one Viper file (batch verification).
    pub prefix: String,
    /// Leave out the contract-satisfiability checks ([`sat`]; `verify --disable-sat`).
    pub no_sat: bool,
    /// Generate permissions for a permission-free sequential program
    /// ([`analyze::genperms`]).
    pub gen_perms: analyze::genperms::GenPerms,
    /// A VerCors 2 program (`inject.rs`: injectivity of quantified permissions is then checked
    /// where they are received too). A program that uses VerCors 2's built-in members or
    /// generics is one whatever this says.
    pub v2: bool,
}

/// `0 < v <= 1` (`strict`, a `frac`) or `0 <= v <= 1` (a `zfrac`) for the permission variable `v`.
fn frac_range(v: &str, strict: bool) -> Exp {
    let low = Exp::bin(if strict { "<" } else { "<=" }, Exp::synth(ExpKind::NoPerm), Exp::var(v));
    Exp::and(low, Exp::bin("<=", Exp::var(v), Exp::synth(ExpKind::Write)))
}

/// What is known about a callable PVL member.
#[derive(Clone, Debug)]
pub struct Callable {
    pub viper: String,
    pub kind: CallKind,
    pub is_static: bool,
    pub params: Vec<Type>,
    pub ret: Type,
    pub given: Vec<(String, Type)>,
    pub yields: Vec<(String, Type)>,
    /// For inline predicates: parameter names and body, expanded at each use.
    pub inline: Option<(Vec<String>, Expr)>,
    pub class: Option<String>,
    pub param_names: Vec<String>,
    /// Locations the method's precondition takes with `read` permission (top-level conjuncts).
    /// Such methods get a permission parameter instead of a wildcard, so that callers get back
    /// exactly what they lent (a wildcard would come back as an unknown amount).
    pub read_locs: Vec<Expr>,
    /// Whether the member has a body: an abstract predicate cannot be folded or unfolded.
    pub has_body: bool,
    /// The PVL declaration (tells overloads apart; `Span`'s `==` ignores positions, so compare
    /// `lo`/`hi`).
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    Method,
    Function,
    Predicate,
    Constructor,
}

#[derive(Clone, Debug, Default)]
pub struct ClassInfo {
    pub fields: BTreeMap<String, Type>,
}

/// A PVL local as the encoder sees it.
#[derive(Clone, Debug)]
pub struct Local {
    pub viper: String,
    pub ty: Type,
}

/// An enclosing `par` arm, for barriers and for `\old`.
#[derive(Clone, Debug)]
pub struct ParFrame {
    pub label: String,
    pub iters: Vec<String>,
    pub range: Vec<Exp>,
    pub method: String,
    pub barriers: usize,
    /// The thread variables as the PVL text names them (`iters` are their Viper names).
    pub pvl_iters: Vec<String>,
    /// Which locals of the block's body, and which conditions on the way to its barriers,
    /// may differ between threads.
    pub uniform: std::rc::Rc<analyze::uniform::Uniformity>,
}

/// One Viper method under construction.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Viper names visible in this method (parameters and locals), in declaration order.
    pub names: Vec<String>,
    pub decls: Vec<Stmt>,
}

pub struct Encoder<'a> {
    pub src: &'a SourceFile,
    pub opts: EncodeOptions,
    pub classes: HashMap<String, ClassInfo>,
    /// Keyed by (class or "", member name); overloads in declaration order.
    pub callables: HashMap<(String, String), Vec<Callable>>,
    /// Global Viper names taken (fields, members, generated methods).
    pub globals: HashSet<String>,
    /// The Viper name of each PVL field, keyed by (class, field).
    pub field_names: HashMap<(String, String), String>,

    pub out: Program,
    pub diags: Vec<Diagnostic>,
    // ---- per PVL member ----
    pub class: Option<String>,
    pub is_static: bool,
    pub scopes: Vec<HashMap<String, Local>>,
    pub vtypes: HashMap<String, Ty>,
    pub used: HashSet<String>,
    pub frames: Vec<Frame>,
    /// Encoded context_everywhere conjuncts in force (method's, then par arms').
    pub everywhere: Vec<Contract>,
    /// The method's precondition facts that hold for its whole run: they read no heap and
    /// name only parameters it never assigns (`alen(ar) >= len` of `\pointer(ar, len, p)`).
    /// Every `par` thread of the method knows them (`stmts/par.rs`).
    pub fixed_facts: Vec<Contract>,
    /// The PVL names of the current method's parameters that it never assigns.
    pub fixed_params: HashSet<String>,
    /// The `send`/`recv` statements (by span) whose par block checked them (`stmts/sendrecv.rs`).
    pub transfers_ok: HashSet<(usize, usize)>,
    /// What a VerCors 2 `recv L;` takes (by its span): the matching `send L, d: φ;`'s `φ` at
    /// the sending iteration.
    pub received: HashMap<(usize, usize), Expr>,
    /// Re-indexed quantifiers (by their text) and what they were (`quant::Fresh::record`).
    pub reindexed: HashMap<String, quant::Original>,
    pub pars: Vec<ParFrame>,
    pub method_name: String,
    pub ret: Option<Type>,
    /// The Viper return variable of the current method (`result` is reserved in Viper).
    pub ret_var: String,
    pub in_function: bool,
    /// `\old` inside a par call-site postcondition refers to this label.
    pub par_counter: usize,
    /// Named resource invariants (`invariant name(R) { … }`).
    pub invariants: HashMap<String, Expr>,
    /// Statements produced while encoding expressions (hoisted method calls).
    pub pending: Vec<Stmt>,
    /// Viper identifier → PVL name where they differ; `None` when two PVL names share it.
    pub pvl_names: BTreeMap<String, Option<String>>,
    /// PVL label → Viper label, for the labels and gotos of the current method.
    pub labels: HashMap<String, String>,
    /// PVL labels defined in the current method.
    pub defined_labels: HashMap<String, Span>,
    /// The label at the end of the current method, once an early `return` needs it.
    pub ret_label: Option<String>,
    /// Depth of `invariant`/`atomic` blocks around the current statement (no jumps out).
    pub fence: usize,
    /// Inside a barrier's body (which runs once for all threads, `barrier.rs`).
    pub in_barrier_body: bool,
    /// Inline functions being expanded (a recursive one cannot be expanded).
    pub expanding: Vec<String>,
    /// While encoding a method contract: the permission parameter that stands for `read`.
    pub read_var: Option<String>,
    /// A VerCors 2 program, read by VerCors 2's rules where the two generations differ: the
    /// injectivity of a quantified permission is checked where it is received too
    /// (`inject.rs`), and a map lookup outside the map's keys is an error (`maps.rs`).
    pub v2: bool,
    /// Classes' `lock_invariant` bodies (`locks.rs`).
    pub lock_invs: HashMap<String, Expr>,
    /// Classes whose lock invariant is a VerCors 2 class contract: shared by `commit`, not at
    /// the end of every constructor (`locks.rs`).
    pub committed_locks: HashSet<String>,
    /// Thread classes: those with a `void run()` method.
    pub runnable: HashSet<String>,
    /// Classes that get an implicit default constructor, with the span of their name.
    pub default_ctors: Vec<(String, Span)>,
    /// ADTs by PVL name (`adts.rs`).
    pub adts: HashMap<String, adts::AdtInfo>,
    /// While encoding an ADT's axioms: its name (its functions are called unqualified there).
    pub in_adt: Option<String>,
    /// The user's patterns of each quantifier being encoded, innermost last (`triggers.rs`).
    pub patterns: Vec<triggers::Patterns>,
    /// The functions made for `\sum`s so far (`sum.rs`): each with its own name replaced by
    /// `%sum`, and the name of its unrolled form, so that equal sums share them.
    pub sums: Vec<(Function, String)>,
}

pub type R<T> = Result<T, ()>;

/// The Viper prelude every encoding starts with: arrays as a domain of locations (design §5.2).
pub const PRELUDE: &str = r#"domain Arr {
  function loc(a: Arr, i: Int): Ref
  function alen(a: Arr): Int
  function loc_arr(r: Ref): Arr
  function loc_idx(r: Ref): Int
  function anull(): Arr

  axiom loc_injective {
    forall a: Arr, i: Int :: { loc(a, i) } loc_arr(loc(a, i)) == a && loc_idx(loc(a, i)) == i
  }
  axiom alen_nonneg {
    forall a: Arr :: { alen(a) } alen(a) >= 0
  }
}

field int_val: Int
field bool_val: Bool
field arr_val: Arr

function aloc(a: Arr, i: Int): Ref
  requires a != anull()
  requires 0 <= i && i < alen(a)
{ loc(a, i) }

method new_int_array(n: Int) returns (r: Arr)
  requires n >= 0
  ensures r != anull() && alen(r) == n
  ensures forall i: Int :: { aloc(r, i) } 0 <= i && i < n ==> acc(aloc(r, i).int_val, write)
  ensures forall i: Int :: { aloc(r, i) } 0 <= i && i < n ==> aloc(r, i).int_val == 0

method new_bool_array(n: Int) returns (r: Arr)
  requires n >= 0
  ensures r != anull() && alen(r) == n
  ensures forall i: Int :: { aloc(r, i) } 0 <= i && i < n ==> acc(aloc(r, i).bool_val, write)
  ensures forall i: Int :: { aloc(r, i) } 0 <= i && i < n ==> aloc(r, i).bool_val == false

method new_int_matrix(n: Int, m: Int) returns (r: Arr)
  requires n >= 0 && m >= 0
  ensures r != anull() && alen(r) == n
  ensures forall i: Int :: { aloc(r, i) } 0 <= i && i < n ==> acc(aloc(r, i).arr_val, write)
  ensures forall i: Int :: { aloc(r, i) } 0 <= i && i < n ==> aloc(r, i).arr_val != anull() && alen(aloc(r, i).arr_val) == m
  ensures forall i: Int, k: Int :: { aloc(r, i), aloc(r, k) } 0 <= i && i < n && 0 <= k && k < n && i != k ==> aloc(r, i).arr_val != aloc(r, k).arr_val
  ensures forall i: Int, k: Int :: { aloc(aloc(r, i).arr_val, k) } 0 <= i && i < n && 0 <= k && k < m ==> acc(aloc(aloc(r, i).arr_val, k).int_val, write)
  ensures forall i: Int, k: Int :: { aloc(aloc(r, i).arr_val, k) } 0 <= i && i < n && 0 <= k && k < m ==> aloc(aloc(r, i).arr_val, k).int_val == 0
"#;

impl quant::Fresh for Encoder<'_> {
    fn fresh(&mut self, base: &str) -> String {
        self.fresh_name(base)
    }
    fn uses_stride(&mut self) {
        self.use_stride();
    }
    fn record(&mut self, key: String, original: quant::Original) {
        self.reindexed.insert(key, original);
    }
    fn original(&self, key: &str) -> Option<quant::Original> {
        self.reindexed.get(key).cloned()
    }
}

impl<'a> Encoder<'a> {
    pub fn new(src: &'a SourceFile, opts: EncodeOptions) -> Encoder<'a> {
        Encoder {
            src,
            opts,
            classes: HashMap::new(),
            callables: HashMap::new(),
            globals: HashSet::new(),
            field_names: HashMap::new(),
            out: Program::default(),
            diags: Vec::new(),
            class: None,
            is_static: true,
            scopes: Vec::new(),
            vtypes: HashMap::new(),
            used: HashSet::new(),
            frames: Vec::new(),
            everywhere: Vec::new(),
            fixed_facts: Vec::new(),
            fixed_params: HashSet::new(),
            transfers_ok: HashSet::new(),
            received: HashMap::new(),
            reindexed: HashMap::new(),
            pars: Vec::new(),
            method_name: String::new(),
            ret: None,
            ret_var: "ret".into(),
            in_function: false,
            par_counter: 0,
            invariants: HashMap::new(),
            pending: Vec::new(),
            read_var: None,
            expanding: Vec::new(),
            pvl_names: BTreeMap::new(),
            labels: HashMap::new(),
            defined_labels: HashMap::new(),
            ret_label: None,
            fence: 0,
            in_barrier_body: false,
            v2: false,
            lock_invs: HashMap::new(),
            committed_locks: HashSet::new(),
            runnable: HashSet::new(),
            default_ctors: Vec::new(),
            adts: HashMap::new(),
            patterns: Vec::new(),
            in_adt: None,
            sums: Vec::new(),
        }
    }

    pub fn unsupported(&mut self, what: &str, span: Span) {
        self.diags.push(
            Diagnostic::error(
                "V-UNSUPPORTED",
                format!("{what} is not supported by the Viper encoding yet"),
            )
            .with_primary(span, "not supported by `alpine-rs verify`")
            .with_help(UNSUPPORTED_HELP),
        );
    }

    pub fn bad(&mut self, msg: impl Into<String>, span: Span) {
        let msg = msg.into();
        self.diags.push(Diagnostic::error("V-BAD-INPUT", msg.clone()).with_primary(span, msg));
    }

    /// Emit the definition of `quant::STRIDE_FN` (once), as a domain function so that it can
    /// carry, besides its definition, the fact that makes a strided receiver injective: two
    /// subscripts `c + v * k` with `0 <= c < k` are equal only when their `c` and `v` are
    /// (division with remainder is unique). Silicon cannot find that for symbolic `k` (it is
    /// non-linear), and every matrix kernel `C[row * n + col]` over a grid needs it.
    pub fn use_stride(&mut self) {
        if self.out.domains.iter().any(|d| d.starts_with(quant::STRIDE_DOMAIN_HEAD)) {
            return;
        }
        self.out.domains.push(quant::stride_domain());
    }

    // ------------------------------------------------------------------------------------------
    // Declarations
    // ------------------------------------------------------------------------------------------

    pub fn collect(&mut self, prog: &ast::Program) {
        for item in &prog.items {
            match item {
                ast::Item::Class(c) => {
                    let mut info = ClassInfo::default();
                    for m in &c.members {
                        if let ast::Member::Field(f) = m {
                            for n in &f.names {
                                info.fields.insert(n.name.clone(), f.ty.clone());
                            }
                        }
                    }
                    // Two classes of one name would silently share fields and methods (files
                    // verified with `--program` are where this happens).
                    if self.classes.insert(c.name.name.clone(), info).is_some() {
                        self.bad(format!("class `{}` is declared twice", c.name.name), c.name.span);
                    }
                    self.collect_sync(c);
                    for m in &c.members {
                        if let ast::Member::Method(m) = m {
                            self.collect_method(Some(&c.name.name), m);
                        }
                    }
                }
                ast::Item::Method(m) => self.collect_method(None, m),
                ast::Item::Adt(a) => self.collect_adt(a),
                _ => {}
            }
        }
    }

    fn collect_method(&mut self, class: Option<&str>, m: &ast::Method) {
        let is_ctor = m.kind.is_ctor();
        let kind = if is_ctor {
            CallKind::Constructor
        } else if m.is_predicate() {
            CallKind::Predicate
        } else if m.is_function() {
            CallKind::Function
        } else {
            CallKind::Method
        };
        let mut given = Vec::new();
        let mut yields = Vec::new();
        for c in &m.prefix.clauses {
            if let ast::ClauseBody::Decl(t, n) = &c.body {
                match c.kind {
                    ClauseKind::Given => given.push((n.name.clone(), t.clone())),
                    ClauseKind::Yields => yields.push((n.name.clone(), t.clone())),
                    _ => {}
                }
            }
        }
        let name = if is_ctor { "constructor" } else { &m.name.name };
        // Inline predicates and inline functions are macros, expanded at each use. VerCors
        // does the same for an inline function: its contract is neither checked nor assumed
        // (its own examples verify `ensures false; inline int f() = 3 + 3;`) and its body is
        // only required to be well-defined where it is used.
        let inline = if matches!(kind, CallKind::Predicate | CallKind::Function)
            && m.has_modifier(ast::Modifier::Inline)
        {
            match &m.body {
                MethodBody::Expr(e) => {
                    Some((m.params.iter().map(|p| p.name.name.clone()).collect(), e.clone()))
                }
                _ => None,
            }
        } else {
            None
        };
        let ret = if is_ctor {
            Type::new(TypeKind::Class(ast::Ident::synth(class.unwrap_or("")), vec![]))
        } else {
            m.ret.clone()
        };
        let mut read_locs = Vec::new();
        if kind == CallKind::Method {
            for c in m.prefix.clauses.iter().filter(|c| c.kind.is_pre()) {
                for x in c.expr().map(|e| e.conjuncts()).unwrap_or_default() {
                    if let ast::ExprKind::Builtin(ast::Builtin::Perm, args) = &x.kind {
                        if let [loc, Expr { kind: ast::ExprKind::Read, .. }] = args.as_slice() {
                            // `a[*]` is a quantifier over the elements, where `read` is a
                            // wildcard (as in `\forall*`): no amount to pass for it.
                            let all = matches!(&loc.kind, ast::ExprKind::Index(_, i)
                                if matches!(i.kind, ast::ExprKind::Wildcard));
                            if !all {
                                read_locs.push(loc.clone());
                            }
                        }
                    }
                }
            }
        }
        let key = (class.unwrap_or("").to_string(), name.to_string());
        let tys: Vec<Type> = m.params.iter().map(|p| p.ty.clone()).collect();
        if self.callables.get(&key).is_some_and(|os| os.iter().any(|o| o.params == tys)) {
            self.bad(
                format!("`{name}` is declared twice with the same parameter types"),
                m.name.span,
            );
            return;
        }
        let viper = self.global_name(self.member_name(class, name));
        self.record_name(&viper, if is_ctor { class.unwrap_or(name) } else { name });
        self.callables.entry(key).or_default().push(Callable {
            class: class.map(str::to_string),
            param_names: m.params.iter().map(|p| p.name.name.clone()).collect(),
            read_locs,
            has_body: !matches!(m.body, MethodBody::Abstract),
            viper,
            kind,
            is_static: m.has_modifier(ast::Modifier::Static) || class.is_none() || is_ctor,
            params: m.params.iter().map(|p| p.ty.clone()).collect(),
            ret,
            given,
            yields,
            inline,
            span: m.span,
        });
    }

    pub fn viper_ty(&mut self, t: &Type) -> R<Ty> {
        Ok(match &t.kind {
            TypeKind::Int => Ty::Int,
            TypeKind::Boolean | TypeKind::Bool => Ty::Bool,
            TypeKind::Frac | TypeKind::ZFrac | TypeKind::Rational => Ty::Perm,
            TypeKind::Float32 | TypeKind::Float64 => {
                self.note_float(t.span);
                Ty::Perm
            }
            TypeKind::Array(_, _) => Ty::Arr,
            TypeKind::Class(n, args) if args.is_empty() && self.adts.contains_key(&n.name) => {
                Ty::Domain(self.adts[&n.name].viper.clone())
            }
            TypeKind::Class(n, args)
                if args.is_empty() && (self.classes.contains_key(&n.name) || n.name == "ref") =>
            {
                Ty::Ref
            }
            // v2's other type words (`either<A, B>`, `type<T>`, `any`, `nothing`) and class
            // names with type arguments that generics did not resolve.
            TypeKind::Class(n, args)
                if !args.is_empty() || matches!(n.name.as_str(), "any" | "nothing") =>
            {
                self.unsupported(&format!("the type `{}`", self.src_text(t.span)), t.span);
                return Err(());
            }
            TypeKind::Class(n, _) => {
                self.bad(format!("unknown class `{}`", n.name), t.span);
                return Err(());
            }
            TypeKind::Generic1(ast::Generic1::Seq, e) => Ty::Seq(Box::new(self.viper_ty(e)?)),
            TypeKind::Generic1(ast::Generic1::Set, e) => Ty::Set(Box::new(self.viper_ty(e)?)),
            TypeKind::Generic1(ast::Generic1::Bag, e) => Ty::Multiset(Box::new(self.viper_ty(e)?)),
            // `option<T>` is a sequence of at most one element: `None` is empty, `Some(x)` is
            // `[x]`, and equality is the sequences' (see `Encoder::library_call`).
            TypeKind::Generic1(ast::Generic1::Option, e) => Ty::Seq(Box::new(self.viper_ty(e)?)),
            TypeKind::Map(k, v) => {
                Ty::Map(Box::new(self.viper_ty(k)?), Box::new(self.viper_ty(v)?))
            }
            TypeKind::Tuple(a, b) => self.tuple_ty(a, b)?,
            _ => {
                self.unsupported(&format!("the type `{}`", self.src_text(t.span)), t.span);
                return Err(());
            }
        })
    }

    pub fn src_text(&self, s: Span) -> String {
        s.text(&self.src.text).to_string()
    }

    // ------------------------------------------------------------------------------------------
    // Scopes
    // ------------------------------------------------------------------------------------------

    pub fn lookup(&self, name: &str) -> Option<&Local> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// Declare a PVL local: a fresh Viper name, hoisted to the current method's top.
    pub fn declare(&mut self, name: &str, ty: &Type, span: Span) -> R<String> {
        let Ok(vty) = self.viper_ty(ty) else {
            // Refused (V-UNSUPPORTED): still bind the name, so that its uses draw no
            // "unknown name" errors on top of the refusal.
            self.bind_name(name, name, ty);
            return Err(());
        };
        let decl = Origin::new(Role::Synthetic, Some(span));
        let v = self.new_local(name, vty, Some(decl));
        self.bind_name(name, &v, ty);
        Ok(v)
    }

    /// A fresh temporary of a Viper type in the current method.
    pub fn temp(&mut self, base: &str, ty: Ty) -> String {
        self.new_local(base, ty, Some(Origin::synthetic()))
    }

    pub fn bind_param(&mut self, name: &str, ty: &Type) -> R<(String, Ty)> {
        let vty = self.viper_ty(ty)?;
        let v = self.new_local(name, vty.clone(), None);
        self.bind_name(name, &v, ty);
        Ok((v, vty))
    }

    /// A fresh Viper variable named after `base`, of type `ty`, in the current method; with a
    /// declaration (hoisted to the method's top) from `decl` unless it is a parameter.
    fn new_local(&mut self, base: &str, ty: Ty, decl: Option<Origin>) -> String {
        let v = self.fresh_name(base);
        self.vtypes.insert(v.clone(), ty.clone());
        if let Some(f) = self.frames.last_mut() {
            f.names.push(v.clone());
            if let Some(origin) = decl {
                f.decls.push(Stmt::new(StmtKind::VarDecl(v.clone(), ty), origin));
            }
        }
        v
    }

    /// Lets the PVL name `name` (of type `ty`) stand for the Viper variable `viper` in the
    /// innermost scope.
    pub fn bind_name(&mut self, name: &str, viper: &str, ty: &Type) {
        if !viper.starts_with('%') {
            self.record_name(viper, name);
        }
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), Local { viper: viper.to_string(), ty: ty.clone() });
        }
    }

    /// `f` with a scope in which the PVL names `ps` (of types `tys`) stand for the placeholders
    /// `%p` (substituted by the caller's arguments later).
    pub fn with_placeholders<T>(
        &mut self,
        ps: &[String],
        tys: &[Type],
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        self.scopes.push(Default::default());
        for (p, t) in ps.iter().zip(tys) {
            self.bind_name(p, &format!("%{p}"), t);
        }
        let r = f(self);
        self.scopes.pop();
        r
    }

    fn reset_member(&mut self, class: Option<&str>, is_static: bool, name: &str) {
        self.class = class.map(str::to_string);
        self.is_static = is_static;
        self.scopes = vec![HashMap::new()];
        self.vtypes.clear();
        self.used.clear();
        self.frames = vec![Frame::default()];
        self.everywhere.clear();
        self.pars.clear();
        self.method_name = name.to_string();
        self.ret = None;
        self.in_function = false;
        self.par_counter = 0;
        self.invariants.clear();
        self.pending.clear();
        self.labels.clear();
        self.defined_labels.clear();
        self.ret_label = None;
        self.fence = 0;
        if !is_static {
            self.used.insert("this".into());
            self.vtypes.insert("this".into(), Ty::Ref);
            if let Some(f) = self.frames.last_mut() {
                f.names.push("this".into());
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Members
    // ------------------------------------------------------------------------------------------

    pub fn program(&mut self, prog: &ast::Program) {
        self.name_fields(prog);
        self.collect(prog);
        let fields: Vec<(String, String, Type)> = prog
            .items
            .iter()
            .filter_map(|i| match i {
                ast::Item::Class(c) => Some(c),
                _ => None,
            })
            .flat_map(|c| {
                c.members.iter().filter_map(move |m| match m {
                    ast::Member::Field(f) => Some(
                        f.names
                            .iter()
                            .map(|n| (c.name.name.clone(), n.name.clone(), f.ty.clone()))
                            .collect::<Vec<_>>(),
                    ),
                    _ => None,
                })
            })
            .flatten()
            .collect();
        for (c, f, t) in fields {
            if let Ok(vt) = self.viper_ty(&t) {
                let n = self.field_name(&c, &f);
                self.out.fields.push((n, vt));
            }
        }
        for item in &prog.items {
            match item {
                ast::Item::Class(c) => {
                    for m in &c.members {
                        if let ast::Member::Method(m) = m {
                            self.member(Some(&c.name.name), m);
                        }
                    }
                }
                ast::Item::Method(m) => self.member(None, m),
                ast::Item::Field(f) => self.unsupported("a global field", f.span),
                ast::Item::Adt(a) => self.adt_domain(a),
                ast::Item::Opaque(o) => self.unsupported(&format!("`{}`", o.keyword), o.span),
            }
        }
        self.default_constructors();
        if let Some(b) = &prog.main {
            self.unsupported("a main block", b.span);
        }
        self.out.names = std::mem::take(&mut self.pvl_names)
            .into_iter()
            .filter_map(|(v, p)| Some((v, p?)))
            .collect();
    }

    fn member(&mut self, class: Option<&str>, m: &ast::Method) {
        if m.is_operator() {
            self.unsupported(&format!("the operator method `{}`", m.name.name), m.name.span);
            return;
        }
        if m.has_modifier(ast::Modifier::BipAnnotation) {
            self.unsupported("a `bip_annotation` member", m.name.span);
            return;
        }
        let is_ctor = m.kind.is_ctor();
        let key_name = if is_ctor { "constructor" } else { m.name.name.as_str() };
        let Some(info) = self
            .callables
            .get(&(class.unwrap_or("").to_string(), key_name.to_string()))
            .and_then(|os| os.iter().find(|o| (o.span.lo, o.span.hi) == (m.span.lo, m.span.hi)))
            .cloned()
        else {
            return;
        };
        // A constructor binds `this` itself (as its return value).
        self.reset_member(class, info.is_static, key_name);
        let before = self.diags.len();
        let r = match info.kind {
            CallKind::Function if info.inline.is_some() => Ok(()),
            CallKind::Function => self.function(m, &info),
            CallKind::Predicate => {
                if info.inline.is_some() {
                    Ok(())
                } else {
                    self.predicate(m, &info)
                }
            }
            CallKind::Method | CallKind::Constructor => self.method(m, &info, is_ctor),
        };
        if r.is_err() && self.diags.len() == before {
            self.diags.push(
                Diagnostic::error("E-INTERNAL", "the encoder failed without a diagnostic")
                    .with_primary(m.name.span, "while encoding this member"),
            );
        }
    }

    /// The Viper parameters of a member: `this` (unless static), then its own, bound in scope.
    fn params(&mut self, m: &ast::Method, info: &Callable) -> R<Vec<(String, Ty)>> {
        let mut params = Vec::new();
        if !info.is_static {
            params.push(("this".to_string(), Ty::Ref));
        }
        for p in &m.params {
            params.push(self.bind_param(&p.name.name, &p.ty)?);
        }
        Ok(params)
    }

    fn method(&mut self, m: &ast::Method, info: &Callable, is_ctor: bool) -> R<()> {
        let mut params = self.params(m, info)?;
        for (g, t) in &info.given {
            params.push(self.bind_param(g, t)?);
        }
        let mut returns = Vec::new();
        if is_ctor {
            self.used.insert("this".into());
            self.vtypes.insert("this".into(), Ty::Ref);
            if let Some(f) = self.frames.last_mut() {
                f.names.push("this".into());
            }
            returns.push(("this".to_string(), Ty::Ref));
            self.is_static = false;
        } else if !matches!(m.ret.kind, TypeKind::Void) {
            let t = self.viper_ty(&m.ret)?;
            let rv = self.fresh_name("ret");
            self.vtypes.insert(rv.clone(), t.clone());
            self.ret_var = rv.clone();
            returns.push((rv, t));
            self.ret = Some(m.ret.clone());
        }
        for (y, t) in &info.yields {
            returns.push(self.bind_param(y, t)?);
        }
        if !info.read_locs.is_empty() {
            let rd = self.fresh_name("rd");
            self.vtypes.insert(rd.clone(), Ty::Perm);
            params.push((rd.clone(), Ty::Perm));
            self.read_var = Some(rd);
        }
        let contract = self.method_contract(m, Role::Pre, Role::Post);
        let rd = self.read_var.take();
        let (mut pres, mut posts) = contract?;
        if is_ctor {
            self.ctor_posts(m.name.span, &mut posts);
        }
        if let Some(rd) = &rd {
            pres.insert(
                0,
                Contract {
                    exp: Exp::bin("<", Exp::synth(ExpKind::NoPerm), Exp::var(rd)),
                    origin: Origin::new(Role::Pre, Some(m.name.span)),
                },
            );
        }
        let body = match &m.body {
            MethodBody::Block(b) => {
                let mut out = Vec::new();
                if is_ctor {
                    let class = self.class.clone().unwrap_or_default();
                    let fields: Vec<String> = self
                        .classes
                        .get(&class)
                        .map(|c| c.fields.keys().map(|f| self.field_name(&class, f)).collect())
                        .unwrap_or_default();
                    out.push(Stmt::new(StmtKind::New("this".into(), fields), Origin::synthetic()));
                    self.ctor_prologue(&mut out);
                } else if !info.is_static {
                    // A call on `null` throws before the body runs: in the body, `this` is an
                    // object (callers are not asked to prove it, as in VerCors).
                    let nonnull = Exp::bin("!=", Exp::var("this"), Exp::synth(ExpKind::Null));
                    out.push(Stmt::new(StmtKind::Inhale(nonnull), Origin::synthetic()));
                }
                self.copy_assigned_params(m, b, &mut out)?;
                let stmts = self.block(b, true)?;
                out.extend(stmts);
                if is_ctor {
                    self.ctor_epilogue(m.name.span, &mut out)?;
                }
                let frame = self.frames.pop().unwrap_or_default();
                let mut all = frame.decls;
                all.extend(out);
                self.finish_jumps(&mut all)?;
                Some(all)
            }
            MethodBody::Abstract => None,
            MethodBody::Expr(e) => {
                self.unsupported("a non-pure method defined by an expression", e.span);
                return Err(());
            }
        };
        if info.kind == CallKind::Method {
            self.thread_methods(m, &info.viper, &params, rd.as_deref(), &pres, &posts)?;
        }
        self.out.methods.push(Method {
            name: info.viper.clone(),
            params,
            returns,
            pres,
            posts,
            body,
            kind: MethodKind::Pvl,
            span: Some(m.name.span),
        });
        Ok(())
    }

    /// Split a contract expression into encoded conjuncts with their PVL spans. A conditional
    /// between resources is split into two guarded conjuncts.
    pub fn conjuncts(&mut self, e: &Expr, _clause: Span) -> R<Vec<(Exp, Span)>> {
        let mut out = Vec::new();
        let mut ok = true;
        for c in e.conjuncts() {
            match self.spec(c) {
                Ok(x) => split_conj(x, c.span, &mut out),
                Err(()) => ok = false,
            }
        }
        if ok {
            Ok(out)
        } else {
            Err(())
        }
    }
}

/// Split `a && b` (after encoding, e.g. of `\array`) and resource conditionals.
fn split_conj(x: Exp, span: Span, out: &mut Vec<(Exp, Span)>) {
    match x.kind {
        ExpKind::Binary("&&", a, b) if x.span.is_none() || a.has_acc() || b.has_acc() => {
            split_conj(*a, span, out);
            split_conj(*b, span, out);
        }
        ExpKind::Cond(c, a, b) if a.has_acc() || b.has_acc() => {
            out.push((Exp::implies((*c).clone(), *a), span));
            out.push((Exp::implies(Exp::negate(*c), *b), span));
        }
        ExpKind::Binary("==>", g, body)
            if body.has_acc() && matches!(body.kind, ExpKind::Binary("&&", ..)) =>
        {
            let mut parts = Vec::new();
            split_conj(*body, span, &mut parts);
            for (p, s) in parts {
                out.push((Exp::implies((*g).clone(), p), s));
            }
        }
        k => out.push((Exp { kind: k, span: x.span }, span)),
    }
}

/// What a refusal of a construct tells the user.
const UNSUPPORTED_HELP: &str =
    "alpine-rs does not encode this construct: express it with the ones it does \
     (docs/verification.md, docs/commands/verify.md), or verify this program with VerCors itself";

/// Encode a parsed program.
pub fn encode_program(
    prog: &ast::Program,
    src: &SourceFile,
    opts: EncodeOptions,
) -> Result<Program, Vec<Diagnostic>> {
    // v2 generics: instances first, so that nothing below sees a type parameter.
    let mono = analyze::generics::monomorphise(prog).map_err(|ps| {
        ps.into_iter()
            .map(|(what, span)| {
                Diagnostic::error(
                    "V-UNSUPPORTED",
                    format!("{what} is not supported by the Viper encoding yet"),
                )
                .with_primary(span, "not supported by `alpine-rs verify`")
                .with_help(UNSUPPORTED_HELP)
            })
            .collect::<Vec<_>>()
    })?;
    let prog = mono.as_ref().unwrap_or(prog);
    // A declaration kept as text (a `model`, a `prover_type`, a choreography) is refused by
    // name, and alone: what uses it would only be reported as unknown names after it.
    let opaque: Vec<Diagnostic> = prog
        .items
        .iter()
        .filter_map(|i| match i {
            ast::Item::Opaque(o) => Some(
                Diagnostic::error(
                    "V-UNSUPPORTED",
                    format!("`{}` is not supported by the Viper encoding yet", o.keyword),
                )
                .with_primary(o.span, "not supported by `alpine-rs verify`")
                .with_help(UNSUPPORTED_HELP),
            ),
            _ => None,
        })
        .collect();
    if !opaque.is_empty() {
        return Err(opaque);
    }
    let generated = analyze::genperms::generate(prog, opts.gen_perms);
    let prog = generated.as_ref().unwrap_or(prog);
    // Resolution and types first: an ill-typed program is the user's error (exit 2), and
    // encoding it would hand Silicon an ill-typed Viper program (our error).
    let (ds, core) = analyze::typeck::check_members(prog);
    if ds.iter().any(|d| d.is_error()) {
        return Err(ds);
    }
    // The value types' built-in members (`xs.head`, `m.keys`) in their core form.
    let prog = core.as_ref().unwrap_or(prog);
    let no_sat = opts.no_sat;
    let v2 = opts.v2 || core.is_some();
    let mut enc = Encoder::new(src, opts);
    enc.v2 = v2;
    enc.program(prog);
    if enc.diags.iter().any(|d| d.is_error()) {
        return Err(enc.diags);
    }
    if !no_sat {
        let checks = sat::checks(&enc.out.methods);
        enc.out.methods.extend(checks);
    }
    if products::wrap_sizes(&mut enc.out) {
        enc.use_stride();
    }
    Ok(enc.out)
}
