//! CoreMark 1.0's matrix workload: N×N 16-bit matrices A and B, a 32-bit result matrix C,
//! and four operations (scale, matrix×vector, matrix×matrix, matrix×matrix with bit
//! extraction), each reduced to a 16-bit value by the clipped `sum` and folded into a CRC.
//!
//! Loops run in the reference's order with its integer widths; sums wrap as the reference's
//! two's-complement arithmetic does.

use crate::crc::crc16;

/// The matrices of one context. A is modified and restored by every [`Matrix::bench`].
#[derive(Debug, Clone)]
pub(crate) struct Matrix {
    n: usize,
    a: Vec<i16>,
    b: Vec<i16>,
    c: Vec<i32>,
}

/// Side of the square matrices that fit in `size` bytes: one less than the smallest `i`
/// with 8·i² ≥ size (two 16-bit and one 32-bit matrix).
pub(crate) fn dimension(size: u32) -> usize {
    let size = u64::from(size);
    let mut i: u64 = 0;
    while 8 * i * i < size {
        i += 1;
    }
    i.saturating_sub(1) as usize
}

impl Matrix {
    /// Fills A and B from `seed` (seed1 | seed2 << 16) as the reference does.
    pub(crate) fn new(size: u32, seed: i32) -> Matrix {
        let n = dimension(size);
        let mut seed = if seed == 0 { 1 } else { seed };
        let mut a = Vec::with_capacity(n * n);
        let mut b = Vec::with_capacity(n * n);
        let mut order: i32 = 1;
        for _ in 0..n * n {
            seed = order.wrapping_mul(seed).wrapping_rem(65536);
            let bv = seed.wrapping_add(order) as i16;
            let av = (i32::from(bv).wrapping_add(order) & 0xff) as i16;
            b.push(bv);
            a.push(av);
            order = order.wrapping_add(1);
        }
        Matrix {
            n,
            a,
            b,
            c: vec![0; n * n],
        }
    }

    /// Side of the matrices.
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    /// One matrix benchmark call: `crc16(test(val), crc)`.
    pub(crate) fn bench(&mut self, val: i16, crc: u16) -> u16 {
        crc16(self.test(val), crc)
    }

    fn test(&mut self, val: i16) -> i16 {
        let clip = (val as u16 | 0xf000) as i16;
        let n = self.n;
        if n == 0 {
            // No elements: every sum is 0 (not reachable with the accepted sizes).
            return (0..4).fold(0u16, |crc, _| crc16(0, crc)) as i16;
        }
        add_const(&mut self.a, val);
        mul_const(&mut self.c, &self.a, val);
        let mut crc = crc16(sum(&self.c, clip), 0);
        mul_vect(n, &mut self.c, &self.a, &self.b);
        crc = crc16(sum(&self.c, clip), crc);
        mul_matrix(n, &mut self.c, &self.a, &self.b);
        crc = crc16(sum(&self.c, clip), crc);
        mul_matrix_bitextract(n, &mut self.c, &self.a, &self.b);
        crc = crc16(sum(&self.c, clip), crc);
        add_const(&mut self.a, val.wrapping_neg());
        crc as i16
    }
}

/// Reduces C to a 16-bit value: accumulate until the running total exceeds `clip`
/// (then add 10 and restart), otherwise count rises from the previous element.
fn sum(c: &[i32], clip: i16) -> i16 {
    let clip = i32::from(clip);
    let mut tmp: i32 = 0;
    let mut prev: i32 = 0;
    let mut ret: i16 = 0;
    for &cur in c {
        tmp = tmp.wrapping_add(cur);
        if tmp > clip {
            ret = ret.wrapping_add(10);
            tmp = 0;
        } else {
            ret = ret.wrapping_add(i16::from(cur > prev));
        }
        prev = cur;
    }
    ret
}

fn add_const(a: &mut [i16], val: i16) {
    for x in a {
        *x = x.wrapping_add(val);
    }
}

fn mul_const(c: &mut [i32], a: &[i16], val: i16) {
    for (c, &a) in c.iter_mut().zip(a) {
        *c = i32::from(a) * i32::from(val);
    }
}

/// C[i] = row i of A · first row of B, for the first N entries of C only.
fn mul_vect(n: usize, c: &mut [i32], a: &[i16], b: &[i16]) {
    let b = &b[..n];
    for (c, row) in c[..n].iter_mut().zip(a.chunks_exact(n)) {
        let mut acc: i32 = 0;
        for (&x, &y) in row.iter().zip(b) {
            acc = acc.wrapping_add(i32::from(x) * i32::from(y));
        }
        *c = acc;
    }
}

