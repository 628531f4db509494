//! Dhrystone 2.1 (Weicker, 1988) in Rust, with DMIPS and DMIPS/MHz.
//!
//! The benchmark itself lives in [`pack1`] (`dhry_1.c`: the measured loop and `Proc_1` ...
//! `Proc_5`) and [`pack2`] (`dhry_2.c`: `Proc_6` ... `Proc_8`, `Func_1` ... `Func_3`), over the
//! declarations of `dhry.h` in [`types`]. [`Dhrystone`] owns one copy of the benchmark's state
//! and is what a harness drives: [`Dhrystone::new`], [`Dhrystone::run`] (repeatable),
//! [`Dhrystone::verify`]. Both build [`Variant`]s are in every binary. Timing ([`measure`]),
//! the all-core harness glue ([`parallel`]) and output ([`report`]) are separate so a
//! multi-process harness can reuse the kernel alone; the core clock is `benchmp::freq`.
//!
//! Behaviour follows the reference's `v2.1/dhry_1.c` and `dhry_2.c`; the figures follow the
//! usual conventions (DMIPS = Dhrystones per second / 1757, the VAX 11/780's score).

#![deny(unsafe_code)]

pub mod error;
pub mod measure;
pub mod pack1;
pub mod pack2;
pub mod parallel;
pub mod report;
pub mod run;
pub mod strings;
pub mod suite;
pub mod types;

pub use error::Error;

use std::fmt;
use std::hint::black_box;

use serde::{Deserialize, Serialize};

use strings::{as_text, str_copy};
use types::{Arrays, Enumeration, Globals, Heap, MainLocals, RecPtr, Str30};

/// Dhrystones per second of the VAX 11/780, the machine defined as 1 MIPS.
pub const VAX_11_780_DHRYSTONES_PER_SECOND: f64 = 1757.0;

/// The shortest timed loop the reference accepts (v2.1 `Too_Small_Time`), in seconds.
pub const REFERENCE_MIN_SECONDS: f64 = 2.0;

/// `"DHRYSTONE PROGRAM, SOME STRING"`, the initial `Ptr_Glob->Str_Comp`.
pub const STR_SOME: &Str30 = b"DHRYSTONE PROGRAM, SOME STRING\0";
/// `"DHRYSTONE PROGRAM, 1'ST STRING"`, the initial `Str_1_Loc`.
pub const STR_1ST: &Str30 = b"DHRYSTONE PROGRAM, 1'ST STRING\0";

const PTR_GLOB_FIELDS: [&str; 5] = [
    "Ptr_Glob->Ptr_Comp",
    "Ptr_Glob->Discr",
    "Ptr_Glob->Enum_Comp",
    "Ptr_Glob->Int_Comp",
    "Ptr_Glob->Str_Comp",
];
const NEXT_PTR_GLOB_FIELDS: [&str; 5] = [
    "Next_Ptr_Glob->Ptr_Comp",
    "Next_Ptr_Glob->Discr",
    "Next_Ptr_Glob->Enum_Comp",
    "Next_Ptr_Glob->Int_Comp",
    "Next_Ptr_Glob->Str_Comp",
];

/// How the procedures are compiled: the two builds of Dhrystone every binary contains.
///
/// Weicker's ground rule 2 forbids procedure merging; gcc -O2, the customary setting for
/// published figures, still inlines within each C file. Both are offered, and every report
/// names the one it measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Every procedure and function is a call (`#[inline(never)]`): ground rule 2 kept, the
    /// counterpart of the C reference at `gcc -O2 -fno-inline`. 15 calls per run.
    #[default]
    Strict,
    /// The inlining gcc -O2 performs within each file and nothing more: `Proc_2`, `Proc_4`
    /// and `Proc_5` into the loop, `Proc_3` into `Proc_1`, `Func_1` into `Func_2`, `Func_3`
    /// into `Proc_6`; calls between the packs stay calls. Breaks ground rule 2 as gcc -O2
    /// does; the counterpart of the usual `-O2` figures. 9 calls per run.
    PackInline,
}

