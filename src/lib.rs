//! # btchol
//!
//! Cholesky factorization and solve for batches of symmetric positive-definite block-tridiagonal
//! systems Ψ x = b (N diagonal blocks D_i, N−1 sub-diagonal blocks E_i, each n×n), on CPUs and
//! NVIDIA GPUs, by the nested-dissection method of the paper in `shared/paper/`.
//!
//! Layout of the crate (the architecture):
//! * [`model`]: sizes, element layouts, validation of caller buffers;
//! * [`schedule`]: the nested-dissection schedule, the single source of truth for every backend;
//! * [`dense`]: block kernels (potrf, trsm, syrk/gemm) for the CPU;
//! * [`cpu`]: the CPU backend (sequential and nested dissection, batched over threads);
//! * [`cuda`]: the CUDA backend (runtime, NVRTC JIT with a CUBIN cache, launch orchestration;
//!   kernels in `kernels/`);
//! * [`plan`]: the user-facing solver object;
//! * [`host_buffer`]: page-locked host memory for fast GPU uploads;
//! * [`reference`]: independent dense f64 reference code for tests and benchmarks.

pub mod capi;
pub mod cpu;
pub mod cuda;
pub mod dense;
pub mod error;
pub mod host_buffer;
mod host_parallel;
pub mod model;
pub mod plan;
pub mod reference;
pub mod scalar;
pub mod schedule;

pub use error::{Error, Operand, Result};
pub use host_buffer::HostBuffer;
pub use model::{BlockTridiagRef, Dims, Layout, RhsMut, RhsRef, RhsShape};
pub use plan::{Algorithm, Backend, ItemStatus, MixedPlan, Partition, Plan, PlanOptions, RefineOptions, RefineReport};
pub use scalar::{DType, Scalar};

/// The crate version, as in Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
