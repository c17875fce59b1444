//! `btchol calibrate`: measures every available dispatch target over a grid with the bench's
//! runner (measure.rs) and writes the calibration table that `Plan::new` reads
//! (btchol::plan::dispatch); `--check` measures whether the automatic choice is within 10 % of the
//! best target at every point; `--show` prints what the table in effect predicts.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use btchol::plan::dispatch::{self, CalibrationRow, CalibrationTable, CostModel, Query, Target};
use btchol::{Backend, DType, Dims, Error};

use crate::args::{parse_choice, parse_list, parse_uint, usage, Args, UsageError};
use crate::config::{BenchConfig, Case, RunSettings};
use crate::measure::{self, Measurement, Stats};
use crate::report::{CsvWriter, Row, Value};
use crate::{system, Failure};

pub const HELP: &str = "\
btchol calibrate — measure the dispatch targets and write the calibration table of Backend::Auto

Usage: btchol calibrate [--out PATH] [--quick] [--backend cpu|cuda|all] [grid flags]
       btchol calibrate --check [--out PATH] [--quick] [--backend ...] [grid flags]
       btchol calibrate --show [--table PATH] [--cpu-device NAME] [--gpu-device NAME] [grid flags]

Targets: cpu-seq, cpu-nd (CPU sequential / nested dissection), cuda-nd, cuda-seq (GPU nested
dissection / per-item sequential); a target this build or machine cannot run is skipped.

