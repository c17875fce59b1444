//! The `btchol calibrate` command and the run-time calibration override, through the binary.

use std::path::PathBuf;
use std::process::{Command, Output};

use btchol::plan::dispatch::{CalibrationTable, Target};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("btchol-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The binary with a private cache folder, so a user's calibration file cannot interfere.
fn btchol(cache: &std::path::Path, args: &[&str]) -> Command {
    // BTCHOL_BIN: the binary where the tests run away from the build tree (scripts/gpu-check.sh).
    let bin = std::env::var_os("BTCHOL_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_btchol").into());
    let mut c = Command::new(bin);
    c.args(args).env("BTCHOL_CACHE_DIR", cache).env_remove("BTCHOL_CALIBRATION");
    c
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn calibrate_quick_writes_a_table_plans_then_use() {
    let dir = temp_dir("calibrate");
    let out = dir.join("x.csv");
    let o = btchol(&dir, &["calibrate", "--quick", "--n", "8", "--dtype", "f64", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let table = CalibrationTable::parse(&std::fs::read_to_string(&out).unwrap()).unwrap();
    // The quick grid at n = 8, f64: N 4, 64, 1024 × batch 1, 16, both CPU targets at each.
    for target in [Target::CpuSeq, Target::CpuNd] {
        let mut points: Vec<(usize, usize)> =
            table.rows.iter().filter(|r| r.target == target).map(|r| (r.n_blocks, r.batch)).collect();
        points.sort_unstable();
        assert_eq!(points, [(4, 1), (4, 16), (64, 1), (64, 16), (1024, 1), (1024, 16)], "{target:?}");
    }
    assert!(table.rows.iter().all(|r| r.n == 8 && r.factor_us > 0.0 && r.solve_us > 0.0 && !r.date.is_empty()));
    assert!(stdout.contains("best target per point") && stdout.contains("CPU/GPU crossover"), "{stdout}");

    // The file as $BTCHOL_CALIBRATION: bench rows name it in the dispatch column.
    let bench = ["bench", "--n", "8", "--N", "4", "--repeats", "1", "--warmup", "0", "--json"];
    let o = btchol(&dir, &bench).env("BTCHOL_CALIBRATION", &out).output().unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("\"dispatch\": \"auto: cpu-") && stdout.contains("BTCHOL_CALIBRATION="), "{stdout}");

    // Written to the cache folder (no --out), it is found there.
    std::fs::copy(&out, dir.join("calibration.csv")).unwrap();
    let o = btchol(&dir, &bench).output().unwrap();
    assert!(text(&o).0.contains("calibration.csv)"), "{}", text(&o).0);

    // A malformed $BTCHOL_CALIBRATION: a warning, the next source (the cache file), and success.
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "target,device\nnonsense\n").unwrap();
    let o = btchol(&dir, &bench).env("BTCHOL_CALIBRATION", &bad).output().unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("warning") && stderr.contains("bad.csv"), "{stderr}");
    assert!(stdout.contains("calibration.csv) [a calibration file was ignored"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn calibrate_check_reports_auto_against_best() {
    let dir = temp_dir("check");
    let out = dir.join("check.csv");
    let args = ["calibrate", "--check", "--backend", "cpu", "--n", "8", "--N", "4", "--batch", "1", "--dtype", "f64"];
    let o = btchol(&dir, &args).args(["--repeats", "3", "--out", out.to_str().unwrap()]).output().unwrap();
    let (stdout, stderr) = text(&o);
    // n = 8, N = 4: the sequential algorithm is ~50× faster than nested dissection; auto must pick it.
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("auto within 10% of best at 1/1 points"), "{stdout}");
    let csv = std::fs::read_to_string(&out).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| row[head.iter().position(|h| *h == name).unwrap()];
    assert_eq!((col("auto_choice"), col("best_choice"), col("within_10pct")), ("cpu-seq", "cpu-seq", "1"));
    assert_eq!(col("ratio"), "1.000");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn calibrate_usage_errors_exit_2() {
    let dir = temp_dir("usage");
    for args in [&["calibrate", "--check", "--show"][..], &["calibrate", "--backend", "tpu"], &["calibrate", "--bogus"]]
    {
        let o = btchol(&dir, args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o).1);
    }
    let o = btchol(&dir, &["calibrate", "--help"]).output().unwrap();
    assert!(o.status.success() && text(&o).0.contains("--check"));
    let _ = std::fs::remove_dir_all(&dir);
}
