//! The word lists of PVL (pvl.md §2.4), one definition for the lexer, the parser and the printer.

/// Words that are never identifiers (pvl.md §2.4 hard keywords).
pub const HARD_KEYWORDS: &[&str] = &[
    "and",
    "barrier",
    "boolean",
    "class",
    "current_thread",
    "else",
    "false",
    "for",
    "fork",
    "goto",
    "if",
    "in",
    "int",
    "invariant",
    "join",
    "lock",
    "map",
    "new",
    "notify",
    "null",
    "option",
    "par",
    "return",
    "static",
    "string",
    "this",
    "true",
    "tuple",
    "unfolding",
    "unlock",
    "vec",
    "void",
    "wait",
    "while",
    "gpuopt",
];

/// Hard keywords that can stand inside an expression (they do not end a `gpuopt` operand list).
pub const EXPRESSION_KEYWORDS: &[&str] =
    &["and", "current_thread", "false", "in", "new", "null", "this", "true", "unfolding"];

/// Words reserved inside expressions.
pub const VALUE_WORDS: &[&str] =
    &["write", "read", "none", "empty", "None", "true", "false", "null", "this"];

/// VerCors 1.4 reserved the Alpinist annotation words; v2 does not have them.
pub const V1_RESERVED: &[&str] =
    &["loop_unroll", "iter_merge", "matrix_lin", "glob_to_reg", "tile", "fuse", "inter", "intra"];

/// Words that start a contract clause.
pub const CLAUSE_WORDS: &[&str] = &[
    "requires",
    "ensures",
    "context",
    "context_everywhere",
    "loop_invariant",
    "kernel_invariant",
    "lock_invariant",
    "given",
    "yields",
    "modifies",
    "accessible",
    "signals",
    "decreases",
];

/// Words that start a specification statement (`assert e;`, `fold p;`, …).
pub const SPEC_WORDS: &[&str] = &[
    "assert", "assume", "inhale", "exhale", "fold", "unfold", "open", "close", "witness", "refute",
];

/// Statement words kept opaque (pvl.md §7).
pub const OPAQUE_STMT_WORDS: &[&str] = &[
    "commit",
    "extract",
    "lock",
    "unlock",
    "wait",
    "notify",
    "fork",
    "join",
    "goto",
    "label",
    "create",
    "qed",
    "apply",
    "use",
    "destroy",
    "split",
    "merge",
    "choose",
    "action",
    "send",
    "recv",
    "transfer",
    "csl_subject",
    "spec_ignore",
    "frame",
    "extract",
    "commit",
    "package",
    "channel_invariant",
    "communicate",
];

/// Backslash words that are single tokens (pvl.md §2.4).
pub const BS_WORDS: &[&str] = &[
    "forall",
    "exists",
    "let",
    "sum",
    "old",
    "result",
    "array",
    "matrix",
    "pointer",
    "pointer_index",
    "values",
    "length",
    "typeof",
    "unfolding",
    "in",
    "memberof",
    "current_thread",
    "ltid",
    "gtid",
    "owner",
    "vcmp",
    "vrep",
    "msum",
    "mcmp",
    "mrep",
    "pointer_length",
    "pointer_block_length",
    "pointer_block_offset",
    "polarity_dependent",
    "forperm",
    "forpermwithvalue",
    "type",
    "is_int",
    "choose",
    "choose_fresh",
    "pow",
    "euclidean_div",
    "euclidean_mod",
    "shared_mem_size",
    "nd_index",
    "nd_partial_index",
    "nd_length",
    "Unfolding",
    "endpoint",
    "chor",
    "sender",
    "receiver",
    "msg",
    "replacing",
    "replacing_done",
];
