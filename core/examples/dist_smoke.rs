//! One lock acquire/release and one queue offer/take: `dist_smoke HOST:PORT`;
//! with `dist_smoke HOST:PORT TLS_HOST:PORT CA.pem` also one over TLS (the
//! artifacts carry rustls and aws-lc, no OpenSSL).
//! `make dist-check` builds it for the musl targets and runs it there (under
//! qemu for aarch64), the musl counterpart of the Python and Node smoke runs.
use std::time::Duration;

use zkrecipes::{Client, ClientOptions, DistributedQueue, Tls, WriteLock};

fn main() {
    let connect = std::env::args()
        .nth(1)
        .expect("usage: dist_smoke HOST:PORT");
    if let Err(err) = zkrecipes::runtime::runtime().block_on(smoke(&connect)) {
        eprintln!("dist_smoke: {err}");
        std::process::exit(1);
    }
    let (tls_connect, ca) = (std::env::args().nth(2), std::env::args().nth(3));
    if let (Some(tls_connect), Some(ca)) = (tls_connect, ca) {
        let over_tls: zkrecipes::Result<()> = zkrecipes::runtime::runtime().block_on(async {
            let options = ClientOptions {
                tls: Some(Tls::new(ca)),
                ..ClientOptions::default()
            };
            let client = Client::connect(&tls_connect, options).await?;
            let lock = WriteLock::new(&client, "/dist-smoke/tls")?;
            lock.acquire().await?.release().await?;
            client.close().await;
            Ok(())
        });
        match over_tls {
            Ok(()) => println!("rust {}: tls ok", std::env::consts::ARCH),
            Err(err) => {
                eprintln!("dist_smoke over TLS: {err}");
                std::process::exit(1);
            }
        }
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
