//! Pack_2 (`dhry_2.c`): `Proc_6` ... `Proc_8` and `Func_1` ... `Func_3`.
//!
//! Every procedure is `#[inline(never)]`, standing in for the separate compilation of
//! `dhry_2.c` (see README: what one Rust crate can and cannot emulate). The two procedures
//! that call within the pack have a second, pack-inline form ([`pack_inline`]) with the
//! inlining gcc -O2 performs in `dhry_2.c`: `Func_1` into `Func_2` and `Func_3` into
//! `Proc_6`. `Proc_7`, `Proc_8`, `Func_1` and `Func_3` call nothing, so both variants share
//! them.

use crate::strings::str_cmp;
use crate::types::{
    Arr1Dim, Arr2Dim, Boolean, CapitalLetter, Enumeration, Globals, OneFifty, OneThirty, Str30,
};

/// `Proc_6(Enum_Val_Par, Enum_Ref_Par)`, strict variant: with `Ident_3`, `*Enum_Ref_Par`
/// becomes `Ident_2`.
#[inline(never)]
pub fn proc_6(enum_val_par: Enumeration, enum_ref_par: &mut Enumeration, g: &Globals) {
    proc_6_body::<false>(enum_val_par, enum_ref_par, g);
}

/// `Proc_7(Int_1_Par_Val, Int_2_Par_Val, Int_Par_Ref)`: called with (2, 3) → 7,
/// (10, 5) → 17 and (6, 10) → 18.
#[inline(never)]
pub fn proc_7(int_1_par_val: OneFifty, int_2_par_val: OneFifty, int_par_ref: &mut OneFifty) {
    let int_loc = int_1_par_val + 2;
    *int_par_ref = int_2_par_val + int_loc;
}

/// `Proc_8(Arr_1_Par_Ref, Arr_2_Par_Ref, Int_1_Par_Val, Int_2_Par_Val)`: called with 3, 7.
///
/// `Arr_2_Par_Ref[8][7]` grows by one per call; it wraps like a 32-bit C `int` would in
/// practice after 2^31 runs.
#[inline(never)]
pub fn proc_8(
    arr_1_par_ref: &mut Arr1Dim,
    arr_2_par_ref: &mut Arr2Dim,
    int_1_par_val: i32,
    int_2_par_val: i32,
    g: &mut Globals,
) {
    let int_loc: OneFifty = int_1_par_val + 5;
    // C indexes unchecked; Rust checks each index (a negative Int_Loc becomes huge and fails).
    let loc = int_loc as usize;
    arr_1_par_ref[loc] = int_2_par_val;
    arr_1_par_ref[loc + 1] = arr_1_par_ref[loc];
    arr_1_par_ref[loc + 30] = int_loc;
    let mut int_index = loc;
    while int_index <= loc + 1 {
        arr_2_par_ref[loc][int_index] = int_loc;
        int_index += 1;
    }
    arr_2_par_ref[loc][loc - 1] = arr_2_par_ref[loc][loc - 1].wrapping_add(1);
    arr_2_par_ref[loc + 20][loc] = arr_1_par_ref[loc];
    g.int_glob = 5;
}

/// `Func_1(Ch_1_Par_Val, Ch_2_Par_Val)`: returns `Ident_1` on every call Dhrystone makes.
#[inline(never)]
pub fn func_1(
    ch_1_par_val: CapitalLetter,
    ch_2_par_val: CapitalLetter,
    g: &mut Globals,
) -> Enumeration {
    func_1_body(ch_1_par_val, ch_2_par_val, g)
}

/// `Func_2(Str_1_Par_Ref, Str_2_Par_Ref)`, strict variant: false for Dhrystone's strings.
#[inline(never)]
pub fn func_2(str_1_par_ref: &Str30, str_2_par_ref: &Str30, g: &mut Globals) -> Boolean {
    func_2_body::<false>(str_1_par_ref, str_2_par_ref, g)
}

/// `Func_3(Enum_Par_Val)`: true for `Ident_3`.
#[inline(never)]
pub fn func_3(enum_par_val: Enumeration) -> Boolean {
    func_3_body(enum_par_val)
}

/// The pack-inline variant of the two Pack_2 procedures that call within the pack.
pub mod pack_inline {
    use super::*;

    /// `Proc_6` with `Func_3` inlined.
    #[inline(never)]
    pub fn proc_6(enum_val_par: Enumeration, enum_ref_par: &mut Enumeration, g: &Globals) {
        proc_6_body::<true>(enum_val_par, enum_ref_par, g);
    }

