//! CoreMark 1.0's state-machine workload: a buffer of comma-separated number-like tokens
//! (integers, decimals, scientific notation and invalid strings chosen by the seed) is
//! scanned by a small lexer, corrupted at a stride, scanned again and restored, and the
//! per-state final and transition counters are folded into a CRC.
//!
//! The end of the buffer also ends a scan (the reference would read past it if every
//! trailing NUL had been corrupted, which the standard sizes never do).

use std::slice::Iter;

use crate::crc::crcu32;

const INT_PATTERNS: [&[u8; 4]; 4] = [b"5012", b"1234", b"-874", b"+122"];
const FLOAT_PATTERNS: [&[u8; 8]; 4] = [b"35.54400", b".1234500", b"-110.700", b"+0.64400"];
const SCI_PATTERNS: [&[u8; 8]; 4] = [b"5.500e+3", b"-.123e-2", b"-87e+832", b"+0.6e-12"];
const INVALID_PATTERNS: [&[u8; 8]; 4] = [b"T0.3e-1F", b"-T.T++Tq", b"1T3.4e4z", b"34.0e-T^"];

/// Lexer states, numbered as the reference numbers them (the counters are indexed by them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum State {
    Start = 0,
    Invalid = 1,
    S1 = 2,
    S2 = 3,
    Int = 4,
    Float = 5,
    Exponent = 6,
    Scientific = 7,
}

const NUM_STATES: usize = 8;

/// Builds the `size`-byte input: tokens each followed by ',', then NUL bytes.
pub(crate) fn init(size: u32, seed: i16) -> Vec<u8> {
    let size = size as usize;
    let mut buf = vec![0u8; size];
    let limit = size.saturating_sub(1);
    let mut seed = seed;
    let mut total = 0usize;
    let mut token: &[u8] = &[];
    while total + token.len() + 1 < limit {
        if !token.is_empty() {
            buf[total..total + token.len()].copy_from_slice(token);
            buf[total + token.len()] = b',';
            total += token.len() + 1;
        }
        seed = seed.wrapping_add(1);
        let pick = ((seed >> 3) & 3) as usize;
        token = match seed & 7 {
            0..=2 => INT_PATTERNS[pick],
            3 | 4 => FLOAT_PATTERNS[pick],
            5 | 6 => SCI_PATTERNS[pick],
            _ => INVALID_PATTERNS[pick],
        };
    }
    buf
}

/// One state benchmark call over `buf`; returns the CRC of the counters, starting from `crc`.
/// The buffer is corrupted with `seed1` and the same positions are then xored with `seed2`,
/// so it is restored only when the two seeds are equal (as in the reference).
pub(crate) fn bench(buf: &mut [u8], seed1: i16, seed2: i16, step: i16, crc: u16) -> u16 {
    let mut finals = [0u32; NUM_STATES];
    let mut transitions = [0u32; NUM_STATES];
    // The reference's stride is always at least 0x22; guard against a zero step anyway.
    let step = usize::from(step.max(1) as u16);

    scan(buf, &mut finals, &mut transitions);
    xor_stride(buf, step, seed1 as u8);
    scan(buf, &mut finals, &mut transitions);
    xor_stride(buf, step, seed2 as u8);

    let mut crc = crc;
    for (&f, &t) in finals.iter().zip(&transitions) {
        crc = crcu32(f, crc);
        crc = crcu32(t, crc);
    }
    crc
}

/// Xors every `step`-th byte that is not a comma with `mask`.
fn xor_stride(buf: &mut [u8], step: usize, mask: u8) {
    for b in buf.iter_mut().step_by(step) {
        if *b != b',' {
            *b ^= mask;
        }
    }
}

/// Scans tokens until a NUL byte (or the end), counting each token's final state.
fn scan(buf: &[u8], finals: &mut [u32; NUM_STATES], transitions: &mut [u32; NUM_STATES]) {
    let mut rest = buf.iter();
    while let Some(&c) = rest.as_slice().first() {
        if c == 0 {
            break;
        }
        let state = transition(&mut rest, transitions);
        finals[state as usize] += 1;
    }
}

#[inline]
fn is_digit(c: u8) -> bool {
    c.is_ascii_digit()
}

