//! Automatic dispatch: with `Backend::Auto` and/or `Algorithm::Auto` the plan picks one of four
//! targets (CPU sequential, CPU nested dissection, GPU nested dissection, GPU per-item sequential)
//! by a cost model interpolated from a calibration table of measured times.
//!
//! **Cost.** A target's cost is the estimated factor + solve time with one right-hand side (what a
//! caller who re-factors per step pays); more right-hand sides are not modelled.
//!
//! **Table.** Rows `target, device, dtype, n, N, batch, threads, factor_us, solve_us, date`
//! (CSV, `#` lines are comments, columns in any order, extra columns ignored). The compiled-in
//! default is `bench/calibration/default.csv`, generated from `bench/results/` by
//! `scripts/calibration_from_results.py`. At run time the first of these files that exists is laid
//! over it: `$BTCHOL_CALIBRATION`, else `calibration.csv` in the cache folder (the kernel cache's
//! folder, written by `btchol calibrate`). Its rows replace the default's rows of the same
//! (target, device, dtype, threads) and add the others. A file that cannot be read or parsed is
//! ignored with a warning (printed once to stderr and kept in [`CostModel::warning`] and the plan's
//! dispatch reason): a bad calibration file must never stop a plan from being created.
//!
//! **Estimate** of target t at (B, N, n, dtype, threads T) on a device D:
//! 1. rows of t and dtype; of device D when the table has any, else of every device;
//! 2. of the measured thread count nearest to T (in ratio; ties: the larger), T_m; CPU times are
//!    then scaled by s(T_m)/s(T) with s = min(T, B) for the sequential algorithm (items run in
//!    parallel) and s = min(T, B·max(1, N/2)) for nested dissection (also parallel inside an item);
//!    GPU rows ignore threads;
//! 3. batch slices: the measured batch sizes whose rows cover n (all slices if none does); the two
//!    bracketing B (interpolated log-log in B), or the nearest one outside their range;
//! 4. within a slice of batch B_s the rows are points (n, W = B_s·N); the estimate at W = B·N is
//!    piecewise linear in log W per measured n, then in log n between the two bracketing n. The
//!    work W is what a batch and a longer single system share; the CPU sequential algorithm's
//!    parallelism over items is restored by the factor of step 2.
//!
//! Outside the measured range the nearest segment's log-log slope is extended, clamped to [0, 1]
//! in W (time grows at most in proportion to the work) and to [0, 3] in n (the flops grow as n³);
//! a single measured point extends with slope 1 in W and 3 in n.
//!
//! **Choice.** The candidates are the targets the options allow (an explicit backend or algorithm
//! fixes that part; options that only the CPU supports exclude the GPU; `Backend::Auto` considers
//! the GPU only when one is usable), ranked by estimate; the plan takes the first that can be
//! created, skipping one whose creation fails as invalid, unsupported or unavailable. When the
//! table has no rows for any candidate (e.g. an empty override for this dtype), the provisional
//! rule of the plan decides instead (GPU when B·N·n³ ≥ 4·10⁶; CPU nested dissection for
//! B < T, T ≥ 4, N ≥ 256).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{Algorithm, Backend, PlanOptions};
use crate::error::{Error, Result};
use crate::scalar::DType;

/// The compiled-in calibration table.
pub const DEFAULT_TABLE: &str = include_str!("../../bench/calibration/default.csv");

/// Environment variable naming a calibration file to use instead of the cache folder's.
pub const ENV_VAR: &str = "BTCHOL_CALIBRATION";

/// The calibration file's name in the cache folder.
pub const CACHE_FILE: &str = "calibration.csv";

/// One way to run a plan: a backend and a concrete algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    CpuSeq,
    CpuNd,
    CudaNd,
    CudaSeq,
}

impl Target {
    pub const ALL: [Target; 4] = [Target::CpuSeq, Target::CpuNd, Target::CudaNd, Target::CudaSeq];

    pub fn name(self) -> &'static str {
        match self {
            Target::CpuSeq => "cpu-seq",
            Target::CpuNd => "cpu-nd",
            Target::CudaNd => "cuda-nd",
            Target::CudaSeq => "cuda-seq",
        }
    }

    pub fn parse(s: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == s)
    }

    pub fn backend(self) -> Backend {
        match self {
            Target::CpuSeq | Target::CpuNd => Backend::Cpu,
            Target::CudaNd | Target::CudaSeq => Backend::Cuda,
        }
    }

    pub fn algorithm(self) -> Algorithm {
        match self {
            Target::CpuSeq | Target::CudaSeq => Algorithm::Sequential,
            Target::CpuNd | Target::CudaNd => Algorithm::NestedDissection,
        }
    }

    /// The target of a concrete (backend, algorithm); `None` when either is `Auto`.
    pub fn of(backend: Backend, algorithm: Algorithm) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.backend() == backend && t.algorithm() == algorithm)
    }

    pub fn is_gpu(self) -> bool {
        self.backend() == Backend::Cuda
    }

    /// Whether the target runs block size `n` at all (the GPU per-item sequential kernels hold a
    /// block in one warp's registers: n ≤ 32). The model never estimates what cannot run, so
    /// neither `decide` nor `btchol calibrate --show` extrapolates such a target.
    pub fn supports_block_size(self, n: usize) -> bool {
        self != Target::CudaSeq || n <= crate::cuda::jit::SEQ_MAX_BLOCK_SIZE
    }
}

