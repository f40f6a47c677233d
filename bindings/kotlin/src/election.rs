//! Apache's `LeaderElectionSupport`.

use std::sync::Arc;

use zkrecipes::LeaderElectionSupport;

use crate::client::NativeClient;
use crate::errors::Result;
use crate::events::NativeEvents;
use crate::tasks::run;

#[derive(uniffi::Object)]
pub struct NativeElection {
    election: LeaderElectionSupport,
    client: zkrecipes::Client,
}

#[uniffi::export]
impl NativeElection {
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, root: String, host_name: String) -> Result<Arc<Self>> {
        Ok(Arc::new(NativeElection {
            election: LeaderElectionSupport::new(&client.inner, &root, &host_name)?,
            client: client.inner.clone(),
        }))
    }

    /// Takes effect when called (a `stop()` right after wins), resolves once
    /// this member knows whether it leads.
    pub async fn start(&self) -> Result<()> {
        run(self.election.start()).await
    }

    /// `stop()` for a thread that may block.
    pub fn stop_blocking(&self) {
        let stopping = self.election.stop();
        crate::tasks::block(async move {
            let _ = stopping.await;
        });
    }

    pub async fn stop(&self) -> Result<()> {
        run(self.election.stop()).await
    }

    pub fn is_leader(&self) -> bool {
        self.election.is_leader()
    }

    pub async fn leader_host_name(&self) -> Result<Option<String>> {
        let election = self.election.clone();
        run(async move { election.leader_host_name().await }).await
    }

    /// `true` once leading; `false` if `timeout_ms` passed first.
    pub async fn await_leadership(&self, timeout_ms: f64) -> Result<bool> {
        let timeout = crate::tasks::wait(timeout_ms)?;
        let election = self.election.clone();
        run(async move { election.await_leadership(timeout).await }).await
    }

    pub fn events(&self) -> Arc<NativeEvents> {
        NativeEvents::election(&self.client, self.election.subscribe())
    }
}
