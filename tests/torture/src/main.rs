//! zk-torture: random schedules of every recipe operation from several worker
//! processes, under faults injected per process, judged from one global history.
//!
//! - `zk-torture run --seed N [--seeds a,b,c] [--seconds S] [--ensemble] [--secure] [--processes P]`
//! - `zk-torture loop --minutes M [--seconds S] [--secure] [--processes P]`: fresh seeds until time is up
//! - `--secure`: a 3-node ensemble that requires TLS with a client certificate and a SASL
//!   DIGEST-MD5 login; every client uses both (`secure.rs`)
//! - `--java-jar PATH` (or `ZK_TORTURE_JAVA_JAR`): one worker slot is a Java worker
//!   (`JavaWorker.java` run by Java's source launcher on the zkrecipes JAR)
//! - `zk-torture worker ...`: one worker process (started by the driver, not by hand)

mod checks;
mod driver;
mod faults;
mod ops;
mod report;
mod resource;
mod secure;
mod sweep;
mod worker;
mod workers;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

const USAGE: &str = "usage: zk-torture run --seed N | --seeds a,b,c [--seconds S] [--ensemble] [--secure] [--processes P] [--java-jar JAR]\n       \
                     zk-torture loop [--minutes M] [--seconds S] [--secure] [--processes P] [--java-jar JAR]\n\
                     --java-jar (or ZK_TORTURE_JAVA_JAR): one worker slot runs tests/torture/JavaWorker.java on that JAR\n\
                     --secure: a 3-node ensemble (implies --ensemble) requiring TLS with client certificates and SASL";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else { usage() };
    let flags = parse_flags(&args[1..]);
    // Resolved before a concurrent rebuild can replace this binary.
    let _ = workers::worker_binary();
    match command.as_str() {
        "run" => {
            let mut seeds: Vec<u64> = Vec::new();
            if let Some(seed) = flags.get("seed") {
                seeds.push(number(seed));
            }
            if let Some(list) = flags.get("seeds") {
                seeds.extend(list.split(',').map(number));
            }
            if seeds.is_empty() {
                usage();
            }
            let plan = driver::Plan {
                seconds: flags.get("seconds").map_or(20.0, |s| float(s)),
                processes: flags.get("processes").map_or(3, |p| number(p) as usize),
                ensemble: flags.contains_key("ensemble") || flags.contains_key("secure"),
                secure: flags.contains_key("secure"),
                java_jar: java_jar(&flags),
            };
            std::process::exit(driver::run_seeds(&seeds, &plan));
        }
        "loop" => {
            let minutes = flags.get("minutes").map_or(5.0, |m| float(m));
            let plan = driver::Plan {
                seconds: flags.get("seconds").map_or(30.0, |s| float(s)),
                processes: flags.get("processes").map_or(3, |p| number(p) as usize),
                ensemble: false,
                secure: flags.contains_key("secure"),
                java_jar: java_jar(&flags),
            };
            std::process::exit(driver::run_loop(
                Duration::from_secs_f64(minutes * 60.0),
                &plan,
            ));
        }
        "worker" => {
            let get = |key: &str| flags.get(key).cloned().unwrap_or_else(|| usage());
            worker::main(worker::Args {
                name: get("name"),
                seed: number(&get("seed")),
                connect: get("connect"),
                resource: get("resource"),
                root: get("root"),
                session: Duration::from_millis(number(&get("session-ms"))),
                sem_leases: flags.get("sem-leases").map_or(2, |n| number(n) as u32),
                dbarrier_members: flags
                    .get("dbarrier-members")
                    .map_or(2, |n| number(n) as u32),
                secure: match (flags.get("tls-dir"), flags.get("sasl")) {
                    (Some(dir), Some(sasl)) => {
                        Some(secure::Secure::from_flags(dir, sasl).unwrap_or_else(|| usage()))
                    }
                    (None, None) => None,
                    _ => usage(),
                },
            })
        }
        _ => usage(),
    }
}

/// The zkrecipes JAR for a Java worker: `--java-jar`, else `ZK_TORTURE_JAVA_JAR`; it must exist.
fn java_jar(flags: &HashMap<String, String>) -> Option<PathBuf> {
    let jar = match flags.get("java-jar") {
        Some(jar) => jar.clone(),
        None => std::env::var("ZK_TORTURE_JAVA_JAR")
            .ok()
            .filter(|j| !j.is_empty())?,
    };
    let path = PathBuf::from(&jar);
    if jar.is_empty() || !path.is_file() {
        eprintln!("zk-torture: no such JAR: {jar:?}");
        std::process::exit(2);
    }
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

/// `--key value` pairs; a flag without a value (`--ensemble`) maps to "".
fn parse_flags(args: &[String]) -> HashMap<String, String> {
    let mut flags = HashMap::new();
    let mut i = 0;
    while i < args.len() {
        let Some(key) = args[i].strip_prefix("--") else {
            usage()
        };
        match args.get(i + 1).filter(|v| !v.starts_with("--")) {
            Some(value) => {
                flags.insert(key.to_string(), value.clone());
                i += 2;
            }
            None => {
                flags.insert(key.to_string(), String::new());
                i += 1;
            }
        }
    }
    flags
}

fn number(text: &str) -> u64 {
    text.trim().parse().unwrap_or_else(|_| usage())
}

fn float(text: &str) -> f64 {
    text.trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)
        .unwrap_or_else(|| usage())
}

fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2);
}
