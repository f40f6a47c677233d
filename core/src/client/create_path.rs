//! Creating a node with its missing ancestors.

use zookeeper_client as zk;

/// Creates `path` with `options` and its missing ancestors open to everybody:
/// an ancestor is shared by other applications, which must still be able to
/// create their own directories under it. The leaf is tried first: a new
/// lock name under an existing parent costs one request, not one per level.
pub(super) async fn create_path(
    zk: &zk::Client,
    path: &str,
    options: zk::CreateOptions<'_>,
) -> std::result::Result<(), zk::Error> {
    let open = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    // Ancestors that turn out to be missing, deepest last.
    let mut missing: Vec<&str> = Vec::new();
    let mut at = path;
    loop {
        let options = if at == path { &options } else { &open };
        match zk.create(at, &[], options).await {
            Ok(_) | Err(zk::Error::NodeExists) => break,
            Err(zk::Error::NoNode) => match at.rfind('/') {
                Some(parent) if parent > 0 => {
                    missing.push(at);
                    at = &at[..parent];
                }
                _ => return Err(zk::Error::NoNode),
            },
            Err(err) => return Err(err),
        }
    }
    while let Some(at) = missing.pop() {
        let options = if at == path { &options } else { &open };
        match zk.create(at, &[], options).await {
            Ok(_) | Err(zk::Error::NodeExists) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}
