//! `zk-harness serve [--ensemble]`: starts ZooKeeper for the other languages'
//! tests and the demo, prints `ZK_CONNECT=<connect string>` on the first line,
//! and stops the server when its standard input closes (or on SIGTERM/SIGINT,
//! which close it for us as the process dies). `zk-harness rm <connect> <path>`
//! deletes a node, as an operator would.

use std::io::Read;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => {}
        Some("fetch") => {
            println!("{}", zk_harness::classpath());
            return;
        }
        Some("curator-cp") => {
            println!("{}", zk_harness::curator_classpath());
            return;
        }
        Some("rm") if args.len() == 3 => {
            // An operator's delete, for tests of every language: `zk-harness rm <connect> <path>`.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let result = runtime.block_on(async {
                let zk = zookeeper_client::Client::connect(&args[1]).await?;
                zk.delete(&args[2], None).await
            });
            if let Err(err) = result {
                eprintln!("rm {}: {err}", args[2]);
                std::process::exit(1);
            }
            return;
        }
        _ => {
            eprintln!(
                "usage: zk-harness serve [--ensemble] | fetch | curator-cp | rm <connect> <path>"
            );
            std::process::exit(2);
        }
    }
    if args.iter().any(|a| a == "--ensemble") {
        let ensemble = zk_harness::Ensemble::start(3);
        println!("ZK_CONNECT={}", ensemble.connect_string());
        wait_for_eof();
        drop(ensemble);
    } else {
        let server = zk_harness::ZkServer::start_local();
        println!("ZK_CONNECT={}", server.connect_string());
        wait_for_eof();
        drop(server);
    }
}

fn wait_for_eof() {
    use std::io::Write;
    std::io::stdout().flush().unwrap();
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
}
