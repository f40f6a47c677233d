//! `zkrecipes count PATH get|set V|add D [--long]`: Curator's SharedCount (a 4-byte int) or,
//! with `--long`, its DistributedAtomicLong (8 bytes), shared with Curator and kazoo processes.

use zkrecipes::{Client, DistributedAtomicLong, SharedCount};

use crate::args::{CountArgs, CountOp};
use crate::exit::{Failure, Outcome, USAGE};
use crate::lines;

pub async fn run(client: &Client, args: CountArgs) -> Outcome {
    let value = if args.long {
        let counter = DistributedAtomicLong::new(client, &args.path)?;
        match args.op {
            CountOp::Get => counter.get().await?,
            CountOp::Set { value } => {
                counter.force_set(value).await?;
                value
            }
            CountOp::Add { delta } => counter.add(delta).await?.post_value,
        }
    } else {
        let count = SharedCount::new(client, &args.path, 0)?;
        match args.op {
            CountOp::Get => i64::from(count.read().await?),
            CountOp::Set { value } => {
                count.set(int(value)?).await?;
                value
            }
            CountOp::Add { delta } => i64::from(count.add(int(delta)?).await?.value),
        }
    };
    lines::print_line(&value.to_string())?;
    Ok(0)
}

/// A SharedCount holds a Java `int`.
fn int(value: i64) -> Result<i32, Failure> {
    i32::try_from(value).map_err(|_| {
        Failure::new(
            USAGE,
            format!("{value} does not fit a shared count (a 32-bit int); use --long for a DistributedAtomicLong"),
        )
    })
}
