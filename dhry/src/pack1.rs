//! Pack_1 (`dhry_1.c`): the measured loop of `main`, and `Proc_1` ... `Proc_5`.
//!
//! Each procedure is written once, as an always-inlined body, and compiled in two variants
//! (see [`crate::Variant`]):
//!
//! - **strict** (the `#[inline(never)]` functions at the top level of this module): every
//!   procedure is a call, as the ground rules require, because the share of calls is part of
//!   Dhrystone's statement mix.
//! - **pack-inline** ([`pack_inline`]): the inlining gcc -O2 performs within `dhry_1.c`:
//!   `Proc_2`, `Proc_4` and `Proc_5` into the loop, `Proc_3` into `Proc_1`. `Proc_1` stays a
//!   call, and every call into Pack_2 stays a call, as between two C files.
//!
//! The loop keeps every branch that never executes, since those are what stop a compiler
//! from hoisting or deleting the work. Globals travel as explicit `&Globals`/`&mut Globals`
//! arguments and the records as `&mut Heap`; C reaches both by address.

use crate::pack2;
use crate::strings::str_copy;
use crate::types::{Arrays, Enumeration, Globals, Heap, MainLocals, OneFifty, RecPtr, Str30};

/// `"DHRYSTONE PROGRAM, 2'ND STRING"`, copied into `Str_2_Loc` on every run.
pub const STR_2ND: &Str30 = b"DHRYSTONE PROGRAM, 2'ND STRING\0";
/// `"DHRYSTONE PROGRAM, 3'RD STRING"`, copied in the branch that never executes.
pub const STR_3RD: &Str30 = b"DHRYSTONE PROGRAM, 3'RD STRING\0";

/// Runs `Run_Index = first_run ..= last_run` through Dhrystone (spec section 3), strict
/// variant.
///
/// `main`'s locals are loaded from `locals` into this frame, used there (their addresses go
/// to `Proc_2`, `Proc_6` and `Proc_7` as in C), and written back at the end, so the loop can
/// be resumed.
#[inline(never)]
pub fn main_loop(
    g: &mut Globals,
    heap: &mut Heap,
    arrays: &mut Arrays,
    locals: &mut MainLocals,
    first_run: u64,
    last_run: u64,
) {
    main_loop_body::<false>(g, heap, arrays, locals, first_run, last_run);
}

/// `Proc_1(Ptr_Val_Par)`, strict variant; called with `Ptr_Glob`.
#[inline(never)]
pub fn proc_1(ptr_val_par: RecPtr, g: &Globals, heap: &mut Heap) {
    proc_1_body::<false>(ptr_val_par, g, heap);
}

/// `Proc_2(Int_Par_Ref)`: `*Int_Par_Ref` 1 becomes 5.
#[inline(never)]
pub fn proc_2(int_par_ref: &mut OneFifty, g: &Globals) {
    proc_2_body(int_par_ref, g);
}

/// `Proc_3(Ptr_Ref_Par)`: C passes `&Next_Record->Ptr_Comp`; here the parameter names the
/// record whose `Ptr_Comp` is assigned (a heap handle is this port's pointer).
#[inline(never)]
pub fn proc_3(ptr_ref_par: RecPtr, g: &Globals, heap: &mut Heap) {
    proc_3_body(ptr_ref_par, g, heap);
}

/// `Proc_4()`.
#[inline(never)]
pub fn proc_4(g: &mut Globals) {
    proc_4_body(g);
}

/// `Proc_5()`.
#[inline(never)]
pub fn proc_5(g: &mut Globals) {
    proc_5_body(g);
}

/// The pack-inline variant: Pack_1 as gcc -O2 compiles `dhry_1.c`. Only the procedures that
/// remain calls have a symbol here; `Proc_2` ... `Proc_5` live inside them.
pub mod pack_inline {
    use super::*;

