//! VerCors 2 generics by monomorphisation: `class Box<T>` used as `Box<int>` becomes a class
//! `Box__int` with `T` replaced by `int`; a generic method `count<T>` called as `count<int>(…)`
//! becomes `count__int`; a generic `adt Pair<A, B>` used as `Pair<int, boolean>` (a type, or a
//! call `Pair<int, boolean>.mk(…)`) becomes the ADT `Pair__int__boolean`. Both oracles (the Viper encoder and the interpreter) run on the result,
//! so neither needs a notion of type parameters; spans are kept, so diagnostics point into the
//! generic definition the user wrote.
//!
//! What this does not handle is reported, never dropped: a generic method called without type
//! arguments (no inference), a generic class used without them, and instantiations that keep
//! growing (`Box<Box<T>>` inside `Box<T>`).

use front::ast::*;
use front::span::Span;
use std::collections::{HashMap, HashSet};

/// Instantiations beyond this many mean polymorphic recursion (`f<seq<T>>` inside `f<T>`).
const MAX_INSTANCES: usize = 64;

/// A construct the monomorphisation cannot handle, with where it stands.
pub type Problem = (String, Span);

/// Does the program declare anything generic?
pub fn has_generics(prog: &Program) -> bool {
    prog.items.iter().any(|i| match i {
        Item::Class(c) => {
            !c.type_params.is_empty()
                || c.members
                    .iter()
                    .any(|m| matches!(m, Member::Method(m) if !m.type_params.is_empty()))
        }
        Item::Method(m) => !m.type_params.is_empty(),
        Item::Adt(a) => !a.type_params.is_empty(),
        _ => false,
    })
}

