//! `btchol`: benchmark, demo and system-information tool for the btchol solver.
//!
//! * `btchol bench`: times factor and solve over one configuration or a sweep, as a table,
//!   JSON lines (`--json`) and/or CSV (`--csv PATH`);
//! * `btchol demo`: one representative problem on the best backend, in a few readable lines; exits
//!   non-zero when the backward error is too large, so it doubles as a smoke check;
//! * `btchol info`: version, CPU features, threads, CUDA availability, calibration in effect;
//! * `btchol calibrate`: measures the dispatch targets and writes the calibration table of
//!   `Backend::Auto` (`--check`: is the automatic choice within 10 % of the best?).
//!
//! Exit codes: 0 success, 1 a run failed (backend unavailable, factorization failed, accuracy
//! check failed, I/O error), 2 the command line was wrong.

// The binary's modules live in src/bin/btchol/ (a crate root looks beside itself, hence `path`).
#[path = "btchol/args.rs"]
mod args;
#[path = "btchol/calibrate.rs"]
mod calibrate;
#[path = "btchol/config.rs"]
mod config;
#[path = "btchol/kernels.rs"]
mod kernels;
#[path = "btchol/limits.rs"]
mod limits;
#[path = "btchol/measure.rs"]
mod measure;
#[path = "btchol/report.rs"]
mod report;
#[path = "btchol/system.rs"]
mod system;

use std::io::{self, Write};
use std::process::ExitCode;

use btchol::{Algorithm, Backend, DType, Dims, Error, Plan, PlanOptions};

use args::{usage, Args, UsageError};
use config::{BenchCommand, BenchConfig, Case, RunSettings};
use report::{CsvWriter, Row, Table};

const MAIN_HELP: &str = "\
btchol — Cholesky factor and solve for batches of SPD block-tridiagonal systems

Usage: btchol <command> [flags]

Commands:
  bench   time factor and solve for one configuration or a sweep (table, JSON lines, CSV)
  demo    factor and solve one representative problem on the best backend; exits 1 if the
          backward error exceeds 1e-12 (a smoke check)
  info    version, CPU features (AVX2+FMA), threads, CUDA availability, calibration in effect
  calibrate
          measure the CPU/GPU targets and write the calibration table of automatic dispatch;
          --check: is the automatic choice within 10% of the best at every point?
  kernels compile the CUDA kernel variants (--check) or fill the kernel cache (--warm)
  help    this text; `btchol <command> --help` describes a command

Exit status: 0 success, 1 a run failed, 2 usage error.
";

const BENCH_HELP: &str = "\
btchol bench — time factor and solve of random SPD block-tridiagonal systems

Usage: btchol bench [flags]

Problem (flags marked * take a comma-separated list; the run sweeps their Cartesian product):
  --backend cpu|cuda|auto      where to run (default auto: the calibrated cost model chooses; rows
                               say why in the dispatch column)
  --algorithm seq|nd|auto *    sequential (paper Alg. 1) or nested dissection (Alg. 4); auto lets
                               the plan choose (default auto); rows show the resolved algorithm.
                               The CUDA backend runs nd, and seq for n <= 32 (one warp per
                               item: batches of short systems)
  --dtype f64|f32|mixed *      working precision (default f64); mixed: f64 problem, f32 factor,
                               iterative refinement to f64 accuracy (--precision is the same)
  --deterministic              PlanOptions::deterministic (bitwise-reproducible results)
  --regularize S               static diagonal shift S (PlanOptions::diag_shift)
  --mask-fraction F            factor and solve only floor(F*B) items, spread evenly
  --rhs host|device            where right-hand sides live for a GPU plan's solve (default host:
                               the solve time includes the copies; device: Plan::solve_device,
                               how GPU solvers such as cuDSS are usually timed)
  --n SIZE *                   block size n (lower-case n; default 32)
  --N COUNT *                  number of diagonal blocks N (upper-case N; default 1024)
  --batch B *                  independent systems per plan (default 1)
  --nrhs M *                   right-hand sides per system (default 1)
  --threads T *                CPU threads, 0 = all available cores (default 0)

Measurement:
  --repeats R                  timed repeats (default: at least 10 and at least 0.2 s, at most 1000)
  --warmup W                   untimed repeats first (default 3)
  --seed S                     seed of the random matrix; the right-hand side uses S+1 (default 42)
  --events                     GPU plans: also time each factor and solve by CUDA events on the
                               plan's stream (factor_ev, solve_ev), as issue 5's cuDSS and socu
                               references were timed. Recording them costs the wall-clock
                               columns 5-13 µs per call (H100), so they are off by default
  --factor-solve               each repeat also times Plan::factor_solve (upload, factor and solve
                               of a host right-hand side in one call: fsolve_us) and the same as
                               three calls (upload, factor, solve: 3calls_us), untimed elsewhere

