//! Validation as CoreMark 1.0 does it: the seedcrc (a CRC of the seeds and the per-workload
//! size) identifies one of five standard runs, and each context's list, matrix and state
//! CRCs must then equal that run's known-good values. Other seeds cannot be validated.

use crate::crc::crc16;
use crate::{IterResult, Seeds};

/// The five standard runs the reference knows (its `known_id` 0..=4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum KnownRun {
    /// Seeds 0,0,0x66 with 2000 bytes per workload.
    #[serde(rename = "performance_6k")]
    Performance6k,
    /// Seeds 0x3415,0x3415,0x66 with 2000 bytes per workload.
    #[serde(rename = "validation_6k")]
    Validation6k,
    /// Seeds 8,8,8 with 400 bytes per workload (1200 total).
    #[serde(rename = "profile_generation")]
    ProfileGeneration,
    /// Seeds 0,0,0x66 with 666 bytes per workload (the default 2000 total): the score run.
    #[serde(rename = "performance_2k")]
    Performance2k,
    /// Seeds 0x3415,0x3415,0x66 with 666 bytes per workload.
    #[serde(rename = "validation_2k")]
    Validation2k,
}

/// Known-good CRCs of one standard run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    /// Expected `crclist`.
    pub list: u16,
    /// Expected `crcmatrix`.
    pub matrix: u16,
    /// Expected `crcstate`.
    pub state: u16,
}

impl KnownRun {
    /// All standard runs, in the reference's id order.
    pub const ALL: [KnownRun; 5] = [
        KnownRun::Performance6k,
        KnownRun::Validation6k,
        KnownRun::ProfileGeneration,
        KnownRun::Performance2k,
        KnownRun::Validation2k,
    ];

    /// The standard run a seedcrc identifies, if any.
    pub fn from_seedcrc(seedcrc: u16) -> Option<KnownRun> {
        KnownRun::ALL.into_iter().find(|r| r.seedcrc() == seedcrc)
    }

    /// The reference's id (0..=4).
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The seedcrc of this run.
    pub fn seedcrc(self) -> u16 {
        match self {
            KnownRun::Performance6k => 0x8a02,
            KnownRun::Validation6k => 0x7b05,
            KnownRun::ProfileGeneration => 0x4eaf,
            KnownRun::Performance2k => 0xe9f5,
            KnownRun::Validation2k => 0x18f2,
        }
    }

    /// The known-good CRCs of this run.
    pub fn expected(self) -> Expected {
        let (list, matrix, state) = match self {
            KnownRun::Performance6k => (0xd4b0, 0xbe52, 0x5e47),
            KnownRun::Validation6k => (0x3340, 0x1199, 0x39bf),
            KnownRun::ProfileGeneration => (0x6a79, 0x5608, 0xe5a4),
            KnownRun::Performance2k => (0xe714, 0x1fd7, 0x8e3a),
            KnownRun::Validation2k => (0xe3c1, 0x0747, 0x8d84),
        };
        Expected {
            list,
            matrix,
            state,
        }
    }

    /// Short name, e.g. "2K performance".
    pub fn name(self) -> &'static str {
        match self {
            KnownRun::Performance6k => "6k performance",
            KnownRun::Validation6k => "6k validation",
            KnownRun::ProfileGeneration => "Profile generation",
            KnownRun::Performance2k => "2K performance",
            KnownRun::Validation2k => "2K validation",
        }
    }

    /// Whether a score line is printed for this run (only the 2K performance run).
    pub fn is_score_run(self) -> bool {
        self == KnownRun::Performance2k
    }
}

/// Which workload's CRC a mismatch concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// The linked-list workload (`crclist`).
    List,
    /// The matrix workload (`crcmatrix`).
    Matrix,
    /// The state-machine workload (`crcstate`).
    State,
}

impl Workload {
    /// Lower-case name as the reference prints it.
    pub fn name(self) -> &'static str {
        match self {
            Workload::List => "list",
            Workload::Matrix => "matrix",
            Workload::State => "state",
        }
    }
}

/// One CRC that differs from the known-good value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch {
    /// The workload concerned.
    pub workload: Workload,
    /// The CRC this run produced.
    pub got: u16,
    /// The known-good CRC.
    pub expected: u16,
}

/// Outcome of validating one context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Validation {
    /// The seedcrc is not one of the standard runs: nothing to compare against.
    UnknownSeeds,
    /// A standard run; `mismatches` is empty when every CRC is right.
    Checked {
        /// The standard run the seedcrc identified.
        run: KnownRun,
        /// CRCs that differ, in list, matrix, state order.
        mismatches: Vec<Mismatch>,
    },
}

impl Validation {
    /// True when the seeds are known and every CRC matched.
    pub fn passed(&self) -> bool {
        matches!(self, Validation::Checked { mismatches, .. } if mismatches.is_empty())
    }

    /// The mismatching CRCs (empty for unknown seeds).
    pub fn mismatches(&self) -> &[Mismatch] {
        match self {
            Validation::UnknownSeeds => &[],
            Validation::Checked { mismatches, .. } => mismatches,
        }
    }
}

/// CRC of seed1, seed2, seed3 and the per-workload size (as a 16-bit value).
pub fn seedcrc(seeds: Seeds, size_per_algorithm: u32) -> u16 {
    let crc = crc16(seeds.seed1, 0);
    let crc = crc16(seeds.seed2, crc);
    let crc = crc16(seeds.seed3, crc);
    crc16(size_per_algorithm as i16, crc)
}

/// Checks one context's CRCs against the standard run `seedcrc` identifies.
pub fn validate(seedcrc: u16, result: &IterResult) -> Validation {
    let Some(run) = KnownRun::from_seedcrc(seedcrc) else {
        return Validation::UnknownSeeds;
    };
    let expected = run.expected();
    let mismatches = [
        (Workload::List, result.crclist, expected.list),
        (Workload::Matrix, result.crcmatrix, expected.matrix),
        (Workload::State, result.crcstate, expected.state),
    ]
    .into_iter()
    .filter(|&(_, got, expected)| got != expected)
    .map(|(workload, got, expected)| Mismatch {
        workload,
        got,
        expected,
    })
    .collect();
    Validation::Checked { run, mismatches }
}