/// The program with every generic class and method replaced by its instantiations; `Ok(None)`
/// when it has nothing generic.
pub fn monomorphise(prog: &Program) -> Result<Option<Program>, Vec<Problem>> {
    if !has_generics(prog) {
        return Ok(None);
    }
    let mut m = Mono::default();
    for item in &prog.items {
        match item {
            Item::Class(c) if !c.type_params.is_empty() => {
                m.classes.insert(c.name.name.clone(), c.clone());
            }
            Item::Class(c) => {
                for mem in &c.members {
                    if let Member::Method(md) = mem {
                        if !md.type_params.is_empty() {
                            m.methods.insert(
                                (Some(c.name.name.clone()), md.name.name.clone()),
                                md.clone(),
                            );
                        }
                    }
                }
            }
            Item::Method(md) if !md.type_params.is_empty() => {
                m.methods.insert((None, md.name.name.clone()), md.clone());
            }
            Item::Adt(a) if !a.type_params.is_empty() => {
                m.adts.insert(a.name.name.clone(), a.clone());
            }
            _ => {}
        }
    }
    // The non-generic part, with uses of instantiations renamed (and queued).
    let mut items = Vec::new();
    for item in &prog.items {
        match item {
            Item::Class(c) if !c.type_params.is_empty() => {}
            Item::Class(c) => {
                let mut c = c.clone();
                c.members
                    .retain(|mem| !matches!(mem, Member::Method(md) if !md.type_params.is_empty()));
                m.rename_class(&mut c, &HashMap::new());
                items.push(Item::Class(c));
            }
            Item::Method(md) if !md.type_params.is_empty() => {}
            Item::Method(md) => {
                let mut md = md.clone();
                m.rename_method(&mut md, None, &HashMap::new());
                items.push(Item::Method(md));
            }
            Item::Adt(a) if !a.type_params.is_empty() => {}
            Item::Adt(a) => {
                let mut a = a.clone();
                m.rename_adt(&mut a, &HashMap::new());
                items.push(Item::Adt(a));
            }
            other => items.push(other.clone()),
        }
    }
    let main = prog.main.clone().map(|mut b| {
        m.rename_block(&mut b, None, &HashMap::new());
        b
    });
    // Instantiate until nothing new is asked for. Generic code that the program never
    // instantiates is verified once for abstract types (a Viper domain per type parameter, of
    // which nothing is known): what holds for an arbitrary type holds for every instance, as
    // VerCors verifies generic code itself. Nothing generic is dropped unchecked.
    let mut extra_members: HashMap<String, Vec<Member>> = HashMap::new();
    let mut abstract_types: Vec<String> = Vec::new();
    loop {
        while let Some(job) = m.queue.pop() {
            if m.done.len() > MAX_INSTANCES {
                m.problems.push((
                    "generic instantiations that keep growing (polymorphic recursion)".into(),
                    job.span,
                ));
                break;
            }
            match job.kind {
                JobKind::Class => {
                    m.used_types.insert(job.name.clone());
                    let Some(generic) = m.classes.get(&job.name).cloned() else { continue };
                    let subst = bind(&generic.type_params, &job.args);
                    let mut c = generic;
                    c.name.name = job.mangled.clone();
                    c.type_params.clear();
                    for mem in &mut c.members {
                        if let Member::Method(md) = mem {
                            if md.kind == MethodKind::CtorV1 {
                                md.name.name = job.mangled.clone();
                            }
                        }
                    }
                    // Generic methods of the instance are instantiated on demand, like any other.
                    let (generic_methods, rest): (Vec<_>, Vec<_>) =
                        c.members.into_iter().partition(
                            |mem| matches!(mem, Member::Method(md) if !md.type_params.is_empty()),
                        );
                    c.members = rest;
                    for gm in generic_methods {
                        if let Member::Method(mut md) = gm {
                            m.subst_method_types(&mut md, &subst);
                            m.methods.insert((Some(job.mangled.clone()), md.name.name.clone()), md);
                        }
                    }
                    m.rename_class(&mut c, &subst);
                    items.push(Item::Class(c));
                }
                JobKind::Adt => {
                    m.used_types.insert(job.name.clone());
                    let Some(generic) = m.adts.get(&job.name).cloned() else { continue };
                    let subst = bind(&generic.type_params, &job.args);
                    let mut a = generic;
                    a.name.name = job.mangled.clone();
                    a.type_params.clear();
                    m.rename_adt(&mut a, &subst);
                    items.push(Item::Adt(a));
                }
                JobKind::Method(owner) => {
                    m.used_methods.insert((owner.clone(), job.name.clone()));
                    let Some(generic) = m.methods.get(&(owner.clone(), job.name.clone())).cloned()
                    else {
                        continue;
                    };
                    let subst = bind(&generic.type_params, &job.args);
                    let mut md = generic;
                    md.name.name = job.mangled.clone();
                    md.type_params.clear();
                    m.rename_method(&mut md, owner.as_deref(), &subst);
                    match owner {
                        None => items.push(Item::Method(md)),
                        Some(c) => extra_members.entry(c).or_default().push(Member::Method(md)),
                    }
                }
            }
        }
        if !m.problems.is_empty() || !m.queue_unused(&mut abstract_types) {
            break;
        }
    }
    for t in &abstract_types {
        items.push(Item::Adt(abstract_adt(t)));
    }
    for item in &mut items {
        if let Item::Class(c) = item {
            if let Some(ms) = extra_members.remove(&c.name.name) {
                c.members.extend(ms);
            }
        }
    }
    // A generic body is checked through its instances only: one that has none (possible only
    // when instantiation stopped at a problem) is reported, never dropped unverified.
    let mut unused: Vec<Problem> = Vec::new();
    let generic_types = m.classes.values().map(|c| ("class", &c.name));
    for (what, name) in generic_types.chain(m.adts.values().map(|a| ("adt", &a.name))) {
        if !m.used_types.contains(&name.name) {
            unused.push((
                format!(
                    "the generic {what} `{}` with no instance (`{}<int>`, …) in the program",
                    name.name, name.name
                ),
                name.span,
            ));
        }
    }
    for (key, md) in &m.methods {
        if !m.used_methods.contains(key) {
            let name = &key.1;
            unused.push((
                format!("the generic method `{name}` with no call `{name}<…>(…)` in the program"),
                md.name.span,
            ));
        }
    }
    m.problems.extend(unused);
    if !m.problems.is_empty() {
        m.problems.sort_by_key(|(_, s)| (s.lo, s.hi));
        m.problems.dedup();
        return Err(m.problems);
    }
    Ok(Some(Program { items, main, span: prog.span, memo: Memo::default() }))
}

