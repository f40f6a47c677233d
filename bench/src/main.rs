//! `zkrecipes-bench <workload> <connect> <n>`: one JSON line of timings.
//! Workloads: `cycle` (uncontended acquire + release).

use std::time::{Duration, Instant};

use zkrecipes::{Client, ClientOptions, WriteLock};

#[tokio::main]
async fn main() -> zkrecipes::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (workload, connect, n) = (
        args[1].as_str(),
        args[2].as_str(),
        args[3].parse::<usize>().unwrap(),
    );
    let client = Client::connect(connect, ClientOptions::default()).await?;
    match workload {
        "cycle" => {
            let lock = WriteLock::new(&client, "/bench/rust-cycle")?;
            for _ in 0..50 {
                lock.acquire().await?.release().await?;
            }
            let mut samples = Vec::with_capacity(n);
            let started = Instant::now();
            for _ in 0..n {
                let t = Instant::now();
                lock.acquire().await?.release().await?;
                samples.push(t.elapsed());
            }
            report("rust", workload, started.elapsed(), samples);
        }
        other => panic!("unknown workload {other}"),
    }
    client.close().await;
    Ok(())
}

fn report(contestant: &str, workload: &str, total: Duration, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let n = samples.len();
    println!(
        "{{\"contestant\":\"{contestant}\",\"workload\":\"{workload}\",\"n\":{n},\"total_ms\":{:.3},\"median_ms\":{:.4},\"p99_ms\":{:.4}}}",
        ms(total),
        ms(samples[n / 2]),
        ms(samples[(n * 99 / 100).min(n - 1)])
    );
}
