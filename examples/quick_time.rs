use btchol::*;

/// Times `reps` factors of one N×n problem; prints median and min.
fn run<T: Scalar>(nb: usize, n: usize, threads: usize, alg: usize, reps: usize) {
    let dims = Dims::new(1, nb, n).unwrap();
    let (d, e) = reference::random_problem::<T>(1, dims, Layout::RowMajor, 1.0);
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    let algorithm = if alg == 0 { Algorithm::Sequential } else { Algorithm::NestedDissection };
    let mut plan =
        Plan::<T>::new(dims, PlanOptions { backend: Backend::Cpu, algorithm, threads, ..Default::default() }).unwrap();
    let mut ts = vec![];
    for _ in 0..reps {
        plan.upload(&m).unwrap();
        let t = std::time::Instant::now();
        plan.factor().unwrap();
        ts.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let f = schedule::sequential_factor_flops(nb, n);
    let med = ts[reps / 2];
    println!(
        "N={nb} n={n} threads={threads} alg={alg} {}: median {:.3} ms, min {:.3} ms, {:.2} GFLOP/s (seq flops)",
        T::DTYPE.name(),
        med,
        ts[0],
        f / med / 1e6
    );
}

/// Usage: quick_time N n threads alg [f32|f64] [reps]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| args[i].parse::<usize>().unwrap();
    let (nb, n, threads, alg) = (num(0), num(1), num(2), num(3));
    let f32 = args.get(4).is_some_and(|s| s == "f32");
    let reps = args.get(5).map_or(30, |s| s.parse().unwrap());
    if f32 {
        run::<f32>(nb, n, threads, alg, reps)
    } else {
        run::<f64>(nb, n, threads, alg, reps)
    }
}
