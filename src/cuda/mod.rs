//! The CUDA backend: executes the nested-dissection schedule (or, for batches of short systems
//! with n ≤ 32, the per-item sequential algorithm) on an NVIDIA GPU.
//!
//! * [`runtime`]: the driver (dynamically loaded), the primary context, device memory, streams;
//! * [`jit`]: kernel variants compiled by NVRTC to a CUBIN for the device's exact architecture,
//!   cached in memory and on disk;
//! * `chunks`: a partitioned schedule's chunk levels in one launch, one warp sweeping each chunk;
//! * `cluster`: the deep levels of the small-block solve on a thread-block cluster per item
//!   (sm_90), programs and data flow compiled on the host;
//! * `factor_cluster`: the deep levels of the small-block factor on a cluster per item (sm_90),
//!   blocks pushed from the CTA that produces them into the shared memory of those that read them;
//! * `whole_factor`: the whole small-block factor of a small system in one CTA per item (every
//!   level and the inverses, the blocks in shared memory throughout);
//! * `whole_solve`: the whole small-block solve of a small system in one CTA per item (every
//!   level, right-hand sides in shared memory throughout);
//! * [`engine`]: launch orchestration, one launch pair per schedule level (one launch per level
//!   for n ≤ 32, one launch in all for the sequential algorithm), batch masks, pivot policy;
//! * [`refine`]: the device side of mixed-precision refinement (f64 residuals on the GPU).
//!
//! Nothing here panics when CUDA is missing: every entry returns
//! [`Error::BackendUnavailable`](crate::Error::BackendUnavailable) or
//! [`Error::Cuda`](crate::Error::Cuda).

mod chunks;
mod cluster;
pub mod engine;
mod factor_cluster;
mod host_stager;
pub mod jit;
pub mod refine;
pub mod runtime;
mod whole_factor;
mod whole_solve;

pub use engine::{CudaEngine, GpuAlgorithm, GpuNumerics, SourceFormat};
pub use runtime::cuda_available;