impl Variant {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Strict => "strict",
            Variant::PackInline => "pack-inline",
        }
    }

    /// Calls to `Proc_*`/`Func_*` in one run through Dhrystone.
    pub fn calls_per_run(self) -> u32 {
        match self {
            Variant::Strict => 15,
            Variant::PackInline => 9,
        }
    }

    /// How the packs are compiled, for the report (the rules ask for it to be stated).
    pub fn compilation_model(self) -> String {
        let unit = "Pack_1 and Pack_2 in one crate (one optimisation unit)";
        match self {
            Variant::Strict => format!("{unit}; no procedure merging (#[inline(never)])"),
            Variant::PackInline => format!(
                "{unit}; variant pack-inline: gcc -O2's inlining within each pack (Proc_2, \
                 Proc_4, Proc_5 into the loop, Proc_3 into Proc_1, Func_1 into Func_2, Func_3 \
                 into Proc_6), calls between the packs kept; breaks ground rule 2, as gcc -O2 \
                 does"
            ),
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One instance of the benchmark: the globals, the two heap records and `main`'s locals.
#[derive(Clone, Debug)]
pub struct Dhrystone {
    variant: Variant,
    glob: Globals,
    heap: Box<Heap>,
    arrays: Box<Arrays>,
    locals: MainLocals,
    runs_done: u64,
}

impl Default for Dhrystone {
    fn default() -> Self {
        Self::new()
    }
}

impl Dhrystone {
    /// The state `main` sets up before timing starts (spec section 2), for the strict
    /// variant.
    ///
    /// The initial strings pass through `black_box`, so nothing after this point can be
    /// computed from them at compile time.
    pub fn new() -> Self {
        Self::with_variant(Variant::Strict)
    }

    /// The state `main` sets up before timing starts, for the given build variant.
    pub fn with_variant(variant: Variant) -> Self {
        publish_procedures();
        let mut heap = Heap::new_boxed();
        let mut arrays = Arrays::new_boxed();
        let mut locals = MainLocals::default();
        let glob = Globals {
            next_ptr_glob: RecPtr::First,
            ptr_glob: RecPtr::Second,
            ..Globals::default()
        };

        let p = glob.ptr_glob;
        heap[p].ptr_comp = glob.next_ptr_glob;
        heap[p].discr = Enumeration::Ident1;
        heap[p].variant.var_1.enum_comp = Enumeration::Ident3;
        heap[p].variant.var_1.int_comp = 40;
        str_copy(&mut heap[p].variant.var_1.str_comp, black_box(STR_SOME));
        str_copy(&mut locals.str_1_loc, black_box(STR_1ST));
        arrays.arr_2_glob[8][7] = 10;

        Dhrystone {
            variant,
            glob,
            heap,
            arrays,
            locals,
            runs_done: 0,
        }
    }

    /// Runs `runs` more passes through Dhrystone, continuing the run index of earlier calls.
    ///
    /// The count passes through `black_box` so the loop cannot be folded or precomputed.
    ///
    /// # Panics
    ///
    /// If the total number of runs would reach 2^64 - 1.
    pub fn run(&mut self, runs: u64) {
        let runs = black_box(runs);
        if runs == 0 {
            return;
        }
        let last = self
            .runs_done
            .checked_add(runs)
            .filter(|&last| last < u64::MAX)
            .expect("the total number of runs must stay below 2^64 - 1");
        let first = self.runs_done + 1;
        let main_loop = match self.variant {
            Variant::Strict => pack1::main_loop,
            Variant::PackInline => pack1::pack_inline::main_loop,
        };
        main_loop(
            &mut self.glob,
            &mut self.heap,
            &mut self.arrays,
            &mut self.locals,
            first,
            last,
        );
        self.runs_done = last;
    }

    /// The build variant this instance runs.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Total runs made by [`Dhrystone::run`] so far (`Number_Of_Runs` of the printout).
    pub fn runs_done(&self) -> u64 {
        self.runs_done
    }

    /// The final values the reference prints after the loop (spec section 5).
    pub fn final_values(&self) -> FinalValues {
        let record = |p: RecPtr| {
            let r = &self.heap[p];
            RecordValues {
                ptr_comp: self.heap.address(r.ptr_comp) as i32,
                discr: r.discr as u32,
                enum_comp: r.variant.var_1.enum_comp as u32,
                int_comp: r.variant.var_1.int_comp,
                str_comp: as_text(&r.variant.var_1.str_comp),
            }
        };
        FinalValues {
            int_glob: self.glob.int_glob,
            bool_glob: i32::from(self.glob.bool_glob),
            ch_1_glob: char::from(self.glob.ch_1_glob),
            ch_2_glob: char::from(self.glob.ch_2_glob),
            arr_1_glob_8: self.arrays.arr_1_glob[8],
            arr_2_glob_8_7: self.arrays.arr_2_glob[8][7],
            ptr_glob: record(self.glob.ptr_glob),
            next_ptr_glob: record(self.glob.next_ptr_glob),
            int_1_loc: self.locals.int_1_loc,
            int_2_loc: self.locals.int_2_loc,
            int_3_loc: self.locals.int_3_loc,
            enum_loc: self.locals.enum_loc as u32,
            str_1_loc: as_text(&self.locals.str_1_loc),
            str_2_loc: as_text(&self.locals.str_2_loc),
        }
    }

    /// Compares every checked variable with its "should be" value; meaningful after at least
    /// one run. `Arr_2_Glob[8][7]` should be the total runs + 10 (as a wrapping 32-bit int);
    /// both `Ptr_Comp`s should point at `Next_Ptr_Glob`'s record.
    pub fn verify(&self) -> Result<(), Vec<Mismatch>> {
        let v = self.final_values();
        let expected = FinalValues::expected(self.runs_done);
        let next = self.glob.next_ptr_glob;
        let mut bad = Vec::new();
        let mut check = |name: &str, actual: String, should_be: String| {
            if actual != should_be {
                bad.push(Mismatch {
                    name: name.to_string(),
                    actual,
                    expected: should_be,
                });
            }
        };
        let s = |x: &dyn fmt::Display| x.to_string();
        check("Int_Glob", s(&v.int_glob), s(&expected.int_glob));
        check("Bool_Glob", s(&v.bool_glob), s(&expected.bool_glob));
        check("Ch_1_Glob", s(&v.ch_1_glob), s(&expected.ch_1_glob));
        check("Ch_2_Glob", s(&v.ch_2_glob), s(&expected.ch_2_glob));
        check(
            "Arr_1_Glob[8]",
            s(&v.arr_1_glob_8),
            s(&expected.arr_1_glob_8),
        );
        check(
            "Arr_2_Glob[8][7]",
            s(&v.arr_2_glob_8_7),
            s(&expected.arr_2_glob_8_7),
        );
        for (names, handle, actual, want) in [
            (
                PTR_GLOB_FIELDS,
                self.glob.ptr_glob,
                &v.ptr_glob,
                &expected.ptr_glob,
            ),
            (
                NEXT_PTR_GLOB_FIELDS,
                self.glob.next_ptr_glob,
                &v.next_ptr_glob,
                &expected.next_ptr_glob,
            ),
        ] {
            let [ptr_comp, discr, enum_comp, int_comp, str_comp] = names;
            let link = self.heap[handle].ptr_comp;
            if link != next {
                check(
                    ptr_comp,
                    format!("{} ({link:?})", actual.ptr_comp),
                    format!(
                        "{} (the address of Next_Ptr_Glob's record)",
                        self.heap.address(next) as i32
                    ),
                );
            }
            check(discr, s(&actual.discr), s(&want.discr));
            check(enum_comp, s(&actual.enum_comp), s(&want.enum_comp));
            check(int_comp, s(&actual.int_comp), s(&want.int_comp));
            check(str_comp, s(&actual.str_comp), s(&want.str_comp));
        }
        check("Int_1_Loc", s(&v.int_1_loc), s(&expected.int_1_loc));
        check("Int_2_Loc", s(&v.int_2_loc), s(&expected.int_2_loc));
        check("Int_3_Loc", s(&v.int_3_loc), s(&expected.int_3_loc));
        check("Enum_Loc", s(&v.enum_loc), s(&expected.enum_loc));
        check("Str_1_Loc", s(&v.str_1_loc), s(&expected.str_1_loc));
        check("Str_2_Loc", s(&v.str_2_loc), s(&expected.str_2_loc));
        if bad.is_empty() { Ok(()) } else { Err(bad) }
    }

    /// A value derived from every checked variable except the addresses; equal for equal run
    /// counts, so a harness can keep it alive and compare copies. Cheap: no allocation.
    pub fn checksum(&self) -> u64 {
        fn mix(h: u64, bytes: &[u8]) -> u64 {
            // FNV-1a, 64-bit.
            bytes.iter().fold(h, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
            })
        }
        let g = &self.glob;
        let l = &self.locals;
        let mut h = 0xcbf2_9ce4_8422_2325;
        for x in [
            g.int_glob,
            i32::from(g.bool_glob),
            i32::from(g.ch_1_glob),
            i32::from(g.ch_2_glob),
            self.arrays.arr_1_glob[8],
            self.arrays.arr_2_glob[8][7],
            l.int_1_loc,
            l.int_2_loc,
            l.int_3_loc,
            l.enum_loc as i32,
        ] {
            h = mix(h, &x.to_le_bytes());
        }
        for p in [g.ptr_glob, g.next_ptr_glob] {
            let r = &self.heap[p];
            let linked = r.ptr_comp == g.next_ptr_glob;
            h = mix(
                h,
                &[
                    u8::from(linked),
                    r.discr as u8,
                    r.variant.var_1.enum_comp as u8,
                ],
            );
            h = mix(h, &r.variant.var_1.int_comp.to_le_bytes());
            h = mix(h, &r.variant.var_1.str_comp);
        }
        h = mix(h, &l.str_1_loc);
        mix(h, &l.str_2_loc)
    }

    #[cfg(test)]
    fn state_mut(&mut self) -> (&mut Globals, &mut Heap, &mut Arrays, &mut MainLocals) {
        (
            &mut self.glob,
            &mut self.heap,
            &mut self.arrays,
            &mut self.locals,
        )
    }
}

/// Lets the address of every procedure, in both variants, escape to code the optimiser
/// cannot see.
///
/// A C function with external linkage in another file can be called from anywhere, so its
/// compiler cannot specialise it for the arguments it happens to receive. Inside one crate
/// LLVM sees every call site and would do just that (for example fold `Proc_8`'s
/// `Int_1_Par_Val` to the constant 3, or turn `&Globals` parameters into loaded values). An
/// escaped address means unknown callers, which rules out those interprocedural rewrites
/// while the calls themselves stay direct.
#[inline(never)]
pub fn publish_procedures() {
    use types::{Arr1Dim, Arr2Dim, Boolean, CapitalLetter, OneFifty};
    black_box(
        pack1::main_loop as fn(&mut Globals, &mut Heap, &mut Arrays, &mut MainLocals, u64, u64),
    );
    black_box(pack1::proc_1 as fn(RecPtr, &Globals, &mut Heap));
    black_box(pack1::proc_2 as fn(&mut OneFifty, &Globals));
    black_box(pack1::proc_3 as fn(RecPtr, &Globals, &mut Heap));
    black_box(pack1::proc_4 as fn(&mut Globals));
    black_box(pack1::proc_5 as fn(&mut Globals));
    black_box(pack2::proc_6 as fn(Enumeration, &mut Enumeration, &Globals));
    black_box(pack2::proc_7 as fn(OneFifty, OneFifty, &mut OneFifty));
    black_box(pack2::proc_8 as fn(&mut Arr1Dim, &mut Arr2Dim, i32, i32, &mut Globals));
    black_box(pack2::func_1 as fn(CapitalLetter, CapitalLetter, &mut Globals) -> Enumeration);
    black_box(pack2::func_2 as fn(&Str30, &Str30, &mut Globals) -> Boolean);
    black_box(pack2::func_3 as fn(Enumeration) -> Boolean);
    black_box(
        pack1::pack_inline::main_loop
            as fn(&mut Globals, &mut Heap, &mut Arrays, &mut MainLocals, u64, u64),
    );
    black_box(pack1::pack_inline::proc_1 as fn(RecPtr, &Globals, &mut Heap));
    black_box(pack2::pack_inline::proc_6 as fn(Enumeration, &mut Enumeration, &Globals));
    black_box(pack2::pack_inline::func_2 as fn(&Str30, &Str30, &mut Globals) -> Boolean);
}

/// One record's printed fields.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordValues {
    /// `Ptr_Comp` as C's `%d` shows it: the address truncated to 32 bits.
    pub ptr_comp: i32,
    /// `Discr` (0 = Ident_1).
    pub discr: u32,
    /// `Enum_Comp`.
    pub enum_comp: u32,
    /// `Int_Comp`.
    pub int_comp: i32,
    /// `Str_Comp`.
    pub str_comp: String,
}