Output:
  --json                       one JSON object per configuration per line instead of the table
  --csv PATH                   also write every row to PATH as CSV (header row = JSON field names)
  -h, --help                   this text

Method: per configuration the plan is created and the matrix drawn once (reference::random_problem,
diagonal dominance margin 1.0), untimed. Each repeat uploads the matrix (untimed), factors
(timed), copies a fresh right-hand side (untimed) and solves (timed). The backward error
max ‖Ψx−b‖∞ / (‖Ψ‖∞‖x‖∞ + ‖b‖∞) of the last solution is computed in f64.

Fields: factor_us_* / solve_us_* are median, min and p90 (nearest rank) in microseconds.
  gflops_factor   = flops_seq / factor_us_median: the SEQUENTIAL algorithm's flop count
                    (7/3·N − 2)·n³ per system × batch, whichever algorithm ran, so rates of
                    seq and nd compare as time-to-solution (nd does ≈2.7× the flops)
  flops_schedule  = flops the algorithm that ran actually does (nd: its schedule's count)
  gflops_schedule = flops_schedule / factor_us_median (the hardware's arithmetic rate)
  bytes_min       = 2·(2N − 1)·n²·batch·sizeof(dtype): D and E read once, the factor written once
  levels          = ⌊log₂N⌋ + 1 for nd, N for seq (sequential steps of the factorization)
  t_flop_us, t_bw_us = flops_schedule / peak flop rate, bytes_min / peak bandwidth;
  t_limit_us      = their max; pct_of_limit = t_limit_us / factor_us_median · 100
  solve_flops     = 2·nrhs·(N·n² + 2·C·n²)·batch (C off-diagonal factor blocks, fill included)
  solve_bytes     = factor read once + b read + x written; solve_t_limit_us, solve_pct_of_limit
                    as for the factor. Peaks (peak_gflops of the dtype, peak_gbytes_per_s,
                    peak_source): GPUs from a table by device name (empty if unknown), CPUs
                    measured at start (AVX2 FMA loop, memory copy) on the row's threads
  device          = the device the plan ran on (CPU: /proc/cpuinfo model name)
  dispatch        = how the plan chose backend and algorithm (Plan::dispatch_reason): 'requested:
                    cpu-seq', or 'auto: <target>, est .. us vs ..' (see btchol calibrate --help)
  date            = UTC time of the measurement, ISO-8601

Examples:
  btchol bench --backend cpu --algorithm seq --dtype f64 --n 32 --N 1024 --threads 1
  btchol bench --backend cpu --algorithm seq,nd --n 8,16,32 --N 256,4096 --json --csv out.csv
";

const DEMO_HELP: &str = "\
btchol demo — factor and solve one representative problem on the best available backend

Usage: btchol demo

Problem: N = 1024 diagonal blocks of n = 32 (32768 unknowns), f64, batch 1, one right-hand side,
backend and algorithm chosen automatically, all cores. Prints backend, device, algorithm,
threads, median factor and solve times, GFLOP/s and the backward error; exits 1 when the backward
error exceeds 1e-12.
";

const INFO_HELP: &str = "\
btchol info — what this build and machine offer

Usage: btchol info

Prints the btchol version, the CPU model and whether it has AVX2+FMA (the fast kernels), the
number of threads available, whether the CUDA backend can be used (driver and GPU found), and
the calibration table automatic dispatch uses (see `btchol calibrate --help`).
";

/// Why a command stopped early: the exit code follows from the kind.
enum Failure {
    /// A command-line mistake (exit 2), with the command whose help to suggest.
    Usage(UsageError, &'static str),
    /// The run itself failed (exit 1).
    Run(String),
    /// stdout was closed by the reader (`btchol bench --json | head -1`): stop quietly, as Unix
    /// tools do, instead of panicking in `println!`.
    Closed,
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::Closed
        } else {
            Failure::Run(format!("cannot write output: {e}"))
        }
    }
}

/// Appends one formatted line to a String (demo and info build their text, then [`emit`] it).
macro_rules! push_line {
    ($buf:expr, $($fmt:tt)*) => {{
        $buf.push_str(&format!($($fmt)*));
        $buf.push('\n');
    }};
}

/// Writes to stdout (all output goes through here or a locked stdout; see [`Failure::Closed`]).
fn emit(text: &str) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(Failure::Usage(e, cmd)) => {
            let space = if cmd.is_empty() { "" } else { " " };
            eprintln!("btchol: {e}\nTry 'btchol{space}{cmd} --help'.");
            ExitCode::from(2)
        }
        Err(Failure::Run(msg)) => {
            eprintln!("btchol: {msg}");
            ExitCode::from(1)
        }
        Err(Failure::Closed) => ExitCode::SUCCESS,
    }
}