    /// `Func_2` with `Func_1` inlined.
    #[inline(never)]
    pub fn func_2(str_1_par_ref: &Str30, str_2_par_ref: &Str30, g: &mut Globals) -> Boolean {
        func_2_body::<true>(str_1_par_ref, str_2_par_ref, g)
    }
}

/// A call from Pack_1 to `Proc_6` as the variant compiles it (a call either way).
#[inline(always)]
pub fn proc_6_of<const PACK_INLINE: bool>(
    enum_val_par: Enumeration,
    enum_ref_par: &mut Enumeration,
    g: &Globals,
) {
    if PACK_INLINE {
        pack_inline::proc_6(enum_val_par, enum_ref_par, g);
    } else {
        proc_6(enum_val_par, enum_ref_par, g);
    }
}

/// A call from Pack_1 to `Func_2` as the variant compiles it (a call either way).
#[inline(always)]
pub fn func_2_of<const PACK_INLINE: bool>(
    str_1_par_ref: &Str30,
    str_2_par_ref: &Str30,
    g: &mut Globals,
) -> Boolean {
    if PACK_INLINE {
        pack_inline::func_2(str_1_par_ref, str_2_par_ref, g)
    } else {
        func_2(str_1_par_ref, str_2_par_ref, g)
    }
}

#[inline(always)]
fn proc_6_body<const PACK_INLINE: bool>(
    enum_val_par: Enumeration,
    enum_ref_par: &mut Enumeration,
    g: &Globals,
) {
    *enum_ref_par = enum_val_par;
    let is_ident_3 = if PACK_INLINE {
        func_3_body(enum_val_par)
    } else {
        func_3(enum_val_par)
    };
    if !is_ident_3 {
        // not executed
        *enum_ref_par = Enumeration::Ident4;
    }
    match enum_val_par {
        Enumeration::Ident1 => *enum_ref_par = Enumeration::Ident1,
        Enumeration::Ident2 => {
            if g.int_glob > 100 {
                *enum_ref_par = Enumeration::Ident1;
            } else {
                *enum_ref_par = Enumeration::Ident4;
            }
        }
        Enumeration::Ident3 => *enum_ref_par = Enumeration::Ident2, // executed
        Enumeration::Ident4 => {}
        Enumeration::Ident5 => *enum_ref_par = Enumeration::Ident3,
    }
}

#[inline(always)]
fn func_1_body(
    ch_1_par_val: CapitalLetter,
    ch_2_par_val: CapitalLetter,
    g: &mut Globals,
) -> Enumeration {
    let ch_1_loc = ch_1_par_val;
    let ch_2_loc = ch_1_loc;
    if ch_2_loc != ch_2_par_val {
        // executed
        Enumeration::Ident1
    } else {
        // not executed
        g.ch_1_glob = ch_1_loc;
        Enumeration::Ident2
    }
}

#[inline(always)]
fn func_2_body<const PACK_INLINE: bool>(
    str_1_par_ref: &Str30,
    str_2_par_ref: &Str30,
    g: &mut Globals,
) -> Boolean {
    let mut int_loc: OneThirty = 2;
    // C leaves Ch_Loc uninitialised until the loop body (which always runs) sets it.
    let mut ch_loc: CapitalLetter = 0;
    while int_loc <= 2 {
        // loop body executed once
        let ch_1 = str_1_par_ref[int_loc as usize];
        let ch_2 = str_2_par_ref[(int_loc + 1) as usize];
        let enum_loc = if PACK_INLINE {
            func_1_body(ch_1, ch_2, g)
        } else {
            func_1(ch_1, ch_2, g)
        };
        if enum_loc == Enumeration::Ident1 {
            // executed
            ch_loc = b'A';
            int_loc += 1;
        }
    }
    if (b'W'..b'Z').contains(&ch_loc) {
        // not executed
        int_loc = 7;
    }
    if ch_loc == b'R' {
        // not executed
        true
    } else if str_cmp(str_1_par_ref, str_2_par_ref) > 0 {
        // not executed
        int_loc += 7;
        g.int_glob = int_loc;
        true
    } else {
        // executed
        false
    }
}

#[inline(always)]
fn func_3_body(enum_par_val: Enumeration) -> Boolean {
    let enum_loc = enum_par_val;
    // C: if (Enum_Loc == Ident_3) return true; else return false;
    enum_loc == Enumeration::Ident3
}