fn bind(params: &[Ident], args: &[Type]) -> HashMap<String, Type> {
    params.iter().zip(args).map(|(p, a)| (p.name.clone(), a.clone())).collect()
}

enum JobKind {
    Class,
    Adt,
    /// A method of this class (`None`: a global method).
    Method(Option<String>),
}

struct Job {
    kind: JobKind,
    name: String,
    args: Vec<Type>,
    mangled: String,
    span: Span,
}

#[derive(Default)]
struct Mono {
    classes: HashMap<String, Class>,
    adts: HashMap<String, Adt>,
    methods: HashMap<(Option<String>, String), Method>,
    /// Mangled names already queued.
    done: HashSet<String>,
    /// Generic classes and ADTs, and generic methods (by owner), with an instance.
    used_types: HashSet<String>,
    used_methods: HashSet<(Option<String>, String)>,
    queue: Vec<Job>,
    problems: Vec<Problem>,
}

/// An identifier-safe rendering of a type, for instance names: `seq<int>` is `seq_int`.
fn mangle(t: &Type) -> String {
    match &t.kind {
        TypeKind::Int => "int".into(),
        TypeKind::Boolean | TypeKind::Bool => "boolean".into(),
        TypeKind::Void => "void".into(),
        TypeKind::String => "string".into(),
        TypeKind::Resource => "resource".into(),
        TypeKind::Process => "process".into(),
        TypeKind::Frac => "frac".into(),
        TypeKind::ZFrac => "zfrac".into(),
        TypeKind::Rational => "rational".into(),
        TypeKind::Float32 => "float32".into(),
        TypeKind::Float64 => "float64".into(),
        TypeKind::Char => "char".into(),
        TypeKind::Generic1(g, x) => format!("{}_{}", format!("{g:?}").to_lowercase(), mangle(x)),
        TypeKind::Map(a, b) => format!("map_{}_{}", mangle(a), mangle(b)),
        TypeKind::Tuple(a, b) => format!("tuple_{}_{}", mangle(a), mangle(b)),
        TypeKind::Vector(a, n) => {
            format!("vector_{}_{}", mangle(a), n.as_ref().map_or(String::new(), |n| n.to_string()))
        }
        TypeKind::Class(n, args) => {
            let mut s = n.name.clone();
            for a in args {
                s.push('_');
                s.push_str(&mangle(a));
            }
            s
        }
        TypeKind::Array(x, _) => format!("{}_array", mangle(x)),
    }
}

fn instance_name(base: &str, args: &[Type]) -> String {
    let mut s = base.to_string();
    for a in args {
        s.push_str("__");
        s.push_str(&mangle(a));
    }
    s
}

/// The name of the abstract type that stands for type parameter `p` in generic code the
/// program never instantiates (`__` keeps it apart from the program's names, like instances').
fn abstract_name(p: &str) -> String {
    format!("{p}__abstract")
}

/// The Viper domain of an abstract type: no function, no axiom.
fn abstract_adt(name: &str) -> Adt {
    Adt {
        name: Ident::synth(name),
        type_params: Vec::new(),
        functions: Vec::new(),
        axioms: Vec::new(),
        is_enum: false,
        text: format!("adt {name} {{}}"),
        span: Span::DUMMY,
    }
}