/// One measured point of the calibration table.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibrationRow {
    pub target: Target,
    /// CPU model or GPU name the row was measured on.
    pub device: String,
    pub dtype: DType,
    /// Block size n.
    pub n: usize,
    /// Number of blocks N.
    pub n_blocks: usize,
    pub batch: usize,
    /// CPU threads (1 for GPU rows).
    pub threads: usize,
    pub factor_us: f64,
    pub solve_us: f64,
    pub date: String,
}

impl CalibrationRow {
    /// Factor + one solve: the cost the dispatch compares.
    pub fn cost_us(&self) -> f64 {
        self.factor_us + self.solve_us
    }
}

/// The measured points the cost model interpolates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CalibrationTable {
    pub rows: Vec<CalibrationRow>,
}

const COLUMNS: [&str; 10] =
    ["target", "device", "dtype", "n", "N", "batch", "threads", "factor_us", "solve_us", "date"];

impl CalibrationTable {
    /// Parses the CSV format (see the module docs). Errors name the line and the problem.
    pub fn parse(text: &str) -> Result<CalibrationTable> {
        let bad = |line: usize, msg: String| Error::InvalidArgument(format!("calibration table line {line}: {msg}"));
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
        let (head_no, head) = lines.next().ok_or_else(|| bad(1, "no header row".into()))?;
        let header = split_csv(head);
        let mut index = [0usize; COLUMNS.len()];
        for (k, name) in COLUMNS.iter().enumerate() {
            index[k] = header
                .iter()
                .position(|h| h.trim() == *name)
                .ok_or_else(|| bad(head_no + 1, format!("missing column '{name}'")))?;
        }
        let mut rows = Vec::new();
        for (no, line) in lines {
            let cells = split_csv(line);
            let cell = |k: usize| cells.get(index[k]).map(|s| s.trim()).unwrap_or("");
            let uint = |k: usize| -> Result<usize> {
                cell(k)
                    .parse::<usize>()
                    .ok()
                    .filter(|&v| v >= 1)
                    .ok_or_else(|| bad(no + 1, format!("{} = '{}' is not an integer ≥ 1", COLUMNS[k], cell(k))))
            };
            let time = |k: usize| -> Result<f64> {
                cell(k).parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| {
                    bad(no + 1, format!("{} = '{}' is not a finite time ≥ 0 in µs", COLUMNS[k], cell(k)))
                })
            };
            let target = Target::parse(cell(0)).ok_or_else(|| {
                bad(no + 1, format!("unknown target '{}' (expected cpu-seq, cpu-nd, cuda-nd or cuda-seq)", cell(0)))
            })?;
            let dtype =
                DType::parse(cell(2)).ok_or_else(|| bad(no + 1, format!("dtype '{}' is not f32 or f64", cell(2))))?;
            rows.push(CalibrationRow {
                target,
                device: cell(1).to_string(),
                dtype,
                n: uint(3)?,
                n_blocks: uint(4)?,
                batch: uint(5)?,
                threads: uint(6)?,
                factor_us: time(7)?,
                solve_us: time(8)?,
                date: cell(9).to_string(),
            });
        }
        if rows.is_empty() {
            return Err(bad(head_no + 1, "the table has no rows".into()));
        }
        Ok(CalibrationTable { rows })
    }

    /// The table as CSV, with `comments` as leading `#` lines.
    pub fn to_csv(&self, comments: &[String]) -> String {
        let mut s: String = comments.iter().map(|c| format!("# {c}\n")).collect();
        s.push_str(&COLUMNS.join(","));
        s.push('\n');
        for r in &self.rows {
            let device = if r.device.contains([',', '"']) {
                format!("\"{}\"", r.device.replace('"', "\"\""))
            } else {
                r.device.clone()
            };
            s.push_str(&format!(
                "{},{},{},{},{},{},{},{:.3},{:.3},{}\n",
                r.target.name(),
                device,
                r.dtype.name(),
                r.n,
                r.n_blocks,
                r.batch,
                r.threads,
                r.factor_us,
                r.solve_us,
                r.date
            ));
        }
        s
    }

    /// The compiled-in table (empty, so the provisional rule decides, if it failed to parse; a
    /// unit test keeps it parseable).
    pub fn builtin() -> CalibrationTable {
        CalibrationTable::parse(DEFAULT_TABLE).unwrap_or_default()
    }

    /// This table with `other`'s rows replacing its rows of the same (target, device, dtype,
    /// threads).
    pub fn overlaid(&self, other: &CalibrationTable) -> CalibrationTable {
        let group = |r: &CalibrationRow| (r.target, r.device.clone(), r.dtype, r.threads);
        let replaced: Vec<_> = other.rows.iter().map(group).collect();
        let mut rows: Vec<CalibrationRow> =
            self.rows.iter().filter(|r| !replaced.contains(&group(r))).cloned().collect();
        rows.extend(other.rows.iter().cloned());
        CalibrationTable { rows }
    }
}

