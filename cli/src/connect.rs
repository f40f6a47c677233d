//! The client every command opens from the common flags.

use zkrecipes::ffi::SecuritySettings;
use zkrecipes::{Auth, Client, ClientOptions, Pem};

use crate::args::Common;
use crate::exit::{self, Failure};

pub async fn connect(common: &Common) -> Result<Client, Failure> {
    if common.session_timeout.is_zero() || common.connect_timeout.is_zero() {
        return Err(Failure::usage(
            "--session-timeout and --connect-timeout must be above 0",
        ));
    }
    let mut options = ClientOptions {
        session_timeout: common.session_timeout,
        connect_timeout: common.connect_timeout,
        identity: common.identity.clone(),
        ..ClientOptions::default()
    };
    let credentials = credentials(common)?;
    let mut settings = SecuritySettings {
        tls_ca: common.tls_ca.clone().map(Pem::File),
        tls_cert: common.tls_cert.clone().map(Pem::File),
        tls_key: common.tls_key.clone().map(Pem::File),
        tls_verify_hostname: common.tls_no_verify_hostname.then_some(false),
        sasl_mechanism: common.sasl.clone(),
        sasl_service: common.sasl_service.clone(),
        sasl_host: common.sasl_host.clone(),
        sasl_principal: common.sasl_principal.clone(),
        sasl_keytab: common.sasl_keytab.as_ref().map(|k| k.display().to_string()),
        acl_policy: common.acl.clone(),
        ..SecuritySettings::default()
    };
    match (&common.sasl, credentials) {
        // With --sasl digest the credentials log in by SASL, not as digest auth.
        (Some(mechanism), Some((user, password)))
            if mechanism.to_ascii_lowercase().starts_with("digest") =>
        {
            settings.sasl_username = Some(user);
            settings.sasl_password = Some(password.into_bytes());
        }
        (Some(mechanism), None) if mechanism.to_ascii_lowercase().starts_with("digest") => {
            return Err(Failure::new(
                exit::USAGE,
                "--sasl digest needs a user and password: --auth-file FILE (user:password) or \
                 ZKRECIPES_AUTH=user:password"
                    .to_string(),
            ));
        }
        (_, credentials) => {
            options.auth =
                credentials.map(|(user, password)| Auth::digest(&format!("{user}:{password}")));
        }
    }
    settings.apply(&mut options).map_err(Failure::from)?;
    Client::connect(&common.connect, options)
        .await
        .map_err(|err| {
            let failure = Failure::from(err);
            // Configuration (usage, credentials, a TLS setup the server refuses) keeps its
            // status: retrying will not help, unlike an unavailable server.
            if [exit::USAGE, exit::NO_PERMISSION, exit::CONFIG].contains(&failure.status) {
                failure
            } else if failure.message.starts_with("cannot connect to")
                || failure.message.starts_with("TLS to ")
            {
                // Already names the server it could not reach.
                Failure::new(exit::UNAVAILABLE, failure.message)
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
fn credentials(common: &Common) -> Result<Option<(String, String)>, Failure> {
    let text = match &common.auth_file {
        Some(file) => std::fs::read_to_string(file).map_err(|err| {
            Failure::new(
                exit::DATA,
                format!("cannot read --auth-file {}: {err}", file.display()),
            )
        })?,
        // An empty variable (`ZKRECIPES_AUTH=` to clear it) means no credentials.
        None => match std::env::var("ZKRECIPES_AUTH") {
            Ok(text) if !text.trim().is_empty() => text,
            _ => return Ok(None),
        },
    };
    // A byte-order mark (Notepad writes one) is not part of the user's name.
    let text = text.trim_start_matches('\u{feff}');
    let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
    let (Some(line), None) = (lines.next(), lines.next()) else {
        return Err(Failure::new(
            exit::DATA,
            "credentials must be one line `user:password`",
        ));
    };
    let Some((user, password)) = line.split_once(':') else {
        return Err(Failure::new(
            exit::DATA,
            "credentials must be one line `user:password`",
        ));
    };
    Ok(Some((user.to_string(), password.to_string())))
}
