//! Benchmarks on a shared machine: criterion measuring the CPU time the
//! process spent rather than wall time, for the benches whose neighbours'
//! builds would otherwise be most of what is measured.

use std::time::Duration;

use criterion::Throughput;
use criterion::measurement::{Measurement, ValueFormatter};

/// The CPU time this process spent (user + system), from
/// `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`. On a
/// shared machine whose other cores are busy, wall time measures the
/// neighbours as much as the code; CPU time is what the code itself costs.
/// It sums every thread of the process, so for the fold (which parses on
/// every core) it is the total work, not the time a person waits.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTime;

fn cpu_now() -> Duration {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

impl Measurement for CpuTime {
    type Intermediate = Duration;
    type Value = Duration;
    fn start(&self) -> Duration {
        cpu_now()
    }
    fn end(&self, start: Duration) -> Duration {
        cpu_now().saturating_sub(start)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, ns: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if ns < 1e3 {
            (1.0, "ns")
        } else if ns < 1e6 {
            (1e-3, "µs")
        } else if ns < 1e9 {
            (1e-6, "ms")
        } else {
            (1e-9, "s")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }

    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let (amount, unit) = match *throughput {
            Throughput::Bytes(b) | Throughput::BytesDecimal(b) => {
                (b as f64 / (1024.0 * 1024.0), "MiB/s")
            }
            Throughput::Elements(e) | Throughput::ElementsAndBytes { elements: e, .. } => {
                (e as f64, "elem/s")
            }
            Throughput::Bits(b) => (b as f64, "bit/s"),
        };
        for v in values {
            *v = amount / (*v * 1e-9);
        }
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
