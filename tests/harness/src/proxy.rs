//! A TCP proxy between clients and a server that can cut every connection or
//! hold all traffic (a black hole): connection loss and partitions for real.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct FaultProxy {
    port: u16,
    state: Arc<State>,
}

struct State {
    target: SocketAddr,
    blackhole: AtomicBool,
    /// Server → client bytes are discarded: requests are applied, replies lost.
    drop_replies: AtomicBool,
    /// Delay added to every chunk forwarded in either direction, in ms.
    latency_ms: AtomicU64,
    stopped: AtomicBool,
    streams: Mutex<Vec<TcpStream>>,
    /// Client connections accepted so far.
    accepted: AtomicU64,
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards to `target` (`host:port`).
    pub fn start(target: &str) -> FaultProxy {
        // A host name (localhost:2181) as well as an address; IPv4 first, as the proxy listens on it.
        let addresses: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(target)
            .unwrap_or_else(|err| panic!("proxy target {target:?} is not host:port: {err}"))
            .collect();
        let target = addresses
            .iter()
            .find(|address| address.is_ipv4())
            .or(addresses.first())
            .copied()
            .unwrap_or_else(|| panic!("proxy target {target:?} has no address"));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State {
            target,
            blackhole: AtomicBool::new(false),
            drop_replies: AtomicBool::new(false),
            latency_ms: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            streams: Mutex::new(Vec::new()),
            accepted: AtomicU64::new(0),
        });
        let accept_state = state.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if accept_state.stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                accept_state.accepted.fetch_add(1, Ordering::SeqCst);
                if accept_state.blackhole.load(Ordering::SeqCst) {
                    // A partition: the connection goes nowhere.
                    accept_state.streams.lock().unwrap().push(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(accept_state.target) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                {
                    let mut streams = accept_state.streams.lock().unwrap();
                    streams.push(client.try_clone().unwrap());
                    streams.push(server.try_clone().unwrap());
                }
                pump(
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    accept_state.clone(),
                    false,
                );
                pump(server, client, accept_state.clone(), true);
            }
        });
        FaultProxy { port, state }
    }

    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Closes every open connection (clients see a connection loss and reconnect).
    pub fn drop_all(&self) {
        for stream in self.state.streams.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// While on, bytes are held back and new connections lead nowhere.
    pub fn set_blackhole(&self, on: bool) {
        self.state.blackhole.store(on, Ordering::SeqCst);
        if !on {
            // Held connections are dead to both ends by now: cut them.
            self.drop_all();
        }
    }
}

impl FaultProxy {
    /// While on, the server still receives and applies requests but its
    /// replies never arrive: "the create happened, the reply was lost".
    pub fn set_drop_replies(&self, on: bool) {
        self.state.drop_replies.store(on, Ordering::SeqCst);
    }

    /// How many client connections the proxy has accepted: every reconnect
    /// of a client behind it counts one.
    pub fn connections(&self) -> u64 {
        self.state.accepted.load(Ordering::SeqCst)
    }

    /// Adds `ms` of latency to every chunk in both directions (0 = none).
    pub fn set_latency(&self, ms: u64) {
        self.state.latency_ms.store(ms, Ordering::SeqCst);
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.state.stopped.store(true, Ordering::SeqCst);
        self.drop_all();
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream, state: Arc<State>, is_reply: bool) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            while state.blackhole.load(Ordering::SeqCst) && !state.stopped.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    // Bytes read just as the hole opened are dropped, as a partition would.
                    if state.blackhole.load(Ordering::SeqCst)
                        || (is_reply && state.drop_replies.load(Ordering::SeqCst))
                    {
                        continue;
                    }
                    let latency = state.latency_ms.load(Ordering::SeqCst);
                    if latency > 0 {
                        std::thread::sleep(Duration::from_millis(latency));
                    }
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}