impl Mono {
    /// Queue an instance over abstract types of every generic class, ADT and method that has
    /// none (`types` collects the abstract types used); whether anything was queued.
    fn queue_unused(&mut self, types: &mut Vec<String>) -> bool {
        let mut args_of = |params: &[Ident]| -> Vec<Type> {
            params
                .iter()
                .map(|p| {
                    let n = abstract_name(&p.name);
                    if !types.contains(&n) {
                        types.push(n.clone());
                    }
                    Type::new(TypeKind::Class(Ident::synth(n), Vec::new()))
                })
                .collect()
        };
        let mut jobs = Vec::new();
        let mut names: Vec<&String> = self.classes.keys().collect();
        names.sort();
        for n in names.into_iter().filter(|n| !self.used_types.contains(*n)) {
            let c = &self.classes[n];
            jobs.push((JobKind::Class, n.clone(), args_of(&c.type_params), c.name.span));
        }
        let mut names: Vec<&String> = self.adts.keys().collect();
        names.sort();
        for n in names.into_iter().filter(|n| !self.used_types.contains(*n)) {
            let a = &self.adts[n];
            jobs.push((JobKind::Adt, n.clone(), args_of(&a.type_params), a.name.span));
        }
        let mut keys: Vec<&(Option<String>, String)> = self.methods.keys().collect();
        keys.sort();
        for k in keys.into_iter().filter(|k| !self.used_methods.contains(*k)) {
            let md = &self.methods[k];
            let args = args_of(&md.type_params);
            jobs.push((JobKind::Method(k.0.clone()), k.1.clone(), args, md.name.span));
        }
        let queued = !jobs.is_empty();
        for (kind, name, args, span) in jobs {
            // Marked now, so that an instance that is already queued is not asked for again.
            match &kind {
                JobKind::Method(owner) => self.used_methods.insert((owner.clone(), name.clone())),
                _ => self.used_types.insert(name.clone()),
            };
            self.queue(kind, &name, args, span);
        }
        queued
    }

    fn queue(&mut self, kind: JobKind, name: &str, args: Vec<Type>, span: Span) -> String {
        let mangled = instance_name(name, &args);
        // Methods of two classes may share a name: an instance is one per owner.
        let key = match &kind {
            JobKind::Method(Some(owner)) => format!("{owner}.{mangled}"),
            _ => mangled.clone(),
        };
        if self.done.insert(key) {
            self.queue.push(Job {
                kind,
                name: name.to_string(),
                args,
                mangled: mangled.clone(),
                span,
            });
        }
        mangled
    }

    /// An ADT's signatures and axioms with its type parameters replaced (and uses of generic
    /// things renamed).
    fn rename_adt(&mut self, a: &mut Adt, subst: &HashMap<String, Type>) {
        let mut r = Renamer { mono: self, subst, owner: None, rename: true };
        for f in &mut a.functions {
            r.ty(&mut f.ret);
            for p in &mut f.params {
                r.ty(&mut p.ty);
            }
        }
        a.axioms.iter_mut().for_each(|x| r.expr(x));
    }

    fn rename_class(&mut self, c: &mut Class, subst: &HashMap<String, Type>) {
        let owner = c.name.name.clone();
        for mem in &mut c.members {
            match mem {
                Member::Field(f) => self.ty(&mut f.ty, subst),
                Member::Method(md) => self.rename_method(md, Some(&owner), subst),
            }
        }
    }

    /// Replace the class's type parameters in a generic method's signature and body, leaving
    /// its own type parameters (and uses of generic things) for its instantiation.
    fn subst_method_types(&mut self, md: &mut Method, subst: &HashMap<String, Type>) {
        let mut inner = subst.clone();
        for tp in &md.type_params {
            inner.remove(&tp.name);
        }
        let mut r = Renamer { mono: self, subst: &inner, owner: None, rename: false };
        r.method(md);
    }

    fn rename_method(
        &mut self,
        md: &mut Method,
        owner: Option<&str>,
        subst: &HashMap<String, Type>,
    ) {
        let mut r = Renamer { mono: self, subst, owner, rename: true };
        r.method(md);
    }

    fn rename_block(&mut self, b: &mut Block, owner: Option<&str>, subst: &HashMap<String, Type>) {
        let mut r = Renamer { mono: self, subst, owner, rename: true };
        b.stmts.iter_mut().for_each(|s| r.stmt(s));
    }

    fn ty(&mut self, t: &mut Type, subst: &HashMap<String, Type>) {
        let mut r = Renamer { mono: self, subst, owner: None, rename: true };
        r.ty(t);
    }

