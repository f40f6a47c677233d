//! A TCP proxy between clients and a server that can cut every connection or
//! hold all traffic (a black hole): connection loss and partitions for real.
//! It also follows the requests' framing, so that a connection can be cut at
//! one chosen request: lost on its way, or applied with its reply lost.

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
    /// Client connections forwarded and not ended yet.
    open: AtomicU64,
    /// The next request of this kind cuts its connection (`cut_at_request`).
    cut: Mutex<Option<(Request, Cut, Then)>>,
    cuts: AtomicU64,
}

/// The kind of a ZooKeeper request, by its opcode (`ZooDefs.OpCode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// `create`, `create2`, a TTL or container create.
    Create,
    Delete,
    GetData,
    SetData,
    Multi,
}

impl Request {
    fn is(self, opcode: i32) -> bool {
        match self {
            Request::Create => matches!(opcode, 1 | 15 | 19 | 21),
            Request::Delete => opcode == 2,
            Request::GetData => opcode == 4,
            Request::SetData => opcode == 5,
            Request::Multi => opcode == 14,
        }
    }
}

/// Where `cut_at_request` cuts the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Before the request reaches the server: it is never applied.
    Before,
    /// Once the server has the request: it is applied, its reply never arrives.
    After,
}

/// What the proxy does once `cut_at_request` has cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Then {
    /// Nothing more: the client reconnects at once.
    Reconnect,
    /// Turns into a black hole at that moment: the client cannot reconnect
    /// until `set_blackhole(false)` (another client writes meanwhile, say).
    Hold,
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
            open: AtomicU64::new(0),
            cut: Mutex::new(None),
            cuts: AtomicU64::new(0),
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
                accept_state.open.fetch_add(1, Ordering::SeqCst);
                let connection = Arc::new(Connection {
                    client: client.try_clone().unwrap(),
                    server: server.try_clone().unwrap(),
                    muted: AtomicBool::new(false),
                });
                pump(
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    accept_state.clone(),
                    connection.clone(),
                    false,
                );
                pump(server, client, accept_state.clone(), connection, true);
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

    /// How many client connections the proxy forwards now (accepted, not ended).
    pub fn open_connections(&self) -> u64 {
        self.state.open.load(Ordering::SeqCst)
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

    /// The next `request` a client sends cuts its connection, at `cut`: the
    /// client sees a connection loss with that request on its way (once; a
    /// new call arms it again). Plain connections only: TLS bytes have no
    /// framing the proxy can read.
    pub fn cut_at_request(&self, request: Request, cut: Cut, then: Then) {
        *self.state.cut.lock().unwrap() = Some((request, cut, then));
    }

    /// Takes back a `cut_at_request` that has not cut yet.
    pub fn disarm_cut(&self) {
        *self.state.cut.lock().unwrap() = None;
    }

    /// How many connections `cut_at_request` has cut so far.
    pub fn cuts(&self) -> u64 {
        self.state.cuts.load(Ordering::SeqCst)
    }
}

/// Both ends of one proxied connection, for a cut at a request.
struct Connection {
    client: TcpStream,
    server: TcpStream,
    /// Once set, no byte of the server reaches the client any more.
    muted: AtomicBool,
}

impl Connection {
    /// Ends the connection for the client at once. The server is only told
    /// the stream ended (no reset, which could discard a request it has not
    /// read yet); the reply pump keeps discarding until the server closes.
    fn cut(&self) {
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.server.shutdown(Shutdown::Write);
    }
}

/// Follows the client's requests through the chunks they arrive in: every
/// frame is a 4-byte length, then (after the connect request, which has no
/// header) a header of xid and opcode. Only watched, never changes what is
/// forwarded.
#[derive(Default)]
struct Framing {
    /// Past the connect request.
    connected: bool,
    /// The first bytes of the frame under way (length, xid, opcode).
    head: Vec<u8>,
    /// Bytes of the frame under way not seen yet, once its length is known.
    left: usize,
}

/// What a chunk holds for an armed cut.
enum Found {
    /// The request begins at this offset of the chunk (0 if it began in an
    /// earlier one) and ends at the second offset, if within this chunk.
    At(usize, Option<usize>),
    None,
}

