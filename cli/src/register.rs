//! `zkrecipes register NAME --address A --port P [--payload JSON | --spring] [--base /services]
//! -- CMD`: an instance of a service in Curator's registry while CMD runs. A DYNAMIC instance is
//! registered again by itself under every new session; if the server refuses it for good
//! (`NO_AUTH`), CMD is stopped as on a lost lock (status 79). The instance is removed when CMD
//! ends.

use tokio::sync::broadcast::error::RecvError;
use zkrecipes::ffi::InstanceFields;
use zkrecipes::{Client, DiscoveryEvent, ServiceDiscovery, SpringPayload};

use crate::args::RegisterArgs;
use crate::exit::{offer_failure, Failure, Outcome, USAGE};
use crate::stop_on_loss;
use crate::supervise::{Cmd, Input, Signals};

pub async fn run(client: &Client, args: RegisterArgs) -> Outcome {
    let mut fields = InstanceFields {
        name: args.name.clone(),
        id: args.id.clone(),
        address: Some(args.address.clone()),
        port: args.port.map(i128::from),
        ssl_port: args.ssl_port.map(i128::from),
        payload: args.payload.clone(),
        service_type: args.service_type.clone(),
        uri_spec: args.uri_spec.clone(),
        ..Default::default()
    };
    if args.spring {
        let id = args.id.clone().unwrap_or_else(|| args.name.clone());
        let payload = SpringPayload {
            id,
            name: args.name.clone(),
            metadata: [("instance_status".to_string(), "UP".to_string())].into(),
        };
        fields.payload = Some(payload.to_value().to_string());
    }
    // A payload that is no JSON, or over the node limit, is bad data (65), as for an offer; any
    // other field is the command line's (64).
    zkrecipes::ffi::payload(fields.payload.as_deref()).map_err(offer_failure)?;
    let instance = fields.build()?;
    let registry = ServiceDiscovery::new(client, &args.base)?;
    let mut events = registry.subscribe();
    let mut signals = Signals::install()?;
    tokio::select! {
        registered = registry.register(instance.clone()) => registered.map_err(registration_failure)?,
        signal = signals.recv() => {
            let _ = registry.close().await;
            return Ok(128 + signal);
        }
    }
    let env = [
        ("ZKRECIPES_SERVICE_NAME", instance.name.clone()),
        ("ZKRECIPES_INSTANCE_ID", instance.id.clone()),
        (
            "ZKRECIPES_INSTANCE_PATH",
            registry.path_of(&instance.name, &instance.id),
        ),
    ];
    let mut cmd = match Cmd::spawn(&args.command, &env, Input::Inherit, args.kill_after) {
        Ok(cmd) => cmd,
        Err(failure) => {
            let _ = registry.close().await;
            return Err(failure);
        }
    };
    // The events end only with the registry, never before: a guard against a spin all the same.
    let mut listening = true;
    let status = loop {
        tokio::select! {
            status = cmd.wait() => break status,
            signal = signals.recv() => cmd.pass_on(signal),
            event = events.recv(), if listening => match event {
                Ok(DiscoveryEvent::RegistrationStopped { error, .. }) => {
                    let why = format!("the instance can no longer be registered: {error}");
                    let failure = stop_on_loss(&mut cmd, &why).await;
                    let _ = registry.close().await;
                    return Err(failure);
                }
                Ok(DiscoveryEvent::Reregistered { .. }) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => listening = false,
            },
        }
    };
    registry.close().await?;
    Ok(status)
}

/// An id another live session registered is the caller's to change (64); bad data is 65.
fn registration_failure(err: zkrecipes::Error) -> Failure {
    let taken = err.code() == zkrecipes::ErrorCode::NodeExists;
    let mut failure = offer_failure(err);
    if taken {
        failure.status = USAGE;
    }
    failure
}
