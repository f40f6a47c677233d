//! The harness as a command, for the tests of every language, the demo and the benchmarks.
//!
//! - `zk-harness serve [--ensemble]`: starts ZooKeeper, prints `ZK_CONNECT=<connect string>`,
//!   stops it when standard input closes. With `--ensemble` (3 members) it also takes
//!   commands on standard input: `kill <i>`, `start <i>`, `leader` (prints the index).
//!   With `--tls-sasl` too, the members take only TLS with a client certificate and SASL
//!   DIGEST-MD5 (users `alice`, `bob`): `ZK_CONNECT=` is their TLS connect string, and
//!   `ZK_CERTS=` the certificate directory is printed before it.
//! - `zk-harness serve --secure`: test certificates and two secured servers (see
//!   `secure`); prints `ZK_CONNECT=` (the plain port of the first), `ZK_TLS_CONNECT=`
//!   (its TLS port: client certificate optional, SASL DIGEST-MD5 users `alice`, `bob`),
//!   `ZK_TLS_STRICT_CONNECT=` (client certificate and SASL required) and `ZK_CERTS=`
//!   (the certificate directory), a Kerberos realm with `ZK_KRB5_CONNECT=` (a server that
//!   requires Kerberos), `ZK_KRB5_CONFIG=` (its krb5.conf), `ZK_KRB5_KEYTAB=` and
//!   `ZK_KRB5_PRINCIPAL=` (a client's), then stops them when standard input closes.
//! - `zk-harness proxy <host:port>[,...]`: a fault proxy per server; prints
//!   `ZK_CONNECT=<proxied connect string>`, then takes `drop`, `hole on`, `hole off`,
//!   `latency <ms>`.
//! - `zk-harness rm <connect> <path>`: deletes a node, as an operator would.
//! - `zk-harness ephemerals <connect> <path>`: prints every ephemeral node under `path`.
//! - `zk-harness children <connect> <path>`: prints how many children `path` has (0 if absent).
//! - `zk-harness fetch` / `curator-cp`: the classpaths of the server and of Curator.

use std::io::{BufRead, Read, Write};

use zk_harness::{Ensemble, FaultProxy, ZkServer};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match (args.first().map(String::as_str), args.len()) {
        (Some("serve"), _) if args.iter().any(|a| a == "--ensemble") => {
            serve_ensemble(args.iter().any(|a| a == "--tls-sasl"))
        }
        (Some("serve"), _) if args.iter().any(|a| a == "--secure") => serve_secure(),
        (Some("serve"), _) => {
            let server = ZkServer::start_local();
            announce(server.connect_string());
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
        }
        (Some("proxy"), 2) => proxy(&args[1]),
        (Some("fetch"), _) => println!("{}", zk_harness::classpath()),
        (Some("curator-cp"), _) => println!("{}", zk_harness::curator_classpath()),
        (Some("rm"), 3) => run(async { zk_client(&args[1]).await?.delete(&args[2], None).await }),
        (Some("children"), 3) => run(async {
            let children = match zk_client(&args[1]).await?.list_children(&args[2]).await {
                Err(zookeeper_client::Error::NoNode) => Vec::new(),
                listed => listed?,
            };
            println!("{}", children.len());
            Ok(())
        }),
        (Some("ephemerals"), 3) => run(async {
            for (path, owner) in zk_harness::ephemerals(&zk_client(&args[1]).await?, &args[2])
                .await?
                .1
            {
                println!("{path} {owner:#x}");
            }
            Ok(())
        }),
        _ => {
            eprintln!(
                "usage: zk-harness serve [--ensemble] | proxy <servers> | rm <connect> <path> | \
                 ephemerals <connect> <path> | children <connect> <path> | fetch | curator-cp"
            );
            std::process::exit(2);
        }
    }
}

fn announce(connect: &str) {
    println!("ZK_CONNECT={connect}");
    std::io::stdout().flush().unwrap();
}

