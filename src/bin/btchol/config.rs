//! `btchol bench` options: parsed from the command line into a [`BenchConfig`], then expanded into
//! the list of [`Case`]s (the Cartesian product of every list-valued option) that the runner
//! measures one by one. Every size is validated before anything runs, so a typo at the end of a
//! sweep fails in a second rather than after minutes.

use std::path::PathBuf;

use btchol::{Algorithm, Backend, DType, Dims};

use crate::args::{parse_choice, parse_list, parse_uint, usage, Args, UsageError};

pub const BACKENDS: &[(&str, Backend)] = &[("cpu", Backend::Cpu), ("cuda", Backend::Cuda), ("auto", Backend::Auto)];
pub const ALGORITHMS: &[(&str, Algorithm)] = &[
    ("seq", Algorithm::Sequential),
    ("nd", Algorithm::NestedDissection),
    ("auto", Algorithm::Auto),
    // Long spellings, for people who read the paper first.
    ("sequential", Algorithm::Sequential),
    ("nested-dissection", Algorithm::NestedDissection),
];
/// `--dtype` / `--precision`: the working precision; `mixed` is an f64 problem factored in f32 and
/// refined to f64 accuracy (btchol::MixedPlan).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    F64,
    F32,
    Mixed,
}
pub const PRECISIONS: &[(&str, Precision)] =
    &[("f64", Precision::F64), ("f32", Precision::F32), ("mixed", Precision::Mixed)];

/// Default when `--repeats` is not given: repeat until both bounds are met, then stop (or at the cap).
pub const AUTO_MIN_REPEATS: usize = 10;
pub const AUTO_MIN_SECONDS: f64 = 0.2;
pub const AUTO_MAX_REPEATS: usize = 1000;

/// Everything `btchol bench` was asked to do.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub backend: Backend,
    pub algorithms: Vec<Algorithm>,
    pub precisions: Vec<Precision>,
    /// n: block sizes.
    pub block_sizes: Vec<usize>,
    /// N: numbers of blocks.
    pub n_blocks: Vec<usize>,
    pub batches: Vec<usize>,
    pub nrhs: Vec<usize>,
    /// 0 = all available cores.
    pub threads: Vec<usize>,
    pub run: RunSettings,
    pub json: bool,
    pub csv: Option<PathBuf>,
}

/// How each case is measured.
#[derive(Clone, Copy, Debug)]
pub struct RunSettings {
    /// `None`: adaptive (see [`AUTO_MIN_REPEATS`] and friends).
    pub repeats: Option<usize>,
    pub warmup: usize,
    /// Seed of the random matrix; the right-hand side uses `seed + 1`.
    pub seed: u64,
    /// `--deterministic`: PlanOptions::deterministic.
    pub deterministic: bool,
    /// `--regularize S`: PlanOptions::diag_shift (0: off).
    pub diag_shift: f64,
    /// `--mask-fraction F`: factor and solve only ⌊F·B⌋ items, spread evenly.
    pub mask_fraction: Option<f64>,
    /// `--rhs device`: GPU plans solve right-hand sides that stay in GPU memory
    /// (Plan::solve_device), as GPU solvers are usually compared; default host memory.
    pub rhs_on_device: bool,
    /// `--events`: GPU plans' calls also timed by CUDA events (the factor_ev / solve_ev columns).
    pub events: bool,
    /// `--factor-solve`: each repeat also times `Plan::factor_solve` (upload, factor and solve in
    /// one call) and the same three steps as separate calls (the factor_solve_us /
    /// upload_factor_solve_us columns); with `--rhs device`, `Plan::factor_solve_device` after an
    /// untimed upload, and factor + solve_device as two calls.
    pub factor_solve: bool,
}

/// One configuration to measure.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub backend: Backend,
    pub algorithm: Algorithm,
    pub dtype: DType,
    /// f64 problem, f32 factor, refinement (`--precision mixed`; then `dtype` is F64).
    pub mixed: bool,
    pub dims: Dims,
    pub nrhs: usize,
    pub threads: usize,
}

impl Case {
    /// The precision's name in reports: `f64`, `f32` or `mixed`.
    pub fn precision_name(&self) -> &'static str {
        if self.mixed {
            "mixed"
        } else {
            self.dtype.name()
        }
    }
}

/// What `btchol bench` was asked for: a run, or its help text.
pub enum BenchCommand {
    Run(Box<BenchConfig>),
    Help,
}

