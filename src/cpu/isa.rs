//! Runtime choice of instruction set: the kernels are compiled twice (plain and AVX2+FMA) and the
//! CPU decides at run time, so one binary is fast on current CPUs and still runs on old ones.

/// True when the CPU executing us has AVX2 and FMA.
#[inline]
pub fn has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static FMA: OnceLock<bool> = OnceLock::new();
        *FMA.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Defines `pub(crate) fn $name<T: Scalar>(args) -> R` that runs `$imp::<T, true>` compiled with
/// AVX2+FMA when the CPU has them and `$imp::<T, false>` otherwise. `$imp` must be
/// `#[inline(always)]` (and so must everything it calls) for the features to reach the kernels.
macro_rules! fma_dispatch {
    ($(#[$m:meta])* $vis:vis unsafe fn $name:ident => $imp:ident ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)?) => {
        $(#[$m])*
        #[allow(clippy::too_many_arguments)]
        $vis unsafe fn $name<T: $crate::scalar::Scalar>($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn with_fma<T: $crate::scalar::Scalar>($($arg: $ty),*) $(-> $ret)? {
                    $imp::<T, true>($($arg),*)
                }
                if $crate::cpu::isa::has_fma() {
                    return with_fma::<T>($($arg),*);
                }
            }
            $imp::<T, false>($($arg),*)
        }
    };
}
pub(crate) use fma_dispatch;
