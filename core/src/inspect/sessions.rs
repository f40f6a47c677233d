//! Whether the sessions that own nodes are alive: the servers' `cons` (four-letter words).

use super::*;

/// Sets each ephemeral node's session state from the servers' `cons`;
/// returns why states stay unknown, if they do.
pub(super) async fn check_sessions(client: &Client, nodes: &mut [NodeStatus]) -> Option<String> {
    if nodes.iter().all(|n| n.session.is_none()) {
        return None;
    }
    let (connected, note) = connected_sessions(client, &servers(client.connect_string())).await;
    for node in nodes.iter_mut() {
        if let Some(session) = node.session {
            node.session_state = if connected.contains(&session) {
                SessionState::Alive
            } else if note.is_none() {
                SessionState::Disconnected
            } else {
                SessionState::Unknown
            };
        }
    }
    note
}

/// The `host:port` of every server in a connect string.
pub(super) fn servers(connect_string: &str) -> Vec<String> {
    let hosts = connect_string.split('/').next().unwrap_or_default();
    hosts
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(|h| {
            if h.rsplit_once(':')
                .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
            {
                h.to_string()
            } else {
                format!("{h}:2181")
            }
        })
        .collect()
}

/// Sessions with a connection on any of `servers`, and a note when a server
/// did not tell (then a session missing from the set may still be alive).
///
/// `cons` lists the connections of the port it is asked on only: a TLS
/// client asks its TLS ports and also the plain port each server names in
/// `conf`; a plain client cannot ask a TLS port, so a server that has one
/// leaves the states unknown rather than calling TLS sessions disconnected
/// (found by an adversarial review: a live TLS holder shown as an orphan).
pub(super) async fn connected_sessions(
    client: &Client,
    servers: &[String],
) -> (HashSet<i64>, Option<String>) {
    let tls = client.tls().cloned();
    let ask = |server: String, command: &'static str| {
        let tls = tls.clone();
        async move {
            match tls {
                Some(tls) => {
                    let exchange = tokio::task::spawn_blocking(move || {
                        crate::connect_diagnosis::tls_four_letter(&server, &tls, command)
                    });
                    match tokio::time::timeout(FOUR_LETTER_TIMEOUT, exchange).await {
                        Ok(Ok(reply)) => reply,
                        _ => Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            "no answer to a four-letter word over TLS",
                        )),
                    }
                }
                None => four_letter(&server, command).await,
            }
        }
    };
    let mut sessions = HashSet::new();
    let mut silent = Vec::new();
    let replies = futures_util::future::join_all(
        servers
            .iter()
            .map(|s| async { (ask(s.clone(), "cons").await, ask(s.clone(), "conf").await) }),
    )
    .await;
    for (server, (reply, conf)) in servers.iter().zip(replies) {
        match reply {
            Ok(text) if text.contains("sid=") => sessions.extend(parse_cons(&text)),
            Ok(text) if text.contains("not in the whitelist") || text.contains("not executed") => {
                silent.push(format!(
                    "{server} refuses `cons` (add it to 4lw.commands.whitelist)"
                ))
            }
            Ok(_) => {}
            Err(err) => silent.push(format!("{server}: {err}")),
        }
        let conf = conf.unwrap_or_default();
        let host = server.rsplit_once(':').map_or(server.as_str(), |(h, _)| h);
        match (tls.is_some(), conf_port(&conf, "clientPort"), conf_port(&conf, "secureClientPort")) {
            (true, Some(plain), _) => match four_letter(&format!("{host}:{plain}"), "cons").await {
                Ok(text) => sessions.extend(parse_cons(&text)),
                Err(err) => silent.push(format!("{host}:{plain} (its plain port): {err}")),
            },
            (false, _, Some(secure)) => silent.push(format!(
                "{server} also serves TLS clients (secureClientPort {secure}), whose sessions a plain \
                 `cons` does not list: look with the TLS options to see them"
            )),
            _ => {}
        }
    }
    let note =
        (!silent.is_empty()).then(|| format!("session liveness unknown: {}", silent.join("; ")));
    (sessions, note)
}

/// `name=PORT` of a `conf` reply (a server without it has no such port).
pub(super) fn conf_port(conf: &str, name: &str) -> Option<u16> {
    conf.lines()
        .find_map(|line| {
            line.strip_prefix(name)?
                .strip_prefix('=')?
                .trim()
                .parse()
                .ok()
        })
        .filter(|port| *port > 0)
}

pub(super) fn parse_cons(text: &str) -> impl Iterator<Item = i64> + '_ {
    text.split("sid=0x").skip(1).filter_map(|rest| {
        let hex: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
        u64::from_str_radix(&hex, 16).ok().map(|v| v as i64)
    })
}

pub(super) async fn four_letter(server: &str, command: &str) -> std::io::Result<String> {
    let exchange = async {
        let mut stream = TcpStream::connect(server).await?;
        stream.write_all(command.as_bytes()).await?;
        let mut reply = String::new();
        stream.read_to_string(&mut reply).await?;
        Ok(reply)
    };
    match tokio::time::timeout(FOUR_LETTER_TIMEOUT, exchange).await {
        Ok(reply) => reply,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "no answer to a four-letter word",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sessions_from_cons() {
        let text = " /127.0.0.1:52110[1](queued=0,recved=3,sent=3,sid=0x1000b2c3d0002,lop=PING)\n \
                    /127.0.0.1:52112[0](queued=0,recved=1,sent=0)\n \
                    /10.0.0.2:40000[1](queued=0,sid=0xffff000000000001,lop=GETD)\n";
        let sessions: Vec<i64> = parse_cons(text).collect();
        assert_eq!(
            sessions,
            vec![0x1000b2c3d0002, 0xffff000000000001u64 as i64]
        );
    }

    #[test]
    fn finds_every_server_of_a_connect_string() {
        assert_eq!(
            servers("a:2181, b:2182,c/chroot/x"),
            vec!["a:2181", "b:2182", "c:2181"]
        );
    }
}