/// Splits one CSV line, honouring double quotes (RFC 4180, no line breaks inside cells).
fn split_csv(line: &str) -> Vec<String> {
    let (mut cells, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    cells.push(cur);
    cells
}

/// The problem a cost is estimated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    pub dtype: DType,
    /// Block size n.
    pub n: usize,
    /// Number of blocks N.
    pub n_blocks: usize,
    pub batch: usize,
    /// CPU threads (≥ 1).
    pub threads: usize,
}

/// Estimated times of one target, µs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub factor_us: f64,
    pub solve_us: f64,
}

impl Estimate {
    /// Factor + one solve: what the dispatch compares.
    pub fn cost_us(&self) -> f64 {
        self.factor_us + self.solve_us
    }
}

/// The calibration table in effect and where it came from.
#[derive(Clone, Debug)]
pub struct CostModel {
    table: CalibrationTable,
    source: String,
    warning: Option<String>,
}

impl CostModel {
    pub fn new(table: CalibrationTable, source: impl Into<String>) -> CostModel {
        CostModel { table, source: source.into(), warning: None }
    }

    /// The model of this process (loaded once, on first use): see [`CostModel::load`].
    pub fn global() -> &'static CostModel {
        static MODEL: OnceLock<CostModel> = OnceLock::new();
        MODEL.get_or_init(|| {
            let m = CostModel::load(std::env::var_os(ENV_VAR).map(PathBuf::from), cache_dir());
            if let Some(w) = &m.warning {
                eprintln!("btchol: warning: {w}");
            }
            m
        })
    }

    /// The compiled-in table overlaid with the first calibration file found: `env_file` (the value
    /// of `$BTCHOL_CALIBRATION`), else `calibration.csv` in `cache_dir`. A file that cannot be read
    /// or parsed is skipped with a [`warning`](CostModel::warning); a missing cache file is normal.
    pub fn load(env_file: Option<PathBuf>, cache_dir: Option<PathBuf>) -> CostModel {
        let builtin = CalibrationTable::builtin();
        let mut warning = None;
        let read = |path: &Path| -> Result<CalibrationTable> {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::InvalidArgument(format!("cannot read calibration file: {e}")))?;
            CalibrationTable::parse(&text)
        };
        if let Some(path) = env_file.filter(|p| !p.as_os_str().is_empty()) {
            match read(&path) {
                Ok(t) => return CostModel::new(builtin.overlaid(&t), format!("{ENV_VAR}={}", path.display())),
                Err(e) => warning = Some(format!("{ENV_VAR}={} ignored: {e}", path.display())),
            }
        }
        if let Some(path) = cache_dir.map(|d| d.join(CACHE_FILE)).filter(|p| p.exists()) {
            match read(&path) {
                Ok(t) => {
                    let mut m = CostModel::new(builtin.overlaid(&t), path.display().to_string());
                    m.warning = warning;
                    return m;
                }
                Err(e) => {
                    let w = format!("{} ignored: {e}", path.display());
                    warning = Some(warning.map_or(w.clone(), |p| format!("{p}; {w}")));
                }
            }
        }
        CostModel { table: builtin, source: "default".into(), warning }
    }

    pub fn table(&self) -> &CalibrationTable {
        &self.table
    }
    /// "default", the calibration file's path, or `BTCHOL_CALIBRATION=path`.
    pub fn source(&self) -> &str {
        &self.source
    }
    /// Why a calibration file was ignored, if one was.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// The estimated times of `target` for `q` on `device` (rows of other devices stand in when the
    /// table has none of it); `None` when the table has no row of this target and dtype.
    pub fn estimate(&self, target: Target, device: Option<&str>, q: &Query) -> Option<Estimate> {
        if !target.supports_block_size(q.n) {
            return None;
        }
        let rows: Vec<&CalibrationRow> =
            self.table.rows.iter().filter(|r| r.target == target && r.dtype == q.dtype).collect();
        let same_device: Vec<&CalibrationRow> = match device {
            Some(d) => rows.iter().copied().filter(|r| r.device.trim().eq_ignore_ascii_case(d.trim())).collect(),
            None => Vec::new(),
        };
        let rows = if same_device.is_empty() { rows } else { same_device };
        if rows.is_empty() {
            return None;
        }
        // Nearest measured thread count (GPU rows: all measured with 1).
        let threads = q.threads.max(1);
        let measured = |r: &&CalibrationRow| ((r.threads as f64).ln() - (threads as f64).ln()).abs();
        let best = rows.iter().min_by(|a, b| measured(a).total_cmp(&measured(b)).then(b.threads.cmp(&a.threads)))?;
        let t_m = best.threads;
        let rows: Vec<&CalibrationRow> = rows.into_iter().filter(|r| r.threads == t_m).collect();

        // Batch slices that cover n, bracketing B.
        let mut slices: Vec<usize> = rows.iter().map(|r| r.batch).collect();
        slices.sort_unstable();
        slices.dedup();
        let covers = |b: usize| {
            let ns = rows.iter().filter(|r| r.batch == b).map(|r| r.n);
            let (lo, hi) = ns.fold((usize::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
            lo <= q.n && q.n <= hi
        };
        let covering: Vec<usize> = slices.iter().copied().filter(|&b| covers(b)).collect();
        let slices = if covering.is_empty() { slices } else { covering };
        let work = (q.batch as f64) * (q.n_blocks as f64);
        let slice_estimate = |b: usize| -> Estimate {
            let pts: Vec<(f64, f64, Estimate)> = rows
                .iter()
                .filter(|r| r.batch == b)
                .map(|r| {
                    let e = Estimate { factor_us: r.factor_us, solve_us: r.solve_us };
                    (r.n as f64, (r.batch * r.n_blocks) as f64, e)
                })
                .collect();
            let e = interpolate_2d(&pts, q.n as f64, work, target.is_gpu());
            // Back from "a batch of b over W/b blocks on T_m threads" to the query.
            let scale = speedup(target, b, work / b as f64, t_m) / speedup(target, q.batch, q.n_blocks as f64, threads);
            Estimate { factor_us: e.factor_us * scale, solve_us: e.solve_us * scale }
        };
        let b = q.batch;
        let lo = slices.iter().copied().filter(|&s| s <= b).max();
        let hi = slices.iter().copied().filter(|&s| s >= b).min();
        Some(match (lo, hi) {
            (Some(l), Some(h)) if l != h => {
                let w = ((b as f64).ln() - (l as f64).ln()) / ((h as f64).ln() - (l as f64).ln());
                let (el, eh) = (slice_estimate(l), slice_estimate(h));
                Estimate {
                    factor_us: geo_mix(el.factor_us, eh.factor_us, w),
                    solve_us: geo_mix(el.solve_us, eh.solve_us, w),
                }
            }
            (Some(s), _) | (None, Some(s)) => slice_estimate(s),
            (None, None) => return None,
        })
    }
}

/// CPU parallelism usable by `target` on a batch of `batch` systems of `n_blocks` blocks.
fn speedup(target: Target, batch: usize, n_blocks: f64, threads: usize) -> f64 {
    let t = threads.max(1) as f64;
    match target {
        Target::CpuSeq => t.min(batch as f64),
        Target::CpuNd => t.min(batch as f64 * (n_blocks / 2.0).max(1.0)),
        Target::CudaNd | Target::CudaSeq => 1.0,
    }
}

/// exp((1−w)·ln a + w·ln b), with zero times kept finite.
fn geo_mix(a: f64, b: f64, w: f64) -> f64 {
    let (a, b) = (a.max(1e-9), b.max(1e-9));
    (a.ln() * (1.0 - w) + b.ln() * w).exp()
}

/// Piecewise log-log interpolation through `pts` (x, y), both > 0, at `x`; outside, the nearest
/// segment's slope clamped to [`lo`, `hi`]; a single point extends with slope `hi`. With
/// `floor_below`, nothing below the smallest x is cheaper than it (a GPU's launch latency and
/// per-item serial chain do not shrink with less work).
fn interpolate_1d(pts: &mut [(f64, f64)], x: f64, lo: f64, hi: f64, floor_below: bool) -> f64 {
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let ln = |v: f64| v.max(1e-9).ln();
    let line = |(x0, y0): (f64, f64), slope: f64| (ln(y0) + slope * (ln(x) - ln(x0))).exp();
    let slope = |(x0, y0): (f64, f64), (x1, y1): (f64, f64)| (ln(y1) - ln(y0)) / (ln(x1) - ln(x0));
    if let Some(p) = pts.iter().find(|p| p.0 == x) {
        return p.1; // A grid point exactly, not through exp(ln(y)).
    }
    let k = pts.len();
    if floor_below && x < pts[0].0 {
        return pts[0].1;
    }
    if k == 1 {
        return line(pts[0], hi);
    }
    if x <= pts[0].0 {
        return line(pts[0], slope(pts[0], pts[1]).clamp(lo, hi));
    }
    if x >= pts[k - 1].0 {
        return line(pts[k - 1], slope(pts[k - 2], pts[k - 1]).clamp(lo, hi));
    }
    let i = pts.iter().position(|p| p.0 > x).unwrap_or(k - 1);
    line(pts[i - 1], slope(pts[i - 1], pts[i]))
}

/// The estimate at (n, work) from points (n_r, W_r, times): in log W per measured n, then in log n.
fn interpolate_2d(pts: &[(f64, f64, Estimate)], n: f64, work: f64, floor_below: bool) -> Estimate {
    let mut ns: Vec<f64> = pts.iter().map(|p| p.0).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    let at_n = |nv: f64, pick: fn(&Estimate) -> f64| {
        let mut line: Vec<(f64, f64)> = pts.iter().filter(|p| p.0 == nv).map(|p| (p.1, pick(&p.2))).collect();
        // Duplicate W at one n (two slices' rows of one work) would make a vertical segment.
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        line.dedup_by(|a, b| a.0 == b.0);
        interpolate_1d(&mut line, work, 0.0, 1.0, floor_below)
    };
    let time = |pick: fn(&Estimate) -> f64| {
        let mut across: Vec<(f64, f64)> = ns.iter().map(|&nv| (nv, at_n(nv, pick))).collect();
        interpolate_1d(&mut across, n, 0.0, 3.0, floor_below)
    };
    Estimate { factor_us: time(|e| e.factor_us), solve_us: time(|e| e.solve_us) }
}

/// The kernel cache's folder, also the home of `calibration.csv`: `$BTCHOL_CACHE_DIR` unless it is
/// "off" (then `None`), else `$XDG_CACHE_HOME/btchol`, else `~/.cache/btchol`.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os("BTCHOL_CACHE_DIR") {
        Some(v) if v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|p| p.join("btchol")),
    }
}

