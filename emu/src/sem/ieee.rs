//! IEEE 754 binary32 and binary64 arithmetic in the four rounding modes of PTX
//! (`.rn .rz .rm .rp`): round to nearest is the hardware's operation; the directed
//! modes move the nearest result by one unit in the last place when the exact
//! result lies on the side the mode forbids ([`crate::sem::rounding`]).

use crate::sem::rounding::{self as r, Op};
use spu_isa::Rnd;

/// A rounding direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Round {
    /// To nearest, ties to even (`.rn`, the default).
    Nearest,
    /// Toward zero (`.rz`).
    Zero,
    /// Toward minus infinity (`.rm`).
    Down,
    /// Toward plus infinity (`.rp`).
    Up,
}

impl Round {
    /// The direction of a PTX rounding modifier (integral ones round to an integer
    /// in the same direction).
    pub fn of(rnd: Option<Rnd>) -> Round {
        match rnd.map(Rnd::direction) {
            None | Some(Rnd::Rn) => Round::Nearest,
            Some(Rnd::Rz) => Round::Zero,
            Some(Rnd::Rm) => Round::Down,
            _ => Round::Up,
        }
    }

    fn rnd(self) -> Rnd {
        match self {
            Round::Nearest => Rnd::Rn,
            Round::Zero => Rnd::Rz,
            Round::Down => Rnd::Rm,
            Round::Up => Rnd::Rp,
        }
    }
}

/// A binary floating-point format.
pub trait Float: Copy + PartialOrd + std::ops::Neg<Output = Self> {
    /// `op(x, y, z)` with a directed rounding.
    fn directed(op: Op, mode: Round, x: Self, y: Self, z: Self) -> Self;
    fn add_n(self, y: Self) -> Self;
    fn sub_n(self, y: Self) -> Self;
    fn mul_n(self, y: Self) -> Self;
    fn div_n(self, y: Self) -> Self;
    fn fma_n(self, y: Self, z: Self) -> Self;
    fn sqrt_n(self) -> Self;
    fn one() -> Self;
    fn of_int(n: i128, mode: Round) -> Self;
}

impl Float for f32 {
    fn directed(op: Op, mode: Round, x: f32, y: f32, z: f32) -> f32 {
        r::f32_op(op, mode.rnd(), x, y, z)
    }
    fn add_n(self, y: f32) -> f32 {
        self + y
    }
    fn sub_n(self, y: f32) -> f32 {
        self - y
    }
    fn mul_n(self, y: f32) -> f32 {
        self * y
    }
    fn div_n(self, y: f32) -> f32 {
        self / y
    }
    fn fma_n(self, y: f32, z: f32) -> f32 {
        self.mul_add(y, z)
    }
    fn sqrt_n(self) -> f32 {
        self.sqrt()
    }
    fn one() -> f32 {
        1.0
    }
    fn of_int(n: i128, mode: Round) -> f32 {
        match mode {
            Round::Nearest => n as f32,
            _ => r::int_to_f32(n, mode.rnd()),
        }
    }
}

impl Float for f64 {
    fn directed(op: Op, mode: Round, x: f64, y: f64, z: f64) -> f64 {
        match op {
            Op::Fma => r::fma_f64(mode.rnd(), x, y, z),
            _ => r::f64_op(op, mode.rnd(), x, y),
        }
    }
    fn add_n(self, y: f64) -> f64 {
        self + y
    }
    fn sub_n(self, y: f64) -> f64 {
        self - y
    }
    fn mul_n(self, y: f64) -> f64 {
        self * y
    }
    fn div_n(self, y: f64) -> f64 {
        self / y
    }
    fn fma_n(self, y: f64, z: f64) -> f64 {
        self.mul_add(y, z)
    }
    fn sqrt_n(self) -> f64 {
        self.sqrt()
    }
    fn one() -> f64 {
        1.0
    }
    fn of_int(n: i128, mode: Round) -> f64 {
        match mode {
            Round::Nearest => n as f64,
            _ => r::int_to_f64(n, mode.rnd()),
        }
    }
}

macro_rules! binary {
    ($name:ident, $near:ident, $op:ident, $doc:literal) => {
        #[doc = $doc]
        #[inline(always)]
        pub fn $name<F: Float>(a: F, b: F, r: Round) -> F {
            match r {
                Round::Nearest => a.$near(b),
                _ => F::directed(Op::$op, r, a, b, a),
            }
        }
    };
}

binary!(add, add_n, Add, "`a + b` rounded once.");
binary!(sub, sub_n, Sub, "`a - b` rounded once.");
binary!(mul, mul_n, Mul, "`a * b` rounded once.");
binary!(div, div_n, Div, "`a / b` rounded once.");

/// `a * b + c` rounded once.
#[inline(always)]
pub fn fma<F: Float>(a: F, b: F, c: F, r: Round) -> F {
    match r {
        Round::Nearest => a.fma_n(b, c),
        _ => F::directed(Op::Fma, r, a, b, c),
    }
}

/// The square root of `a` rounded once.
#[inline(always)]
pub fn sqrt<F: Float>(a: F, r: Round) -> F {
    match r {
        Round::Nearest => a.sqrt_n(),
        _ => F::directed(Op::Sqrt, r, a, a, a),
    }
}

/// `1 / a` rounded once.
#[inline(always)]
pub fn rcp<F: Float>(a: F, r: Round) -> F {
    match r {
        Round::Nearest => F::one().div_n(a),
        _ => F::directed(Op::Rcp, r, a, a, a),
    }
}

/// The integer `n` (any 64-bit value, signed or not) rounded once.
pub fn from_int<F: Float>(n: i128, r: Round) -> F {
    F::of_int(n, r)
}

/// An f64 narrowed to f32, rounded once.
pub fn narrow(x: f64, r: Round) -> f32 {
    let v = x as f32;
    match r {
        Round::Nearest => v,
        _ => r::adjust32(v, r::side(x, 0.0, f64::from(v), x.is_finite()), r.rnd()),
    }
}
