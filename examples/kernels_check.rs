fn main() {
    let arch = (9, 0);
    let specs = btchol::cuda::jit::KernelSpec::all(200 * 1024);
    let mut ok = 0;
    for s in &specs {
        match btchol::cuda::jit::compile(s, arch) {
            Ok(c) => {
                ok += 1;
                eprintln!("{s:?}: {} bytes", c.len());
            }
            Err(e) => {
                eprintln!("{e}");
                break;
            }
        }
    }
    println!("{ok}/{} compiled", specs.len());
}
