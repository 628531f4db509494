//! The reference's known-good values (spec §8): seedcrc and the list, matrix and state CRCs
//! of the five standard runs, crcfinal for several iteration counts, an unknown seed set,
//! and corrupted seeds being caught. Longer counts are `#[ignore]`d: run them with
//! `cargo test -p coremark --release -- --ignored`.

use crate::validate::{KnownRun, Validation, Workload, validate};
use crate::{Context, IterResult, Seeds};

const PERF_2K: (Seeds, u32) = (Seeds::PERFORMANCE, 2000);
const VALID_2K: (Seeds, u32) = (Seeds::VALIDATION, 2000);
const PROFILE: (Seeds, u32) = (Seeds::PROFILE, 1200);

fn run((seeds, total): (Seeds, u32), iterations: u32) -> (Context, IterResult) {
    let mut ctx = Context::new(seeds, total).unwrap();
    let r = ctx.iterate(iterations);
    (ctx, r)
}

/// (run, seeds, total size, seedcrc, crclist, crcmatrix, crcstate) for reference ids 0..=4.
const STANDARD: [(KnownRun, Seeds, u32, u16, u16, u16, u16); 5] = [
    (
        KnownRun::Performance6k,
        Seeds::PERFORMANCE,
        6000,
        0x8a02,
        0xd4b0,
        0xbe52,
        0x5e47,
    ),
    (
        KnownRun::Validation6k,
        Seeds::VALIDATION,
        6000,
        0x7b05,
        0x3340,
        0x1199,
        0x39bf,
    ),
    (
        KnownRun::ProfileGeneration,
        Seeds::PROFILE,
        1200,
        0x4eaf,
        0x6a79,
        0x5608,
        0xe5a4,
    ),
    (
        KnownRun::Performance2k,
        Seeds::PERFORMANCE,
        2000,
        0xe9f5,
        0xe714,
        0x1fd7,
        0x8e3a,
    ),
    (
        KnownRun::Validation2k,
        Seeds::VALIDATION,
        2000,
        0x18f2,
        0xe3c1,
        0x0747,
        0x8d84,
    ),
];

#[test]
fn standard_runs_match_known_crcs() {
    for (id, &(known, seeds, total, seedcrc, list, matrix, state)) in STANDARD.iter().enumerate() {
        let (ctx, r) = run((seeds, total), 1);
        assert_eq!(ctx.seedcrc(), seedcrc, "seedcrc of id {id}");
        assert_eq!(
            (r.crclist, r.crcmatrix, r.crcstate),
            (list, matrix, state),
            "list/matrix/state of id {id}"
        );
        // With one iteration the final CRC is the first iteration's CRC.
        assert_eq!(r.crc, r.crclist);
        let v = validate(ctx.seedcrc(), &r);
        assert_eq!(
            v,
            Validation::Checked {
                run: known,
                mismatches: vec![]
            }
        );
        assert!(v.passed());
        assert_eq!(known.id() as usize, id);
        assert_eq!(KnownRun::from_seedcrc(seedcrc), Some(known));
    }
}

#[test]
fn list_matrix_state_crcs_do_not_depend_on_iteration_count() {
    for &(_, seeds, total, _, list, matrix, state) in &STANDARD {
        let (_, r) = run((seeds, total), 3);
        assert_eq!((r.crclist, r.crcmatrix, r.crcstate), (list, matrix, state));
    }
}

/// crcfinal by iteration count (spec §8, measured on the reference).
fn check_final(iterations: u32, perf: u16, valid: u16, profile: u16) {
    assert_eq!(
        run(PERF_2K, iterations).1.crc,
        perf,
        "perf 2K, {iterations} iterations"
    );
    assert_eq!(
        run(VALID_2K, iterations).1.crc,
        valid,
        "validation 2K, {iterations} iterations"
    );
    assert_eq!(
        run(PROFILE, iterations).1.crc,
        profile,
        "profile, {iterations} iterations"
    );
}

#[test]
fn crcfinal_1_2_3_iterations() {
    check_final(1, 0xe714, 0xe3c1, 0x6a79);
    check_final(2, 0x72be, 0xfe8c, 0x8420);
    check_final(3, 0x2e87, 0xbf76, 0x60bc);
}

#[test]
fn crcfinal_10_iterations() {
    check_final(10, 0xfcaf, 0xc64e, 0xde7c);
}

