//! The validation adapter of matrix linearization (semantics.md §11.3): ORIG's matrix carried
//! into OPT's array and back, with the layout read by the linearization transform's own reader,
//! which the CLI passes to validation.

use alpine_rs::sem::adapter::{from_annotations, AdaptError, Adapter, MatrixLayout};
use alpine_rs::sem::compile::Ty;
use alpine_rs::sem::inputs::{InVal, Input};
use alpine_rs::sem::Observable;

fn reader() -> MatrixLayout {
    alpine_rs::transforms::registry::matrix_layout().expect("linearize declares its adapter")
}

fn mat(rows: &[&[i64]]) -> InVal {
    InVal::Array(
        Ty::Array(Box::new(Ty::Int)),
        rows.iter()
            .map(|r| InVal::Array(Ty::Int, r.iter().map(|x| InVal::Int(*x)).collect()))
            .collect(),
    )
}

fn input(rows: &[&[i64]]) -> Input {
    Input {
        args: vec![
            ("h".into(), InVal::Int(rows.len() as i64)),
            ("w".into(), InVal::Int(rows.first().map_or(0, |r| r.len()) as i64)),
            ("g".into(), mat(rows)),
        ],
        ..Input::default()
    }
}

fn flat(v: &[i64]) -> InVal {
    InVal::Array(Ty::Int, v.iter().map(|x| InVal::Int(*x)).collect())
}

#[test]
fn row_and_column_major_flatten_and_fold_back() {
    let i = input(&[&[1, 2, 3], &[4, 5, 6]]);
    for (layout, cells) in [("R", [1, 2, 3, 4, 5, 6]), ("C", [1, 4, 2, 5, 3, 6])] {
        let a = Adapter::parse(&format!("matrix_lin g {layout} h w"), reader()).unwrap();
        let f = a.forward(&i).unwrap();
        assert_eq!(f.args[2].1, flat(&cells));
        let mut obs =
            vec![Observable { path: "g".to_string(), value: f.args[2].1.clone(), ghost: false }];
        a.backward(&i, &mut obs);
        assert_eq!(obs[0].value, i.args[2].1, "layout {layout}");
    }
}

#[test]
fn extents_that_disagree_with_the_input_are_reported() {
    let i = input(&[&[1, 2], &[3, 4]]);
    let a = Adapter::parse("matrix_lin g R (h + 1) w", reader()).unwrap();
    assert!(matches!(a.forward(&i), Err(AdaptError::Extents { e1: 3, .. })));
    let ragged = Input { args: vec![("g".into(), mat(&[&[1, 2], &[3]]))], ..Input::default() };
    let a = Adapter::parse("matrix_lin g R 2 2", reader()).unwrap();
    assert!(matches!(a.forward(&ragged), Err(AdaptError::NotRectangular(_))));
}

#[test]
fn specs_other_than_matrix_lin_are_refused() {
    assert!(Adapter::parse("tile inter 4", reader()).is_err());
    assert!(Adapter::parse("matrix_lin g X h w", reader()).is_err());
    assert_eq!(Adapter::parse(" ; ", reader()).unwrap(), Adapter::default());
}

#[test]
fn layouts_follow_calls_to_annotated_methods() {
    let src = "class K {\n  gpuopt matrix_lin g C n n;\n  void k(int n, int[][] g) { }\n  void host(int m, int[][] a) { k(m, a); }\n}\n";
    let got = from_annotations(src, "K", "host", &["a".to_string()], reader());
    let a = &got["a"];
    assert!(!a.row_major);
    assert!(a.dims.is_none());
    let own = from_annotations(src, "K", "k", &["g".to_string()], reader());
    assert!(own["g"].dims.is_some());
}

/// A generated matrix may be larger than its extents (`h.length == w * d` in a contract, rows
/// whose length nothing fixes): the leading block is carried over, and the cells outside it
/// keep the input's values on the way back.
#[test]
fn a_matrix_larger_than_its_extents_carries_its_leading_block() {
    let i = Input {
        args: vec![
            ("h".into(), InVal::Int(2)),
            ("w".into(), InVal::Int(2)),
            ("g".into(), mat(&[&[1, 2, 3], &[4, 5, 6], &[7, 8, 9]])),
        ],
        ..Input::default()
    };
    for (layout, cells) in [("R", [1, 2, 4, 5]), ("C", [1, 4, 2, 5])] {
        let a = Adapter::parse(&format!("matrix_lin g {layout} h w"), reader()).unwrap();
        let f = a.forward(&i).unwrap();
        assert_eq!(f.args[2].1, flat(&cells), "layout {layout}");
        // OPT doubled every cell it holds.
        let doubled: Vec<i64> = cells.iter().map(|x| 2 * x).collect();
        let mut obs =
            vec![Observable { path: "g".to_string(), value: flat(&doubled), ghost: false }];
        a.backward(&i, &mut obs);
        assert_eq!(obs[0].value, mat(&[&[2, 4, 3], &[8, 10, 6], &[7, 8, 9]]), "layout {layout}");
    }
    // Extents past the input are still an error.
    let a = Adapter::parse("matrix_lin g R (h + 2) w", reader()).unwrap();
    assert!(matches!(a.forward(&i), Err(AdaptError::Extents { e1: 4, rows: 3, cols: 3, .. })));
}