Modes:
  (default)                  measure every available target at every grid point (factor and
                             solve, the fastest of the repeats: other processes only add time;
                             one right-hand side) and write the table to --out, else
                             to calibration.csv in the cache folder ($BTCHOL_CACHE_DIR, else
                             $XDG_CACHE_HOME/btchol or ~/.cache/btchol), where plans find it. Then
                             print the best target per point and the CPU/GPU crossover N per
                             (dtype, n, batch). Along N a target stops once factor + solve exceeds
                             --max-us (larger N are estimated by the model's extrapolation)
  --check                    per grid point, measure every available target and ask Plan::new for
                             its automatic choice; print and (--out) write rows auto_choice,
                             best_choice, auto_us (the measured time of the choice, fastest of
                             the repeats as in the table), best_us,
                             ratio, then 'auto within 10% of best at K/M points'; exit 1 if any
                             point is over 10 %
  --show                     no measuring: the table in effect (or --table PATH laid over the
                             default) estimated at its grid points for this machine (or the named
                             devices and --threads): best target and crossovers

Grid (default n 8,16,32,64,128; N 2,8,32,128,512,2048,8192,16384; batch 1,16,256; f64,f32):
  --quick                    n 8,32; N 4,64,1024; batch 1,16; f64,f32 (well under a minute on 2
                             CPU cores), 3 repeats after 1 warm-up (--check: adaptive repeats)
  --n, --N, --batch, --dtype lists that replace the grid's
  --threads T                CPU threads, 0 = all available cores (default 0)
  --backend cpu|cuda|all     which targets to measure (default all)
  --max-us US                cap of factor + solve per point along N (default 100000)
  --repeats R, --warmup W    as for bench (default: 5 repeats after 1 warm-up; --check: adaptive)

Output:
  --out PATH                 the table (default: the cache folder's calibration.csv), or the
                             --check rows as CSV (default: none)
  --table PATH               --show/--check: use this calibration file (as $BTCHOL_CALIBRATION)
  --cpu-device, --gpu-device --show: the devices whose rows to prefer (default: this machine's)
  -h, --help                 this text

The table: CSV with columns target, device, dtype, n, N, batch, threads, factor_us, solve_us,
date ('#' lines are comments). $BTCHOL_CALIBRATION=PATH makes plans use another file. The
compiled-in default is bench/calibration/default.csv (scripts/calibration_from_results.py).

Examples:
  btchol calibrate --quick --out /tmp/calibration.csv
  btchol calibrate --check --quick --out bench/results/auto-check-cpu-2026-11-23.csv
  btchol calibrate --show --cpu-device 'Intel(R) Xeon(R) Processor' \\
      --gpu-device 'NVIDIA H100 80GB HBM3' --threads 16 --batch 1
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Measure,
    Check,
    Show,
}

/// Everything `btchol calibrate` was asked to do.
#[derive(Clone, Debug)]
pub struct CalibrateConfig {
    mode: Mode,
    quick: bool,
    targets: Vec<Target>,
    block_sizes: Option<Vec<usize>>,
    n_blocks: Option<Vec<usize>>,
    batches: Option<Vec<usize>>,
    dtypes: Option<Vec<DType>>,
    threads: usize,
    max_us: f64,
    repeats: Option<usize>,
    warmup: Option<usize>,
    out: Option<PathBuf>,
    table: Option<PathBuf>,
    cpu_device: Option<String>,
    gpu_device: Option<String>,
}

pub enum CalibrateCommand {
    Run(Box<CalibrateConfig>),
    Help,
}

const TARGET_SETS: &[(&str, &[Target])] =
    &[("cpu", &[Target::CpuSeq, Target::CpuNd]), ("cuda", &[Target::CudaNd, Target::CudaSeq]), ("all", &Target::ALL)];
const DTYPES: &[(&str, DType)] = &[("f64", DType::F64), ("f32", DType::F32)];

impl CalibrateConfig {
    pub fn parse(mut args: Args) -> Result<CalibrateCommand, UsageError> {
        let mut c = CalibrateConfig {
            mode: Mode::Measure,
            quick: false,
            targets: Target::ALL.to_vec(),
            block_sizes: None,
            n_blocks: None,
            batches: None,
            dtypes: None,
            threads: 0,
            max_us: 1e5,
            repeats: None,
            warmup: None,
            out: None,
            table: None,
            cpu_device: None,
            gpu_device: None,
        };
        let mut seen: Vec<String> = Vec::new();
        let sizes = |flag: &str, v: &str| parse_list(flag, v, |s| parse_uint(flag, s, 1));
        let path = |flag: &str, v: String| {
            if v.is_empty() {
                Err(usage!("{flag} needs a file path"))
            } else {
                Ok(PathBuf::from(v))
            }
        };
        while let Some(mut flag) = args.next_flag()? {
            if seen.contains(&flag.name) {
                return Err(usage!("{} given more than once", flag.name));
            }
            seen.push(flag.name.clone());
            let name = flag.name.clone();
            let f = name.as_str();
            let mut set_mode = |m: Mode| {
                if c.mode != Mode::Measure {
                    return Err(usage!("--check and --show exclude each other"));
                }
                c.mode = m;
                Ok(())
            };
            match f {
                "--help" => return Ok(CalibrateCommand::Help),
                "--check" => {
                    args.no_value(&flag)?;
                    set_mode(Mode::Check)?
                }
                "--show" => {
                    args.no_value(&flag)?;
                    set_mode(Mode::Show)?
                }
                "--quick" => {
                    args.no_value(&flag)?;
                    c.quick = true
                }
                "--backend" => c.targets = parse_choice(f, &args.value(&mut flag)?, TARGET_SETS)?.to_vec(),
                "--n" => c.block_sizes = Some(sizes(f, &args.value(&mut flag)?)?),
                "--N" => c.n_blocks = Some(sizes(f, &args.value(&mut flag)?)?),
                "--batch" => c.batches = Some(sizes(f, &args.value(&mut flag)?)?),
                "--dtype" => c.dtypes = Some(parse_list(f, &args.value(&mut flag)?, |s| parse_choice(f, s, DTYPES))?),
                "--threads" => c.threads = parse_uint(f, &args.value(&mut flag)?, 0)?,
                "--repeats" => c.repeats = Some(parse_uint(f, &args.value(&mut flag)?, 1)?),
                "--warmup" => c.warmup = Some(parse_uint(f, &args.value(&mut flag)?, 0)?),
                "--max-us" => {
                    let v = args.value(&mut flag)?;
                    c.max_us = v
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|x| *x > 0.0)
                        .ok_or_else(|| usage!("invalid value '{v}' for --max-us: expected a time > 0 in µs"))?
                }
                "--out" => c.out = Some(path(f, args.value(&mut flag)?)?),
                "--table" => c.table = Some(path(f, args.value(&mut flag)?)?),
                "--cpu-device" => c.cpu_device = Some(args.value(&mut flag)?),
                "--gpu-device" => c.gpu_device = Some(args.value(&mut flag)?),
                _ => return Err(usage!("unknown flag '{f}' for calibrate (see --help)")),
            }
        }
        if c.table.is_some() && c.mode == Mode::Measure {
            return Err(usage!("--table is for --check and --show (measuring writes a table: --out)"));
        }
        Ok(CalibrateCommand::Run(Box::new(c)))
    }

    fn grid(&self) -> (Vec<DType>, Vec<usize>, Vec<usize>, Vec<usize>) {
        let (n, nb, b): (&[usize], &[usize], &[usize]) = if self.quick {
            (&[8, 32], &[4, 64, 1024], &[1, 16])
        } else {
            (&[8, 16, 32, 64, 128], &[2, 8, 32, 128, 512, 2048, 8192, 16384], &[1, 16, 256])
        };
        (
            self.dtypes.clone().unwrap_or_else(|| vec![DType::F64, DType::F32]),
            self.block_sizes.clone().unwrap_or_else(|| n.to_vec()),
            self.n_blocks.clone().unwrap_or_else(|| nb.to_vec()),
            self.batches.clone().unwrap_or_else(|| b.to_vec()),
        )
    }

    fn settings(&self) -> RunSettings {
        let base = BenchConfig::default().run;
        let adaptive = self.mode == Mode::Check;
        let repeats = match (self.repeats, adaptive, self.quick) {
            (Some(r), _, _) => Some(r),
            (None, true, _) => None,
            (None, false, true) => Some(3),
            (None, false, false) => Some(5),
        };
        let warmup = self.warmup.unwrap_or(if adaptive { base.warmup } else { 1 });
        RunSettings { repeats, warmup, ..base }
    }
}

/// Runs the subcommand.
pub fn run(cfg: &CalibrateConfig) -> Result<ExitCode, Failure> {
    if let Some(t) = &cfg.table {
        if !t.is_file() {
            return Err(Failure::Run(format!("--table {}: no such file", t.display())));
        }
        // Before any plan exists, so the process-wide model reads it (single-threaded here).
        std::env::set_var(dispatch::ENV_VAR, t);
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match cfg.mode {
        Mode::Measure => measure_table(cfg, &mut out),
        Mode::Check => check(cfg, &mut out),
        Mode::Show => {
            let model = CostModel::global();
            if let Some(w) = model.warning() {
                return Err(Failure::Run(format!("calibration: {w}")));
            }
            writeln!(out, "# calibration: {}", model.source())?;
            let cpu = cfg.cpu_device.clone().unwrap_or_else(|| system::cpu_model().to_string());
            let gpu = cfg.gpu_device.clone().or_else(|| dispatch::gpu_name().map(String::from)).or_else(|| {
                // No GPU here: the table's GPU, when it has exactly one.
                let mut gpus: Vec<&str> =
                    model.table().rows.iter().filter(|r| r.target.is_gpu()).map(|r| r.device.as_str()).collect();
                gpus.sort_unstable();
                gpus.dedup();
                (gpus.len() == 1).then(|| gpus[0].to_string())
            });
            let threads = if cfg.threads == 0 { system::available_threads() } else { cfg.threads };
            let grid = table_grid(cfg, model.table(), &cpu, gpu.as_deref());
            summary(&mut out, model, &cfg.targets, &cpu, gpu.as_deref(), threads, &grid, None)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A grid point: (dtype, n, N, batch).
type Point = (DType, usize, usize, usize);

fn case(target: Target, (dtype, n, nb, batch): Point, threads: usize) -> Result<Case, Failure> {
    let dims = Dims::new(batch, nb, n)
        .map_err(|e| Failure::Usage(usage!("--n {n} --N {nb} --batch {batch}: {e}"), "calibrate"))?;
    Ok(Case { backend: target.backend(), algorithm: target.algorithm(), dtype, mixed: false, dims, nrhs: 1, threads })
}

/// Whether a case would take more than half the available memory.
fn too_big(c: &Case) -> bool {
    system::available_memory_bytes().is_some_and(|avail| measure::estimated_bytes(c) > avail / 2)
}

/// Why a target is skipped for good (its backend is missing) or at one point only.
enum Skip {
    Backend(String),
    Point(String),
}

/// Measures one target at one point; `Err(Skip)` for what a target or shape does not support.
fn measure_target(target: Target, p: Point, cfg: &CalibrateConfig) -> Result<Result<Measurement, Skip>, Failure> {
    let c = case(target, p, cfg.threads)?;
    if too_big(&c) {
        return Ok(Err(Skip::Point("needs more than half the available memory".into())));
    }
    match measure::run_case(&c, &cfg.settings()) {
        Ok(m) => Ok(Ok(m)),
        Err(e @ Error::BackendUnavailable(_)) => Ok(Err(Skip::Backend(e.to_string()))),
        Err(e @ (Error::InvalidArgument(_) | Error::Unsupported(_) | Error::OutOfMemory(_))) => {
            Ok(Err(Skip::Point(e.to_string())))
        }
        // A GPU shape that fails in the driver (e.g. device memory) leaves the rest measurable.
        Err(e @ Error::Cuda(_)) if target.is_gpu() => Ok(Err(Skip::Point(e.to_string()))),
        Err(e) => Err(Failure::Run(format!("{} at {}: {e}", target.name(), describe(p)))),
    }
}

fn describe((dtype, n, nb, batch): Point) -> String {
    format!("{} n={n} N={nb} batch={batch}", dtype.name())
}

/// The time a calibration row records and `--check` compares: the fastest of the repeats. Other
/// processes on a shared machine only ever add time, in bursts longer than one run, so the
/// minimum ranks targets reproducibly where medians of two runs minutes apart differed by 2×
/// (the 2-core development VM, 2026-11-23); FFTW's planner measures the same way.
fn best_of(s: &Stats) -> f64 {
    s.min
}

fn cost(m: &Measurement) -> f64 {
    best_of(&m.factor_us) + best_of(&m.solve_us)
}

fn measure_table(cfg: &CalibrateConfig, out: &mut impl Write) -> Result<ExitCode, Failure> {
    let path = match (&cfg.out, dispatch::cache_dir()) {
        (Some(p), _) => p.clone(),
        (None, Some(d)) => d.join(dispatch::CACHE_FILE),
        (None, None) => {
            return Err(Failure::Run("no cache folder (BTCHOL_CACHE_DIR=off): give --out PATH".into()));
        }
    };
    let (dtypes, ns, nbs, batches) = cfg.grid();
    let date = system::utc_now_iso8601();
    let mut rows: Vec<CalibrationRow> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    let mut missing_backends: Vec<Backend> = Vec::new();
    let mut devices: Vec<String> = Vec::new();
    'targets: for &target in &cfg.targets {
        if missing_backends.contains(&target.backend()) {
            missing.push(target.name().into());
            continue;
        }
        // Points this target cannot run (one line per target, not per point).
        let mut skipped: Vec<String> = Vec::new();
        for &dtype in &dtypes {
            for &batch in &batches {
                for &n in &ns {
                    for &nb in &nbs {
                        let p = (dtype, n, nb, batch);
                        let m = match measure_target(target, p, cfg)? {
                            Ok(m) => m,
                            Err(Skip::Backend(why)) => {
                                writeln!(out, "# {}: skipped ({why})", target.name())?;
                                missing.push(target.name().into());
                                missing_backends.push(target.backend());
                                continue 'targets;
                            }
                            Err(Skip::Point(why)) => {
                                skipped.push(format!("{}: {why}", describe(p)));
                                continue;
                            }
                        };
                        writeln!(
                            out,
                            "{:<8} {}: factor {:.1} us, solve {:.1} us",
                            target.name(),
                            describe(p),
                            best_of(&m.factor_us),
                            best_of(&m.solve_us)
                        )?;
                        out.flush()?;
                        if !devices.contains(&m.device) {
                            devices.push(m.device.clone());
                        }
                        rows.push(CalibrationRow {
                            target,
                            device: m.device.clone(),
                            dtype,
                            n,
                            n_blocks: nb,
                            batch,
                            threads: m.threads,
                            factor_us: best_of(&m.factor_us),
                            solve_us: best_of(&m.solve_us),
                            date: date.clone(),
                        });
                        // Larger N only get slower: leave them to the model's extrapolation.
                        if cost(&m) > cfg.max_us {
                            break;
                        }
                    }
                }
            }
        }
        if let Some(first) = skipped.first() {
            writeln!(out, "# {}: skipped at {} points, e.g. {first}", target.name(), skipped.len())?;
        }
    }
    if rows.is_empty() {
        return Err(Failure::Run("no target could be measured".into()));
    }
    let table = CalibrationTable { rows };
    let comments = vec![
        format!("btchol calibrate {} ({}), {date}", btchol::VERSION, if cfg.quick { "--quick" } else { "full grid" }),
        format!("devices: {}", devices.join("; ")),
        format!("threads: {}", table.rows.iter().map(|r| r.threads).max().unwrap_or(1)),
    ];
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Failure::Run(format!("cannot create {}: {e}", dir.display())))?;
    }
    std::fs::write(&path, table.to_csv(&comments))
        .map_err(|e| Failure::Run(format!("cannot write {}: {e}", path.display())))?;
    writeln!(out, "# wrote {} rows to {}", table.rows.len(), path.display())?;

    // The summary of this run's measurements alone (exact at measured points).
    let model = CostModel::new(table.clone(), path.display().to_string());
    let cpu = system::cpu_model().to_string();
    let gpu = table.rows.iter().find(|r| r.target.is_gpu()).map(|r| r.device.clone());
    let threads = table.rows.iter().filter(|r| !r.target.is_gpu()).map(|r| r.threads).max().unwrap_or(1);
    let grid: Vec<Point> = grid_points(&dtypes, &ns, &nbs, &batches);
    summary(out, &model, &cfg.targets, &cpu, gpu.as_deref(), threads, &grid, Some(&table))?;
    if !missing.is_empty() {
        writeln!(out, "# not measured (unavailable here): {}", missing.join(", "))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn grid_points(dtypes: &[DType], ns: &[usize], nbs: &[usize], batches: &[usize]) -> Vec<Point> {
    let mut g = Vec::new();
    for &d in dtypes {
        for &b in batches {
            for &n in ns {
                for &nb in nbs {
                    g.push((d, n, nb, b));
                }
            }
        }
    }
    g
}

/// --show's grid: the flags', else the distinct values of the rows of the two devices.
fn table_grid(cfg: &CalibrateConfig, table: &CalibrationTable, cpu: &str, gpu: Option<&str>) -> Vec<Point> {
    let rows: Vec<&CalibrationRow> =
        table.rows.iter().filter(|r| r.device == cpu || Some(r.device.as_str()) == gpu).collect();
    let rows = if rows.is_empty() { table.rows.iter().collect() } else { rows };
    let distinct = |f: &dyn Fn(&CalibrationRow) -> usize| {
        let mut v: Vec<usize> = rows.iter().map(|r| f(r)).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let dtypes = cfg.dtypes.clone().unwrap_or_else(|| {
        [DType::F64, DType::F32].into_iter().filter(|d| rows.iter().any(|r| r.dtype == *d)).collect()
    });
    grid_points(
        &dtypes,
        &cfg.block_sizes.clone().unwrap_or_else(|| distinct(&|r| r.n)),
        &cfg.n_blocks.clone().unwrap_or_else(|| distinct(&|r| r.n_blocks)),
        &cfg.batches.clone().unwrap_or_else(|| distinct(&|r| r.batch)),
    )
}

/// Per point the best target (by the model; `*` marks an estimate where `measured` has no row) and
/// per (dtype, n, batch) the N from which a GPU target is best.
#[allow(clippy::too_many_arguments)]
fn summary(
    out: &mut impl Write,
    model: &CostModel,
    targets: &[Target],
    cpu: &str,
    gpu: Option<&str>,
    threads: usize,
    grid: &[Point],
    measured: Option<&CalibrationTable>,
) -> io::Result<()> {
    writeln!(out, "# best target per point (factor + solve, us; * = estimated by the model, not measured)")?;
    writeln!(out, "# cpu: {cpu}, {threads} threads; gpu: {}", gpu.unwrap_or("none"))?;
    let head: Vec<String> = targets.iter().map(|t| format!("{:>11}", t.name())).collect();
    writeln!(out, "{:>5} {:>4} {:>6} {:>6} {:>9} {}", "dtype", "n", "batch", "N", "best", head.join(""))?;
    // Per (dtype, n, batch): (N, a GPU target is best, best CPU us, best GPU us).
    type Series = ((DType, usize, usize), Vec<(usize, bool, f64, f64)>);
    let mut series: Vec<Series> = Vec::new();
    for &(dtype, n, nb, batch) in grid {
        let q = Query { dtype, n, n_blocks: nb, batch, threads };
        let est: Vec<(Target, Option<f64>)> = targets
            .iter()
            .map(|&t| {
                let device = if t.is_gpu() { gpu } else { Some(cpu) };
                let e = if t.is_gpu() && gpu.is_none() { None } else { model.estimate(t, device, &q) };
                (t, e.map(|e| e.cost_us()))
            })
            .collect();
        let Some(&(best, Some(_))) =
            est.iter().filter(|e| e.1.is_some()).min_by(|a, b| a.1.unwrap().total_cmp(&b.1.unwrap()))
        else {
            continue;
        };
        let was_measured = |t: Target| {
            measured.map_or(true, |tab| {
                tab.rows
                    .iter()
                    .any(|r| r.target == t && r.dtype == dtype && (r.n, r.n_blocks, r.batch) == (n, nb, batch))
            })
        };
        let cells: Vec<String> = est
            .iter()
            .map(|&(t, e)| match e {
                Some(us) => format!("{:>10.1}{}", us, if was_measured(t) { " " } else { "*" }),
                None => format!("{:>11}", "-"),
            })
            .collect();
        writeln!(out, "{:>5} {n:>4} {batch:>6} {nb:>6} {:>9} {}", dtype.name(), best.name(), cells.join(""))?;
        let best_of = |gpu_side: bool| {
            est.iter().filter(|e| e.0.is_gpu() == gpu_side).filter_map(|e| e.1).fold(f64::INFINITY, f64::min)
        };
        let key = (dtype, n, batch);
        let entry = (nb, best.is_gpu(), best_of(false), best_of(true));
        match series.iter_mut().find(|s| s.0 == key) {
            Some(s) => s.1.push(entry),
            None => series.push((key, vec![entry])),
        }
    }
    writeln!(out, "# CPU/GPU crossover: the smallest N from which the GPU is best at every larger N of the grid")?;
    for ((dtype, n, batch), mut pts) in series {
        pts.sort_by_key(|p| p.0);
        let label = format!("{} n={n} batch={batch}", dtype.name());
        if pts.iter().all(|p| p.3.is_infinite()) {
            writeln!(out, "{label}: no GPU target")?;
            continue;
        }
        if pts.iter().all(|p| p.2.is_infinite()) {
            writeln!(out, "{label}: no CPU target")?;
            continue;
        }
        let from = pts.iter().rposition(|p| !p.1).map_or(0, |i| i + 1);
        match pts.get(from) {
            None => writeln!(out, "{label}: CPU best up to N={} (no crossover in the grid)", pts[pts.len() - 1].0)?,
            Some(&(nb, _, cpu_us, gpu_us)) if from == 0 => {
                writeln!(out, "{label}: GPU best from the smallest N={nb} (cpu {cpu_us:.1} us vs gpu {gpu_us:.1} us)")?
            }
            Some(&(nb, _, cpu_us, gpu_us)) => writeln!(
                out,
                "{label}: crossover at N={nb} (after N={}): cpu {cpu_us:.1} us vs gpu {gpu_us:.1} us",
                pts[from - 1].0
            )?,
        }
    }
    Ok(())
}

/// The --check table's columns: (field, heading, width).
const CHECK_TABLE: &[(&str, usize)] = &[
    ("dtype", 5),
    ("n", 4),
    ("N", 6),
    ("batch", 6),
    ("auto_choice", 11),
    ("best_choice", 11),
    ("auto_us", 11),
    ("best_us", 11),
    ("ratio", 6),
];

fn check(cfg: &CalibrateConfig, out: &mut impl Write) -> Result<ExitCode, Failure> {
    let (dtypes, ns, nbs, batches) = cfg.grid();
    let grid = grid_points(&dtypes, &ns, &nbs, &batches);
    let settings = cfg.settings();
    let mut csv = match &cfg.out {
        Some(p) => Some(CsvWriter::create(p).map_err(|e| Failure::Run(format!("cannot create {}: {e}", p.display())))?),
        None => None,
    };
    let model = CostModel::global();
    writeln!(out, "# calibration: {}{}", model.source(), model.warning().map_or(String::new(), |w| format!(" ({w})")))?;
    let head: Vec<String> = CHECK_TABLE.iter().map(|&(h, w)| format!("{h:>w$}")).collect();
    writeln!(out, "{}", head.join(" "))?;
    let mut unavailable: Vec<Target> = Vec::new();
    let (mut passed, mut total, mut fails) = (0usize, 0usize, Vec::new());
    for p in grid {
        let (dtype, n, nb, batch) = p;
        let mut times: Vec<(Target, f64)> = Vec::new();
        let mut threads = 1;
        for &t in &cfg.targets {
            if unavailable.iter().any(|u| u.backend() == t.backend()) {
                continue;
            }
            match measure_target(t, p, cfg)? {
                Ok(m) => {
                    if !t.is_gpu() {
                        threads = m.threads;
                    }
                    times.push((t, cost(&m)));
                }
                Err(Skip::Backend(_)) => unavailable.push(t),
                Err(Skip::Point(_)) => {}
            }
        }
        let auto_case = Case {
            backend: Backend::Auto,
            algorithm: btchol::Algorithm::Auto,
            ..case(Target::CpuSeq, p, cfg.threads)?
        };
        let (backend, algorithm, reason) = measure::auto_choice(&auto_case, &settings)
            .map_err(|e| Failure::Run(format!("auto plan at {}: {e}", describe(p))))?;
        let chosen = Target::of(backend, algorithm).expect("a plan's backend and algorithm are concrete");
        // The choice may be a target outside --backend: measure it too.
        if !times.iter().any(|t| t.0 == chosen) {
            if let Ok(m) = measure_target(chosen, p, cfg)? {
                times.push((chosen, cost(&m)));
            }
        }
        let Some(&(best, best_us)) = times.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
            writeln!(out, "# {}: no target could be measured", describe(p))?;
            continue;
        };
        let auto_us = times.iter().find(|t| t.0 == chosen).map_or(f64::NAN, |t| t.1);
        let ratio = auto_us / best_us;
        let ok = ratio <= 1.10;
        total += 1;
        if ok {
            passed += 1;
        } else {
            fails.push(format!(
                "{} (auto {} {:.1} us, best {} {:.1} us, ×{ratio:.2})",
                describe(p),
                chosen.name(),
                auto_us,
                best.name(),
                best_us
            ));
        }
        let time_of = |t: Target| times.iter().find(|x| x.0 == t).map_or(f64::NAN, |x| x.1);
        let row = Row(vec![
            ("cpu", Value::Str(system::cpu_model().into())),
            ("gpu", Value::Str(dispatch::gpu_name().unwrap_or("").into())),
            ("dtype", Value::Str(dtype.name().into())),
            ("n", Value::Int(n as u64)),
            ("N", Value::Int(nb as u64)),
            ("batch", Value::Int(batch as u64)),
            ("threads", Value::Int(threads as u64)),
            ("auto_choice", Value::Str(chosen.name().into())),
            ("best_choice", Value::Str(best.name().into())),
            ("auto_us", Value::Fixed(auto_us, 3)),
            ("best_us", Value::Fixed(best_us, 3)),
            ("ratio", Value::Fixed(ratio, 3)),
            ("within_10pct", Value::Int(ok as u64)),
            ("cpu_seq_us", Value::Fixed(time_of(Target::CpuSeq), 3)),
            ("cpu_nd_us", Value::Fixed(time_of(Target::CpuNd), 3)),
            ("cuda_nd_us", Value::Fixed(time_of(Target::CudaNd), 3)),
            ("cuda_seq_us", Value::Fixed(time_of(Target::CudaSeq), 3)),
            ("dispatch", Value::Str(reason)),
            ("version", Value::Str(btchol::VERSION.into())),
            ("date", Value::Str(system::utc_now_iso8601())),
        ]);
        let cells: Vec<String> = CHECK_TABLE
            .iter()
            .map(|&(k, w)| {
                let text = match row.get(k) {
                    Some(Value::Str(s)) => s.clone(),
                    Some(Value::Int(i)) => i.to_string(),
                    Some(Value::Fixed(x, _)) if k == "ratio" => format!("{x:.3}"),
                    Some(Value::Fixed(x, _)) => format!("{x:.1}"),
                    _ => "-".into(),
                };
                format!("{text:>w$}")
            })
            .collect();
        writeln!(out, "{}{}", cells.join(" "), if ok { "" } else { "  OVER 10%" })?;
        out.flush()?;
        if let (Some(w), Some(path)) = (csv.as_mut(), cfg.out.as_ref()) {
            w.write(&row).map_err(|e| Failure::Run(format!("cannot write {}: {e}", path.display())))?;
        }
    }
    if !unavailable.is_empty() {
        let names: Vec<&str> = unavailable.iter().map(|t| t.name()).collect();
        writeln!(out, "# not measured (unavailable here): {}", names.join(", "))?;
    }
    writeln!(out, "auto within 10% of best at {passed}/{total} points")?;
    for f in &fails {
        writeln!(out, "  over: {f}")?;
    }
    Ok(if fails.is_empty() && total > 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn parse(v: &[&str]) -> Result<CalibrateConfig, UsageError> {
        match CalibrateConfig::parse(Args::from_os(v.iter().map(OsString::from))?)? {
            CalibrateCommand::Run(c) => Ok(*c),
            CalibrateCommand::Help => Err(UsageError("help".into())),
        }
    }

    #[test]
    fn flags_select_mode_grid_and_targets() {
        let c = parse(&["--quick", "--backend", "cpu", "--out", "/tmp/x.csv"]).unwrap();
        assert_eq!((c.mode, c.targets.clone()), (Mode::Measure, vec![Target::CpuSeq, Target::CpuNd]));
        let (d, n, nb, b) = c.grid();
        assert_eq!(d.len() * n.len() * nb.len() * b.len(), 24);
        assert_eq!(c.settings().repeats, Some(3));
        let c = parse(&["--check", "--n", "8", "--N", "2,4", "--dtype", "f32"]).unwrap();
        assert_eq!(c.grid(), (vec![DType::F32], vec![8], vec![2, 4], vec![1, 16, 256]));
        assert_eq!(c.settings().repeats, None, "--check uses adaptive repeats");
        assert!(parse(&["--check", "--show"]).is_err());
        assert!(parse(&["--table", "x.csv"]).is_err(), "--table is not for measuring");
        assert!(parse(&["--backend", "gpu"]).is_err());
        assert!(parse(&["--max-us", "0"]).is_err());
    }
}