/// The values Dhrystone prints after the loop, typed as C prints them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinalValues {
    /// `Int_Glob`.
    pub int_glob: i32,
    /// `Bool_Glob` (0 or 1).
    pub bool_glob: i32,
    /// `Ch_1_Glob`.
    pub ch_1_glob: char,
    /// `Ch_2_Glob`.
    pub ch_2_glob: char,
    /// `Arr_1_Glob[8]`.
    pub arr_1_glob_8: i32,
    /// `Arr_2_Glob[8][7]`.
    pub arr_2_glob_8_7: i32,
    /// `*Ptr_Glob`.
    pub ptr_glob: RecordValues,
    /// `*Next_Ptr_Glob`.
    pub next_ptr_glob: RecordValues,
    /// `Int_1_Loc`.
    pub int_1_loc: i32,
    /// `Int_2_Loc`.
    pub int_2_loc: i32,
    /// `Int_3_Loc`.
    pub int_3_loc: i32,
    /// `Enum_Loc`.
    pub enum_loc: u32,
    /// `Str_1_Loc`.
    pub str_1_loc: String,
    /// `Str_2_Loc`.
    pub str_2_loc: String,
}

impl FinalValues {
    /// The same values with both `Ptr_Comp` addresses set to 0, to compare two copies of the
    /// benchmark whose records live at different addresses.
    pub fn without_addresses(&self) -> FinalValues {
        let mut v = self.clone();
        v.ptr_glob.ptr_comp = 0;
        v.next_ptr_glob.ptr_comp = 0;
        v
    }