/// Lexes one token from `rest`, leaving it after the comma, after the character that made
/// the token invalid, or at the NUL byte; returns the final state and counts transitions
/// as the reference does.
///
/// The states form a chain (START → S1 → INT → FLOAT → S2 → EXPONENT → SCIENTIFIC, with
/// shortcuts and self-loops only), so each state is its own block of code that hands over
/// to the next one; this is the code an optimising C compiler makes of the reference's
/// `switch` inside a loop, and it reads and counts exactly the same characters.
/// `tests::model_transition` keeps the table-driven form and the tests compare both.
#[inline]
fn transition(rest: &mut Iter<'_, u8>, counts: &mut [u32; NUM_STATES]) -> State {
    let Some(c) = next_char(rest) else {
        return State::Start;
    };
    counts[State::Start as usize] += 1;
    if is_digit(c) {
        int(rest, counts)
    } else if c == b'+' || c == b'-' {
        s1(rest, counts)
    } else if c == b'.' {
        float(rest, counts)
    } else {
        counts[State::Invalid as usize] += 1;
        State::Invalid
    }
}

/// The token's next character, or None at its end: a NUL byte or the end of the buffer
/// (left unread) or a comma (consumed).
#[inline(always)]
fn next_char(rest: &mut Iter<'_, u8>) -> Option<u8> {
    match rest.as_slice().first() {
        Some(&c) if c != 0 => {
            rest.next();
            (c != b',').then_some(c)
        }
        _ => None,
    }
}

/// After a sign.
#[inline(always)]
fn s1(rest: &mut Iter<'_, u8>, counts: &mut [u32; NUM_STATES]) -> State {
    let Some(c) = next_char(rest) else {
        return State::S1;
    };
    counts[State::S1 as usize] += 1;
    if is_digit(c) {
        int(rest, counts)
    } else if c == b'.' {
        float(rest, counts)
    } else {
        State::Invalid
    }
}

/// Integer digits.
#[inline(always)]
fn int(rest: &mut Iter<'_, u8>, counts: &mut [u32; NUM_STATES]) -> State {
    loop {
        let Some(c) = next_char(rest) else {
            return State::Int;
        };
        if c == b'.' {
            counts[State::Int as usize] += 1;
            return float(rest, counts);
        }
        if !is_digit(c) {
            counts[State::Int as usize] += 1;
            return State::Invalid;
        }
    }
}

/// Fraction digits.
#[inline(always)]
fn float(rest: &mut Iter<'_, u8>, counts: &mut [u32; NUM_STATES]) -> State {
    loop {
        let Some(c) = next_char(rest) else {
            return State::Float;
        };
        if c == b'E' || c == b'e' {
            counts[State::Float as usize] += 1;
            return s2(rest, counts);
        }
        if !is_digit(c) {
            counts[State::Float as usize] += 1;
            return State::Invalid;
        }
    }
}

/// After the exponent letter.
#[inline(always)]
fn s2(rest: &mut Iter<'_, u8>, counts: &mut [u32; NUM_STATES]) -> State {
    let Some(c) = next_char(rest) else {
        return State::S2;
    };
    counts[State::S2 as usize] += 1;
    if c == b'+' || c == b'-' {
        exponent(rest, counts)
    } else {
        State::Invalid
    }
}

/// After the exponent sign.
#[inline(always)]
fn exponent(rest: &mut Iter<'_, u8>, counts: &mut [u32; NUM_STATES]) -> State {
    let Some(c) = next_char(rest) else {
        return State::Exponent;
    };
    counts[State::Exponent as usize] += 1;
    if is_digit(c) {
        scientific(rest, counts)
    } else {
        State::Invalid
    }
}

