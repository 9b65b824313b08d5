//! C types in our terms: the base type of declaration specifiers, declarators (pointers and
//! arrays become arrays; a sized array keeps its extent) and parameter lists.

use super::convert::Conv;
use crate::ast::*;
use crate::span::Span;
use lang_c::ast as c;
use lang_c::span::Node;

impl Conv<'_> {
    /// The type its specifiers name, spanning the specifiers (`int`, `unsigned long`).
    pub fn base_type(&mut self, specs: &[Node<c::DeclarationSpecifier>], span: Span) -> Type {
        let mut words = Vec::new();
        let mut at: Option<Span> = None;
        for s in specs {
            if let c::DeclarationSpecifier::TypeSpecifier(t) = &s.node {
                words.push(&t.node);
                let sp = self.sp(t.span);
                at = Some(at.map_or(sp, |a| a.to(sp)));
            }
        }
        self.type_of_specifiers(&words, at.unwrap_or(span))
    }

    pub fn type_of_specifiers(&mut self, words: &[&c::TypeSpecifier], span: Span) -> Type {
        use c::TypeSpecifier as T;
        let mut kind = None;
        for w in words {
            let k = match w {
                T::Void => TypeKind::Void,
                T::Bool => TypeKind::Boolean,
                T::Float => TypeKind::Float32,
                T::Double => TypeKind::Float64,
                T::Char | T::Short | T::Int | T::Long | T::Signed | T::Unsigned => TypeKind::Int,
                T::TypedefName(n) if super::vectors::lanes_of_type(&n.node.name).is_some() => {
                    self.unsupported("a vector type other than a local variable's", span);
                    TypeKind::Int
                }
                T::TypedefName(n) => match n.node.name.as_str() {
                    "bool" => TypeKind::Boolean,
                    "dim3" | "size_t" | "cudaError_t" | "cudaEvent_t" | "cudaStream_t" | "uint"
                    | "int32_t" | "uint32_t" | "int64_t" | "uint64_t" => TypeKind::Int,
                    other => TypeKind::Class(Ident::new(other, self.sp(n.span)), Vec::new()),
                },
                T::Struct(s) => match &s.node.identifier {
                    Some(id) => {
                        TypeKind::Class(Ident::new(&id.node.name, self.sp(id.span)), Vec::new())
                    }
                    None => {
                        self.unsupported("an anonymous struct type", span);
                        TypeKind::Int
                    }
                },
                _ => {
                    self.unsupported("this type", span);
                    TypeKind::Int
                }
            };
            // `unsigned long int` and friends: the first integer word decides.
            if kind.is_none() || !matches!(k, TypeKind::Int) {
                kind = Some(k);
            }
        }
        Type { kind: kind.unwrap_or(TypeKind::Int), span }
    }

    /// The name and type a declarator gives to `base` (pointers and arrays become arrays; a
    /// sized array keeps its extent).
    pub fn declarator(&mut self, base: &Type, d: &Node<c::Declarator>) -> (Option<Ident>, Type) {
        // Pointers bind looser than array suffixes: `int *p[3]` is an array of 3 pointers and
        // `int m[2][3]` an array of 2 rows of 3, so pointers wrap first, then the suffixes from
        // the last (the innermost dimension) to the first.
        // A derived type spans the specifiers to the end of the declarator (`int **g`): C
        // writes a type around the name, so that is the text that states it.
        let whole = base.span.to(self.sp(d.span));
        let mut ty = base.clone();
        let mut sizes = Vec::new();
        for der in &d.node.derived {
            match &der.node {
                c::DerivedDeclarator::Pointer(_) => {
                    ty = Type { kind: TypeKind::Array(Box::new(ty), None), span: whole };
                }
                c::DerivedDeclarator::Array(a) => {
                    let size = match &a.node.size {
                        c::ArraySize::VariableExpression(e) | c::ArraySize::StaticExpression(e) => {
                            self.expr(e).ok().map(Box::new)
                        }
                        _ => None,
                    };
                    sizes.push(size);
                }
                c::DerivedDeclarator::Function(_) | c::DerivedDeclarator::KRFunction(_) => {}
                c::DerivedDeclarator::Block(_) => {
                    self.unsupported("a block pointer", self.sp(der.span))
                }
            }
        }
        for size in sizes.into_iter().rev() {
            ty = Type { kind: TypeKind::Array(Box::new(ty), size), span: whole };
        }
        let name = match &d.node.kind.node {
            c::DeclaratorKind::Identifier(id) => Some(Ident::new(&id.node.name, self.sp(id.span))),
            c::DeclaratorKind::Declarator(inner) => {
                let (n, t) = self.declarator(&ty, inner);
                ty = t;
                n
            }
            c::DeclaratorKind::Abstract => None,
        };
        if let (Some(n), TypeKind::Array(elem, _)) = (&name, &ty.kind) {
            self.pointee.insert(n.name.clone(), elem.kind.clone());
        }
        if let (Some(n), TypeKind::Float32 | TypeKind::Float64) = (&name, &ty.kind) {
            self.floats.insert(n.name.clone());
        }
        (name, ty)
    }

    pub fn params(&mut self, d: &Node<c::Declarator>) -> Option<Vec<Param>> {
        let f = d.node.derived.iter().find_map(|der| match &der.node {
            c::DerivedDeclarator::Function(f) => Some(f),
            _ => None,
        })?;
        let mut out = Vec::new();
        for p in &f.node.parameters {
            let span = self.sp(p.span);
            let base = self.base_type(&p.node.specifiers, span);
            let Some(decl) = &p.node.declarator else {
                // `f(void)`.
                continue;
            };
            let (name, ty) = self.declarator(&base, decl);
            match name {
                Some(name) => out.push(Param { ty, name, span }),
                None => self.unsupported("an unnamed parameter", span),
            }
        }
        Some(out)
    }
}

/// The element type and the extents of a sized (possibly nested) array type: `int[2][3]` →
/// (`int`, [2, 3]); no extents when the outermost one is unknown.
pub(super) fn sized_dims(t: &Type) -> (Type, Vec<Expr>) {
    let mut dims = Vec::new();
    let mut cur = t;
    while let TypeKind::Array(inner, Some(n)) = &cur.kind {
        dims.push((**n).clone());
        cur = inner;
    }
    (cur.clone(), dims)
}

/// The same type without extents (`int[][]`), as PVL declares arrays.
pub(super) fn without_extents(t: &Type) -> Type {
    match &t.kind {
        TypeKind::Array(inner, _) => {
            Type { kind: TypeKind::Array(Box::new(without_extents(inner)), None), span: t.span }
        }
        k => Type { kind: k.clone(), span: t.span },
    }
}

/// The type words of a type name's specifiers (`unsigned`, `long`, `int`), qualifiers left out.
pub(super) fn type_words(
    specifiers: &[lang_c::span::Node<c::SpecifierQualifier>],
) -> Vec<&c::TypeSpecifier> {
    specifiers
        .iter()
        .filter_map(|s| match &s.node {
            c::SpecifierQualifier::TypeSpecifier(t) => Some(&t.node),
            _ => None,
        })
        .collect()
}
