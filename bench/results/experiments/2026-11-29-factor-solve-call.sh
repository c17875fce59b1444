#!/usr/bin/env bash
# One device call (~2 min; written in the seventeenth session, run in the eighteenth on 83fee98:
# nvidia-h200-2026-11-29-factor-solve-*.csv, read in README.md's eighteenth-session section).
# Issue 5's lever "interlace forward substitution with the factorization" is for
# callers with a new matrix and right-hand side each
# time (MPC, Kalman smoothing), who call Plan::factor_solve: one launch sequence, one
# synchronisation (engine.rs Sequence::FactorSolve). `btchol bench --factor-solve` (added in the
# seventeenth session) times that call (fsolve_us) and the same as three calls (3calls_us), host
# right-hand sides, beside factor_us and solve_us. The question: how much does the one-call path
# save today, per regime, against factor_us + solve_us (the floor for an unfused pair), and where
# would a fused forward substitution (the sequential factor sweep producing y as it goes, or the
# level kernels queueing theirs behind each level, paper §4.5) have room.
# Needs a gpu-check bundle of a commit that has --factor-solve (scripts/gpu-check.sh bundle).
# Device: run(command="bash bench/results/experiments/2026-11-29-factor-solve-call.sh", carry=[".bundle"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
common=(--factor-solve --repeats 30 --warmup 5)
timeout 120 "$B" bench --backend cuda --algorithm nd --dtype f64 --n 32 --N 64,256,1024,4096,16384 "${common[@]}" \
    --csv "$out/factor-solve-single.csv"
timeout 60 "$B" bench --backend cuda --algorithm nd --dtype f64,f32 --n 8,16 --N 256,1024,4096 "${common[@]}" \
    --csv "$out/factor-solve-small.csv"
timeout 120 "$B" bench --backend cuda --algorithm seq,nd --dtype f64 --n 16 --N 32 --batch 1024 "${common[@]}" \
    --csv "$out/factor-solve-batch-1024.csv"
timeout 120 "$B" bench --backend cuda --algorithm seq,nd --dtype f64 --n 32 --N 128 --batch 256 "${common[@]}" \
    --csv "$out/factor-solve-batch-256.csv"