/// The CPU's model name from /proc/cpuinfo ("cpu" where there is none): the device of CPU rows.
pub fn cpu_model() -> &'static str {
    static MODEL: OnceLock<String> = OnceLock::new();
    MODEL.get_or_init(|| {
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines().find_map(|l| {
                    let (key, value) = l.split_once(':')?;
                    (key.trim() == "model name").then(|| value.split_whitespace().collect::<Vec<_>>().join(" "))
                })
            })
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "cpu".to_string())
    })
}

/// The usable GPU's name, probed once per process; `None` without a driver or device.
pub fn gpu_name() -> Option<&'static str> {
    static NAME: OnceLock<Option<String>> = OnceLock::new();
    NAME.get_or_init(|| crate::cuda::runtime::Device::probe().ok().map(|d| d.name)).as_deref()
}

/// What [`decide`] found: the candidates in the order to try, or no estimate at all.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Decision {
    /// Candidates ranked by estimated cost (µs); those without an estimate come last.
    Ranked(Vec<(Target, Option<f64>)>),
    /// The table has no rows for any candidate: the provisional rule decides.
    NoCalibration,
}

/// The targets `options` allow, for a machine whose GPU is usable or not.
pub(crate) fn candidates(options: &PlanOptions, gpu_usable: bool) -> Vec<Target> {
    Target::ALL
        .into_iter()
        .filter(|t| options.backend == Backend::Auto || options.backend == t.backend())
        .filter(|t| options.algorithm == Algorithm::Auto || options.algorithm == t.algorithm())
        .filter(|t| !t.is_gpu() || gpu_usable || options.backend == Backend::Cuda)
        .collect()
}