    /// The "should be" values after `runs` runs (the pointer fields are left 0: they are
    /// implementation-dependent and checked as links instead).
    pub fn expected(runs: u64) -> FinalValues {
        let some = as_text(STR_SOME);
        FinalValues {
            int_glob: 5,
            bool_glob: 1,
            ch_1_glob: 'A',
            ch_2_glob: 'B',
            arr_1_glob_8: 7,
            arr_2_glob_8_7: runs.wrapping_add(10) as i32,
            ptr_glob: RecordValues {
                ptr_comp: 0,
                discr: 0,
                enum_comp: 2,
                int_comp: 17,
                str_comp: some.clone(),
            },
            next_ptr_glob: RecordValues {
                ptr_comp: 0,
                discr: 0,
                enum_comp: 1,
                int_comp: 18,
                str_comp: some,
            },
            int_1_loc: 5,
            int_2_loc: 13,
            int_3_loc: 7,
            enum_loc: 1,
            str_1_loc: as_text(STR_1ST),
            str_2_loc: as_text(pack1::STR_2ND),
        }
    }
}

/// A checked variable whose final value differs from the expected one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    /// The variable, named as in the reference's printout.
    pub name: String,
    /// Its final value.
    pub actual: String,
    /// What it should be.
    pub expected: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is {}, should be {}",
            self.name, self.actual, self.expected
        )
    }
}

