//! Several processes sharing one GPU (MPI ranks, parallel test runners, services): each one's
//! results are right. Until 2026-11-26 a plan zeroed its buffers and copied its schedule tables
//! on the legacy default stream, which the plan's own (non-blocking) stream is not ordered after.
//! With six processes time-sliced on an H100 about one bench row in five then failed: zeroed
//! failure keys read as "not positive definite at block 0, column 0" or "non-finite value at
//! block 0, row 0, column 0". One process alone never showed it.
//!
//! Spawns `btchol bench` processes side by side (`BTCHOL_BIN` where the tests run away from the
//! build tree, as scripts/gpu-check.sh does). Skips, saying so, where no GPU is usable.

mod common;
use common::*;
use std::process::{Command, Stdio};

const PROCESSES: usize = 6;

#[test]
fn gpu_processes_sharing_the_device_get_correct_results() {
    if !gpu_or_skip("gpu_processes_sharing_the_device_get_correct_results") {
        return;
    }
    let bin = std::env::var_os("BTCHOL_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_btchol").into());
    // Short shapes (plan set-up dominates, where the race was) through both algorithms, both
    // precisions, batches, several right-hand sides; host and device right-hand sides.
    let shapes = "bench --backend cuda --algorithm nd,seq --dtype f64,f32 --n 8,32 --N 2,17,37,130 --batch 1,3 \
                  --nrhs 2 --repeats 3 --warmup 1";
    for rhs in ["host", "device"] {
        let children: Vec<_> = (0..PROCESSES)
            .map(|_| {
                Command::new(&bin)
                    .args(shapes.split_whitespace())
                    .args(["--rhs", rhs])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("starting btchol bench")
            })
            .collect();
        for (k, child) in children.into_iter().enumerate() {
            let out = child.wait_with_output().unwrap();
            let (stdout, stderr) =
                (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success(), "process {k} of {PROCESSES} (--rhs {rhs}):\n{stderr}\n{stdout}");
            // Every row solved, to the precision's backward error (the row's last column).
            let rows: Vec<f64> = stdout
                .lines()
                .filter(|l| l.trim_start().starts_with("cuda"))
                .map(|l| l.split_whitespace().last().unwrap().parse().unwrap())
                .collect();
            assert_eq!(rows.len(), 64, "process {k} (--rhs {rhs}): rows\n{stdout}");
            assert!(rows.iter().all(|&be| be < 1e-5), "process {k} (--rhs {rhs}): backward errors {rows:?}");
        }
    }
}