fn run() -> Result<ExitCode, Failure> {
    let mut args = Args::from_os(std::env::args_os().skip(1)).map_err(|e| Failure::Usage(e, ""))?;
    match args.next_word().as_deref() {
        // `kernels` has its own small parser (src/bin/btchol/kernels.rs).
        Some("kernels") => Ok(ExitCode::from(kernels::run(&args.into_rest()) as u8)),
        Some("bench") => bench(args),
        Some("calibrate") => {
            match calibrate::CalibrateConfig::parse(args).map_err(|e| Failure::Usage(e, "calibrate"))? {
                calibrate::CalibrateCommand::Help => emit(calibrate::HELP).map(|_| ExitCode::SUCCESS),
                calibrate::CalibrateCommand::Run(cfg) => calibrate::run(&cfg),
            }
        }
        Some("demo") => match help_only(args, "demo", DEMO_HELP)? {
            true => Ok(ExitCode::SUCCESS),
            false => demo(),
        },
        Some("info") => match help_only(args, "info", INFO_HELP)? {
            true => Ok(ExitCode::SUCCESS),
            false => info(),
        },
        Some("help") => emit(MAIN_HELP).map(|_| ExitCode::SUCCESS),
        Some(other) => Err(Failure::Usage(
            usage!("unknown command '{other}' (expected bench, calibrate, demo, info or kernels)"),
            "",
        )),
        None => match args.next_flag().map_err(|e| Failure::Usage(e, ""))? {
            Some(f) if f.name == "--help" => emit(MAIN_HELP).map(|_| ExitCode::SUCCESS),
            Some(f) if f.name == "--version" => {
                emit(&format!("btchol {}\n", btchol::VERSION)).map(|_| ExitCode::SUCCESS)
            }
            Some(f) => Err(Failure::Usage(usage!("unknown flag '{}' before the command", f.name), "")),
            None => {
                eprint!("{MAIN_HELP}");
                Ok(ExitCode::from(2))
            }
        },
    }
}

/// For commands without options: true when `--help` was given (and `help` printed), false when
/// there are no flags; any other flag is a usage error.
fn help_only(mut args: Args, cmd: &'static str, help: &str) -> Result<bool, Failure> {
    match args.next_flag().map_err(|e| Failure::Usage(e, cmd))? {
        None => Ok(false),
        Some(f) if f.name == "--help" => emit(help).map(|_| true),
        Some(f) => Err(Failure::Usage(usage!("'{cmd}' takes no flags (got '{}')", f.name), cmd)),
    }
}

// ---------------------------------------------------------------------------------------------
// bench

fn bench(args: Args) -> Result<ExitCode, Failure> {
    let cfg = match BenchConfig::parse(args).map_err(|e| Failure::Usage(e, "bench"))? {
        BenchCommand::Help => return emit(BENCH_HELP).map(|_| ExitCode::SUCCESS),
        BenchCommand::Run(cfg) => cfg,
    };
    let cases = cfg.cases().map_err(|e| Failure::Usage(e, "bench"))?;
    // Refuse what cannot fit before measuring anything (an allocation failure would abort).
    if let Some(avail) = system::available_memory_bytes() {
        if let Some(c) = cases.iter().find(|c| measure::estimated_bytes(c) > avail) {
            return Err(Failure::Run(format!(
                "{}: needs about {:.1} GiB of memory, {:.1} GiB available",
                describe(c),
                measure::estimated_bytes(c) as f64 / (1u64 << 30) as f64,
                avail as f64 / (1u64 << 30) as f64
            )));
        }
    }
    let mut csv = match &cfg.csv {
        Some(path) => Some(
            CsvWriter::create(path)
                .map_err(|e| Failure::Run(format!("cannot create CSV file {}: {e}", path.display())))?,
        ),
        None => None,
    };

    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut table = Table::default();
    let mut failed = 0usize;
    for case in &cases {
        let m = match measure::run_case(case, &cfg.run) {
            Ok(m) => m,
            // Every case shares the backend: one "unavailable" means all are; stop at once.
            Err(e @ Error::BackendUnavailable(_)) => {
                return Err(Failure::Run(format!("--backend {}: {e}", case.backend.name())))
            }
            // Other failures are specific to a configuration: report it and go on with the sweep.
            Err(e) => {
                eprintln!("btchol: {} failed: {e}", describe(case));
                failed += 1;
                continue;
            }
        };
        let row = Row::from_measurement(&m, &system::utc_now_iso8601());
        if cfg.json {
            writeln!(out, "{}", row.to_json())?;
            out.flush()?;
        } else {
            table.print(&mut out, &row)?;
        }
        if let (Some(w), Some(path)) = (csv.as_mut(), cfg.csv.as_ref()) {
            w.write(&row).map_err(|e| Failure::Run(format!("cannot write CSV file {}: {e}", path.display())))?;
        }
    }
    if failed > 0 {
        return Err(Failure::Run(format!("{failed} of {} configurations failed", cases.len())));
    }
    Ok(ExitCode::SUCCESS)
}