/// Dhrystones per second for `runs` runs in `elapsed_ns` nanoseconds.
pub fn dhrystones_per_second(runs: u64, elapsed_ns: u64) -> f64 {
    runs as f64 * 1e9 / elapsed_ns as f64
}

/// Microseconds for one run through Dhrystone.
pub fn microseconds_per_run(runs: u64, elapsed_ns: u64) -> f64 {
    elapsed_ns as f64 / 1e3 / runs as f64
}

/// DMIPS: Dhrystones per second relative to the VAX 11/780's 1757.
pub fn dmips(dhrystones_per_second: f64) -> f64 {
    dhrystones_per_second / VAX_11_780_DHRYSTONES_PER_SECOND
}

/// DMIPS per MHz of core clock.
pub fn dmips_per_mhz(dmips: f64, mhz: f64) -> f64 {
    dmips / mhz
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(m: &[Mismatch]) -> Vec<&str> {
        m.iter().map(|m| m.name.as_str()).collect()
    }

    /// The measured loops and the procedures they call start on cache lines, so the figure
    /// does not move when unrelated code moves (it did, by ~10 %, before the alignment).
    #[test]
    fn the_measured_code_starts_on_cache_lines() {
        benchmp::testing::assert_code_aligned(&[
            ("pack1::main_loop", pack1::main_loop as *const ()),
            ("pack1::proc_1", pack1::proc_1 as *const ()),
            (
                "pack1::pack_inline::main_loop",
                pack1::pack_inline::main_loop as *const (),
            ),
            (
                "pack1::pack_inline::proc_1",
                pack1::pack_inline::proc_1 as *const (),
            ),
            ("pack2::func_1", pack2::func_1 as *const ()),
        ]);
    }

    #[test]
    fn a_short_run_ends_with_every_checked_variable_as_expected() {
        for runs in [1, 2, 10, 1000] {
            let mut d = Dhrystone::new();
            d.run(runs);
            assert_eq!(d.runs_done(), runs);
            assert_eq!(d.verify(), Ok(()), "{runs} runs");
            let v = d.final_values();
            let want = FinalValues::expected(runs);
            assert_eq!(v.arr_2_glob_8_7, runs as i32 + 10);
            assert_eq!(v.ptr_glob.ptr_comp, v.next_ptr_glob.ptr_comp);
            assert_eq!(
                FinalValues {
                    ptr_glob: RecordValues {
                        ptr_comp: 0,
                        ..v.ptr_glob.clone()
                    },
                    next_ptr_glob: RecordValues {
                        ptr_comp: 0,
                        ..v.next_ptr_glob.clone()
                    },
                    ..v
                },
                want
            );
        }
    }

    #[test]
    fn runs_continue_across_calls() {
        let mut once = Dhrystone::new();
        once.run(1000);
        let mut split = Dhrystone::new();
        split.run(400);
        split.run(0);
        split.run(600);
        assert_eq!(split.runs_done(), 1000);
        assert_eq!(split.verify(), Ok(()));
        assert_eq!(split.final_values().arr_2_glob_8_7, 1010);
        assert_eq!(split.checksum(), once.checksum());
        let mut other = Dhrystone::new();
        other.run(999);
        assert_ne!(other.checksum(), once.checksum());
    }

    #[test]
    fn both_variants_compute_the_same_state() {
        for runs in [1, 2, 10, 1000] {
            let mut strict = Dhrystone::with_variant(Variant::Strict);
            let mut inlined = Dhrystone::with_variant(Variant::PackInline);
            assert_eq!(inlined.variant(), Variant::PackInline);
            strict.run(runs);
            inlined.run(runs / 2);
            inlined.run(runs - runs / 2);
            assert_eq!(inlined.runs_done(), runs);
            assert_eq!(inlined.verify(), Ok(()), "{runs} runs");
            assert_eq!(inlined.checksum(), strict.checksum());
            assert_eq!(
                inlined.final_values().without_addresses(),
                strict.final_values().without_addresses()
            );
        }
        assert_eq!(Dhrystone::new().variant(), Variant::Strict);
    }

    #[test]
    fn variants_are_named_and_counted() {
        assert_eq!(Variant::Strict.to_string(), "strict");
        assert_eq!(Variant::PackInline.to_string(), "pack-inline");
        assert_eq!(
            serde_json::to_value(Variant::PackInline).unwrap(),
            "pack-inline"
        );
        assert_eq!(Variant::Strict.calls_per_run(), 15);
        assert_eq!(Variant::PackInline.calls_per_run(), 9);
        assert!(
            Variant::Strict
                .compilation_model()
                .contains("no procedure merging")
        );
        assert!(
            Variant::PackInline
                .compilation_model()
                .contains("ground rule 2")
        );
    }

    #[test]
    fn a_fresh_state_does_not_verify() {
        let d = Dhrystone::new();
        let bad = d.verify().unwrap_err();
        assert!(names(&bad).contains(&"Int_Glob"));
        assert!(names(&bad).contains(&"Ch_1_Glob"));
        assert!(names(&bad).contains(&"Str_2_Loc"));
    }

    #[test]
    fn corrupted_state_is_detected() {
        type Corrupt = fn(&mut Globals, &mut Heap, &mut Arrays, &mut MainLocals);
        let cases: [(&str, Corrupt); 12] = [
            ("Int_Glob", |g, _, _, _| g.int_glob = 4),
            ("Bool_Glob", |g, _, _, _| g.bool_glob = false),
            ("Ch_2_Glob", |g, _, _, _| g.ch_2_glob = b'C'),
            ("Arr_1_Glob[8]", |_, _, a, _| a.arr_1_glob[8] = 8),
            ("Arr_2_Glob[8][7]", |_, _, a, _| a.arr_2_glob[8][7] += 1),
            ("Ptr_Glob->Ptr_Comp", |g, h, _, _| {
                h[g.ptr_glob].ptr_comp = g.ptr_glob
            }),
            ("Next_Ptr_Glob->Int_Comp", |g, h, _, _| {
                h[g.next_ptr_glob].variant.var_1.int_comp = 17
            }),
            ("Next_Ptr_Glob->Str_Comp", |g, h, _, _| {
                h[g.next_ptr_glob].variant.var_1.str_comp[3] = b'X'
            }),
            ("Ptr_Glob->Discr", |g, h, _, _| {
                h[g.ptr_glob].discr = Enumeration::Ident2
            }),
            ("Int_2_Loc", |_, _, _, l| l.int_2_loc = 12),
            ("Enum_Loc", |_, _, _, l| l.enum_loc = Enumeration::Ident3),
            ("Str_2_Loc", |_, _, _, l| {
                str_copy(&mut l.str_2_loc, pack1::STR_3RD)
            }),
        ];
        for (name, corrupt) in cases {
            let mut d = Dhrystone::new();
            d.run(50);
            let before = d.checksum();
            let (g, h, a, l) = d.state_mut();
            corrupt(g, h, a, l);
            assert_ne!(d.checksum(), before, "{name}");
            let bad = d.verify().unwrap_err();
            assert_eq!(names(&bad), vec![name], "{bad:?}");
            assert!(bad[0].to_string().starts_with(name));
        }
    }

    #[test]
    fn a_corrupted_run_count_is_detected() {
        let mut d = Dhrystone::new();
        d.run(100);
        d.runs_done = 101;
        assert_eq!(names(&d.verify().unwrap_err()), vec!["Arr_2_Glob[8][7]"]);
    }

    #[test]
    fn dmips_arithmetic() {
        assert_eq!(dmips(1757.0), 1.0);
        assert_eq!(dmips(0.0), 0.0);
        assert!((dmips(56_980_056.0) - 32_430.310_757).abs() < 1e-3);
        assert_eq!(dhrystones_per_second(1757, 1_000_000_000), 1757.0);
        assert_eq!(dhrystones_per_second(200_000_000, 4_000_000_000), 5e7);
        assert_eq!(microseconds_per_run(1000, 2_000_000), 2.0);
        assert_eq!(dmips_per_mhz(dmips(1757.0 * 3000.0), 1000.0), 3.0);
        // 1757 Dhrystones/s on a 1 MHz core is 1 DMIPS/MHz.
        assert_eq!(
            dmips_per_mhz(dmips(dhrystones_per_second(1757, 1_000_000_000)), 1.0),
            1.0
        );
    }

    #[test]
    fn the_record_keeps_the_c_layout() {
        assert_eq!(std::mem::offset_of!(types::Rec, ptr_comp), 0);
        assert_eq!(std::mem::offset_of!(types::Rec, discr), size_of::<usize>());
        assert_eq!(
            std::mem::offset_of!(types::Var1, str_comp),
            2 * size_of::<u32>()
        );
    }
}