    /// The measured loop with `Proc_2`, `Proc_4` and `Proc_5` inlined.
    #[inline(never)]
    pub fn main_loop(
        g: &mut Globals,
        heap: &mut Heap,
        arrays: &mut Arrays,
        locals: &mut MainLocals,
        first_run: u64,
        last_run: u64,
    ) {
        main_loop_body::<true>(g, heap, arrays, locals, first_run, last_run);
    }

    /// `Proc_1` with `Proc_3` inlined.
    #[inline(never)]
    pub fn proc_1(ptr_val_par: RecPtr, g: &Globals, heap: &mut Heap) {
        proc_1_body::<true>(ptr_val_par, g, heap);
    }
}

/// The measured loop; `PACK_INLINE` selects the variant (a compile-time constant, so each
/// variant is its own code with no test at run time). It stays one long function because it
/// is `dhry_1.c`'s loop statement for statement; splitting it would add calls the reference
/// does not make.
#[inline(always)]
fn main_loop_body<const PACK_INLINE: bool>(
    g: &mut Globals,
    heap: &mut Heap,
    arrays: &mut Arrays,
    locals: &mut MainLocals,
    first_run: u64,
    last_run: u64,
) {
    let mut int_1_loc: OneFifty = locals.int_1_loc;
    let mut int_2_loc: OneFifty = locals.int_2_loc;
    let mut int_3_loc: OneFifty = locals.int_3_loc;
    let mut enum_loc = locals.enum_loc;
    let str_1_loc: Str30 = locals.str_1_loc;
    let mut str_2_loc: Str30 = locals.str_2_loc;

    let mut run_index = first_run;
    while run_index <= last_run {
        if PACK_INLINE {
            proc_5_body(g);
            proc_4_body(g);
        } else {
            proc_5(g);
            proc_4(g);
        }
        // Ch_1_Glob == 'A', Ch_2_Glob == 'B', Bool_Glob == true
        int_1_loc = 2;
        int_2_loc = 3;
        str_copy(&mut str_2_loc, STR_2ND);
        enum_loc = Enumeration::Ident2;
        g.bool_glob = !pack2::func_2_of::<PACK_INLINE>(&str_1_loc, &str_2_loc, g);
        // Bool_Glob == true
        while int_1_loc < int_2_loc {
            // executed once
            int_3_loc = 5 * int_1_loc - int_2_loc;
            // Int_3_Loc == 7
            pack2::proc_7(int_1_loc, int_2_loc, &mut int_3_loc);
            // Int_3_Loc == 7
            int_1_loc += 1;
        }
        // Int_1_Loc == 3, Int_2_Loc == 3, Int_3_Loc == 7
        pack2::proc_8(
            &mut arrays.arr_1_glob,
            &mut arrays.arr_2_glob,
            int_1_loc,
            int_3_loc,
            g,
        );
        // Int_Glob == 5
        if PACK_INLINE {
            pack_inline::proc_1(g.ptr_glob, g, heap);
        } else {
            proc_1(g.ptr_glob, g, heap);
        }
        let mut ch_index = b'A';
        while ch_index <= g.ch_2_glob {
            // executed twice
            if enum_loc == pack2::func_1(ch_index, b'C', g) {
                // never executed
                pack2::proc_6_of::<PACK_INLINE>(Enumeration::Ident1, &mut enum_loc, g);
                str_copy(&mut str_2_loc, STR_3RD);
                int_2_loc = run_index as OneFifty;
                g.int_glob = run_index as OneFifty;
            }
            ch_index = ch_index.wrapping_add(1);
        }
        // Int_1_Loc == 3, Int_2_Loc == 3, Int_3_Loc == 7
        int_2_loc *= int_1_loc;
        int_1_loc = int_2_loc / int_3_loc;
        int_2_loc = 7 * (int_2_loc - int_3_loc) - int_1_loc;
        // Int_1_Loc == 1, Int_2_Loc == 13, Int_3_Loc == 7
        if PACK_INLINE {
            proc_2_body(&mut int_1_loc, g);
        } else {
            proc_2(&mut int_1_loc, g);
        }
        // Int_1_Loc == 5
        run_index += 1;
    }

    locals.int_1_loc = int_1_loc;
    locals.int_2_loc = int_2_loc;
    locals.int_3_loc = int_3_loc;
    locals.enum_loc = enum_loc;
    locals.str_2_loc = str_2_loc;
}