    /// The generic method a call names: of the calling class (or global) without a receiver,
    /// the only generic method of that name with one.
    fn find_method(
        &self,
        owner: Option<&str>,
        name: &str,
        has_recv: bool,
    ) -> Option<Option<String>> {
        if !has_recv {
            let own = (owner.map(str::to_string), name.to_string());
            if self.methods.contains_key(&own) {
                return Some(own.0);
            }
            let global = (None, name.to_string());
            return self.methods.contains_key(&global).then_some(None);
        }
        let mut owners = self.methods.keys().filter(|(_, n)| n == name).map(|(o, _)| o.clone());
        let first = owners.next()?;
        owners.next().is_none().then_some(first)
    }
}

/// One pass over a member: type parameters substituted (`subst`, already in instance form)
/// and, with `rename`, uses of generic classes and methods replaced by their instances.
struct Renamer<'a, 'm> {
    mono: &'m mut Mono,
    subst: &'a HashMap<String, Type>,
    owner: Option<&'a str>,
    rename: bool,
}

impl Renamer<'_, '_> {
    fn method(&mut self, md: &mut Method) {
        self.ty(&mut md.ret);
        for p in &mut md.params {
            self.ty(&mut p.ty);
        }
        self.clauses(&mut md.prefix.clauses);
        match &mut md.body {
            MethodBody::Block(b) => b.stmts.iter_mut().for_each(|s| self.stmt(s)),
            MethodBody::Expr(e) => self.expr(e),
            MethodBody::Abstract => {}
        }
    }

    fn clauses(&mut self, cs: &mut [Clause]) {
        for c in cs {
            match &mut c.body {
                ClauseBody::Expr(e) => self.expr(e),
                ClauseBody::Decl(t, _) => self.ty(t),
                ClauseBody::List(es) => es.iter_mut().for_each(|e| self.expr(e)),
                ClauseBody::Signals(t, _, e) => {
                    self.ty(t);
                    self.expr(e);
                }
                ClauseBody::DecreasesAssume => {}
            }
        }
    }

    fn ty(&mut self, t: &mut Type) {
        match &mut t.kind {
            TypeKind::Generic1(_, x) | TypeKind::Vector(x, _) => self.ty(x),
            TypeKind::Map(a, b) | TypeKind::Tuple(a, b) => {
                self.ty(a);
                self.ty(b);
            }
            TypeKind::Class(_, args) => args.iter_mut().for_each(|a| self.ty(a)),
            TypeKind::Array(x, size) => {
                self.ty(x);
                if let Some(s) = size {
                    self.expr(s);
                }
            }
            _ => {}
        }
        let TypeKind::Class(name, args) = &t.kind else { return };
        if args.is_empty() {
            if let Some(s) = self.subst.get(&name.name) {
                let span = t.span;
                *t = s.clone();
                t.span = span;
            } else if self.rename && self.mono.classes.contains_key(&name.name) {
                self.mono.problems.push((
                    format!("the generic class `{}` used without type arguments", name.name),
                    t.span,
                ));
            } else if self.rename && self.mono.adts.contains_key(&name.name) {
                self.mono.problems.push((
                    format!("the generic adt `{}` used without type arguments", name.name),
                    t.span,
                ));
            }
            return;
        }
        let kind = if self.mono.classes.contains_key(&name.name) {
            JobKind::Class
        } else if self.mono.adts.contains_key(&name.name) {
            JobKind::Adt
        } else {
            return;
        };
        if !self.rename {
            return;
        }
        let (base, args) = (name.name.clone(), args.clone());
        let mangled = self.mono.queue(kind, &base, args, t.span);
        t.kind = TypeKind::Class(Ident::new(&mangled, name.span), Vec::new());
    }

    fn block(&mut self, b: &mut Block) {
        b.stmts.iter_mut().for_each(|s| self.stmt(s));
    }

