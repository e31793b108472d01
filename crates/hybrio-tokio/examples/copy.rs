//! Copies a file with hybrio-tokio: eight tasks each move 1 MiB chunks,
//! reading from one shared `File` and writing to another at the same
//! offsets, with owned buffers; then `sync_all` makes the copy durable.
//! A chunk the page cache holds is read in the task; the rest through
//! io_uring. Prints how the requests went.
//!
//!   cargo run --release -p hybrio-tokio --example copy -- SOURCE DESTINATION

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use hybrio_tokio::fs::File;

const CHUNK: usize = 1 << 20;
const TASKS: usize = 8;

#[tokio::main]
async fn main() {
    if let Err(error) = copy().await {
        eprintln!("copy: {error}");
        std::process::exit(1);
    }
}

async fn copy() -> io::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(from), Some(to), None) = (args.next(), args.next(), args.next()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "usage: copy SOURCE DESTINATION",
        ));
    };
    let source = Arc::new(File::open(&from).await?);
    let len = source.metadata().await?.len();
    let target = Arc::new(
        File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&to)
            .await?,
    );
    let started = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (source, target, next) = (source.clone(), target.clone(), next.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; CHUNK];
                loop {
                    let at = next.fetch_add(CHUNK as u64, Ordering::Relaxed);
                    if at >= len {
                        return Ok::<(), io::Error>(());
                    }
                    // A file that shrinks meanwhile ends the copy in an error.
                    buf.resize((len - at).min(CHUNK as u64) as usize, 0);
                    let (read, back) = source.read_exact_at(buf, at).await;
                    read?;
                    let (written, back) = target.write_all_at(back, at).await;
                    written?;
                    buf = back;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.map_err(io::Error::other)??;
    }
    target.sync_all().await?;
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "copied {len} bytes in {seconds:.3} s ({:.0} MiB/s)",
        len as f64 / seconds / f64::from(1 << 20)
    );
    println!("reads:  {:?}", source.counts());
    println!("writes: {:?}", target.counts());
    println!("engine: {}", source.engine_description());
    Ok(())
}
