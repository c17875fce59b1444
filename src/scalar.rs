//! The element types btchol computes in: `f32` and `f64`.

use std::fmt::Debug;
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

/// Element precision of a plan, as seen by the C API and the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    F64,
}

impl DType {
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }
    /// The inverse of [`DType::name`]: `"f32"` or `"f64"`.
    pub fn parse(name: &str) -> Option<DType> {
        [DType::F32, DType::F64].into_iter().find(|d| d.name() == name)
    }
    pub fn size_bytes(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 => 8,
        }
    }
}

/// A real floating-point type the solver can work in.
pub trait Scalar:
    Copy
    + Send
    + Sync
    + Debug
    + Default
    + PartialOrd
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + cudarc::driver::DeviceRepr
{
    const DTYPE: DType;
    /// Unit round-off (machine epsilon) as f64.
    const EPSILON: f64;
    /// The smallest positive normal number, as f64.
    const MIN_POSITIVE: f64;
    const ZERO: Self;
    const ONE: Self;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    fn sqrt(self) -> Self;
    fn is_finite(self) -> bool;
    /// `self * a + b`; fused only where the caller was compiled with FMA, else plain.
    fn mul_add_fused(self, a: Self, b: Self) -> Self;
}

macro_rules! impl_scalar {
    ($t:ty, $d:expr) => {
        impl Scalar for $t {
            const DTYPE: DType = $d;
            const EPSILON: f64 = <$t>::EPSILON as f64;
            const MIN_POSITIVE: f64 = <$t>::MIN_POSITIVE as f64;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn mul_add_fused(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
        }
    };
}
impl_scalar!(f32, DType::F32);
impl_scalar!(f64, DType::F64);
