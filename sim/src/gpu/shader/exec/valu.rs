//! Vector ALU dispatch: each VALU group (integer, float, compare, conversion, f16, lane
//! operations) is tried in turn; the lane loops they share are in `valu_loops`.

use super::{
    Exec, R, unimplemented, valu_cmp, valu_conv, valu_f16, valu_float, valu_int, valu_lane,
};
use crate::gpu::shader::isa::Inst;

pub fn exec(e: &mut Exec, inst: &Inst) -> R {
    if valu_int::exec(e, inst)?
        || valu_float::exec(e, inst)?
        || valu_cmp::exec(e, inst)?
        || valu_conv::exec(e, inst)?
        || valu_f16::exec(e, inst)?
        || valu_lane::exec(e, inst)?
    {
        return Ok(());
    }
    Err(unimplemented("vector ALU opcode not simulated"))
}
