//! Z3's C API as the z3 crate expects it from `z3-sys`, with the library opened on first use.
//!
//! Linking libz3 made every process pay for it at start: the dynamic loader maps 23 MB and
//! applies about 29,000 relocations before `main`, also for `parse`, `list`, `diff` and
//! `explain`, which never ask Z3 anything. Here each function is a trampoline that resolves its
//! symbol the first time it is called ([`load`]); the library is found on the system or in
//! alpine-rs's backend cache. Building needs neither Z3's headers nor libclang: the declarations
//! in `api.rs` are generated once from Z3's headers by `scripts/gen_z3_sys.py`.
//!
//! Only what the z3 crate uses is declared. The enumerations are open newtypes over the C value
//! rather than Rust enums, so a value a newer Z3 adds is carried, never undefined behaviour.

#![allow(non_camel_case_types, non_upper_case_globals, clippy::missing_safety_doc)]

mod load;

pub use load::{candidates, library, origin, set_missing_handler, LoadError};

use std::os::raw::c_char;

macro_rules! handles {
    ($($name:ident),* $(,)?) => {
        $(
            #[doc(hidden)]
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
            }
        )*
    };
}

handles!(
    _Z3_config,
    _Z3_context,
    _Z3_symbol,
    _Z3_ast,
    _Z3_sort,
    _Z3_func_decl,
    _Z3_app,
    _Z3_pattern,
    _Z3_model,
    _Z3_constructor,
    _Z3_constructor_list,
    _Z3_params,
    _Z3_param_descrs,
    _Z3_goal,
    _Z3_tactic,
    _Z3_probe,
    _Z3_stats,
    _Z3_solver,
    _Z3_ast_vector,
    _Z3_ast_map,
    _Z3_apply_result,
    _Z3_func_interp,
    _Z3_func_entry,
    _Z3_fixedpoint,
    _Z3_optimize,
    _Z3_literals,
    _Z3_rcf_num,
);

pub type Z3_config = *mut _Z3_config;
pub type Z3_context = *mut _Z3_context;
pub type Z3_symbol = *mut _Z3_symbol;
pub type Z3_ast = *mut _Z3_ast;
pub type Z3_sort = *mut _Z3_sort;
pub type Z3_func_decl = *mut _Z3_func_decl;
pub type Z3_app = *mut _Z3_app;
pub type Z3_pattern = *mut _Z3_pattern;
pub type Z3_model = *mut _Z3_model;
pub type Z3_constructor = *mut _Z3_constructor;
pub type Z3_constructor_list = *mut _Z3_constructor_list;
pub type Z3_params = *mut _Z3_params;
pub type Z3_param_descrs = *mut _Z3_param_descrs;
pub type Z3_goal = *mut _Z3_goal;
pub type Z3_tactic = *mut _Z3_tactic;
pub type Z3_probe = *mut _Z3_probe;
pub type Z3_stats = *mut _Z3_stats;
pub type Z3_solver = *mut _Z3_solver;
pub type Z3_ast_vector = *mut _Z3_ast_vector;
pub type Z3_ast_map = *mut _Z3_ast_map;
pub type Z3_apply_result = *mut _Z3_apply_result;
pub type Z3_func_interp = *mut _Z3_func_interp;
pub type Z3_func_entry = *mut _Z3_func_entry;
pub type Z3_fixedpoint = *mut _Z3_fixedpoint;
pub type Z3_optimize = *mut _Z3_optimize;
pub type Z3_literals = *mut _Z3_literals;
pub type Z3_rcf_num = *mut _Z3_rcf_num;

pub type Z3_string = *const c_char;
pub type Z3_string_ptr = *mut Z3_string;
pub type Z3_lbool = i32;
pub const Z3_L_FALSE: Z3_lbool = -1;
pub const Z3_L_UNDEF: Z3_lbool = 0;
pub const Z3_L_TRUE: Z3_lbool = 1;
pub type Z3_error_handler = Option<unsafe extern "C" fn(c: Z3_context, e: ErrorCode)>;

/// An open enumeration of Z3's C API: the C value, with the members alpine-rs names.
macro_rules! open_enum {
    ($(#[$doc:meta])* $name:ident { $($member:ident = $value:expr),* $(,)? }) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            $(pub const $member: $name = $name($value);)*
        }
    };
}

open_enum!(
    /// `Z3_ast_kind`.
    AstKind { Numeral = 0, App = 1, Var = 2, Quantifier = 3, Sort = 4, FuncDecl = 5, Unknown = 1000 }
);
open_enum!(
    /// `Z3_sort_kind`.
    SortKind {
        Uninterpreted = 0, Bool = 1, Int = 2, Real = 3, BV = 4, Array = 5, Datatype = 6,
        Relation = 7, FiniteDomain = 8, FloatingPoint = 9, RoundingMode = 10, Seq = 11, RE = 12,
        Unknown = 1000,
    }
);
/// `Z3_symbol_kind`: a closed Rust enum, because the z3 crate matches it exhaustively; a symbol
/// is a number or a string in every Z3 there is.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    Int = 0,
    String = 1,
}
open_enum!(
    /// `Z3_goal_prec`.
    GoalPrec { Precise = 0, Under = 1, Over = 2, UnderOver = 3 }
);
open_enum!(
    /// `Z3_decl_kind`: only carried through (`FuncDecl::kind`), so no member is named.
    DeclKind {}
);
open_enum!(
    /// `Z3_error_code`.
    ErrorCode { OK = 0, SortError = 1, IOB = 2, InvalidArg = 3, ParserError = 4, NoParser = 5 }
);
open_enum!(
    /// `Z3_param_kind`.
    ParamKind { UInt = 0, Bool = 1, Double = 2, Symbol = 3, String = 4, Other = 5, Invalid = 6 }
);
open_enum!(
    /// `Z3_ast_print_mode`.
    AstPrintMode { SmtLib = 0, LowLevel = 1, SmtLib2Compliant = 2 }
);
open_enum!(
    /// `Z3_parameter_kind`.
    ParameterKind { Int = 0, Double = 1, Rational = 2, Symbol = 3, Sort = 4, Ast = 5, FuncDecl = 6 }
);

/// Declares each function as a trampoline that resolves its symbol on first call and keeps it.
macro_rules! api {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;)*) => {
        $(
            #[allow(non_snake_case, clippy::too_many_arguments)]
            #[inline]
            pub unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                static SLOT: std::sync::atomic::AtomicPtr<std::ffi::c_void> =
                    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
                let f: unsafe extern "C" fn($($ty),*) $(-> $ret)? =
                    std::mem::transmute(load::resolve(&SLOT, concat!(stringify!($name), "\0")));
                f($($arg),*)
            }
        )*
    };
}

mod api;
pub use api::*;