/// Ranks `candidates` for `q` by the model's estimates.
pub(crate) fn decide(model: &CostModel, candidates: &[Target], q: &Query, gpu: Option<&str>) -> Decision {
    let mut ranked: Vec<(Target, Option<f64>)> = candidates
        .iter()
        .map(|&t| {
            let device = if t.is_gpu() { gpu } else { Some(cpu_model()) };
            (t, model.estimate(t, device, q).map(|e| e.cost_us()))
        })
        .collect();
    if ranked.iter().all(|(_, e)| e.is_none()) {
        return Decision::NoCalibration;
    }
    // Stable: equal estimates keep the order of Target::ALL (CPU first).
    ranked.sort_by(|a, b| match (a.1, b.1) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    Decision::Ranked(ranked)
}

/// The plan's one-line account of an automatic choice.
pub(crate) fn reason(
    chosen: Target,
    ranked: &[(Target, Option<f64>)],
    skipped: &[String],
    model: &CostModel,
) -> String {
    let fmt = |t: Target, e: Option<f64>| match e {
        Some(us) => format!("{} {us:.0} us", t.name()),
        None => format!("{} (no calibration)", t.name()),
    };
    let own = ranked.iter().find(|(t, _)| *t == chosen).and_then(|(_, e)| *e);
    let others: Vec<String> = ranked.iter().filter(|(t, _)| *t != chosen).map(|&(t, e)| fmt(t, e)).collect();
    let mut s = match own {
        Some(us) => format!("auto: {}, est {us:.0} us", chosen.name()),
        None => format!("auto: {} (no calibration)", chosen.name()),
    };
    if !others.is_empty() {
        s.push_str(&format!(" vs {}", others.join(", ")));
    }
    if !skipped.is_empty() {
        s.push_str(&format!("; skipped {}", skipped.join(", ")));
    }
    s.push_str(&format!(" (calibration: {})", model.source()));
    if model.warning().is_some() {
        s.push_str(" [a calibration file was ignored: see the warning]");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::too_many_arguments)]
    fn row(
        target: Target,
        dtype: DType,
        n: usize,
        nb: usize,
        batch: usize,
        threads: usize,
        f: f64,
        s: f64,
    ) -> CalibrationRow {
        CalibrationRow {
            target,
            device: "dev".into(),
            dtype,
            n,
            n_blocks: nb,
            batch,
            threads,
            factor_us: f,
            solve_us: s,
            date: "2026-11-23".into(),
        }
    }

    fn q(n: usize, nb: usize, batch: usize, threads: usize) -> Query {
        Query { dtype: DType::F64, n, n_blocks: nb, batch, threads }
    }

    fn model(rows: Vec<CalibrationRow>) -> CostModel {
        CostModel::new(CalibrationTable { rows }, "test")
    }

    #[test]
    fn builtin_table_parses_and_covers_every_measured_target() {
        let t = CalibrationTable::parse(DEFAULT_TABLE).expect("bench/calibration/default.csv parses");
        for target in [Target::CpuSeq, Target::CpuNd, Target::CudaNd] {
            for dtype in [DType::F32, DType::F64] {
                assert!(t.rows.iter().any(|r| r.target == target && r.dtype == dtype), "{target:?} {dtype:?}");
            }
        }
        assert_eq!(CalibrationTable::parse(&t.to_csv(&["c".into()])).unwrap(), t, "CSV round trip");
    }

    #[test]
    fn grid_points_are_reproduced_exactly() {
        let t = CalibrationTable::builtin();
        let m = model(t.rows.clone());
        for r in &t.rows {
            let e = m.estimate(r.target, Some(&r.device), &q_of(r)).unwrap();
            assert!((e.factor_us - r.factor_us).abs() <= 1e-6 * r.factor_us.max(1.0), "{r:?} -> {e:?}");
            assert!((e.solve_us - r.solve_us).abs() <= 1e-6 * r.solve_us.max(1.0), "{r:?} -> {e:?}");
        }
    }

    fn q_of(r: &CalibrationRow) -> Query {
        Query { dtype: r.dtype, n: r.n, n_blocks: r.n_blocks, batch: r.batch, threads: r.threads }
    }

    #[test]
    fn exact_points_choose_the_tables_best() {
        // The H100 host's rows: at every measured shape the cheapest target must be chosen.
        let t = CalibrationTable::builtin();
        let m = model(t.rows.clone());
        let gpu = "NVIDIA H100 80GB HBM3";
        let cpu = "Intel(R) Xeon(R) Processor";
        let mut checked = 0;
        for r in t.rows.iter().filter(|r| r.device == gpu) {
            let mut measured: Vec<(Target, f64)> = t
                .rows
                .iter()
                .filter(|c| {
                    c.device == cpu && c.dtype == r.dtype && (c.n, c.n_blocks, c.batch) == (r.n, r.n_blocks, r.batch)
                })
                .map(|c| (c.target, c.cost_us()))
                .collect();
            if measured.is_empty() {
                continue;
            }
            measured.push((r.target, r.cost_us()));
            let best = measured.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
            let query = Query { threads: 16, ..q_of(r) };
            let est = |t: Target| m.estimate(t, Some(if t.is_gpu() { gpu } else { cpu }), &query).unwrap().cost_us();
            let chosen = [Target::CpuSeq, Target::CpuNd, Target::CudaNd, Target::CudaSeq]
                .into_iter()
                .filter(|&t| measured.iter().any(|c| c.0 == t))
                .min_by(|a, b| est(*a).total_cmp(&est(*b)))
                .unwrap();
            assert_eq!(chosen, best, "{query:?}");
            checked += 1;
        }
        assert!(checked >= 100, "only {checked} shapes had CPU and GPU rows");
    }

    #[test]
    fn interpolates_log_log_between_grid_points() {
        let m = model(vec![
            row(Target::CpuSeq, DType::F64, 8, 16, 1, 1, 10.0, 1.0),
            row(Target::CpuSeq, DType::F64, 8, 64, 1, 1, 40.0, 4.0),
            row(Target::CpuSeq, DType::F64, 32, 16, 1, 1, 640.0, 16.0),
            row(Target::CpuSeq, DType::F64, 32, 64, 1, 1, 2560.0, 64.0),
        ]);
        // Midway in log N at n = 8: time ∝ N, so 20 at N = 32.
        let e = m.estimate(Target::CpuSeq, None, &q(8, 32, 1, 1)).unwrap();
        assert!((e.factor_us - 20.0).abs() < 1e-9 && (e.solve_us - 2.0).abs() < 1e-9, "{e:?}");
        // Midway in log n at N = 16: geometric mean of 10 and 640 = 80.
        let e = m.estimate(Target::CpuSeq, None, &q(16, 16, 1, 1)).unwrap();
        assert!((e.factor_us - 80.0).abs() < 1e-9, "{e:?}");
        // Beyond the grid: slope 1 in N (the last segment's), so 4× the work costs 4×.
        let e = m.estimate(Target::CpuSeq, None, &q(8, 256, 1, 1)).unwrap();
        assert!((e.factor_us - 160.0).abs() < 1e-9, "{e:?}");
        // A batch of 4 of N = 16 on 1 thread: the work of N = 64, the same time.
        let e = m.estimate(Target::CpuSeq, None, &q(8, 16, 4, 1)).unwrap();
        assert!((e.factor_us - 40.0).abs() < 1e-9, "{e:?}");
        // ... on 4 threads: items in parallel, a quarter.
        let e = m.estimate(Target::CpuSeq, None, &q(8, 16, 4, 4)).unwrap();
        assert!((e.factor_us - 10.0).abs() < 1e-9, "{e:?}");
        // No rows for f32, or for another target: no estimate.
        assert!(m.estimate(Target::CpuSeq, None, &Query { dtype: DType::F32, ..q(8, 16, 1, 1) }).is_none());
        assert!(m.estimate(Target::CudaNd, None, &q(8, 16, 1, 1)).is_none());
    }

    #[test]
    fn prefers_the_devices_own_rows_and_nearest_threads() {
        let mut other = row(Target::CpuSeq, DType::F64, 8, 16, 1, 2, 100.0, 0.0);
        other.device = "other".into();
        let m = model(vec![
            row(Target::CpuSeq, DType::F64, 8, 16, 1, 1, 10.0, 0.0),
            row(Target::CpuSeq, DType::F64, 8, 16, 1, 16, 3.0, 0.0),
            other,
        ]);
        assert_eq!(m.estimate(Target::CpuSeq, Some("dev"), &q(8, 16, 1, 2)).unwrap().factor_us, 10.0);
        assert_eq!(m.estimate(Target::CpuSeq, Some("dev"), &q(8, 16, 1, 12)).unwrap().factor_us, 3.0);
        assert_eq!(m.estimate(Target::CpuSeq, Some("other"), &q(8, 16, 1, 2)).unwrap().factor_us, 100.0);
        // An unknown device uses every device's rows: the nearest thread count is 2 ("other").
        assert_eq!(m.estimate(Target::CpuSeq, Some("unknown"), &q(8, 16, 1, 2)).unwrap().factor_us, 100.0);
    }

    #[test]
    fn unavailable_candidates_are_not_ranked() {
        let m = model(vec![
            row(Target::CpuSeq, DType::F64, 8, 16, 1, 1, 100.0, 0.0),
            row(Target::CudaNd, DType::F64, 8, 16, 1, 1, 10.0, 0.0),
        ]);
        let auto = PlanOptions::default();
        // No usable GPU: CUDA targets are not candidates, whatever they cost.
        assert_eq!(candidates(&auto, false), vec![Target::CpuSeq, Target::CpuNd]);
        let d = decide(&m, &candidates(&auto, false), &q(8, 16, 1, 1), None);
        assert_eq!(d, Decision::Ranked(vec![(Target::CpuSeq, Some(100.0)), (Target::CpuNd, None)]));
        // With a GPU the cheaper GPU ranks first.
        let d = decide(&m, &candidates(&auto, true), &q(8, 16, 1, 1), Some("dev"));
        let Decision::Ranked(r) = d else { panic!("ranked expected") };
        assert_eq!(r[0], (Target::CudaNd, Some(10.0)));
        // Pivot boosting runs on both backends: it no longer excludes the GPU.
        let boost = PlanOptions { pivot_boost: 1.0, ..auto };
        assert_eq!(candidates(&boost, true), candidates(&auto, true));
        // Explicit parts fix the choice: Cuda + Auto considers both GPU algorithms, even unprobed.
        let cuda = PlanOptions { backend: Backend::Cuda, ..auto };
        assert_eq!(candidates(&cuda, false), vec![Target::CudaNd, Target::CudaSeq]);
        let seq = PlanOptions { algorithm: Algorithm::Sequential, ..auto };
        assert_eq!(candidates(&seq, true), vec![Target::CpuSeq, Target::CudaSeq]);
        // Nothing in the table for f32: the provisional rule decides.
        let f32q = Query { dtype: DType::F32, ..q(8, 16, 1, 1) };
        assert_eq!(decide(&m, &candidates(&auto, true), &f32q, None), Decision::NoCalibration);
    }

    #[test]
    fn targets_are_not_estimated_beyond_the_block_sizes_they_run() {
        let m = model(vec![
            row(Target::CudaSeq, DType::F64, 16, 32, 1, 1, 10.0, 10.0),
            row(Target::CudaSeq, DType::F64, 32, 32, 1, 1, 20.0, 20.0),
            row(Target::CudaNd, DType::F64, 32, 32, 1, 1, 90.0, 90.0),
        ]);
        let cuda = candidates(&PlanOptions { backend: Backend::Cuda, ..PlanOptions::default() }, true);
        let Decision::Ranked(r) = decide(&m, &cuda, &q(32, 32, 1, 1), Some("dev")) else { panic!("ranked expected") };
        assert_eq!(r[0], (Target::CudaSeq, Some(40.0)));
        // n = 33 is beyond the sequential GPU kernels: no estimate, nested dissection ranks first.
        let Decision::Ranked(r) = decide(&m, &cuda, &q(33, 32, 1, 1), Some("dev")) else { panic!("ranked expected") };
        assert_eq!(r[0].0, Target::CudaNd);
        assert_eq!(r[1], (Target::CudaSeq, None));
    }

    #[test]
    fn malformed_tables_are_errors_not_panics() {
        let head = "target,device,dtype,n,N,batch,threads,factor_us,solve_us,date\n";
        for (text, needle) in [
            ("", "no header"),
            ("target,device\ncpu-seq,x\n", "missing column 'dtype'"),
            (head, "no rows"),
            (&format!("{head}gpu-seq,x,f64,8,16,1,1,1.0,1.0,d\n") as &str, "unknown target"),
            (&format!("{head}cpu-seq,x,f16,8,16,1,1,1.0,1.0,d\n"), "dtype"),
            (&format!("{head}cpu-seq,x,f64,0,16,1,1,1.0,1.0,d\n"), "line 2: n = '0'"),
            (&format!("{head}cpu-seq,x,f64,8,16,1,1,nan,1.0,d\n"), "factor_us"),
            (&format!("{head}cpu-seq,x,f64,8,16,1\n"), "threads"),
        ] {
            let err = CalibrationTable::parse(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
        // Quoted devices with commas, comments and extra columns are fine.
        let t =
            CalibrationTable::parse(&format!("# c\nextra,{head}x,cpu-seq,\"A, B\",f64,8,16,1,1,1.5,2.5,d\n")).unwrap();
        assert_eq!((t.rows[0].device.as_str(), t.rows[0].cost_us()), ("A, B", 4.0));
    }

    #[test]
    fn env_file_overrides_cache_file_and_bad_files_fall_back() {
        let dir = std::env::temp_dir().join(format!("btchol-dispatch-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.csv");
        let table = CalibrationTable { rows: vec![row(Target::CudaSeq, DType::F64, 8, 16, 1, 1, 1.0, 1.0)] };
        std::fs::write(&good, table.to_csv(&[])).unwrap();
        let bad = dir.join("bad.csv");
        std::fs::write(&bad, "not,a,table\n").unwrap();
        let cache = dir.join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        let mut cached = table.clone();
        cached.rows[0].factor_us = 7.0;
        std::fs::write(cache.join(CACHE_FILE), cached.to_csv(&[])).unwrap();
        let dev = Some("dev");
        let at = |m: &CostModel| m.estimate(Target::CudaSeq, dev, &q(8, 16, 1, 1)).map(|e| e.factor_us);

        let m = CostModel::load(Some(good.clone()), Some(cache.clone()));
        assert!(m.source().contains("good.csv") && m.warning().is_none());
        assert_eq!(at(&m), Some(1.0));
        // Overlay: the default's rows of other targets stay.
        assert!(m.table().rows.len() > 1 && m.table().rows.iter().any(|r| r.target == Target::CudaNd));
        let m = CostModel::load(None, Some(cache.clone()));
        assert_eq!((at(&m), m.warning()), (Some(7.0), None));
        let m = CostModel::load(Some(bad.clone()), Some(cache.clone()));
        assert!(m.warning().unwrap().contains("bad.csv"), "{:?}", m.warning());
        assert_eq!(at(&m), Some(7.0));
        let m = CostModel::load(Some(dir.join("missing.csv")), None);
        assert_eq!(m.source(), "default");
        assert!(m.warning().unwrap().contains("missing.csv"));
        std::fs::write(cache.join(CACHE_FILE), "garbage").unwrap();
        let m = CostModel::load(None, Some(cache.clone()));
        assert_eq!(m.source(), "default");
        assert!(m.warning().unwrap().contains(CACHE_FILE));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn reason_names_choice_estimates_and_source() {
        let m = model(vec![]);
        let r = reason(
            Target::CudaNd,
            &[(Target::CudaSeq, Some(50.0)), (Target::CudaNd, Some(123.4)), (Target::CpuSeq, Some(456.0))],
            &["cuda-seq (unsupported)".into()],
            &m,
        );
        assert_eq!(
            r,
            "auto: cuda-nd, est 123 us vs cuda-seq 50 us, cpu-seq 456 us; skipped cuda-seq (unsupported) (calibration: test)"
        );
    }
}
