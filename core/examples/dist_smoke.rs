//! One lock acquire/release and one queue offer/take: `dist_smoke HOST:PORT`.
//! `make dist-check` builds it for the musl targets and runs it there (under
//! qemu for aarch64), the musl counterpart of the Python and Node smoke runs.
use std::time::Duration;

use zkrecipes::{Client, ClientOptions, DistributedQueue, WriteLock};

fn main() {
    let connect = std::env::args()
        .nth(1)
        .expect("usage: dist_smoke HOST:PORT");
    if let Err(err) = zkrecipes::runtime::runtime().block_on(smoke(&connect)) {
        eprintln!("dist_smoke: {err}");
        std::process::exit(1);
    }
}

async fn smoke(connect: &str) -> zkrecipes::Result<()> {
    let root = format!("/dist-smoke/rust-{}", std::process::id());
    let client = Client::connect(connect, ClientOptions::default()).await?;
    let lock = WriteLock::new(&client, &format!("{root}/lock"))?;
    let guard = lock
        .acquire_timeout(Duration::from_secs(10))
        .await?
        .expect("the free lock was not acquired");
    let token = guard.fencing_token();
    guard.release().await?;
    let queue = DistributedQueue::new(&client, &format!("{root}/queue"))?;
    queue.offer(b"job-1").await?;
    let job = queue.take_timeout(Duration::from_secs(10)).await?;
    assert_eq!(job.as_deref(), Some(&b"job-1"[..]), "took the wrong job");
    assert_eq!(queue.poll().await?, None, "the queue is not empty");
    client.close().await;
    println!(
        "rust {}-{}: lock token {token}, queue ok",
        std::env::consts::ARCH,
        if cfg!(target_env = "musl") {
            "musl"
        } else {
            "gnu"
        }
    );
    Ok(())
}
