//! The client every command opens from the common flags.

use zkrecipes::{Auth, Client, ClientOptions};

use crate::args::Common;
use crate::exit::{self, Failure};

pub async fn connect(common: &Common) -> Result<Client, Failure> {
    if common.session_timeout.is_zero() || common.connect_timeout.is_zero() {
        return Err(Failure::usage(
            "--session-timeout and --connect-timeout must be above 0",
        ));
    }
    let options = ClientOptions {
        session_timeout: common.session_timeout,
        connect_timeout: common.connect_timeout,
        auth: credentials(common)?,
        identity: common.identity.clone(),
    };
    Client::connect(&common.connect, options)
        .await
        .map_err(|err| {
            let failure = Failure::from(err);
            if failure.status == exit::USAGE || failure.status == exit::NO_PERMISSION {
                failure
            } else {
                Failure::new(
                    exit::UNAVAILABLE,
                    format!("cannot connect to {}: {}", common.connect, failure.message),
                )
            }
        })
}

/// Digest credentials from `--auth-file` or `ZKRECIPES_AUTH`; a file keeps
/// them out of `ps` and shell history.
fn credentials(common: &Common) -> Result<Option<Auth>, Failure> {
    let text = match &common.auth_file {
        Some(file) => std::fs::read_to_string(file).map_err(|err| {
            Failure::new(
                exit::DATA,
                format!("cannot read --auth-file {}: {err}", file.display()),
            )
        })?,
        None => match std::env::var("ZKRECIPES_AUTH") {
            Ok(text) => text,
            Err(_) => return Ok(None),
        },
    };
    let text = text.trim();
    if !text.contains(':') {
        return Err(Failure::new(
            exit::DATA,
            "credentials must be one line `user:password`",
        ));
    }
    Ok(Some(Auth::digest(text)))
}
