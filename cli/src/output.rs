//! Human and JSON renderings. Colour only on a terminal, and never with
//! NO_COLOR set.

use std::io::IsTerminal;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use zkrecipes::inspect::{NodeStatus, Role, SessionState, Status};
use zkrecipes::metrics::{MetricValue, MetricsSnapshot};

use crate::exit::Failure;
use crate::lines::print_line;

pub struct Output {
    json: bool,
    colour: bool,
}

impl Output {
    pub fn new(json: bool) -> Output {
        let colour =
            !json && std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Output { json, colour }
    }

    pub fn leader(&self, path: &str, leader: Option<&NodeStatus>) -> Result<(), Failure> {
        if self.json {
            let value = json!({
                "path": path,
                "leader": leader.map(|l| l.data.clone()),
                "node": leader.map(|l| l.name.clone()),
                "session": leader.and_then(|l| l.session).map(hex),
                "time_ms": now_ms(),
            });
            print_line(&value.to_string())
        } else {
            match leader {
                Some(l) => print_line(&format!("{} leader {} ({})", clock(), l.data, l.name)),
                None => print_line(&format!("{} no leader", clock())),
            }
        }
    }

    pub fn status(&self, status: &Status) -> String {
        if self.json {
            status_json(status).to_string()
        } else {
            self.status_text(status)
        }
    }

