//! The declarations of `dhry.h`: Dhrystone 2.1's types, the record, and the global state.
//!
//! C reaches the globals by absolute address and the two records through pointers returned by
//! `malloc`. This port keeps the globals in one [`Globals`] value passed by reference to every
//! procedure that touches them, and the records in a heap allocation ([`Heap`]) addressed by
//! small handles ([`RecPtr`]), so pointer links stay real loads without `unsafe`.

use std::ops::{Index, IndexMut};

/// `One_Thirty` (an `int` in C).
pub type OneThirty = i32;
/// `One_Fifty` (an `int` in C).
pub type OneFifty = i32;
/// `Capital_Letter` (a `char` in C).
pub type CapitalLetter = u8;
/// `Boolean` (an `int` holding 0 or 1 in C).
pub type Boolean = bool;
/// `Str_30`: 30 characters and the terminating NUL.
pub type Str30 = [u8; 31];
/// `Arr_1_Dim`.
pub type Arr1Dim = [i32; 50];
/// `Arr_2_Dim`.
pub type Arr2Dim = [[i32; 50]; 50];

/// `Enumeration` = {Ident_1, ..., Ident_5}, numbered 0..4 as in C.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u32)]
pub enum Enumeration {
    /// `Ident_1` (0).
    #[default]
    Ident1 = 0,
    /// `Ident_2` (1).
    Ident2 = 1,
    /// `Ident_3` (2).
    Ident3 = 2,
    /// `Ident_4` (3).
    Ident4 = 3,
    /// `Ident_5` (4).
    Ident5 = 4,
}

/// `Rec_Pointer`: a pointer to one of the two heap records, or null.
///
/// The handle indexes [`Heap`]; it is pointer-sized so a record has C's size and layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(usize)]
pub enum RecPtr {
    /// `Null`. Dereferencing it reaches the heap's guard slot, which no correct run touches.
    #[default]
    Null = 0,
    /// The first record allocated (`Next_Ptr_Glob` in `main`).
    First = 1,
    /// The second record allocated (`Ptr_Glob` in `main`).
    Second = 2,
}

/// The `var_1` alternative of the record's variant part (`Discr == Ident_1`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Var1 {
    /// `Enum_Comp`.
    pub enum_comp: Enumeration,
    /// `Int_Comp`.
    pub int_comp: i32,
    /// `Str_Comp`.
    pub str_comp: Str30,
}

/// The `var_2` alternative (`Discr == Ident_2`); never live at run time, as in C.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Var2 {
    /// `E_Comp_2`.
    pub e_comp_2: Enumeration,
    /// `Str_2_Comp`.
    pub str_2_comp: Str30,
}

/// The `var_3` alternative (`Discr == Ident_3`); never live at run time, as in C.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Var3 {
    /// `Ch_1_Comp`.
    pub ch_1_comp: CapitalLetter,
    /// `Ch_2_Comp`.
    pub ch_2_comp: CapitalLetter,
}

/// The record's variant part.
///
/// C overlays `var_1`, `var_2` and `var_3` in a union selected by `Discr`. Dhrystone only
/// ever stores `Discr = Ident_1`, so the storage is `var_1`, the largest alternative; the
/// union therefore has the same size and field offsets as C's without needing `unsafe`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Variant {
    /// The live alternative.
    pub var_1: Var1,
}

const _: () = {
    assert!(size_of::<Var2>() <= size_of::<Var1>());
    assert!(size_of::<Var3>() <= size_of::<Var1>());
};

/// `Rec_Type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Rec {
    /// `Ptr_Comp`.
    pub ptr_comp: RecPtr,
    /// `Discr`.
    pub discr: Enumeration,
    /// `variant`.
    pub variant: Variant,
}

// Same size as C's `Rec_Type` on LP64 (56 bytes) and ILP32 (48 bytes), so a structure
// assignment moves as many bytes as the reference's.
const _: () = assert!(size_of::<Rec>() == if size_of::<usize>() == 8 { 56 } else { 48 });

/// The records `malloc` would return; index 0 is the guard slot that stands at the null
/// address. It lives in one heap allocation ([`Heap::new_boxed`]), and procedures receive a
/// reference to it, so reaching a record is one address computation from that base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heap([Rec; 3]);

impl Heap {
    /// Fresh, zeroed records on the heap.
    pub fn new_boxed() -> Box<Self> {
        Box::new(Heap([Rec::default(); 3]))
    }

    /// The address of a record, as C's `%d` of a pointer would show it.
    pub fn address(&self, p: RecPtr) -> usize {
        std::ptr::from_ref(&self.0[p as usize]).addr()
    }
}

impl Index<RecPtr> for Heap {
    type Output = Rec;
    #[inline(always)]
    fn index(&self, p: RecPtr) -> &Rec {
        &self.0[p as usize]
    }
}

impl IndexMut<RecPtr> for Heap {
    #[inline(always)]
    fn index_mut(&mut self, p: RecPtr) -> &mut Rec {
        &mut self.0[p as usize]
    }
}

/// The scalar globals of `dhry_1.c` (`Arr_1_Glob` and `Arr_2_Glob` live in [`Arrays`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Globals {
    /// `Ptr_Glob`.
    pub ptr_glob: RecPtr,
    /// `Next_Ptr_Glob`.
    pub next_ptr_glob: RecPtr,
    /// `Int_Glob`.
    pub int_glob: i32,
    /// `Bool_Glob`.
    pub bool_glob: Boolean,
    /// `Ch_1_Glob`.
    pub ch_1_glob: CapitalLetter,
    /// `Ch_2_Glob`.
    pub ch_2_glob: CapitalLetter,
}

/// The global arrays `Arr_1_Glob` and `Arr_2_Glob`, passed to `Proc_8` as parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrays {
    /// `Arr_1_Glob`.
    pub arr_1_glob: Arr1Dim,
    /// `Arr_2_Glob`.
    pub arr_2_glob: Arr2Dim,
}

impl Arrays {
    /// Zeroed arrays on the heap, as C's zero-initialised globals.
    pub fn new_boxed() -> Box<Self> {
        Box::new(Arrays {
            arr_1_glob: [0; 50],
            arr_2_glob: [[0; 50]; 50],
        })
    }
}

/// The locals of C's `main` that outlive one call of the measured loop.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MainLocals {
    /// `Int_1_Loc`.
    pub int_1_loc: OneFifty,
    /// `Int_2_Loc`.
    pub int_2_loc: OneFifty,
    /// `Int_3_Loc`.
    pub int_3_loc: OneFifty,
    /// `Enum_Loc`.
    pub enum_loc: Enumeration,
    /// `Str_1_Loc`.
    pub str_1_loc: Str30,
    /// `Str_2_Loc`.
    pub str_2_loc: Str30,
}