/// A configuration in the flags that select it, for error messages.
fn describe(c: &Case) -> String {
    format!(
        "--backend {} --algorithm {} --dtype {} --n {} --N {} --batch {} --nrhs {} --threads {}",
        c.backend.name(),
        c.algorithm.name(),
        c.precision_name(),
        c.dims.block_size,
        c.dims.n_blocks,
        c.dims.batch,
        c.nrhs,
        c.threads
    )
}

// ---------------------------------------------------------------------------------------------
// demo

/// The accuracy the demo (and CI's smoke run of it) demands in f64.
const DEMO_MAX_BACKWARD_ERROR: f64 = 1e-12;

fn demo() -> Result<ExitCode, Failure> {
    let mut text = String::new();
    let dims = Dims::new(1, 1024, 32).map_err(|e| Failure::Run(e.to_string()))?;
    let case = Case {
        backend: Backend::Auto,
        algorithm: Algorithm::Auto,
        dtype: DType::F64,
        mixed: false,
        dims,
        nrhs: 1,
        threads: 0,
    };
    // Fixed repeats keep the demo's run time predictable (well under a second on a laptop).
    let settings = RunSettings { repeats: Some(9), ..BenchConfig::default().run };
    let m = measure::run_case(&case, &settings).map_err(|e| Failure::Run(format!("demo failed: {e}")))?;
    let gflops = m.flops_seq / (m.factor_us.median * 1e-6) / 1e9;
    let ok = m.backward_error <= DEMO_MAX_BACKWARD_ERROR;
    push_line!(
        text,
        "btchol {} demo: one SPD block-tridiagonal system, N = {} blocks of n = {} ({} unknowns), f64, 1 right-hand side",
        btchol::VERSION,
        dims.n_blocks,
        dims.block_size,
        dims.rows()
    );
    push_line!(text, "backend:        {} ({})", m.backend.name(), m.device);
    push_line!(
        text,
        "algorithm:      {} (chosen by the plan), {} thread{}",
        m.algorithm.name(),
        m.threads,
        if m.threads == 1 { "" } else { "s" }
    );
    push_line!(
        text,
        "factor:         {:.3} ms median of {} ({:.2} GFLOP/s, sequential flop count)",
        m.factor_us.median / 1e3,
        m.factor_us.count,
        gflops
    );
    push_line!(text, "solve:          {:.3} ms median of {}", m.solve_us.median / 1e3, m.solve_us.count);
    push_line!(
        text,
        "backward error: {:.2e} ({})",
        m.backward_error,
        if ok {
            format!("ok, ≤ {DEMO_MAX_BACKWARD_ERROR:.0e}")
        } else {
            format!("FAIL, > {DEMO_MAX_BACKWARD_ERROR:.0e}")
        }
    );
    emit(&text)?;
    if ok {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Failure::Run(format!(
            "demo: backward error {:.3e} exceeds {DEMO_MAX_BACKWARD_ERROR:.0e}",
            m.backward_error
        )))
    }
}

// ---------------------------------------------------------------------------------------------
// info

fn info() -> Result<ExitCode, Failure> {
    let mut text = String::new();
    push_line!(text, "btchol {}", btchol::VERSION);
    push_line!(
        text,
        "CPU: {} (AVX2+FMA: {})",
        system::cpu_model(),
        if btchol::cpu::isa::has_fma() { "yes, fast kernels" } else { "no, portable kernels" }
    );
    push_line!(text, "threads: {} available (plans use all by default)", system::available_threads());
    // Ask the library rather than guess: it knows whether a driver and a GPU are there.
    let probe = Dims::new(1, 1, 1)
        .and_then(|dims| Plan::<f64>::new(dims, PlanOptions { backend: Backend::Cuda, ..Default::default() }));
    match probe {
        Ok(plan) => push_line!(text, "CUDA: available ({})", system::device_name(plan.backend(), plan.gpu_name())),
        Err(e) => push_line!(text, "CUDA: not available ({e})"),
    }
    let model = btchol::plan::dispatch::CostModel::global();
    match model.warning() {
        None => push_line!(text, "calibration: {} ({} rows)", model.source(), model.table().rows.len()),
        Some(w) => push_line!(text, "calibration: {} ({} rows); {w}", model.source(), model.table().rows.len()),
    }
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}