    fn stmt(&mut self, s: &mut Stmt) {
        match &mut s.kind {
            StmtKind::Block(b) => self.block(b),
            StmtKind::Decl { ty, vars } => {
                self.ty(ty);
                for d in vars {
                    if let Some(e) = &mut d.init {
                        self.expr(e);
                    }
                }
            }
            StmtKind::Assign { target, value } | StmtKind::CompoundAssign { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            StmtKind::IncDec { target, .. } => self.expr(target),
            StmtKind::Expr(e) | StmtKind::Spec { expr: e, .. } | StmtKind::Return(Some(e)) => {
                self.expr(e)
            }
            StmtKind::If { cond, then, els } => {
                self.expr(cond);
                self.stmt(then);
                if let Some(e) = els {
                    self.stmt(e);
                }
            }
            StmtKind::While(l) | StmtKind::For(l) => {
                self.clauses(&mut l.prefix.clauses);
                l.init.iter_mut().for_each(|x| self.stmt(x));
                if let Some(c) = &mut l.cond {
                    self.expr(c);
                }
                l.update.iter_mut().for_each(|x| self.stmt(x));
                self.stmt(&mut l.body);
            }
            StmtKind::RangedFor { prefix, ty, lo, hi, body, .. } => {
                self.clauses(&mut prefix.clauses);
                self.ty(ty);
                self.expr(lo);
                self.expr(hi);
                self.stmt(body);
            }
            StmtKind::Par(p) => self.par(p),
            StmtKind::Parallel { body, .. } => body.iter_mut().for_each(|x| self.stmt(x)),
            StmtKind::Barrier(b) => {
                self.clauses(&mut b.contract);
                if let Some(body) = &mut b.body {
                    self.block(body);
                }
            }
            StmtKind::Invariant { resource, body, .. } => {
                self.expr(resource);
                self.block(body);
            }
            StmtKind::Atomic { body, .. } => self.block(body),
            StmtKind::Vec { iter, body } => {
                self.iter(iter);
                self.block(body);
            }
            StmtKind::Ghost(inner) => self.stmt(inner),
            StmtKind::Return(None) | StmtKind::Annotation(_) | StmtKind::Opaque(_) => {}
        }
    }

    fn par(&mut self, p: &mut Par) {
        self.clauses(&mut p.prefix.clauses);
        for a in &mut p.arms {
            a.iters.iter_mut().for_each(|it| self.iter(it));
            self.clauses(&mut a.contract);
            self.stmt(&mut a.body);
        }
    }

    fn iter(&mut self, it: &mut Iter) {
        self.ty(&mut it.ty);
        self.expr(&mut it.lo);
        self.expr(&mut it.hi);
    }

    fn ghost(&mut self, g: &mut GhostArgs) {
        g.type_args.iter_mut().for_each(|t| self.ty(t));
        if let Some(b) = &mut g.with {
            self.block(b);
        }
        if let Some(b) = &mut g.then {
            self.block(b);
        }
        g.given.iter_mut().for_each(|(_, e)| self.expr(e));
    }

    fn expr(&mut self, e: &mut Expr) {
        use ExprKind as K;
        match &mut e.kind {
            K::Unary(_, x) | K::Length(x) | K::Field(x, _) | K::Old(x, _) | K::Trigger(_, x) => {
                self.expr(x)
            }
            K::Labelled(_, x) => self.expr(x),
            K::Binary(_, a, b)
            | K::Unfolding(a, b)
            | K::Scale(a, b)
            | K::Range(_, a, b)
            | K::Index(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            K::TupleLit(t, a, b) => {
                self.ty(t);
                self.expr(a);
                self.expr(b);
            }
            K::Cond(a, b, c) | K::SeqUpdate(a, b, c) => {
                self.expr(a);
                self.expr(b);
                self.expr(c);
            }
            K::Slice(x, a, b) => {
                self.expr(x);
                for y in [a, b].into_iter().flatten() {
                    self.expr(y);
                }
            }
            K::Call { recv, args, ghost, .. } => {
                if let Some(r) = recv {
                    self.expr(r);
                }
                args.iter_mut().for_each(|a| self.expr(a));
                self.ghost(ghost);
            }
            K::NewObject(_, args, ghost) => {
                args.iter_mut().for_each(|a| self.expr(a));
                self.ghost(ghost);
            }
            K::Builtin(_, args) | K::Tuple(args) => args.iter_mut().for_each(|a| self.expr(a)),
            K::NewArray(t, dims) => {
                self.ty(t);
                dims.iter_mut().for_each(|a| self.expr(a));
            }
            K::Collection { elem_ty, elems, .. } => {
                if let Some(t) = elem_ty {
                    self.ty(t);
                }
                elems.iter_mut().for_each(|a| self.expr(a));
            }
            K::EmptyCollection(_, t) => self.ty(t),
            K::MapLit { key_ty, val_ty, entries } => {
                self.ty(key_ty);
                self.ty(val_ty);
                for (k, v) in entries {
                    self.expr(k);
                    self.expr(v);
                }
            }
            K::SetComprehension(c) => {
                self.ty(&mut c.elem_ty);
                self.expr(&mut c.body);
                for g in &mut c.gens {
                    self.ty(&mut g.ty);
                    if let Some(s) = &mut g.source {
                        self.expr(s);
                    }
                }
                if let Some(x) = &mut c.cond {
                    self.expr(x);
                }
            }
            K::Quant { bindings, cond, body, .. } => {
                for b in bindings {
                    self.ty(&mut b.ty);
                    if let Some((lo, hi)) = &mut b.range {
                        self.expr(lo);
                        self.expr(hi);
                    }
                }
                if let Some(c) = cond {
                    self.expr(c);
                }
                self.expr(body);
            }
            K::Let { ty, value, body, .. } | K::Sum { ty, cond: value, body, .. } => {
                self.ty(ty);
                self.expr(value);
                self.expr(body);
            }
            _ => {}
        }
        if !self.rename {
            return;
        }
        // Instances of generic classes and methods at their uses.
        match &mut e.kind {
            K::NewObject(name, _, ghost) if self.mono.classes.contains_key(&name.name) => {
                if ghost.type_args.is_empty() {
                    self.mono.problems.push((
                        format!("`new {}` without type arguments (a generic class)", name.name),
                        e.span,
                    ));
                    return;
                }
                let args = std::mem::take(&mut ghost.type_args);
                let mangled = self.mono.queue(JobKind::Class, &name.name, args, e.span);
                name.name = mangled;
            }
            // `Pair<int, boolean>.mk(…)`: the type arguments are the ADT's.
            K::Call { recv: Some(r), name, ghost, .. } if matches!(&r.kind, K::Name(a) if self.mono.adts.contains_key(&a.name)) =>
            {
                let K::Name(a) = &mut r.kind else { return };
                if ghost.type_args.is_empty() {
                    self.mono.problems.push((
                        format!(
                            "a call of `{}.{}` without type arguments (write `{}<T>.{}(…)`)",
                            a.name, name.name, a.name, name.name
                        ),
                        e.span,
                    ));
                    return;
                }
                let args = std::mem::take(&mut ghost.type_args);
                a.name = self.mono.queue(JobKind::Adt, &a.name, args, e.span);
            }
            K::Call { recv, name, ghost, .. } => {
                let Some(owner) = self.mono.find_method(self.owner, &name.name, recv.is_some())
                else {
                    if !ghost.type_args.is_empty() {
                        self.mono.problems.push((
                            format!(
                                "type arguments on a call of `{}`, which is not generic",
                                name.name
                            ),
                            e.span,
                        ));
                    }
                    return;
                };
                if ghost.type_args.is_empty() {
                    self.mono.problems.push((
                        format!(
                            "a call of the generic method `{}` without type arguments (write `{}<T>(…)`)",
                            name.name, name.name
                        ),
                        e.span,
                    ));
                    return;
                }
                let args = std::mem::take(&mut ghost.type_args);
                let mangled = self.mono.queue(JobKind::Method(owner), &name.name, args, e.span);
                name.name = mangled;
            }
            _ => {}
        }
    }
}
