//! `btchol kernels`: compile every CUDA kernel variant a plan can choose (`--check --arch sm_XY`,
//! no GPU needed, only NVRTC) or fill the on-disk cache for the local GPU (`--warm`).

use btchol::cuda::jit::{self, KernelSpec};
use btchol::cuda::runtime::Device;
use btchol::DType;
use std::sync::atomic::{AtomicUsize, Ordering};

pub const HELP: &str = "\
Usage: btchol kernels --check [--arch sm_XY ...] [--only f64:128,...]   compile every kernel variant (NVRTC only)
       btchol kernels --warm [--arch sm_XY ...] [--only f64:128,...]    compile into the disk cache

--check compiles each (dtype, padded block size) variant for each --arch (default sm_80 and
sm_90) to a CUBIN and prints how many compiled; it exits non-zero if any failed. --warm does
the same through the cache (BTCHOL_CACHE_DIR), so later plans start without compiling: for the
local GPU's architecture, or without a GPU for each --arch (a cache to carry to a GPU machine
whose NVRTC has the same major.minor version; others miss it and compile). --only limits either
to the variants of the given dtype:block-size pairs (e.g. the shapes an A/B benchmark runs).";

/// `f64:128,…` → the variants plans of those dtypes and block sizes compile, each once.
fn parse_only(s: &str, smem: usize) -> Option<Vec<KernelSpec>> {
    let specs: Option<Vec<KernelSpec>> = s
        .split(',')
        .map(|pair| {
            let (dtype, n) = pair.split_once(':')?;
            let dtype = DType::parse(dtype)?;
            let n: usize = n.parse().ok().filter(|&n| (1..=jit::MAX_CUDA_BLOCK_SIZE).contains(&n))?;
            Some(KernelSpec::for_block_size(dtype, n, smem))
        })
        .collect();
    let mut unique = Vec::new();
    for spec in specs? {
        if !unique.contains(&spec) {
            unique.push(spec);
        }
    }
    Some(unique)
}

fn parse_arch(s: &str) -> Option<(i32, i32)> {
    let d = s.strip_prefix("sm_")?;
    if d.len() < 2 || !d.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = d.split_at(d.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Runs the subcommand; returns the process exit code.
pub fn run(args: &[String]) -> i32 {
    let (mut check, mut warm, mut archs, mut only) = (false, false, Vec::new(), None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => check = true,
            "--warm" => warm = true,
            "--arch" => match it.next().and_then(|v| parse_arch(v)) {
                Some(arch) => archs.push(arch),
                None => {
                    eprintln!("btchol kernels: --arch needs a value like sm_90");
                    return 2;
                }
            },
            "--only" => match it.next() {
                Some(v) => only = Some(v.clone()),
                None => {
                    eprintln!("btchol kernels: --only needs a list like f64:128,f32:32");
                    return 2;
                }
            },
            "-h" | "--help" => {
                println!("{HELP}");
                return 0;
            }
            other => {
                eprintln!("btchol kernels: unknown flag '{other}'\n{HELP}");
                return 2;
            }
        }
    }
    if check == warm {
        eprintln!("btchol kernels: give exactly one of --check or --warm\n{HELP}");
        return 2;
    }
    let nvrtc = match jit::nvrtc_version() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("btchol kernels: {e}");
            return 1;
        }
    };
    let (archs, smem) = if warm && archs.is_empty() {
        match Device::probe() {
            Ok(d) => (vec![d.arch], d.smem_optin.min(200 * 1024)),
            Err(e) => {
                eprintln!("btchol kernels --warm: {e}");
                return 1;
            }
        }
    } else if archs.is_empty() {
        (vec![(8, 0), (9, 0)], 200 * 1024)
    } else {
        // (the variants a device with at least 200 KiB of opt-in shared memory uses: sm_80, sm_90)
        (archs, 200 * 1024)
    };
    let specs = match &only {
        None => KernelSpec::all(smem),
        Some(list) => match parse_only(list, smem) {
            Some(v) => v,
            None => {
                eprintln!(
                    "btchol kernels: --only '{list}': expected dtype:n pairs (f32 or f64, n ≤ {})",
                    jit::MAX_CUDA_BLOCK_SIZE
                );
                return 2;
            }
        },
    };
    // A variant takes seconds to compile and NVRTC is thread-safe: compile them on all cores.
    let workers = std::thread::available_parallelism().map_or(1, |p| p.get()).min(specs.len() + 1);
    let mut failed = 0;
    for &arch in &archs {
        let t = std::time::Instant::now();
        let next = AtomicUsize::new(0);
        // Job i < specs.len(): variant i; job specs.len(): the refinement kernels (mixed
        // precision, one module per architecture). Each worker returns its failures.
        let job = |i: usize| -> Result<(), String> {
            let r = match (specs.get(i), warm) {
                (Some(spec), true) => jit::load_or_compile(spec, arch).map(|_| ()),
                (Some(spec), false) => jit::compile(spec, arch).map(|_| ()),
                (None, true) => jit::load_or_compile_refine(arch).map(|_| ()),
                (None, false) => jit::compile_refine(arch).map(|_| ()),
            };
            r.map_err(|e| {
                let what = specs.get(i).map_or_else(|| "refine.cu".to_string(), |spec| format!("{spec:?}"));
                format!("FAILED {what} on sm_{}{}: {e}", arch.0, arch.1)
            })
        };
        let errors: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(|| {
                        let mut errs = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i > specs.len() {
                                return errs;
                            }
                            if let Err(e) = job(i) {
                                errs.push(e);
                            }
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|_| vec!["a compile worker panicked".into()]))
                .collect()
        });
        for e in &errors {
            eprintln!("{e}");
        }
        failed += errors.len();
        let ok = specs.len() + 1 - errors.len();
        println!(
            "sm_{}{}: {ok}/{} kernel variants compiled (NVRTC {}.{}, {:.1} s on {workers} threads)",
            arch.0,
            arch.1,
            specs.len() + 1,
            nvrtc.0,
            nvrtc.1,
            t.elapsed().as_secs_f64()
        );
    }
    (failed > 0) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lists_name_the_plans_variants() {
        let smem = 200 * 1024;
        // (f32:7 and f32:8 pad to the same variant: it is compiled once)
        let v = parse_only("f64:128,f32:7,f64:128,f32:8", smem).unwrap();
        assert_eq!(
            v,
            vec![KernelSpec::for_block_size(DType::F64, 128, smem), KernelSpec::for_block_size(DType::F32, 7, smem)]
        );
        for bad in ["", "f64", "f16:8", "f64:0", "f64:257", "f64:x", "f64:8,"] {
            assert!(parse_only(bad, smem).is_none(), "{bad:?}");
        }
    }
}
