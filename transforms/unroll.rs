//! unroll: not implemented yet.

use super::{Ctx, Outcome, Params};
use crate::analyze::sites::Site;

pub fn apply(ctx: &mut Ctx, site: &Site, params: &Params) -> Outcome {
    let _ = (ctx, site);
    super::not_available(params)
}
