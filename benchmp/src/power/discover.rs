//! Finding every family's sources under a sysfs root ([`FAMILIES`]: batteries, powercap
//! zones, hwmon channels and ODPM rails), each tried once so an unusable one is listed with
//! its reason.

use std::path::Path;

use super::meter::FAMILIES;
use super::sources::Found;
use crate::topology::Topology;

/// Finds every source under `root` (a sysfs tree), trying one reading of each.
pub fn discover(root: &Path, topology: Option<&Topology>) -> Found {
    let mut found = Found::default();
    for family in FAMILIES {
        family.discover(root, topology, &mut found);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::meter::Reading;
    use super::super::odpm::{parse_odpm, rail_cluster};
    use super::super::sources::*;
    use super::*;
    use std::path::PathBuf;

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{text}\n")).unwrap();
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("benchmp-sources-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn odpm_lines_in_the_kernels_format() {
        let text = "t=473848\nCH0(T=473848)[S10M_VDD_TPU], 3161249\nCH1(T=473840)[VSYS_PWR_MODEM], 48480316\nnonsense\n";
        assert_eq!(
            parse_odpm(text),
            [
                ("S10M_VDD_TPU".to_string(), 473848, 3161249),
                ("VSYS_PWR_MODEM".to_string(), 473840, 48480316)
            ]
        );
    }

    #[test]
    fn a_cpu_rail_names_its_cluster() {
        let t = Topology::from_root(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/phone8/sys"),
        )
        .unwrap();
        assert_eq!(rail_cluster("S4M_VDD_CPUCL0", Some(&t)), Some(0));
        assert_eq!(rail_cluster("S2M_VDD_CPUCL2", Some(&t)), Some(2));
        assert_eq!(rail_cluster("S2M_VDD_CPUCL9", Some(&t)), None);
        assert_eq!(rail_cluster("S1M_VDD_MIF", Some(&t)), None);
        assert_eq!(rail_cluster("S4M_VDD_CPUCL0", None), None);
    }

    #[test]
    fn every_kind_is_found_with_its_name_unit_and_cover() {
        let root = scratch("kinds");
        put(&root, "class/power_supply/battery/type", "Battery");
        put(&root, "class/power_supply/battery/status", "Discharging");
        put(&root, "class/power_supply/battery/current_now", "-500000");
        put(&root, "class/power_supply/battery/voltage_now", "4000000");
        put(&root, "class/power_supply/usb/type", "USB");
        put(&root, "class/powercap/intel-rapl:0/name", "package-0");
        put(&root, "class/powercap/intel-rapl:0/energy_uj", "1000");
        put(
            &root,
            "class/powercap/intel-rapl:0/max_energy_range_uj",
            "262143328850",
        );
        put(&root, "class/powercap/intel-rapl:0:0/name", "core");
        put(&root, "class/powercap/intel-rapl:0:0/energy_uj", "10");
        put(&root, "class/powercap/intel-rapl/enabled", "1");
        put(&root, "class/powercap/intel-rapl-mmio:0/name", "package-0");
        put(&root, "class/powercap/intel-rapl-mmio:0/energy_uj", "20");
        put(&root, "class/hwmon/hwmon0/name", "ina3221");
        put(&root, "class/hwmon/hwmon0/curr1_input", "1500");
        put(&root, "class/hwmon/hwmon0/curr1_label", "VDD_CPU");
        put(&root, "class/hwmon/hwmon0/in1_input", "5000");
        put(&root, "class/hwmon/hwmon0/in1_label", "VDD_CPU");
        put(&root, "class/hwmon/hwmon1/name", "amdgpu");
        put(&root, "class/hwmon/hwmon1/power1_average", "15000000");
        put(&root, "class/hwmon/hwmon2/name", "amd_energy");
        put(&root, "class/hwmon/hwmon2/energy1_input", "123456");
        put(&root, "class/hwmon/hwmon2/energy1_label", "Esocket0");
        put(&root, "bus/iio/devices/iio:device0/name", "s2mpg10-odpm");
        put(
            &root,
            "bus/iio/devices/iio:device0/energy_value",
            "t=10\nCH0(T=10)[S4M_VDD_CPUCL0], 5\nCH1(T=10)[S1M_VDD_MIF], 7",
        );
        let f = discover(&root, None);
        let names: Vec<(&str, &str, &str)> = f
            .usable
            .iter()
            .map(|s| (s.name.as_str(), s.kind, s.unit))
            .collect();
        assert_eq!(
            names,
            [
                ("battery:battery", "power_supply", "uA*uV"),
                ("powercap:package-0", "powercap", "uJ"),
                ("powercap:package-0/core", "powercap", "uJ"),
                ("powercap:package-0@intel-rapl-mmio:0", "powercap", "uJ"),
                ("hwmon:ina3221:VDD_CPU", "hwmon", "mA*mV"),
                ("hwmon:amdgpu:power1", "hwmon", "uW"),
                ("hwmon:amd_energy:Esocket0", "hwmon", "uJ"),
                ("odpm:S4M_VDD_CPUCL0", "odpm", "uWs"),
                ("odpm:S1M_VDD_MIF", "odpm", "uWs"),
            ]
        );
        assert!(f.unusable.is_empty(), "{:?}", f.unusable);
        let by = |n: &str| f.usable.iter().find(|s| s.name == n).unwrap();
        assert_eq!(by("powercap:package-0/core").covers, "cores of package-0");
        assert_eq!(by("battery:battery").covers, "whole device (battery)");
        // A discharging battery's negative current is a positive load: 0.5 A × 4 V.
        assert_eq!(read(by("battery:battery")), Ok(Value::Power(2.0)));
        assert_eq!(read(by("hwmon:ina3221:VDD_CPU")), Ok(Value::Power(7.5)));
        assert_eq!(read(by("hwmon:amdgpu:power1")), Ok(Value::Power(15.0)));
        assert_eq!(
            by("powercap:package-0").meter.reading(),
            Reading::Counter {
                wrap_uj: Some(262143328850),
            }
        );
        let all = read_all(&f.usable);
        assert_eq!(
            all[7],
            Ok(Value::Energy {
                uj: 5,
                at_ms: Some(10)
            })
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_charging_battery_and_a_bad_file_are_unusable_with_their_reason() {
        let root = scratch("unusable");
        put(&root, "class/power_supply/BAT0/type", "Battery");
        put(&root, "class/power_supply/BAT0/status", "Charging");
        put(&root, "class/power_supply/BAT0/power_now", "9000000");
        put(&root, "class/powercap/intel-rapl:0/name", "package-0");
        put(&root, "class/powercap/intel-rapl:0/energy_uj", "lots");
        let f = discover(&root, None);
        assert!(f.usable.is_empty());
        assert_eq!(f.unusable.len(), 2);
        assert_eq!(f.unusable[0].name, "battery:BAT0");
        assert!(
            f.unusable[0].why.contains("status is \"Charging\""),
            "{}",
            f.unusable[0].why
        );
        assert!(f.unusable[1].why.contains("not a number"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_denied_file_is_called_root_only() {
        let e = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let why = unreadable(Path::new("/sys/class/powercap/intel-rapl:0/energy_uj"), &e);
        assert!(why.contains("can be read by root only"), "{why}");
    }

    #[test]
    fn zones_and_policies_of_a_phone() {
        let root = scratch("zones");
        put(&root, "class/thermal/thermal_zone0/type", "cpu-thermal");
        put(&root, "class/thermal/thermal_zone0/temp", "40000");
        put(&root, "class/thermal/thermal_zone1/type", "cpu-thermal");
        put(&root, "class/thermal/thermal_zone1/temp", "41000");
        put(&root, "class/thermal/thermal_zone2/type", "broken");
        let z = zones(&root);
        assert_eq!(
            z.iter().map(|z| z.name.as_str()).collect::<Vec<_>>(),
            ["cpu-thermal", "cpu-thermal (thermal_zone1)"]
        );
        let phone = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/phone8/sys");
        let p = policies(&phone, &[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(
            p.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["policy0", "policy2", "policy5", "policy7"]
        );
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/server2s/sys");
        assert_eq!(policies(&server, &[0, 1]).len(), 2);
        let _ = std::fs::remove_dir_all(&root);
    }
}