/// C = A×B. Column j of B is read as element j of each row, in the reference's order.
fn mul_matrix(n: usize, c: &mut [i32], a: &[i16], b: &[i16]) {
    for (c_row, a_row) in c.chunks_exact_mut(n).zip(a.chunks_exact(n)) {
        for (j, c) in c_row.iter_mut().enumerate() {
            let mut acc: i32 = 0;
            for (&x, b_row) in a_row.iter().zip(b.chunks_exact(n)) {
                acc = acc.wrapping_add(i32::from(x) * i32::from(b_row[j]));
            }
            *c = acc;
        }
    }
}

/// C[i][j] = Σk bits(A[i][k]·B[k][j]), with bits(x) = ((x >> 2) & 0xf) · ((x >> 5) & 0x7f).
fn mul_matrix_bitextract(n: usize, c: &mut [i32], a: &[i16], b: &[i16]) {
    for (c_row, a_row) in c.chunks_exact_mut(n).zip(a.chunks_exact(n)) {
        for (j, c) in c_row.iter_mut().enumerate() {
            let mut acc: i32 = 0;
            for (&x, b_row) in a_row.iter().zip(b.chunks_exact(n)) {
                let t = i32::from(x) * i32::from(b_row[j]);
                acc = acc.wrapping_add(((t >> 2) & 0xf) * ((t >> 5) & 0x7f));
            }
            *c = acc;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimension_follows_reference_rule() {
        assert_eq!(dimension(666), 9);
        assert_eq!(dimension(2000), 15);
        assert_eq!(dimension(400), 7);
        assert_eq!(dimension(8), 0);
        assert_eq!(dimension(9), 1);
        assert_eq!(dimension(128), 3);
        assert_eq!(dimension(129), 4);
    }

    #[test]
    fn init_derivation() {
        // seed 0 becomes 1: order 1 → seed 1, B = 2, A = 3; order 2 → seed 2, B = 4, A = 6.
        let m = Matrix::new(666, 0);
        assert_eq!(&m.b[..2], &[2, 4]);
        assert_eq!(&m.a[..2], &[3, 6]);
        assert_eq!(m.a.len(), 81);
    }

    #[test]
    fn bench_restores_a() {
        let mut m = Matrix::new(666, 0x3415 | (0x3415 << 16));
        let before = m.a.clone();
        let crc1 = m.bench(0x55, 0);
        assert_eq!(m.a, before);
        assert_eq!(m.bench(0x55, 0), crc1);
    }

    /// Straight triple-loop model with explicit indices, as the reference writes it.
    fn model_matrix(n: usize, a: &[i16], b: &[i16], bitextract: bool) -> Vec<i32> {
        let mut c = vec![0i32; n * n];
        for i in 0..n {
            for j in 0..n {
                let mut acc = 0i32;
                for k in 0..n {
                    let t = i32::from(a[i * n + k]) * i32::from(b[k * n + j]);
                    let v = if bitextract {
                        ((t >> 2) & 0xf) * ((t >> 5) & 0x7f)
                    } else {
                        t
                    };
                    acc = acc.wrapping_add(v);
                }
                c[i * n + j] = acc;
            }
        }
        c
    }

    #[test]
    fn matrix_products_match_indexed_model() {
        let m = Matrix::new(2000, 12345);
        let n = m.n();
        for bitextract in [false, true] {
            let mut c = vec![0; n * n];
            if bitextract {
                mul_matrix_bitextract(n, &mut c, &m.a, &m.b);
            } else {
                mul_matrix(n, &mut c, &m.a, &m.b);
            }
            assert_eq!(c, model_matrix(n, &m.a, &m.b, bitextract));
        }
    }

    #[test]
    fn mul_vect_only_touches_first_n() {
        let m = Matrix::new(666, 7);
        let n = m.n();
        let mut c = vec![-1; n * n];
        mul_vect(n, &mut c, &m.a, &m.b);
        assert!(c[n..].iter().all(|&x| x == -1));
        let expect: i32 = (0..n).map(|j| i32::from(m.a[j]) * i32::from(m.b[j])).sum();
        assert_eq!(c[0], expect);
    }

    #[test]
    fn sum_clips_and_counts_rises() {
        // clip 5: 1 (rise) → tmp 1; 3 (rise) → tmp 4; 2 → tmp 6 > 5 → +10, reset; 0 → no rise.
        assert_eq!(sum(&[1, 3, 2, 0], 5), 1 + 1 + 10);
        // Negative clip: every element overflows it.
        assert_eq!(sum(&[1, 3, 2], (0x22u16 | 0xf000) as i16), 30);
    }
}