/// Exponent digits.
#[inline(always)]
fn scientific(rest: &mut Iter<'_, u8>, counts: &mut [u32; NUM_STATES]) -> State {
    loop {
        let Some(c) = next_char(rest) else {
            return State::Scientific;
        };
        if !is_digit(c) {
            counts[State::Invalid as usize] += 1;
            return State::Invalid;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's form: one loop with a `match` on the current state.
    fn model_transition(rest: &mut Iter<'_, u8>, counts: &mut [u32; NUM_STATES]) -> State {
        let mut state = State::Start;
        while let Some(&c) = rest.as_slice().first() {
            if c == 0 {
                break;
            }
            rest.next();
            if c == b',' {
                break;
            }
            match state {
                State::Start => {
                    state = if is_digit(c) {
                        State::Int
                    } else if c == b'+' || c == b'-' {
                        State::S1
                    } else if c == b'.' {
                        State::Float
                    } else {
                        counts[State::Invalid as usize] += 1;
                        State::Invalid
                    };
                    counts[State::Start as usize] += 1;
                }
                State::S1 => {
                    state = if is_digit(c) {
                        State::Int
                    } else if c == b'.' {
                        State::Float
                    } else {
                        State::Invalid
                    };
                    counts[State::S1 as usize] += 1;
                }
                State::Int => {
                    if c == b'.' {
                        state = State::Float;
                        counts[State::Int as usize] += 1;
                    } else if !is_digit(c) {
                        state = State::Invalid;
                        counts[State::Int as usize] += 1;
                    }
                }
                State::Float => {
                    if c == b'E' || c == b'e' {
                        state = State::S2;
                        counts[State::Float as usize] += 1;
                    } else if !is_digit(c) {
                        state = State::Invalid;
                        counts[State::Float as usize] += 1;
                    }
                }
                State::S2 => {
                    state = if c == b'+' || c == b'-' {
                        State::Exponent
                    } else {
                        State::Invalid
                    };
                    counts[State::S2 as usize] += 1;
                }
                State::Exponent => {
                    state = if is_digit(c) {
                        State::Scientific
                    } else {
                        State::Invalid
                    };
                    counts[State::Exponent as usize] += 1;
                }
                State::Scientific => {
                    if !is_digit(c) {
                        state = State::Invalid;
                        counts[State::Invalid as usize] += 1;
                    }
                }
                State::Invalid => {}
            }
            if state == State::Invalid {
                break;
            }
        }
        state
    }

    /// Lexes `input` with both forms, checking states, counters and positions agree.
    fn check_against_model(input: &[u8]) {
        let (mut fast, mut model) = (input.iter(), input.iter());
        let (mut fast_counts, mut model_counts) = ([0; NUM_STATES], [0; NUM_STATES]);
        while model.as_slice().first().is_some_and(|&c| c != 0) {
            let want = model_transition(&mut model, &mut model_counts);
            let got = transition(&mut fast, &mut fast_counts);
            assert_eq!(got, want, "input {input:?}");
            assert_eq!(
                fast.as_slice().len(),
                model.as_slice().len(),
                "input {input:?}"
            );
        }
        assert_eq!(fast_counts, model_counts, "input {input:?}");
    }

    #[test]
    fn per_state_lexer_matches_the_model() {
        // Every pattern, each corrupted at every position by every xor mask the standard
        // seeds use, plus pseudo-random strings over the interesting alphabet.
        let patterns = INT_PATTERNS
            .iter()
            .map(|p| &p[..])
            .chain(FLOAT_PATTERNS.iter().map(|p| &p[..]))
            .chain(SCI_PATTERNS.iter().map(|p| &p[..]))
            .chain(INVALID_PATTERNS.iter().map(|p| &p[..]));
        for p in patterns {
            check_against_model(p);
            for pos in 0..p.len() {
                for mask in [0x15u8, 0x08, 0x01, 0x7f, 0xff] {
                    let mut v = p.to_vec();
                    v[pos] ^= mask;
                    v.extend_from_slice(b",5012,\0");
                    check_against_model(&v);
                }
            }
        }
        let alphabet = b"0123456789+-.eEx,\0";
        let mut x: u32 = 0x1234_5678;
        for _ in 0..2000 {
            let len = (x % 24) as usize;
            let v: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    alphabet[(x % alphabet.len() as u32) as usize]
                })
                .collect();
            check_against_model(&v);
        }
    }

    fn lex_all(input: &[u8]) -> (Vec<State>, [u32; NUM_STATES]) {
        let mut counts = [0; NUM_STATES];
        let mut rest = input.iter();
        let mut states = Vec::new();
        while rest.as_slice().first().is_some_and(|&c| c != 0) {
            states.push(transition(&mut rest, &mut counts));
        }
        (states, counts)
    }

    #[test]
    fn recognises_each_pattern_kind() {
        let (states, _) = lex_all(b"5012,35.54400,5.500e+3,-.123e-2,+122,\0");
        use State::*;
        assert_eq!(states, [Int, Float, Scientific, Scientific, Int]);
    }

    #[test]
    fn invalid_stops_after_the_bad_character() {
        // "T0.3e-1F,": T is invalid at START; "0.3e-1F" then lexes as a new token that
        // turns invalid at F; the trailing "," is an empty token ending in START.
        let (states, counts) = lex_all(b"T0.3e-1F,\0");
        use State::*;
        assert_eq!(states, [Invalid, Invalid, Start]);
        // START: 'T' and '0'; S2: '-'; EXPONENT: '1'; FLOAT leaves once ('e');
        // INT leaves once ('.'); INVALID: from START ('T') and from SCIENTIFIC ('F').
        assert_eq!(counts[Start as usize], 2);
        assert_eq!(counts[Invalid as usize], 2);
        assert_eq!(counts[Int as usize], 1);
        assert_eq!(counts[Float as usize], 1);
        assert_eq!(counts[S2 as usize], 1);
        assert_eq!(counts[Exponent as usize], 1);
        assert_eq!(counts[S1 as usize], 0);
    }

    #[test]
    fn init_layout_for_seed_zero() {
        // Seeds 1..=7 pick int, int, float, float, scientific, scientific, invalid, all
        // from the first column of each table ((seed >> 3) & 3 == 0).
        let buf = init(666, 0);
        assert_eq!(buf.len(), 666);
        assert!(buf.starts_with(b"5012,5012,35.54400,35.54400,5.500e+3,5.500e+3,T0.3e-1F,"));
        let end = buf.iter().position(|&c| c == 0).unwrap();
        assert!(end < 665);
        assert!(buf[end..].iter().all(|&c| c == 0));
        assert_eq!(buf[end - 1], b',');
    }

    #[test]
    fn equal_seeds_restore_the_buffer() {
        let mut buf = init(666, 0x3415);
        let before = buf.clone();
        let a = bench(&mut buf, 0x3415, 0x3415, 0x22, 0);
        assert_eq!(buf, before);
        assert_eq!(bench(&mut buf, 0x3415, 0x3415, 0x22, 0), a);
    }

    /// `core_bench_state` as the reference writes it: scan, corrupt every `step`-th byte that
    /// is not a comma with seed1, scan again, xor the same bytes with seed2, then fold each
    /// state's final and transition counts into the CRC.
    fn model_bench(buf: &mut [u8], seed1: i16, seed2: i16, step: usize, crc: u16) -> u16 {
        let mut finals = [0u32; NUM_STATES];
        let mut transitions = [0u32; NUM_STATES];
        let mut scan = |buf: &[u8]| {
            let mut rest = buf.iter();
            while rest.as_slice().first().is_some_and(|&c| c != 0) {
                let state = model_transition(&mut rest, &mut transitions);
                finals[state as usize] += 1;
            }
        };
        scan(buf);
        let mut i = 0;
        while i < buf.len() {
            if buf[i] != b',' {
                buf[i] ^= seed1 as u8;
            }
            i += step;
        }
        scan(buf);
        let mut i = 0;
        while i < buf.len() {
            if buf[i] != b',' {
                buf[i] ^= seed2 as u8;
            }
            i += step;
        }
        (0..NUM_STATES).fold(crc, |crc, s| crcu32(transitions[s], crcu32(finals[s], crc)))
    }

    #[test]
    fn tiny_buffers_match_the_model() {
        // Buffers too small for a token, or whose corrupted first byte is the only text
        // before the end (the scan then stops at the buffer's end, not at a NUL byte).
        for size in 0..40u32 {
            let buf = init(size, 5);
            assert_eq!(buf.len(), size as usize);
            let text = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
            assert!(buf[text..].iter().all(|&c| c == 0), "size {size}");
            assert!(text == 0 || buf[text - 1] == b',', "size {size}: {buf:?}");
            for (seed1, seed2, step) in [(0x7f, 0x01, 0x22), (0x15, 0x15, 0x22), (-1, 3, 1)] {
                let (mut fast, mut model) = (buf.clone(), buf.clone());
                let got = bench(&mut fast, seed1, seed2, step, 0x1234);
                let want = model_bench(&mut model, seed1, seed2, step as usize, 0x1234);
                assert_eq!(got, want, "size {size}, seeds {seed1} {seed2}, step {step}");
                assert_eq!(fast, model, "size {size}: the buffer after the call");
            }
        }
    }

    #[test]
    fn a_standard_block_matches_the_model() {
        for seed in [0i16, 0x3415, 8] {
            let buf = init(666, seed);
            for step in [0x22i16, 0x55, 0x7f] {
                let (mut fast, mut model) = (buf.clone(), buf.clone());
                let got = bench(&mut fast, seed, seed, step, 0);
                assert_eq!(got, model_bench(&mut model, seed, seed, step as usize, 0));
                assert_eq!(fast, buf, "equal seeds restore the buffer");
            }
        }
    }
}
