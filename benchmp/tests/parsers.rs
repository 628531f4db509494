//! Property tests of the parsers every tool shares: no input panics, and every accepted input
//! round-trips through its display form (sizes, CPU lists, LMBENCH_SCHED policies).

use benchmp::cpulist::{format_cpu_list, parse_cpu_list, parse_cpu_list_once};
use benchmp::sched::{Policy, parse_policy};
use benchmp::size::{HumanSize, parse_size};
use proptest::prelude::*;

proptest! {
    #[test]
    fn sizes_never_panic(text in "\\PC{0,24}") {
        let _ = parse_size(&text);
    }

    #[test]
    fn sizes_with_suffixes_parse_to_their_value(n in 0u64..1 << 33, suffix in prop::sample::select(vec!["", "k", "K", "m", "M", "g", "G"])) {
        let shift = match suffix {
            "k" | "K" => 10,
            "m" | "M" => 20,
            "g" | "G" => 30,
            _ => 0,
        };
        let text = format!("{n}{suffix}");
        match n.checked_mul(1 << shift) {
            Some(v) => prop_assert_eq!(parse_size(&text), Ok(v)),
            None => prop_assert!(parse_size(&text).is_err()),
        }
    }

    #[test]
    fn sizes_round_trip_through_their_display(v in any::<u64>()) {
        prop_assert_eq!(parse_size(&HumanSize(v).to_string()), Ok(v));
    }

    #[test]
    fn cpu_lists_never_panic(text in "[0-9,\\- ]{0,20}|\\PC{0,20}") {
        let _ = parse_cpu_list(&text);
        let _ = parse_cpu_list_once(&text);
    }

    #[test]
    fn cpu_lists_round_trip_through_their_display(mut cpus in prop::collection::vec(0usize..300, 1..40)) {
        cpus.sort_unstable();
        cpus.dedup();
        let shown = format_cpu_list(&cpus);
        prop_assert_eq!(parse_cpu_list(&shown), Ok(cpus.clone()));
        prop_assert_eq!(parse_cpu_list_once(&shown), Ok(cpus));
    }

    #[test]
    fn accepted_cpu_lists_round_trip(text in "[0-9]{1,3}(-[0-9]{1,3})?(,[0-9]{1,3}(-[0-9]{1,3})?){0,4}") {
        if let Ok(cpus) = parse_cpu_list(&text) {
            prop_assert_eq!(parse_cpu_list(&format_cpu_list(&cpus)), Ok(cpus));
        }
    }

    #[test]
    fn policies_never_panic(text in "\\PC{0,30}") {
        let _ = parse_policy(&text);
    }

    #[test]
    fn policies_round_trip_through_their_display(p in policy()) {
        prop_assert_eq!(parse_policy(&p.to_string()), Ok(p));
    }

    #[test]
    fn accepted_policies_round_trip(text in "(?i)(default|single|balanced|balanced_spread|unique|unique_spread|custom|custom_unique)( [0-9]{1,3}){0,4}") {
        if let Ok(p) = parse_policy(&text) {
            prop_assert_eq!(parse_policy(&p.to_string()), Ok(p));
        }
    }
}

fn policy() -> impl Strategy<Value = Policy> {
    let list = || prop::collection::vec(0usize..512, 1..8);
    prop_oneof![
        Just(Policy::Default),
        Just(Policy::Single),
        Just(Policy::Balanced),
        Just(Policy::BalancedSpread),
        Just(Policy::Unique),
        Just(Policy::UniqueSpread),
        list().prop_map(Policy::Custom),
        list().prop_map(Policy::CustomUnique),
    ]
}
