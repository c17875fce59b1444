//! Facts about the machine that go into every result row: the device a backend runs on, the
//! available memory (to refuse a configuration that cannot fit instead of aborting), and the UTC
//! date (no date crate: civil-from-days is ten lines).

use std::time::{SystemTime, UNIX_EPOCH};

use btchol::Backend;

/// The device a plan runs on, from the plan itself (`plan.backend()`, never `Auto`, and
/// `plan.gpu_name()`), so `--backend auto` rows name the device that actually ran.
pub fn device_name(backend: Backend, gpu_name: Option<&str>) -> String {
    match (backend, gpu_name) {
        (Backend::Cuda, Some(gpu)) => gpu.to_string(),
        (Backend::Cuda, None) => "cuda".to_string(),
        (Backend::Cpu | Backend::Auto, _) => cpu_model().to_string(),
    }
}

/// The CPU's marketing name from /proc/cpuinfo ("model name"), or "cpu" where there is none
/// (non-Linux, some ARM kernels): the library's, so calibration rows and bench rows agree.
pub fn cpu_model() -> &'static str {
    btchol::plan::dispatch::cpu_model()
}

/// Cores the OS lets this process use (what `--threads 0` means).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |t| t.get())
}

/// MemAvailable from /proc/meminfo in bytes, where the kernel reports it.
pub fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The current UTC time as ISO-8601, e.g. `2025-01-31T23:59:07Z`.
pub fn utc_now_iso8601() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::civil_from_days;

    #[test]
    fn known_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_513), (2026, 3, 1));
    }
}