#[test]
fn crcfinal_100_iterations() {
    check_final(100, 0x988c, 0x844d, 0xa9c8);
}

#[test]
fn crcfinal_1000_iterations() {
    check_final(1000, 0xd340, 0x26c2, 0x95ea);
}

#[test]
#[ignore = "slow in debug builds; run with --release -- --ignored"]
fn crcfinal_10000_iterations() {
    check_final(10_000, 0x988c, 0xd1af, 0xa654);
}

#[test]
#[ignore = "slow in debug builds; run with --release -- --ignored"]
fn crcfinal_300000_and_400000_iterations() {
    assert_eq!(run(VALID_2K, 300_000).1.crc, 0x9ea7);
    assert_eq!(run(PERF_2K, 400_000).1.crc, 0x65c5);
}

#[test]
fn context_iterations_restart_the_crcs() {
    // A context can be iterated again and gives the same CRCs (standard seeds restore
    // all data after every iteration).
    let mut ctx = Context::new(Seeds::PERFORMANCE, 2000).unwrap();
    let a = ctx.iterate(2);
    let b = ctx.iterate(2);
    assert_eq!(a, b);
    assert_eq!(a.crc, 0x72be);
}

#[test]
fn unknown_seeds_example() {
    let seeds = Seeds::from_args(1, 1, 1);
    assert_eq!(seeds, Seeds::new(1, 1, 1));
    let (ctx, r) = run((seeds, 2000), 1);
    assert_eq!(ctx.seedcrc(), 0x802a);
    assert_eq!(
        (r.crclist, r.crcmatrix, r.crcstate),
        (0x48be, 0xe03e, 0x210a)
    );
    let v = validate(ctx.seedcrc(), &r);
    assert_eq!(v, Validation::UnknownSeeds);
    assert!(!v.passed());
}

#[test]
fn corrupted_seed_changes_seedcrc_and_is_not_validated() {
    for (seeds, total) in [PERF_2K, VALID_2K, PROFILE] {
        for bit in 0..16 {
            let mut bad = seeds;
            bad.seed1 ^= 1 << bit;
            let (ctx, r) = run((bad, total), 1);
            let v = validate(ctx.seedcrc(), &r);
            assert!(!v.passed(), "seed1 bit {bit} flipped still passed");
            assert_eq!(v, Validation::UnknownSeeds);
        }
    }
}

#[test]
fn corrupted_seed_behind_known_seedcrc_is_a_crc_error() {
    // Data generated from a corrupted seed, reported under the standard run's seedcrc:
    // every workload CRC that the seed feeds must be flagged.
    let perf = KnownRun::Performance2k.seedcrc();
    let workloads = |v: &Validation| {
        v.mismatches()
            .iter()
            .map(|m| m.workload)
            .collect::<Vec<_>>()
    };

    let (_, r) = run((Seeds::new(1, 0, 0x66), 2000), 1);
    let v = validate(perf, &r);
    assert!(!v.passed());
    assert_eq!(
        workloads(&v),
        [Workload::List, Workload::Matrix, Workload::State]
    );

    // seed2 feeds only the matrix data and the state restore.
    let (_, r) = run((Seeds::new(0, 0x100, 0x66), 2000), 1);
    let v = validate(perf, &r);
    assert!(!v.passed());
    assert!(workloads(&v).contains(&Workload::Matrix));
    let m = v
        .mismatches()
        .iter()
        .find(|m| m.workload == Workload::Matrix)
        .unwrap();
    assert_eq!(m.expected, 0x1fd7);
    assert_ne!(m.got, 0x1fd7);

    // seed3 (number of finds) changes the list CRC.
    let (_, r) = run((Seeds::new(0, 0, 0x65), 2000), 1);
    let v = validate(perf, &r);
    assert!(workloads(&v).contains(&Workload::List));
}

#[test]
fn corrupted_result_is_a_crc_error() {
    let (ctx, mut r) = run(VALID_2K, 1);
    r.crcstate ^= 0x0100;
    let v = validate(ctx.seedcrc(), &r);
    assert_eq!(v.mismatches().len(), 1);
    assert_eq!(v.mismatches()[0].workload, Workload::State);
    assert_eq!(v.mismatches()[0].expected, 0x8d84);
}
