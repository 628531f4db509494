//! Pack_2 (`dhry_2.c`): `Proc_6` ... `Proc_8` and `Func_1` ... `Func_3`.
//!
//! Every procedure is `#[inline(never)]`, standing in for the separate compilation of
//! `dhry_2.c` (see README: what one Rust crate can and cannot emulate).

use crate::strings::str_cmp;
use crate::types::{
    Arr1Dim, Arr2Dim, Boolean, CapitalLetter, Enumeration, Globals, OneFifty, OneThirty, Str30,
};

/// `Proc_6(Enum_Val_Par, Enum_Ref_Par)`: with `Ident_3`, `*Enum_Ref_Par` becomes `Ident_2`.
#[inline(never)]
pub fn proc_6(enum_val_par: Enumeration, enum_ref_par: &mut Enumeration, g: &Globals) {
    *enum_ref_par = enum_val_par;
    if !func_3(enum_val_par) {
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

/// `Func_2(Str_1_Par_Ref, Str_2_Par_Ref)`: false for Dhrystone's strings.
#[inline(never)]
pub fn func_2(str_1_par_ref: &Str30, str_2_par_ref: &Str30, g: &mut Globals) -> Boolean {
    let mut int_loc: OneThirty = 2;
    // C leaves Ch_Loc uninitialised until the loop body (which always runs) sets it.
    let mut ch_loc: CapitalLetter = 0;
    while int_loc <= 2 {
        // loop body executed once
        if func_1(
            str_1_par_ref[int_loc as usize],
            str_2_par_ref[(int_loc + 1) as usize],
            g,
        ) == Enumeration::Ident1
        {
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

/// `Func_3(Enum_Par_Val)`: true for `Ident_3`.
#[inline(never)]
pub fn func_3(enum_par_val: Enumeration) -> Boolean {
    let enum_loc = enum_par_val;
    // C: if (Enum_Loc == Ident_3) return true; else return false;
    enum_loc == Enumeration::Ident3
}
