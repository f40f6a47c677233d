//! Reliability worker (Rust) for `tests/reliability`; same arguments and protocol
//! as `tests/reliability/worker.py`:
//! `<connect> <resource> <name> <role> <count> <session_s> <root>`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use zkrecipes::{
    Client, ClientOptions, DistributedQueue, ElectionEvent, LeaderElectionSupport, LockEvent,
    WorkQueue, WorkQueueOptions, WriteLock,
};

#[derive(Clone)]
struct Resource(Arc<Mutex<(BufReader<TcpStream>, TcpStream)>>);

impl Resource {
    fn ask(&self, line: &str) -> String {
        let mut guard = self.0.lock().unwrap();
        let (reader, writer) = &mut *guard;
        writer.write_all(format!("{line}\n").as_bytes()).unwrap();
        let mut reply = String::new();
        reader.read_line(&mut reply).unwrap();
        reply.trim().to_string()
    }

    /// Asks from async code without blocking a runtime thread.
    async fn tell(&self, line: String) -> String {
        let me = self.clone();
        tokio::task::spawn_blocking(move || me.ask(&line))
            .await
            .unwrap()
    }
}

#[tokio::main]
async fn main() -> zkrecipes::Result<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let (connect, name, role, root) = (&a[0], a[2].clone(), a[3].as_str(), &a[6]);
    let count: usize = a[4].parse().unwrap();
    let stream = TcpStream::connect(&a[1]).unwrap();
    let resource = Resource(Arc::new(Mutex::new((
        BufReader::new(stream.try_clone().unwrap()),
        stream,
    ))));
    resource
        .tell(format!("HELLO {name} {}", std::process::id()))
        .await;
    let options = ClientOptions {
        session_timeout: Duration::from_secs(a[5].parse().unwrap()),
        connect_timeout: Duration::from_secs(30),
        identity: Some(name.clone()),
        ..Default::default()
    };
    let client = Client::connect(connect, options).await?;
    match role {
        "lock" => {
            let lock = WriteLock::new(&client, &format!("{root}/lock"))?;
            let mut events = lock.subscribe();
            let (r, n) = (resource.clone(), name.clone());
            tokio::spawn(async move {
                while let Ok(event) = events.recv().await {
                    if matches!(event, LockEvent::Lost { .. }) {
                        r.tell(format!("LOST {n}")).await;
                    }
                }
            });
            let mut done = 0;
            while done < count && resource.tell("STOP?".into()).await == "NO" {
                let guard = match lock.acquire_timeout(Duration::from_secs(30)).await {
                    Ok(Some(guard)) => guard,
                    Ok(None) => continue,
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let token = guard.fencing_token();
                resource.tell(format!("BEGIN {name} {token}")).await;
                for _ in 0..3 {
                    resource.tell(format!("WRITE {name} {token}")).await;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                resource.tell(format!("END {name} {token}")).await;
                let _ = guard.release().await;
                done += 1;
            }
        }
        "produce" => {
            let q = DistributedQueue::new(&client, &format!("{root}/queue"))?;
            for i in 0..count {
                let item = format!("{name}-{i}");
                match q.offer(item.as_bytes()).await {
                    Ok(_) => resource.tell(format!("OFFERED {item}")).await,
                    Err(_) => resource.tell(format!("OFFER_LOST {item}")).await,
                };
            }
        }
        "consume" => {
            let q = DistributedQueue::new(&client, &format!("{root}/queue"))?;
            while resource.tell("STOP?".into()).await == "NO" {
                match q.take_timeout(Duration::from_millis(500)).await {
                    Ok(Some(item)) => {
                        resource
                            .tell(format!("GOT {} {name}", String::from_utf8_lossy(&item)))
                            .await;
                    }
                    Ok(None) => {}
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
        }
        "work-produce" => {
            let q = WorkQueue::new(&client, &format!("{root}/work"))?;
            let items: Vec<String> = (0..count).map(|i| format!("{name}-{i}")).collect();
            for batch in items.chunks(10) {
                let outcome = match q.offer_all(batch).await {
                    Ok(_) => "OFFERED",
                    Err(_) => "OFFER_LOST",
                };
                for item in batch {
                    resource.tell(format!("{outcome} {item}")).await;
                }
            }
        }
        "work-consume" => {
            // At least once: report the job, then acknowledge it.
            let options = WorkQueueOptions {
                prefetch: 4,
                ..Default::default()
            };
            let q = WorkQueue::with_options(&client, &format!("{root}/work"), options)?;
            while resource.tell("STOP?".into()).await == "NO" {
                match q.consume(Some(Duration::from_millis(500))).await {
                    Ok(Some(job)) => {
                        let item = String::from_utf8_lossy(job.data()).into_owned();
                        resource.tell(format!("GOT {item} {name}")).await;
                        // The work: a kill lands while jobs are in hand.
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        let _ = job.ack().await;
                    }
                    Ok(None) => {}
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
            q.close().await?;
        }
        "elect" => {
            let election = LeaderElectionSupport::new(&client, &format!("{root}/election"), &name)?;
            let mut events = election.subscribe();
            let (r, n) = (resource.clone(), name.clone());
            tokio::spawn(async move {
                while let Ok(event) = events.recv().await {
                    match event {
                        ElectionEvent::ElectedComplete => r.tell(format!("ELECTED {n}")).await,
                        ElectionEvent::Failed(_) | ElectionEvent::StopStart => {
                            r.tell(format!("UNELECTED {n}")).await
                        }
                        _ => String::new(),
                    };
                }
            });
            election.start().await?;
            while resource.tell("STOP?".into()).await == "NO" {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            election.stop().await?;
        }
        other => panic!("unknown role {other}"),
    }
    resource.tell(format!("DONE {name}")).await;
    client.close().await;
    Ok(())
}