/// `Proc_1`'s body; with `PACK_INLINE`, `Proc_3` is inlined and `Proc_6` is Pack_2's
/// pack-inline one.
#[inline(always)]
fn proc_1_body<const PACK_INLINE: bool>(ptr_val_par: RecPtr, g: &Globals, heap: &mut Heap) {
    let next_record = heap[ptr_val_par].ptr_comp;
    // == Ptr_Glob_Next
    let copy = heap[g.ptr_glob];
    let target = heap[ptr_val_par].ptr_comp;
    heap[target] = copy; // structassign (*Ptr_Val_Par->Ptr_Comp, *Ptr_Glob)
    heap[ptr_val_par].variant.var_1.int_comp = 5;
    heap[next_record].variant.var_1.int_comp = heap[ptr_val_par].variant.var_1.int_comp;
    heap[next_record].ptr_comp = heap[ptr_val_par].ptr_comp;
    if PACK_INLINE {
        proc_3_body(next_record, g, heap);
    } else {
        proc_3(next_record, g, heap);
    }
    // Ptr_Val_Par->Ptr_Comp->Ptr_Comp == Ptr_Glob->Ptr_Comp
    if heap[next_record].discr == Enumeration::Ident1 {
        // executed
        heap[next_record].variant.var_1.int_comp = 6;
        let enum_val = heap[ptr_val_par].variant.var_1.enum_comp;
        pack2::proc_6_of::<PACK_INLINE>(
            enum_val,
            &mut heap[next_record].variant.var_1.enum_comp,
            g,
        );
        heap[next_record].ptr_comp = heap[g.ptr_glob].ptr_comp;
        let int_val = heap[next_record].variant.var_1.int_comp;
        pack2::proc_7(int_val, 10, &mut heap[next_record].variant.var_1.int_comp);
    } else {
        // not executed
        let copy = heap[heap[ptr_val_par].ptr_comp];
        heap[ptr_val_par] = copy; // structassign (*Ptr_Val_Par, *Ptr_Val_Par->Ptr_Comp)
    }
}

#[inline(always)]
fn proc_2_body(int_par_ref: &mut OneFifty, g: &Globals) {
    let mut int_loc = *int_par_ref + 10;
    // C leaves Enum_Loc uninitialised; any value but Ident_1 keeps the do-while a loop.
    let mut enum_loc = Enumeration::Ident5;
    loop {
        // executed once
        if g.ch_1_glob == b'A' {
            // executed
            int_loc -= 1;
            *int_par_ref = int_loc - g.int_glob;
            enum_loc = Enumeration::Ident1;
        }
        if enum_loc == Enumeration::Ident1 {
            break;
        }
    }
}

#[inline(always)]
fn proc_3_body(ptr_ref_par: RecPtr, g: &Globals, heap: &mut Heap) {
    if g.ptr_glob != RecPtr::Null {
        // executed
        heap[ptr_ref_par].ptr_comp = heap[g.ptr_glob].ptr_comp;
    }
    pack2::proc_7(10, g.int_glob, &mut heap[g.ptr_glob].variant.var_1.int_comp);
}

#[inline(always)]
fn proc_4_body(g: &mut Globals) {
    let bool_loc = g.ch_1_glob == b'A';
    g.bool_glob |= bool_loc; // Bool_Glob = Bool_Loc | Bool_Glob
    g.ch_2_glob = b'B';
}

#[inline(always)]
fn proc_5_body(g: &mut Globals) {
    g.ch_1_glob = b'A';
    g.bool_glob = false;
}