    /// A client's metrics: the Prometheus text, or with `--json` one object per series
    /// (`{"metric", "instrument", "unit", "attributes", "value"}`, a histogram's `count`, `sum`,
    /// `min`, `max`, `p50`, `p99` in seconds).
    pub fn metrics(&self, snapshot: &MetricsSnapshot) -> String {
        if !self.json {
            return snapshot.to_prometheus();
        }
        let mut lines = String::new();
        for point in &snapshot.points {
            let attributes: serde_json::Map<String, Value> = point
                .attributes
                .iter()
                .map(|(name, value)| (name.to_string(), json!(value)))
                .collect();
            let mut line = json!({
                "metric": point.metric.name,
                "instrument": point.metric.instrument.as_str(),
                "unit": point.metric.unit,
                "attributes": attributes,
            });
            match &point.value {
                MetricValue::Counter(n) => line["value"] = json!(n),
                MetricValue::UpDownCounter(n) => line["value"] = json!(n),
                MetricValue::Histogram(h) => {
                    line["count"] = json!(h.count);
                    line["sum"] = json!(h.sum);
                    line["min"] = json!(h.min);
                    line["max"] = json!(h.max);
                    line["p50"] = json!(h.quantile(0.5));
                    line["p99"] = json!(h.quantile(0.99));
                }
            }
            lines.push_str(&line.to_string());
            lines.push('\n');
        }
        lines
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn status_text(&self, status: &Status) -> String {
        let mut out = String::new();
        let push = |out: &mut String, line: String| {
            out.push_str(&line);
            out.push('\n');
        };
        // Only secured sessions get the line: plain output stays as it was.
        if status.tls || !status.authenticated_as.is_empty() {
            let who = match status.authenticated_as.is_empty() {
                true => "with no identity".to_string(),
                false => format!("authenticated as {}", status.authenticated_as.join(", ")),
            };
            let over = if status.tls { "TLS" } else { "plain TCP" };
            push(&mut out, format!("session: {over}, {who}"));
        }
        let session_line = out.len();
        if !status.exists {
            out.push_str(&format!("{}: no such node\n", status.path));
            return out;
        }
        let holders = status.holders().count();
        let waiters = status
            .nodes
            .iter()
            .filter(|n| n.role == Role::Waiter)
            .count();
        if holders + waiters > 0 {
            push(
                &mut out,
                format!(
                    "{}: lock, {holders} holding, {waiters} waiting",
                    status.path
                ),
            );
        }
        if let Some(leader) = status.leader() {
            let candidates = status
                .nodes
                .iter()
                .filter(|n| n.role == Role::Candidate)
                .count();
            let recipe = if leader.recipe == "latch" {
                "leader latch"
            } else {
                "election"
            };
            push(
                &mut out,
                format!(
                    "{}: {recipe}, leader {:?}, {}",
                    status.path,
                    leader.data,
                    counted(candidates, "candidate")
                ),
            );
        }
        if status.queue_items > 0 {
            push(
                &mut out,
                format!(
                    "{}: queue, {}",
                    status.path,
                    counted(status.queue_items, "item")
                ),
            );
        }
        if let Some(work) = status.work_queue {
            push(
                &mut out,
                format!(
                    "{}: work queue, {} ready, {} claimed, {} dead",
                    status.path, work.ready, work.claimed, work.dead
                ),
            );
        }
        if let Some(semaphore) = status.semaphore {
            push(
                &mut out,
                format!(
                    "{}: semaphore, {}, {} acquiring",
                    status.path,
                    counted(semaphore.leases, "lease node"),
                    semaphore.acquiring
                ),
            );
        }
        if let Some(barrier) = status.double_barrier {
            push(
                &mut out,
                format!(
                    "{}: double barrier, {}, {}",
                    status.path,
                    counted(barrier.members, "member"),
                    if barrier.ready { "ready" } else { "not ready" }
                ),
            );
        }
        let instances = status
            .nodes
            .iter()
            .filter(|n| n.role == Role::Instance)
            .count();
        if instances > 0 {
            push(
                &mut out,
                format!(
                    "{}: service, {}",
                    status.path,
                    counted(instances, "instance")
                ),
            );
        }
        if !status.services.is_empty() {
            let services: Vec<String> = status
                .services
                .iter()
                .map(|(name, n)| format!("{name} ({})", counted(*n, "instance")))
                .collect();
            push(
                &mut out,
                format!(
                    "{}: service registry, {}: {}",
                    status.path,
                    counted(status.services.len(), "service"),
                    services.join(", ")
                ),
            );
        }
        if out.len() == session_line {
            if status.other_children.is_empty() {
                // A barrier is its node alone: up while it exists.
                push(
                    &mut out,
                    format!(
                        "{}: no children (a barrier here is up; `barrier remove` takes it down)",
                        status.path
                    ),
                );
            } else {
                push(&mut out, format!("{}: no recipe nodes", status.path));
            }
        }
        let now = now_ms();
        for node in &status.nodes {
            let role = match node.role {
                Role::Holder | Role::Leader => {
                    self.paint("1;32", &format!("{:<9}", node.role.as_str()))
                }
                _ => format!("{:<9}", node.role.as_str()),
            };
            let kind = node.kind.map(|k| format!(" {k}")).unwrap_or_default();
            let session = match node.session {
                Some(s) => format!("session {} {}", hex(s), node.session_state.as_str()),
                None => "persistent".to_string(),
            };
            let session = match node.session_state {
                SessionState::Alive | SessionState::Unknown => session,
                _ => self.paint("1;31", &session),
            };
            let token = if carries_token(node) {
                format!("  token {}", node.czxid)
            } else {
                String::new()
            };
            push(
                &mut out,
                format!(
                    "  {role}{kind} {}  {}  {:?}  {session}  age {}{token}",
                    node.name,
                    node.libraries.join("/"),
                    node.data,
                    age(now - node.created_ms)
                ),
            );
            if let Some(why) = &node.orphan {
                push(
                    &mut out,
                    self.paint("31", &format!("    ! likely orphan: {why}")),
                );
            }
        }
        if !status.other_children.is_empty() {
            push(
                &mut out,
                format!("  other children: {}", status.other_children.join(", ")),
            );
        }
        if let Some(note) = &status.sessions_note {
            push(&mut out, format!("  note: {note}"));
        }
        out
    }
}

fn status_json(status: &Status) -> Value {
    let nodes: Vec<Value> = status
        .nodes
        .iter()
        .map(|n| {
            json!({
                "name": n.name,
                "role": n.role.as_str(),
                "kind": n.kind,
                "sequence": n.sequence,
                "recipe": n.recipe,
                "libraries": n.libraries,
                "data": n.data,
                "session": n.session.map(hex),
                "session_state": n.session_state.as_str(),
                "created_ms": n.created_ms,
                "fencing_token": carries_token(n).then_some(n.czxid),
                "orphan": n.orphan,
            })
        })
        .collect();
    json!({
        "path": status.path,
        "exists": status.exists,
        "holders": status.holders().map(|n| n.name.clone()).collect::<Vec<_>>(),
        "waiters": status.nodes.iter().filter(|n| n.role == Role::Waiter).map(|n| n.name.clone()).collect::<Vec<_>>(),
        "leader": status.leader().map(|l| l.data.clone()),
        "queue_items": status.queue_items,
        "work_queue": status.work_queue.map(|w| json!({"ready": w.ready, "claimed": w.claimed, "dead": w.dead})),
        "semaphore": status.semaphore.map(|s| json!({"leases": s.leases, "acquiring": s.acquiring})),
        "double_barrier": status.double_barrier.map(|b| json!({"members": b.members, "ready": b.ready})),
        "services": status.services.iter().map(|(name, n)| json!({"name": name, "instances": n})).collect::<Vec<_>>(),
        "orphans": status.orphans().count(),
        "nodes": nodes,
        "other_children": status.other_children,
        "sessions_note": status.sessions_note,
        "session": {"tls": status.tls, "authenticated_as": status.authenticated_as},
    })
}

/// The node czxid of a lock holder, a lease and a latch leader is their fencing token.
fn carries_token(node: &NodeStatus) -> bool {
    node.role == Role::Holder
        || node.role == Role::Lease
        || (node.role == Role::Leader && node.recipe == "latch")
}

fn hex(session: i64) -> String {
    format!("{:#x}", session as u64)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn clock() -> String {
    let secs = now_ms() / 1000 % 86_400;
    format!("{:02}:{:02}:{:02}Z", secs / 3600, secs / 60 % 60, secs % 60)
}

fn age(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

/// "1 item", "2 items".
fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}
