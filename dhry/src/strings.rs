//! `strcpy` and `strcmp` on [`Str30`] buffers.
//!
//! The ground rules let the string functions be inlined (ANSI C allows it), and a C compiler
//! expands them or calls a vectorised libc routine. These work a machine word at a time, as
//! libc does, but keep C's semantics: the copy stops after the first NUL and leaves the rest
//! of the destination alone; the compare stops at the first difference or NUL. Every byte up
//! to that point is really read and written. Both stop at the end of the 31-byte buffer where
//! C would run past it.

use crate::types::Str30;

/// Offsets of the four 8-byte words covering a 31-byte buffer (the last one overlaps).
const WORDS: [usize; 4] = [0, 8, 16, 23];

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

#[inline(always)]
fn load(s: &Str30, at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(word)
}

#[inline(always)]
fn store(s: &mut Str30, at: usize, w: u64) {
    s[at..at + 8].copy_from_slice(&w.to_le_bytes());
}

/// High bit set in each zero byte of `w`; exact up to and including the lowest zero byte
/// (bytes above it may be flagged spuriously, which callers never look at).
#[inline(always)]
fn zero_bytes(w: u64) -> u64 {
    w.wrapping_sub(LOW_BITS) & !w & HIGH_BITS
}

/// `strcpy(dst, src)`.
#[inline]
pub fn str_copy(dst: &mut Str30, src: &Str30) {
    for at in WORDS {
        let w = load(src, at);
        let zeros = zero_bytes(w);
        if zeros == 0 {
            store(dst, at, w);
        } else {
            // Bits of every byte up to and including the first NUL.
            let lowest = zeros & zeros.wrapping_neg();
            let keep = lowest.wrapping_shl(1).wrapping_sub(1);
            let old = load(dst, at);
            store(dst, at, (old & !keep) | (w & keep));
            return;
        }
    }
}

/// `strcmp(a, b)`: negative, zero or positive as the unsigned bytes compare.
#[inline]
pub fn str_cmp(a: &Str30, b: &Str30) -> i32 {
    for at in WORDS {
        let x = load(a, at);
        let y = load(b, at);
        let stop = (x ^ y) | zero_bytes(x);
        if stop != 0 {
            let shift = stop.trailing_zeros() & !7;
            let ca = ((x >> shift) & 0xff) as i32;
            let cb = ((y >> shift) & 0xff) as i32;
            return ca - cb;
        }
    }
    0
}

/// The text of a buffer up to its first NUL (lossy for non-UTF-8 bytes).
pub fn as_text(s: &Str30) -> String {
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer holding `text` NUL-terminated, the rest filled with `fill`.
    fn buf(text: &[u8], fill: u8) -> Str30 {
        let mut s = [fill; 31];
        s[..text.len()].copy_from_slice(text);
        if text.len() < 31 {
            s[text.len()] = 0;
        }
        s
    }

    fn c_strcmp(a: &Str30, b: &Str30) -> i32 {
        for i in 0..31 {
            if a[i] != b[i] || a[i] == 0 {
                return i32::from(a[i]) - i32::from(b[i]);
            }
        }
        0
    }

    #[test]
    fn copy_stops_after_the_nul_and_keeps_the_rest() {
        for len in 0..31 {
            let text: Vec<u8> = (0..len).map(|i| b'A' + (i % 26) as u8).collect();
            let src = buf(&text, b'?');
            let mut dst = [b'#'; 31];
            str_copy(&mut dst, &src);
            assert_eq!(&dst[..len], &text[..], "len {len}");
            if len < 31 {
                assert_eq!(dst[len], 0, "len {len}");
                assert!(dst[len + 1..].iter().all(|&c| c == b'#'), "len {len}");
            }
        }
    }

    #[test]
    fn copy_of_the_dhrystone_strings() {
        let mut dst = [0u8; 31];
        str_copy(&mut dst, b"DHRYSTONE PROGRAM, 2'ND STRING\0");
        assert_eq!(as_text(&dst), "DHRYSTONE PROGRAM, 2'ND STRING");
        assert_eq!(&dst, b"DHRYSTONE PROGRAM, 2'ND STRING\0");
    }

    #[test]
    fn compare_agrees_with_a_bytewise_strcmp() {
        let words: [&[u8]; 9] = [
            b"",
            b"A",
            b"B",
            b"AB",
            b"DHRYSTONE PROGRAM, 1'ST STRING",
            b"DHRYSTONE PROGRAM, 2'ND STRING",
            b"DHRYSTONE PROGRAM, 3'RD STRING",
            b"DHRYSTONE PROGRAM",
            b"\xffDHRYSTONE",
        ];
        for a in words {
            for b in words {
                for (fa, fb) in [(0u8, 0u8), (b'x', b'y'), (0xff, 1)] {
                    let (sa, sb) = (buf(a, fa), buf(b, fb));
                    assert_eq!(
                        str_cmp(&sa, &sb).signum(),
                        c_strcmp(&sa, &sb).signum(),
                        "{:?} vs {:?}",
                        as_text(&sa),
                        as_text(&sb)
                    );
                }
            }
        }
    }

    #[test]
    fn compare_of_the_dhrystone_strings_is_negative() {
        let s1 = b"DHRYSTONE PROGRAM, 1'ST STRING\0";
        let s2 = b"DHRYSTONE PROGRAM, 2'ND STRING\0";
        assert_eq!(str_cmp(s1, s2), i32::from(b'1') - i32::from(b'2'));
        assert_eq!(str_cmp(s1, s1), 0);
    }
}