fn serve_secure() {
    use zk_harness::secure::{Certs, Kind, SecureServer};
    let dir = std::env::temp_dir().join(format!("zkrecipes-certs-{}", std::process::id()));
    let certs = Certs::generate(&dir);
    let tls = SecureServer::start(Kind::Tls, &certs);
    let strict = SecureServer::start(Kind::TlsStrict, &certs);
    let kdc = zk_harness::kerberos::Kdc::start();
    let kerberos = zk_harness::kerberos::KerberosServer::start(&kdc);
    println!("ZK_KRB5_CONNECT={}", kerberos.connect());
    println!("ZK_KRB5_CONFIG={}", kdc.krb5_conf().display());
    println!("ZK_KRB5_KEYTAB={}", kdc.client_keytab().display());
    println!("ZK_KRB5_PRINCIPAL={}", kdc.client_principal());
    println!("ZK_KRB5_SECOND_KEYTAB={}", kdc.second_keytab().display());
    println!("ZK_KRB5_SECOND_PRINCIPAL={}", kdc.second_principal());
    println!("ZK_TLS_CONNECT={}", tls.tls_connect());
    println!("ZK_TLS_STRICT_CONNECT={}", strict.tls_connect());
    println!("ZK_CERTS={}", certs.dir.display());
    announce(&tls.plain_connect());
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop((tls, strict, kerberos, kdc));
    let _ = std::fs::remove_dir_all(dir);
}

fn serve_ensemble(tls_sasl: bool) {
    let certs_dir =
        std::env::temp_dir().join(format!("zkrecipes-ens-certs-{}", std::process::id()));
    let mut ensemble = if tls_sasl {
        let certs = zk_harness::secure::Certs::generate(&certs_dir);
        let ensemble = Ensemble::start_tls_sasl(3, &certs);
        println!("ZK_CERTS={}", certs.dir.display());
        announce(&ensemble.tls_connect_string());
        ensemble
    } else {
        let ensemble = Ensemble::start(3);
        announce(&ensemble.connect_string());
        ensemble
    };
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let words: Vec<&str> = line.split_whitespace().collect();
        let reply = match words.as_slice() {
            ["kill", i] => i
                .parse()
                .map(|i| ensemble.kill(i))
                .map(|_| "OK".to_string()),
            ["start", i] => i
                .parse()
                .map(|i| ensemble.restart(i))
                .map(|_| "OK".to_string()),
            ["leader"] => Ok(ensemble
                .leader()
                .map_or("-1".to_string(), |i| i.to_string())),
            _ => Ok(format!("ERR {line}")),
        };
        println!("{}", reply.unwrap_or_else(|e| format!("ERR {e}")));
        std::io::stdout().flush().unwrap();
    }
    drop(ensemble);
    let _ = std::fs::remove_dir_all(certs_dir);
}

fn proxy(servers: &str) {
    for server in servers.split(',') {
        if let Err(err) = std::net::ToSocketAddrs::to_socket_addrs(server) {
            eprintln!("zk-harness proxy: {server:?} is not host:port: {err}");
            std::process::exit(2);
        }
    }
    let proxies: Vec<FaultProxy> = servers.split(',').map(FaultProxy::start).collect();
    announce(
        &proxies
            .iter()
            .map(FaultProxy::connect_string)
            .collect::<Vec<_>>()
            .join(","),
    );
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        match line.trim() {
            "drop" => proxies.iter().for_each(FaultProxy::drop_all),
            "hole on" => proxies.iter().for_each(|p| p.set_blackhole(true)),
            "hole off" => proxies.iter().for_each(|p| p.set_blackhole(false)),
            other if other.starts_with("latency ") => {
                let ms = other["latency ".len()..].trim().parse().unwrap_or(0);
                proxies.iter().for_each(|p| p.set_latency(ms));
            }
            other => eprintln!("unknown proxy command {other:?}"),
        }
        println!("OK");
        std::io::stdout().flush().unwrap();
    }
}

async fn zk_client(connect: &str) -> Result<zookeeper_client::Client, zookeeper_client::Error> {
    zookeeper_client::Client::connect(connect).await
}

fn run(task: impl std::future::Future<Output = Result<(), zookeeper_client::Error>>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if let Err(err) = runtime.block_on(task) {
        eprintln!("zk-harness: {err}");
        std::process::exit(1);
    }
}
