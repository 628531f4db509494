//! CoreMark's CRC-16 helpers: a reflected CRC-16 (polynomial 0xA001) computed one bit at
//! a time, exactly as CoreMark 1.0 does, so every checksum matches the reference.
//!
//! The bitwise loop is part of the workload being measured; a table-driven CRC would give
//! the same values but would measure something else.

/// Feeds one byte into `crc`, least significant bit first.
#[inline]
pub fn crcu8(data: u8, crc: u16) -> u16 {
    let mut data = data;
    let mut crc = crc;
    for _ in 0..8 {
        let carry = (data ^ crc as u8) & 1;
        data >>= 1;
        if carry != 0 {
            crc ^= 0x4002;
            crc = (crc >> 1) | 0x8000;
        } else {
            crc >>= 1;
        }
    }
    crc
}

/// Feeds a 16-bit value into `crc`, low byte first.
#[inline]
pub fn crcu16(value: u16, crc: u16) -> u16 {
    let crc = crcu8(value as u8, crc);
    crcu8((value >> 8) as u8, crc)
}

/// Feeds the bits of a signed 16-bit value into `crc` (same as [`crcu16`]).
#[inline]
pub fn crc16(value: i16, crc: u16) -> u16 {
    crcu16(value as u16, crc)
}

/// Feeds a 32-bit value into `crc`: its low 16 bits, then its high 16 bits.
#[inline]
pub fn crcu32(value: u32, crc: u16) -> u16 {
    let crc = crc16(value as i16, crc);
    crc16((value >> 16) as i16, crc)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Straight bit-by-bit model of the same CRC (reflected, poly 0xA001, no final xor).
    fn model(bytes: &[u8], mut crc: u16) -> u16 {
        for &b in bytes {
            crc ^= u16::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xA001
                } else {
                    crc >> 1
                };
            }
        }
        crc
    }

    #[test]
    fn crcu8_matches_reflected_crc16_model() {
        for crc in [0u16, 1, 0x8000, 0xffff, 0x1234, 0xe9f5] {
            for b in 0..=255u8 {
                assert_eq!(crcu8(b, crc), model(&[b], crc), "byte {b:#x} crc {crc:#x}");
            }
        }
    }

    #[test]
    fn wider_helpers_feed_low_byte_first() {
        assert_eq!(crcu16(0xabcd, 0x1111), model(&[0xcd, 0xab], 0x1111));
        assert_eq!(crc16(-2, 0), model(&[0xfe, 0xff], 0));
        assert_eq!(
            crcu32(0x1234_5678, 0x4321),
            model(&[0x78, 0x56, 0x34, 0x12], 0x4321)
        );
    }

    #[test]
    fn known_check_value() {
        // CRC-16/ARC of "123456789" is 0xbb3d; this CRC is the same algorithm with init 0.
        assert_eq!(b"123456789".iter().fold(0, |c, &b| crcu8(b, c)), 0xbb3d);
    }
}
