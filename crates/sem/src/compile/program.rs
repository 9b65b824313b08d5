//! The program-level pass of the compiler: declarations of classes, fields and method stubs,
//! each method's parameters, contract and body, contract clauses, and which method a call
//! names (with its `given`/`yields` ghost arguments). Apart from statements and expressions,
//! which it calls for each body.

use super::*;

/// Lower a parsed program. Unsupported constructs are compiled to `Unsupported` nodes and only
/// fail when executed, so that other methods of the file still run; structural errors (unknown
/// names, misplaced barriers) are returned.
pub fn compile(prog: &Program) -> Result<CProgram, Vec<Diagnostic>> {
    let mut c = Compiler {
        prog,
        out: CProgram::default(),
        errors: Vec::new(),
        cur_class: 0,
        scope: Scope::new(),
        code: Vec::new(),
        par_labels: Vec::new(),
        par_iters: Vec::new(),
        par_uniform: Vec::new(),
        everywhere: Vec::new(),
        everywhere_ast: Vec::new(),
        cur_contains_par: false,
        cur_calls: Vec::new(),
        inv_names: Vec::new(),
        asts: Vec::new(),
        expanding: Vec::new(),
        jumps: Default::default(),
    };
    c.declare_all();
    c.compile_all();
    c.sync_members();
    if c.errors.is_empty() {
        // Transitive `contains_par` for entry selection.
        let n = c.out.methods.len();
        loop {
            let mut changed = false;
            for i in 0..n {
                if !c.out.methods[i].contains_par {
                    let calls = c.out.methods[i].calls.clone();
                    if calls.iter().any(|&k| c.out.methods[k as usize].contains_par) {
                        c.out.methods[i].contains_par = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        Ok(c.out)
    } else {
        Err(c.errors)
    }
}

fn class_items(prog: &Program) -> Vec<(&Ident, Vec<&Member>)> {
    let mut v = Vec::new();
    for it in &prog.items {
        if let Item::Class(c) = it {
            v.push((&c.name, c.members.iter().collect()));
        }
    }
    v
}

impl<'a> Compiler<'a> {
    pub(super) fn field_id(&mut self, name: &str) -> u32 {
        if let Some(i) = self.out.field_names.iter().position(|n| n == name) {
            return i as u32;
        }
        self.out.field_names.push(name.to_string());
        (self.out.field_names.len() - 1) as u32
    }

    /// The values a call `e` of method `m` passes for `m`'s `given` parameters, in their
    /// order: from v2 `given { x = e }` or v1 `with { x = e; }`; `null` for one not passed.
    pub(super) fn given_args(
        &mut self,
        m: u32,
        e: &Expr,
        pre: &mut Option<&mut Vec<Instr>>,
    ) -> Vec<CE> {
        let Some(md) = self.asts.get(m as usize).copied() else {
            return Vec::new();
        };
        let (ExprKind::Call { ghost, .. } | ExprKind::NewObject(_, _, ghost)) = &e.kind else {
            return Vec::new();
        };
        let mut passed: Vec<(&str, &Expr)> =
            ghost.given.iter().map(|(id, x)| (id.name.as_str(), x)).collect();
        if let Some(b) = &ghost.with {
            for st in &b.stmts {
                if let StmtKind::Assign { target, value } = &st.kind {
                    if let ExprKind::Name(id) = &target.kind {
                        passed.push((id.name.as_str(), value));
                    }
                }
            }
        }
        let mut out = Vec::new();
        for c in &md.prefix.clauses {
            if let (ClauseKind::Given, ClauseBody::Decl(_, n)) = (c.kind, &c.body) {
                // The last assignment to a name wins, as in a `with` block.
                match passed.iter().rev().find(|(k, _)| *k == n.name) {
                    Some((_, x)) => out.push(self.expr(x, pre)),
                    None => out.push(CE::Null),
                }
            }
        }
        out
    }

    /// For a call `e` of `m`: which caller local receives which of `m`'s `yields` variables,
    /// from v1 `then { x = y; }` or v2 `yields { x = y }`. The callee's slots are known from
    /// its declaration: parameters, then `given` ones, then `yields` ones, in order (see
    /// `method`). Names that resolve to nothing are left out (reported where they are used).
    pub(super) fn yield_bindings(&self, m: u32, e: &Expr) -> Vec<(u32, u32)> {
        let (Some(md), ExprKind::Call { ghost, .. }) = (self.asts.get(m as usize), &e.kind) else {
            return Vec::new();
        };
        let decl = |k: ClauseKind| {
            md.prefix.clauses.iter().filter_map(move |c| match (&c.body, c.kind == k) {
                (ClauseBody::Decl(_, n), true) => Some(n.name.as_str()),
                _ => None,
            })
        };
        let base = md.params.len() + decl(ClauseKind::Given).count();
        let callee_slot = |name: &str| {
            decl(ClauseKind::Yields).position(|n| n == name).map(|k| (base + k) as u32)
        };
        let mut pairs: Vec<(&str, &str)> =
            ghost.yields.iter().map(|(x, y)| (x.name.as_str(), y.name.as_str())).collect();
        if let Some(b) = &ghost.then {
            for st in &b.stmts {
                if let StmtKind::Assign { target, value } = &st.kind {
                    if let (ExprKind::Name(x), ExprKind::Name(y)) = (&target.kind, &value.kind) {
                        pairs.push((x.name.as_str(), y.name.as_str()));
                    }
                }
            }
        }
        // VerCors 1 also accepts a `yields` variable in a `with` block (`with { P = P; }`, the
        // callee's variable on the left): it is bound to the caller's variable on the right.
        if let Some(b) = &ghost.with {
            for st in &b.stmts {
                if let StmtKind::Assign { target, value } = &st.kind {
                    if let (ExprKind::Name(y), ExprKind::Name(x)) = (&target.kind, &value.kind) {
                        if callee_slot(&y.name).is_some() {
                            pairs.push((x.name.as_str(), y.name.as_str()));
                        }
                    }
                }
            }
        }
        pairs
            .into_iter()
            .filter_map(|(x, y)| Some((self.scope.lookup(x)?.0, callee_slot(y)?)))
            .collect()
    }

    fn declare_all(&mut self) {
        let prog = self.prog;
        let mut toplevel: Vec<&Method> = Vec::new();
        for it in &prog.items {
            if let Item::Method(m) = it {
                toplevel.push(m);
            }
        }
        let classes = class_items(prog);
        for (ci, (name, members)) in classes.iter().enumerate() {
            let mut fields = Vec::new();
            let mut methods = BTreeMap::new();
            let mut ctor = None;
            for m in members.iter() {
                match m {
                    Member::Field(f) => {
                        for n in &f.names {
                            let id = self.field_id(&n.name);
                            fields.push((id, n.name.clone(), Ty::from_ast(&f.ty)));
                        }
                    }
                    Member::Method(md) => {
                        let mid = self.out.methods.len() as u32;
                        let is_ctor = md.kind.is_ctor();
                        if is_ctor {
                            ctor = Some(mid);
                        }
                        methods.insert(md.name.name.clone(), mid);
                        self.out.methods.push(self.stub(md, ci as u32, is_ctor));
                        self.asts.push(md);
                    }
                }
            }
            self.out.classes.push(CClass {
                name: name.name.clone(),
                fields,
                methods,
                ctor,
                lock_inv: None,
                run: None,
            });
        }
        if !toplevel.is_empty() {
            let ci = self.out.classes.len() as u32;
            let mut methods = BTreeMap::new();
            for md in &toplevel {
                let mid = self.out.methods.len() as u32;
                methods.insert(md.name.name.clone(), mid);
                self.out.methods.push(self.stub(md, ci, false));
                self.asts.push(md);
            }
            self.out.classes.push(CClass {
                name: "$Main".into(),
                fields: Vec::new(),
                methods,
                ctor: None,
                lock_inv: None,
                run: None,
            });
        }
        self.declare_tokens();
    }

    fn stub(&self, md: &Method, class: u32, is_ctor: bool) -> CMethod {
        CMethod {
            name: md.name.name.clone(),
            class,
            is_static: md.has_modifier(Modifier::Static),
            is_pure: md.is_function(),
            is_ctor,
            is_predicate: md.is_predicate(),
            params: Vec::new(),
            given_from: 0,
            yields: Vec::new(),
            ret: Ty::from_ast(&md.ret),
            nslots: 0,
            pre: Vec::new(),
            post: Vec::new(),
            everywhere: Vec::new(),
            body: Body::Abstract,
            contains_par: false,
            calls: Vec::new(),
            span: md.span,
        }
    }

    fn compile_all(&mut self) {
        let prog = self.prog;
        let mut list: Vec<(u32, &Method)> = Vec::new();
        let mut ci = 0u32;
        for it in &prog.items {
            if let Item::Class(c) = it {
                for m in &c.members {
                    if let Member::Method(md) = m {
                        list.push((ci, md));
                    }
                }
                ci += 1;
            }
        }
        for it in &prog.items {
            if let Item::Method(md) = it {
                list.push((ci, md));
            }
        }
        for (i, (ci, md)) in list.into_iter().enumerate() {
            self.cur_class = ci;
            self.compile_method(i as u32, md);
        }
    }

    fn compile_method(&mut self, id: u32, md: &Method) {
        self.scope = Scope::new();
        self.code = Vec::new();
        self.par_labels.clear();
        self.cur_contains_par = false;
        self.cur_calls.clear();
        let mut params = Vec::new();
        for p in &md.params {
            let ty = Ty::from_ast(&p.ty);
            let s = self.scope.declare(&p.name.name, ty.clone());
            params.push((s, p.name.name.clone(), ty));
        }
        let given_from = params.len();
        // given/yields ghost parameters: given ones become extra (ghost) parameters; yields
        // ones are locals of the body (what it yields is not passed back to the caller).
        for c in &md.prefix.clauses {
            if let (ClauseKind::Given, ClauseBody::Decl(t, n)) = (c.kind, &c.body) {
                let ty = Ty::from_ast(t);
                let s = self.scope.declare(&n.name, ty.clone());
                params.push((s, n.name.clone(), ty));
            }
        }
        let mut yields = Vec::new();
        for c in &md.prefix.clauses {
            if let (ClauseKind::Yields, ClauseBody::Decl(t, n)) = (c.kind, &c.body) {
                let ty = Ty::from_ast(t);
                let s = self.scope.declare(&n.name, ty.clone());
                yields.push((s, n.name.clone(), ty));
            }
        }
        let implied = self.implied_shapes(md);
        let mut everywhere = implied.clone();
        let mut everywhere_ast: Vec<Option<Expr>> = vec![None; implied.len()];
        let contract = md.prefix.clauses.iter().filter(|c| {
            matches!(
                c.kind,
                ClauseKind::Requires
                    | ClauseKind::Ensures
                    | ClauseKind::Context
                    | ClauseKind::ContextEverywhere
            )
        });
        let (pre, mut post) = self.pre_post(contract.clone(), |_, c, cl| {
            if c.kind == ClauseKind::ContextEverywhere {
                everywhere.extend(cl.iter().cloned());
                if let Some(e) = c.expr() {
                    everywhere_ast.extend(e.conjuncts().into_iter().map(|x| Some(x.clone())));
                }
            }
        });
        // A parameter the body assigns means, in the postcondition, its value at entry (as
        // `verify` reads it): the postcondition reads a copy the method makes as it starts.
        let reassigned: Vec<(u32, String, Ty)> = match &md.body {
            MethodBody::Block(b) => {
                let names: std::collections::BTreeSet<String> =
                    b.stmts.iter().flat_map(front::visit::assigned_names).collect();
                params.iter().filter(|p| names.contains(&p.1)).cloned().collect()
            }
            _ => Vec::new(),
        };
        let mut entry_copies = Vec::new();
        if !reassigned.is_empty() {
            self.scope.push();
            for (slot, name, ty) in &reassigned {
                entry_copies.push((*slot, self.scope.declare(name, ty.clone())));
            }
            // The second reading of the contract reports nothing the first did not.
            let reported = self.errors.len();
            post = self.pre_post(contract, |_, _, _| {}).1;
            self.errors.truncate(reported);
            self.scope.pop();
        }
        let (pre, post) = {
            let (mut p, mut q) = (implied.clone(), implied);
            p.extend(pre);
            q.extend(post);
            (p, q)
        };
        self.everywhere = everywhere.clone();
        self.everywhere_ast = everywhere_ast;
        let body = match &md.body {
            MethodBody::Abstract => Body::Abstract,
            MethodBody::Expr(e) => {
                let body = self.expr(e, &mut None);
                self.note_lock_invariant(id, md, e);
                Body::Expr(body)
            }
            MethodBody::Block(b) => {
                self.jumps = Default::default();
                for (param, copy) in &entry_copies {
                    self.code.push(Instr::Assign {
                        simple: true,
                        target: Target::Local(*copy),
                        value: CE::Local(*param),
                        span: md.name.span,
                        ghost: true,
                    });
                }
                self.block(b, false);
                self.code.push(Instr::EndMethod);
                self.resolve_gotos();
                mark_simple(&mut self.code);
                Body::Code(std::mem::take(&mut self.code))
            }
        };
        let m = &mut self.out.methods[id as usize];
        m.params = params;
        m.given_from = given_from;
        m.yields = yields;
        m.pre = pre;
        m.post = post;
        m.everywhere = everywhere;
        m.body = body;
        m.nslots = self.scope.max;
        m.contains_par = self.cur_contains_par;
        m.calls = std::mem::take(&mut self.cur_calls);
    }

    /// What the types of array parameters state, as the Viper encoder assumes it (before the
    /// contract, in pre, post and everywhere): `T[N] a` has `N` cells, and `T[M][N] m` (or
    /// `T[][] m`) is a matrix whose rows the member may read, unless the member states row
    /// permissions itself (`analyze::shapes`). Only for non-null arrays: null stays an input.
    fn implied_shapes(&mut self, md: &Method) -> Vec<CClause> {
        let given = md.prefix.clauses.iter().filter_map(|c| match (&c.kind, &c.body) {
            (ClauseKind::Given, ClauseBody::Decl(t, n)) => Some((t, n)),
            _ => None,
        });
        let params: Vec<(&Type, &Ident)> =
            md.params.iter().map(|p| (&p.ty, &p.name)).chain(given).collect();
        let mut out = Vec::new();
        for (ty, name) in params {
            let TypeKind::Array(elem, size) = &ty.kind else { continue };
            let Some((slot, _)) = self.scope.lookup(&name.name) else { continue };
            let var = || Box::new(CE::Local(slot));
            let span = name.span;
            let size = size.as_ref().map(|n| self.bx(n, &mut None));
            let shape = match analyze::shapes::row_extent(elem) {
                Some(y) if !analyze::shapes::states_row_permission(md, &name.name) => {
                    let y = y.map(|y| self.bx(y, &mut None));
                    let x = size.unwrap_or_else(|| Box::new(CE::Length(var(), span)));
                    CE::MatrixShape(var(), x, y)
                }
                _ => match size {
                    Some(n) => CE::Bin(BinOp::Eq, Box::new(CE::Length(var(), span)), n, span),
                    None => continue,
                },
            };
            let some = Box::new(CE::Bin(BinOp::Ne, var(), Box::new(CE::Null), span));
            let e = CE::Bin(BinOp::Implies, some, Box::new(shape), span);
            out.push(CClause { simple: is_simple(&e), pure: true, leaf: None, e, span });
        }
        out
    }

    /// The compiled pre- and postcondition clauses of `contract` (`context` ones are both);
    /// `each` sees every clause with an expression and its compiled conjuncts first.
    pub(super) fn pre_post<'c>(
        &mut self,
        contract: impl IntoIterator<Item = &'c Clause>,
        mut each: impl FnMut(&mut Self, &'c Clause, &[CClause]),
    ) -> (Vec<CClause>, Vec<CClause>) {
        let (mut pre, mut post) = (Vec::new(), Vec::new());
        let (mut pre_src, mut post_src) = (Vec::new(), Vec::new());
        for c in contract {
            let Some(e) = c.expr() else { continue };
            let cl = self.clauses(e);
            each(self, c, &cl);
            for (x, src) in cl.into_iter().zip(e.conjuncts()) {
                if c.kind.is_pre() {
                    push_once(&mut pre, &mut pre_src, x.clone(), src);
                }
                if c.kind.is_post() {
                    push_once(&mut post, &mut post_src, x, src);
                }
            }
        }
        (pre, post)
    }

    /// Split an assertion at top-level `&&`/`**` into conjuncts.
    pub(super) fn clauses(&mut self, e: &Expr) -> Vec<CClause> {
        e.conjuncts()
            .into_iter()
            .map(|c| {
                let ce = self.expr(c, &mut None);
                let pure = !has_resource(&ce);
                CClause {
                    pure,
                    simple: pure && is_simple(&ce),
                    leaf: PermLeaf::of(&ce),
                    e: ce,
                    span: c.span,
                }
            })
            .collect()
    }

    /// The method a call `recv.name(args)` with `nargs` arguments names: the one the name
    /// resolves to, or, when that one takes another number of parameters, an overload of the
    /// same class and name that takes `nargs` (VerCors resolves overloads by their arguments).
    pub(super) fn resolve_call(
        &self,
        recv: Option<&Expr>,
        name: &str,
        nargs: usize,
    ) -> Option<u32> {
        let arity = |k: u32| self.asts.get(k as usize).map(|md| md.params.len());
        let Some(m) = self.resolve_method(recv, name) else {
            // Ambiguous by name alone (overloads in several classes, or a receiver whose
            // class is not known here): the one method of that name taking `nargs`, if unique.
            let mut v = (0..self.out.methods.len() as u32)
                .filter(|&k| self.out.methods[k as usize].name == name && arity(k) == Some(nargs));
            return match (v.next(), v.next()) {
                (Some(k), None) => Some(k),
                _ => None,
            };
        };
        if arity(m) == Some(nargs) {
            return Some(m);
        }
        let class = self.out.methods[m as usize].class;
        (0..self.out.methods.len() as u32)
            .find(|&k| {
                let md = &self.out.methods[k as usize];
                md.class == class && md.name == name && arity(k) == Some(nargs)
            })
            .or(Some(m))
    }

    pub(super) fn resolve_method(&self, recv: Option<&Expr>, name: &str) -> Option<u32> {
        let local = || self.out.classes[self.cur_class as usize].methods.get(name).copied();
        match recv.map(|r| &r.kind) {
            None | Some(ExprKind::This) => local().or_else(|| self.global_method(name)),
            Some(ExprKind::Name(id)) => {
                if let Some((_, Ty::Class(c))) = self.scope.lookup(&id.name) {
                    if let Some(k) = self.out.classes.iter().find(|k| &k.name == c) {
                        return k.methods.get(name).copied();
                    }
                }
                if let Some(k) = self.out.classes.iter().find(|k| k.name == id.name) {
                    return k.methods.get(name).copied();
                }
                // A field of the enclosing class: the method of the field's class.
                let own = &self.out.classes[self.cur_class as usize];
                if let Some((_, _, Ty::Class(c))) = own.fields.iter().find(|f| f.1 == id.name) {
                    if let Some(k) = self.out.classes.iter().find(|k| &k.name == c) {
                        return k.methods.get(name).copied();
                    }
                }
                self.global_method(name)
            }
            _ => self.global_method(name),
        }
    }

    fn global_method(&self, name: &str) -> Option<u32> {
        let v: Vec<u32> = self
            .out
            .methods
            .iter()
            .enumerate()
            .filter(|(_, m)| m.name == name)
            .map(|(i, _)| i as u32)
            .collect();
        if v.len() == 1 {
            Some(v[0])
        } else {
            None
        }
    }

    pub(super) fn nonpure_call(&self, e: &Expr) -> Option<u32> {
        if let ExprKind::Call { recv, name, args, .. } = &e.kind {
            let m = self.resolve_call(recv.as_deref(), &name.name, args.len())?;
            let md = &self.out.methods[m as usize];
            if !md.is_pure && !md.is_predicate {
                return Some(m);
            }
        }
        None
    }

    pub(super) fn is_class_name(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(id) => {
                self.scope.lookup(&id.name).is_none()
                    && self.out.classes.iter().any(|k| k.name == id.name)
            }
            _ => false,
        }
    }

    pub(super) fn loop_invariants(&mut self, prefix: &Prefix) -> Rc<Vec<CClause>> {
        let mut v = Vec::new();
        let mut own: Vec<&Expr> = Vec::new();
        for c in &prefix.clauses {
            if matches!(c.kind, ClauseKind::LoopInvariant | ClauseKind::Context) {
                if let Some(e) = c.expr() {
                    v.extend(self.clauses(e));
                    own.extend(e.conjuncts());
                }
            }
        }
        // A `context_everywhere` clause the invariant states again counts once (`push_once`).
        let mut v_src: Vec<&Expr> = own;
        let everywhere: Vec<(CClause, Option<Expr>)> =
            self.propagated().map(|(c, s)| (c.clone(), s.clone())).collect();
        for (c, src) in &everywhere {
            match src {
                Some(s) => push_once(&mut v, &mut v_src, c.clone(), s),
                None => v.push(c.clone()),
            }
        }
        Rc::new(v)
    }

    /// `context_everywhere` as added to loop invariants and barrier contracts: everything at
    /// host level, only the pure part inside a kernel (the threads hold scaled permissions).
    pub(super) fn propagated_everywhere(&self) -> Vec<CClause> {
        self.propagated().map(|(c, _)| c.clone()).collect()
    }

    /// [`Self::propagated_everywhere`] with each clause's source conjunct.
    fn propagated(&self) -> impl Iterator<Item = (&CClause, &Option<Expr>)> {
        let in_kernel = !self.par_labels.is_empty();
        self.everywhere.iter().zip(&self.everywhere_ast).filter(move |(c, _)| c.pure || !in_kernel)
    }
}

/// Add clause `c` (source conjunct `src`) to `list`, unless the same conjunct is already there
/// and stating it twice means the same as once: it is pure, or its only permissions are `read`
/// (Viper's wildcard: some positive amount, however often it is asked for). Counted as one ε
/// each, a copy (a `context_everywhere` clause that an `ensures` or a loop invariant states
/// again) would ask for an ε the method never received.
fn push_once<'e>(list: &mut Vec<CClause>, srcs: &mut Vec<&'e Expr>, c: CClause, src: &'e Expr) {
    let twice_is_once = c.pure || only_read_perms(&c.e);
    if twice_is_once && srcs.contains(&src) {
        return;
    }
    list.push(c);
    srcs.push(src);
}

/// The only permissions `e` asks for are `read` amounts (no fractions, no predicates).
fn only_read_perms(e: &CE) -> bool {
    match e {
        CE::Perm(l, p, _) | CE::PointsTo(l, p, _, _) => matches!(**p, CE::Read) && !has_resource(l),
        CE::Pred { .. } => false,
        other => {
            let mut ok = true;
            other.for_each_sub(&mut |x| ok &= only_read_perms(x));
            ok
        }
    }
}
