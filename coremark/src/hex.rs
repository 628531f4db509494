//! CRCs in JSON as the reference prints them, `"0x%04x"` strings, so reports and the
//! children's sample records read the same as the text (use with `#[serde(with = ...)]`).

use serde::{Deserialize, Deserializer, Serializer};

/// Writes a CRC as `"0x1a2b"`.
pub(crate) fn serialize<S: Serializer>(value: &u16, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{value:#06x}"))
}

/// Reads a CRC written by [`serialize`] (`0x` and one to four hex digits).
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u16, D::Error> {
    let text = String::deserialize(d)?;
    text.strip_prefix("0x")
        .filter(|h| (1..=4).contains(&h.len()))
        .and_then(|h| u16::from_str_radix(h, 16).ok())
        .ok_or_else(|| serde::de::Error::custom(format!("{text:?} is not a 16-bit 0x-hex CRC")))
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct C(#[serde(with = "super")] u16);

    #[test]
    fn round_trip_and_refusals() {
        assert_eq!(serde_json::to_string(&C(0x0747)).unwrap(), "\"0x0747\"");
        assert_eq!(serde_json::from_str::<C>("\"0xe714\"").unwrap(), C(0xe714));
        for bad in ["\"e714\"", "\"0x\"", "\"0x12345\"", "\"0xzz\"", "1234"] {
            assert!(serde_json::from_str::<C>(bad).is_err(), "{bad}");
        }
    }
}
