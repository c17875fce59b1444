//! `btchol kernels`: compile every CUDA kernel variant a plan can choose (`--check --arch sm_XY`,
//! no GPU needed, only NVRTC) or fill the on-disk cache for the local GPU (`--warm`).

use btchol::cuda::jit::{self, KernelSpec};
use btchol::cuda::runtime::Device;

pub const HELP: &str = "\
Usage: btchol kernels --check [--arch sm_XY ...]   compile every kernel variant (NVRTC only)
       btchol kernels --warm                       compile into the disk cache for this GPU

--check compiles each (dtype, padded block size) variant for each --arch (default sm_80 and
sm_90) to a CUBIN and prints how many compiled; it exits non-zero if any failed. --warm does
the same for the local GPU's architecture through the cache (BTCHOL_CACHE_DIR), so later plans
start without compiling.";

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
    let (mut check, mut warm, mut archs) = (false, false, Vec::new());
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
    let (archs, smem) = if warm {
        match Device::open() {
            Ok(d) => (vec![d.arch], d.smem_optin.min(200 * 1024)),
            Err(e) => {
                eprintln!("btchol kernels --warm: {e}");
                return 1;
            }
        }
    } else if archs.is_empty() {
        (vec![(8, 0), (9, 0)], 200 * 1024)
    } else {
        (archs, 200 * 1024)
    };
    let specs = KernelSpec::all(smem);
    let mut failed = 0;
    for &arch in &archs {
        let t = std::time::Instant::now();
        let mut ok = 0;
        for spec in &specs {
            let r =
                if warm { jit::load_or_compile(spec, arch).map(|_| ()) } else { jit::compile(spec, arch).map(|_| ()) };
            match r {
                Ok(()) => ok += 1,
                Err(e) => {
                    failed += 1;
                    eprintln!("FAILED {spec:?} on sm_{}{}: {e}", arch.0, arch.1);
                }
            }
        }
        // The refinement kernels (mixed precision): one module per architecture.
        let r =
            if warm { jit::load_or_compile_refine(arch).map(|_| ()) } else { jit::compile_refine(arch).map(|_| ()) };
        match r {
            Ok(()) => ok += 1,
            Err(e) => {
                failed += 1;
                eprintln!("FAILED refine.cu on sm_{}{}: {e}", arch.0, arch.1);
            }
        }
        println!(
            "sm_{}{}: {ok}/{} kernel variants compiled (NVRTC {}.{}, {:.1} s)",
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