impl Default for BenchConfig {
    /// The demo's problem on the best backend with all cores: a sensible `btchol bench` with no flags.
    fn default() -> Self {
        BenchConfig {
            backend: Backend::Auto,
            algorithms: vec![Algorithm::Auto],
            precisions: vec![Precision::F64],
            block_sizes: vec![32],
            n_blocks: vec![1024],
            batches: vec![1],
            nrhs: vec![1],
            threads: vec![0],
            run: RunSettings {
                repeats: None,
                warmup: 3,
                seed: 42,
                deterministic: false,
                diag_shift: 0.0,
                mask_fraction: None,
                rhs_on_device: false,
                events: false,
                factor_solve: false,
            },
            json: false,
            csv: None,
        }
    }
}

impl BenchConfig {
    pub fn parse(mut args: Args) -> Result<BenchCommand, UsageError> {
        let mut c = BenchConfig::default();
        let mut seen: Vec<String> = Vec::new();
        let sizes = |flag: &str, v: &str| parse_list(flag, v, |s| parse_uint(flag, s, 1));
        while let Some(mut flag) = args.next_flag()? {
            // A flag given twice is almost always a copy-paste slip; say so rather than pick one.
            if seen.contains(&flag.name) {
                return Err(usage!("{} given more than once (use a comma-separated list to sweep)", flag.name));
            }
            seen.push(flag.name.clone());
            let name = flag.name.clone();
            let f = name.as_str();
            match f {
                "--help" => return Ok(BenchCommand::Help),
                "--json" => {
                    args.no_value(&flag)?;
                    c.json = true
                }
                "--backend" => c.backend = parse_choice(f, &args.value(&mut flag)?, BACKENDS)?,
                "--algorithm" => {
                    c.algorithms = parse_list(f, &args.value(&mut flag)?, |s| parse_choice(f, s, ALGORITHMS))?
                }
                "--dtype" | "--precision" => {
                    if seen.iter().filter(|s| *s == "--dtype" || *s == "--precision").count() > 1 {
                        return Err(usage!("--dtype and --precision are the same option: give one"));
                    }
                    c.precisions = parse_list(f, &args.value(&mut flag)?, |s| parse_choice(f, s, PRECISIONS))?
                }
                "--deterministic" => {
                    args.no_value(&flag)?;
                    c.run.deterministic = true
                }
                "--regularize" => {
                    let v = args.value(&mut flag)?;
                    c.run.diag_shift = v.trim().parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| {
                        usage!("invalid value '{v}' for --regularize: expected a finite diagonal shift")
                    })?
                }
                "--mask-fraction" => {
                    let v = args.value(&mut flag)?;
                    let x = v.trim().parse::<f64>().ok().filter(|x| *x > 0.0 && *x <= 1.0);
                    c.run.mask_fraction =
                        Some(x.ok_or_else(|| usage!("invalid value '{v}' for --mask-fraction: expected 0 < F <= 1"))?)
                }
                "--rhs" => {
                    c.run.rhs_on_device =
                        parse_choice(f, &args.value(&mut flag)?, &[("host", false), ("device", true)])?
                }
                "--n" => c.block_sizes = sizes(f, &args.value(&mut flag)?)?,
                "--N" => c.n_blocks = sizes(f, &args.value(&mut flag)?)?,
                "--batch" => c.batches = sizes(f, &args.value(&mut flag)?)?,
                "--nrhs" => c.nrhs = sizes(f, &args.value(&mut flag)?)?,
                "--threads" => c.threads = parse_list(f, &args.value(&mut flag)?, |s| parse_uint(f, s, 0))?,
                "--repeats" => c.run.repeats = Some(parse_uint(f, &args.value(&mut flag)?, 1)?),
                "--warmup" => c.run.warmup = parse_uint(f, &args.value(&mut flag)?, 0)?,
                "--events" => {
                    args.no_value(&flag)?;
                    c.run.events = true
                }
                "--factor-solve" => {
                    args.no_value(&flag)?;
                    c.run.factor_solve = true
                }
                "--seed" => {
                    let v = args.value(&mut flag)?;
                    c.run.seed =
                        v.trim().parse().map_err(|_| usage!("invalid value '{v}' for --seed: expected an integer"))?
                }
                "--csv" => {
                    let v = args.value(&mut flag)?;
                    if v.is_empty() {
                        return Err(usage!("--csv needs a file path"));
                    }
                    c.csv = Some(PathBuf::from(v))
                }
                _ => return Err(unknown_flag(f)),
            }
        }
        Ok(BenchCommand::Run(Box::new(c)))
    }

    /// The Cartesian product of the list options, each checked by `Dims::new`. Loop order makes a
    /// CSV sweep read naturally: grouped by dtype, algorithm and threads, then growing n, N.
    pub fn cases(&self) -> Result<Vec<Case>, UsageError> {
        let mut out = Vec::new();
        for &precision in &self.precisions {
            let (dtype, mixed) = match precision {
                Precision::F64 => (DType::F64, false),
                Precision::F32 => (DType::F32, false),
                Precision::Mixed => (DType::F64, true),
            };
            for &algorithm in &self.algorithms {
                for &threads in &self.threads {
                    for &n in &self.block_sizes {
                        for &nb in &self.n_blocks {
                            for &batch in &self.batches {
                                for &nrhs in &self.nrhs {
                                    let dims = Dims::new(batch, nb, n)
                                        .map_err(|e| usage!("--n {n} --N {nb} --batch {batch}: {e}"))?;
                                    out.push(Case {
                                        backend: self.backend,
                                        algorithm,
                                        dtype,
                                        mixed,
                                        dims,
                                        nrhs,
                                        threads,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        // A sweep of thousands of cases is a typo (or a very long night); ask for it in pieces.
        if out.len() > 10_000 {
            return Err(usage!("the sweep has {} configurations; at most 10000 per run", out.len()));
        }
        Ok(out)
    }
}

const BENCH_FLAGS: &[&str] = &[
    "--backend",
    "--algorithm",
    "--dtype",
    "--precision",
    "--deterministic",
    "--regularize",
    "--mask-fraction",
    "--rhs",
    "--n",
    "--N",
    "--batch",
    "--nrhs",
    "--threads",
    "--repeats",
    "--events",
    "--factor-solve",
    "--warmup",
    "--seed",
    "--json",
    "--csv",
    "--help",
];

/// An unknown-flag error that names the likely intended flag (case slips like `--nb` or `--Batch`).
fn unknown_flag(f: &str) -> UsageError {
    let lower = f.to_ascii_lowercase();
    let hint = match lower.as_str() {
        "--nb" | "--nblocks" | "--n-blocks" | "--blocks" => Some("--N (number of blocks)"),
        "--block-size" | "--bs" => Some("--n (block size)"),
        _ => BENCH_FLAGS.iter().copied().find(|k| k.to_ascii_lowercase() == lower && *k != "--n" && *k != "--N"),
    };
    match hint {
        Some(h) => usage!("unknown flag '{f}' for bench; did you mean {h}?"),
        None => usage!("unknown flag '{f}' for bench; known flags: {}", BENCH_FLAGS.join(" ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn parse(v: &[&str]) -> Result<BenchConfig, UsageError> {
        match BenchConfig::parse(Args::from_os(v.iter().map(OsString::from))?)? {
            BenchCommand::Run(c) => Ok(*c),
            BenchCommand::Help => Err(UsageError("help".into())),
        }
    }

    #[test]
    fn sweep_is_cartesian_product() {
        let c = parse(&["--n", "8,16", "--N", "4,8,16", "--dtype", "f32,f64", "--algorithm", "seq"]).unwrap();
        assert_eq!(c.cases().unwrap().len(), 12);
    }

    #[test]
    fn bad_input_is_a_usage_error() {
        assert!(parse(&["--n", "0"]).is_err());
        assert!(parse(&["--n", "8", "--n", "16"]).is_err());
        assert!(parse(&["--dtype", "f16"]).is_err());
        assert!(parse(&["--dtype", "f32", "--precision", "mixed"]).is_err());
        assert!(parse(&["--mask-fraction", "0"]).is_err());
        assert!(parse(&["--regularize", "nan"]).is_err());
        let c = parse(&["--precision", "f64,mixed", "--deterministic", "--mask-fraction", "0.5"]).unwrap();
        let cases = c.cases().unwrap();
        assert_eq!(cases.iter().map(|k| k.mixed).collect::<Vec<_>>(), [false, true]);
        assert!(c.run.deterministic && c.run.mask_fraction == Some(0.5));
        assert!(parse(&["--Batch", "2"]).unwrap_err().0.contains("--batch"));
        assert!(parse(&["--json=1"]).is_err());
        assert!(parse(&["--events=1"]).is_err());
        assert!(parse(&["--events"]).unwrap().run.events && !parse(&[]).unwrap().run.events);
        assert!(parse(&["--factor-solve"]).unwrap().run.factor_solve && !parse(&[]).unwrap().run.factor_solve);
        assert!(parse(&["--factor-solve=1"]).is_err());
        assert!(parse(&["--n", "5000"]).unwrap().cases().is_err());
    }
}
