//! Applying several optimizations in one run (optimizations.md §8).
