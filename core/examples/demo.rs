//! `make demo` (Rust part): starts a ZooKeeper (or uses `ZK_CONNECT`) and shows
//! a lock with fencing tokens, a queue and an election, from several clients.

use std::time::Duration;

use zk_harness::ZkServer;
use zkrecipes::{Client, ClientOptions, DistributedQueue, LeaderElectionSupport, WriteLock};

#[tokio::main]
async fn main() -> zkrecipes::Result<()> {
    let server = ZkServer::start();
    println!("ZooKeeper at {}", server.connect_string());
    let options = |id: &str| ClientOptions {
        identity: Some(id.to_string()),
        ..Default::default()
    };
    let workers = ["alpha", "beta", "gamma"];
    let mut clients = Vec::new();
    for id in workers {
        clients.push(Client::connect(server.connect_string(), options(id)).await?);
    }

    println!("\n== election: three members, then the leader steps down");
    let members: Vec<_> = clients
        .iter()
        .zip(workers)
        .map(|(c, id)| LeaderElectionSupport::new(c, "/demo/election", id))
        .collect::<Result<_, _>>()?;
    for m in &members {
        m.start().await?;
    }
    println!("leader: {:?}", members[0].leader_host_name().await?);
    members[0].stop().await?;
    members[1]
        .await_leadership(Some(Duration::from_secs(5)))
        .await?;
    println!(
        "after alpha stops, leader: {:?}",
        members[2].leader_host_name().await?
    );

    println!("\n== queue: the leader offers 10 jobs, three workers take them");
    let producer = DistributedQueue::new(&clients[1], "/demo/jobs")?;
    for job in 0..10 {
        producer.offer(format!("job-{job}").as_bytes()).await?;
    }

    println!("\n== lock: every job is done under one WriteLock, with its fencing token");
    let mut tasks: Vec<tokio::task::JoinHandle<zkrecipes::Result<()>>> = Vec::new();
    for (client, id) in clients.iter().zip(workers) {
        let queue = DistributedQueue::new(client, "/demo/jobs")?;
        let lock = WriteLock::new(client, "/demo/lock")?;
        tasks.push(tokio::spawn(async move {
            let mut last = 0;
            while let Some(job) = queue.take_timeout(Duration::from_millis(500)).await? {
                let guard = lock.acquire().await?;
                assert!(guard.fencing_token() > last);
                last = guard.fencing_token();
                println!(
                    "{id:>6} holds the lock (token {}) for {}",
                    guard.fencing_token(),
                    String::from_utf8_lossy(&job)
                );
                guard.release().await?;
            }
            Ok(())
        }));
    }
    for task in tasks {
        task.await.expect("worker panicked")?;
    }
    for m in &members {
        m.stop().await?;
    }
    for c in &clients {
        c.close().await;
    }
    println!("\ndemo finished: every job done once, under the lock");
    Ok(())
}