impl Framing {
    /// Walks `chunk`; the first frame of `request`'s kind in it, if any.
    fn scan(&mut self, chunk: &[u8], request: Option<Request>) -> Found {
        let mut at = 0;
        let mut found = Found::None;
        while at < chunk.len() {
            if self.left > 0 {
                let n = self.left.min(chunk.len() - at);
                self.left -= n;
                at += n;
                if let (Found::At(_, end @ None), 0) = (&mut found, self.left) {
                    *end = Some(at);
                    return found;
                }
                continue;
            }
            // A frame's head: its length, then (past the connect) xid and opcode.
            let begins = at.saturating_sub(self.head.len());
            let want = if self.connected { 12 } else { 4 };
            let n = (want - self.head.len()).min(chunk.len() - at);
            self.head.extend_from_slice(&chunk[at..at + n]);
            at += n;
            if self.head.len() < want {
                continue;
            }
            let length = i32::from_be_bytes(self.head[..4].try_into().unwrap());
            let Ok(length) = usize::try_from(length) else {
                // Not ZooKeeper's framing (TLS, say): stop looking.
                self.left = usize::MAX;
                continue;
            };
            let opcode = self
                .connected
                .then(|| i32::from_be_bytes(self.head[8..12].try_into().unwrap()));
            self.left = (length + 4).saturating_sub(self.head.len());
            self.head.clear();
            self.connected = true;
            if let (Some(request), Some(opcode), Found::None) = (request, opcode, &found) {
                if request.is(opcode) {
                    found = Found::At(begins, None);
                    if self.left == 0 {
                        return Found::At(begins, Some(at));
                    }
                }
            }
        }
        found
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.state.stopped.store(true, Ordering::SeqCst);
        self.drop_all();
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    state: Arc<State>,
    connection: Arc<Connection>,
    is_reply: bool,
) {
    std::thread::spawn(move || {
        // The request side's end is the connection's (`open_connections`).
        let _open = (!is_reply).then(|| OpenConnection(state.clone()));
        let mut buf = vec![0u8; 64 * 1024];
        let mut framing = Framing::default();
        // A request forwarded in part, whose end cuts the connection.
        let mut cut_at_end: Option<Then> = None;
        loop {
            while state.blackhole.load(Ordering::SeqCst) && !state.stopped.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    // Bytes read just as the hole opened are dropped, as a partition would.
                    if state.blackhole.load(Ordering::SeqCst)
                        || (is_reply
                            && (state.drop_replies.load(Ordering::SeqCst)
                                || connection.muted.load(Ordering::SeqCst)))
                    {
                        continue;
                    }
                    let latency = state.latency_ms.load(Ordering::SeqCst);
                    if latency > 0 {
                        std::thread::sleep(Duration::from_millis(latency));
                    }
                    let mut chunk = &buf[..n];
                    let mut cut = None;
                    if let Some(then) = cut_at_end {
                        // The rest of the request the cut waits for, and no byte past it.
                        let rest = framing.left.min(chunk.len());
                        framing.left -= rest;
                        chunk = &chunk[..rest];
                        if framing.left == 0 {
                            cut = Some(then);
                        }
                    } else if !is_reply {
                        let armed = *state.cut.lock().unwrap();
                        let looking = armed.map(|(request, ..)| request);
                        if let Found::At(begins, end) = framing.scan(chunk, looking) {
                            // One cut: the first connection to claim it.
                            let claimed = {
                                let mut slot = state.cut.lock().unwrap();
                                let claimed = *slot == armed;
                                if claimed {
                                    *slot = None;
                                }
                                claimed
                            };
                            if let (true, Some((_, how, then))) = (claimed, armed) {
                                // The reply must not slip through before the cut.
                                connection.muted.store(true, Ordering::SeqCst);
                                match (how, end) {
                                    (Cut::Before, _) => {
                                        chunk = &chunk[..begins];
                                        cut = Some(then);
                                    }
                                    (Cut::After, Some(end)) => {
                                        chunk = &chunk[..end];
                                        cut = Some(then);
                                    }
                                    (Cut::After, None) => cut_at_end = Some(then),
                                }
                            }
                        }
                    }
                    if to.write_all(chunk).is_err() {
                        break;
                    }
                    if let Some(then) = cut {
                        if then == Then::Hold {
                            state.blackhole.store(true, Ordering::SeqCst);
                        }
                        connection.cut();
                        state.cuts.fetch_add(1, Ordering::SeqCst);
                        return;
                    }
                }
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}

/// One forwarded connection counted in `State::open` until dropped.
struct OpenConnection(Arc<State>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}
