//! Output: a measurement becomes one ordered list of named fields ([`Row`]), and that one list is
//! written as a JSON line, a CSV row, or an aligned table row, so the three formats can never
//! disagree about names or values. JSON and CSV are written by hand (no serde in this crate).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::limits;
use crate::measure::Measurement;

/// One field value, with the precision it is printed at.
#[derive(Clone, Debug)]
pub enum Value {
    Str(String),
    Int(u64),
    /// Fixed-point with this many decimals (times in µs, GFLOP/s).
    Fixed(f64, usize),
    /// Scientific with this many significant decimals (backward errors, flop counts).
    Sci(f64, usize),
}

impl Value {
    /// The number as text, or `None` for NaN/infinity (JSON has no spelling for them).
    fn number_text(&self) -> Option<String> {
        match *self {
            Value::Int(i) => Some(i.to_string()),
            Value::Fixed(x, d) if x.is_finite() => Some(format!("{x:.d$}")),
            Value::Sci(x, d) if x.is_finite() => Some(format!("{x:.d$e}")),
            _ => None,
        }
    }
}

/// The ordered fields of one result.
pub struct Row(pub Vec<(&'static str, Value)>);

impl Row {
    /// The fields every bench row has, in this order (the JSON key order and the CSV columns).
    pub fn from_measurement(m: &Measurement, date: &str) -> Row {
        use Value::*;
        let c = &m.case;
        let secs = m.factor_us.median * 1e-6;
        let rate = |work: f64| {
            if secs > 0.0 {
                work / secs / 1e9
            } else {
                f64::NAN
            }
        };
        // The hardware limits (src/bin/btchol/limits.rs): NaN, so empty cells, without known peaks.
        let schedule = limits::plan_schedule(m.algorithm, m.backend, c.dims);
        let (dims, elem) = (c.dims, c.dtype.size_bytes());
        let work = limits::work_for(schedule.as_ref(), dims.batch, dims.n_blocks, dims.block_size, c.nrhs, elem);
        let peaks = limits::peaks(m.backend, &m.device, m.threads);
        let (peak_flops, peak_bw) = peaks.map_or((f64::NAN, f64::NAN), |p| (p.flops(c.dtype), p.bytes_per_s));
        let (t_flop, t_bw, t_limit) = limits::limit_us(work.factor_flops, work.factor_bytes, peak_flops, peak_bw);
        let (_, _, solve_limit) = limits::limit_us(work.solve_flops, work.solve_bytes, peak_flops, peak_bw);
        Row(vec![
            ("backend", Str(m.backend.name().into())),
            ("device", Str(m.device.clone())),
            ("algorithm", Str(m.algorithm.name().into())),
            ("dtype", Str(c.precision_name().into())),
            ("n", Int(c.dims.block_size as u64)),
            ("N", Int(c.dims.n_blocks as u64)),
            ("batch", Int(c.dims.batch as u64)),
            ("nrhs", Int(c.nrhs as u64)),
            ("threads", Int(m.threads as u64)),
            ("repeats", Int(m.factor_us.count as u64)),
            ("warmup", Int(m.warmup as u64)),
            ("factor_us_median", Fixed(m.factor_us.median, 3)),
            ("factor_us_min", Fixed(m.factor_us.min, 3)),
            ("factor_us_p90", Fixed(m.factor_us.p90, 3)),
            ("solve_us_median", Fixed(m.solve_us.median, 3)),
            ("solve_us_min", Fixed(m.solve_us.min, 3)),
            ("solve_us_p90", Fixed(m.solve_us.p90, 3)),
            ("factor_events_us_median", Fixed(m.factor_events_us.median, 3)),
            ("solve_events_us_median", Fixed(m.solve_events_us.median, 3)),
            ("factor_solve_us_median", Fixed(m.factor_solve_us.median, 3)),
            ("upload_factor_solve_us_median", Fixed(m.upload_factor_solve_us.median, 3)),
            ("gflops_factor", Fixed(rate(m.flops_seq), 3)),
            ("gflops_schedule", Fixed(rate(m.flops_schedule), 3)),
            ("gbytes_per_s_factor", Fixed(rate(m.bytes_min), 3)),
            ("flops_seq", Int(m.flops_seq.round() as u64)),
            ("flops_schedule", Int(m.flops_schedule.round() as u64)),
            ("bytes_min", Int(m.bytes_min.round() as u64)),
            ("levels", Int(m.levels as u64)),
            ("t_flop_us", Fixed(t_flop, 3)),
            ("t_bw_us", Fixed(t_bw, 3)),
            ("t_limit_us", Fixed(t_limit, 3)),
            ("pct_of_limit", Fixed(limits::pct_of_limit(t_limit, m.factor_us.median), 2)),
            ("solve_flops", Int(work.solve_flops.round() as u64)),
            ("solve_bytes", Int(work.solve_bytes.round() as u64)),
            ("solve_t_limit_us", Fixed(solve_limit, 3)),
            ("solve_pct_of_limit", Fixed(limits::pct_of_limit(solve_limit, m.solve_us.median), 2)),
            ("peak_gflops", Fixed(peak_flops / 1e9, 1)),
            ("peak_gbytes_per_s", Fixed(peak_bw / 1e9, 1)),
            ("peak_source", Str(peaks.map_or("", |p| p.source).into())),
            ("backward_error", Sci(m.backward_error, 3)),
            ("refine_iterations", Int(m.refine_iterations as u64)),
            ("fell_back", Int(m.fell_back as u64)),
            ("deterministic", Int(m.settings.deterministic as u64)),
            ("diag_shift", Sci(m.settings.diag_shift, 3)),
            ("active_items", Int(m.active_items as u64)),
            ("rhs", Str(if m.rhs_on_device { "device" } else { "host" }.into())),
            ("solution_sha256", Str(m.solution_sha256.clone())),
            ("dispatch", Str(m.dispatch.clone())),
            ("version", Str(btchol::VERSION.into())),
            ("date", Str(date.into())),
        ])
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn to_json(&self) -> String {
        let mut s = String::from("{");
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "{}: ", json_string(k));
            match v {
                Value::Str(t) => s.push_str(&json_string(t)),
                _ => s.push_str(v.number_text().as_deref().unwrap_or("null")),
            }
        }
        s.push('}');
        s
    }

    pub fn csv_header(&self) -> String {
        self.0.iter().map(|(k, _)| csv_field(k)).collect::<Vec<_>>().join(",")
    }

    pub fn to_csv(&self) -> String {
        self.0
            .iter()
            .map(|(_, v)| match v {
                Value::Str(t) => csv_field(t),
                // Non-finite numbers become empty cells, which spreadsheets and pandas read as missing.
                _ => v.number_text().unwrap_or_default(),
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// A JSON string literal with the escapes RFC 8259 requires.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A CSV cell (RFC 4180): quoted when it holds a comma, quote or line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A CSV file written row by row and flushed each time, so an interrupted sweep keeps its rows.
pub struct CsvWriter {
    out: BufWriter<File>,
    header_written: bool,
}

impl CsvWriter {
    /// Creates (truncates) the file now, so a bad path fails before any measuring.
    pub fn create(path: &Path) -> io::Result<Self> {
        Ok(CsvWriter { out: BufWriter::new(File::create(path)?), header_written: false })
    }

    pub fn write(&mut self, row: &Row) -> io::Result<()> {
        if !self.header_written {
            writeln!(self.out, "{}", row.csv_header())?;
            self.header_written = true;
        }
        writeln!(self.out, "{}", row.to_csv())?;
        self.out.flush()
    }
}

/// Columns of the human-readable table: (field, heading, width).
const TABLE: &[(&str, &str, usize)] = &[
    ("backend", "backend", 7),
    ("algorithm", "alg", 4),
    ("dtype", "dtype", 5),
    ("n", "n", 5),
    ("N", "N", 8),
    ("batch", "batch", 6),
    ("nrhs", "nrhs", 5),
    ("threads", "thr", 4),
    ("repeats", "reps", 5),
    ("factor_us_median", "factor_us", 12),
    ("factor_us_min", "factor_min", 12),
    ("solve_us_median", "solve_us", 11),
    ("factor_events_us_median", "factor_ev", 10),
    ("solve_events_us_median", "solve_ev", 9),
    ("factor_solve_us_median", "fsolve_us", 10),
    ("upload_factor_solve_us_median", "3calls_us", 10),
    ("gflops_factor", "GFLOP/s", 9),
    ("pct_of_limit", "%limit", 7),
    ("solve_pct_of_limit", "%slimit", 7),
    ("backward_error", "bwd_err", 10),
];

/// The aligned table, printed row by row as results arrive. The device is long and the same for
/// every row of a backend, so it is printed as a line above the rows whenever it changes.
#[derive(Default)]
pub struct Table {
    device: Option<String>,
    header_done: bool,
}

impl Table {
    pub fn print(&mut self, out: &mut impl Write, row: &Row) -> io::Result<()> {
        let device = match row.get("device") {
            Some(Value::Str(d)) => d.clone(),
            _ => String::new(),
        };
        if self.device.as_deref() != Some(device.as_str()) {
            writeln!(out, "# device: {device}")?;
            self.device = Some(device);
        }
        if !self.header_done {
            let head: Vec<String> = TABLE.iter().map(|&(_, h, w)| format!("{h:>w$}")).collect();
            writeln!(out, "{}", head.join(" "))?;
            self.header_done = true;
        }
        let cells: Vec<String> = TABLE
            .iter()
            .map(|&(key, _, w)| {
                let text = match row.get(key) {
                    Some(Value::Str(s)) => s.clone(),
                    Some(Value::Fixed(x, _)) if x.is_finite() => format!("{x:.1}"),
                    Some(Value::Sci(x, _)) if x.is_finite() => format!("{x:.1e}"),
                    Some(v) => v.number_text().unwrap_or_else(|| "-".into()),
                    None => "-".into(),
                };
                format!("{text:>w$}")
            })
            .collect();
        writeln!(out, "{}", cells.join(" "))?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_csv_escape() {
        let row = Row(vec![
            ("device", Value::Str("A \"B\", C".into())),
            ("x", Value::Fixed(f64::NAN, 3)),
            ("e", Value::Sci(1.25e-16, 2)),
        ]);
        assert_eq!(row.to_json(), r#"{"device": "A \"B\", C", "x": null, "e": 1.25e-16}"#);
        assert_eq!(row.csv_header(), "device,x,e");
        assert_eq!(row.to_csv(), "\"A \"\"B\"\", C\",,1.25e-16");
    }
}
