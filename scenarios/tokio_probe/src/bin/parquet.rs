//! A client no one here wrote: the `parquet` crate's async reader
//! (`ParquetRecordBatchStreamBuilder`) scanning a Parquet file through
//! hybrio-tokio's `File` and through `tokio::fs::File`, cached and cold;
//! then 20,000 random range reads of the file from 32 tasks through each
//! (read_exact_at against seek + read_exact). In turn, ROUNDS rounds after a
//! warm-up round, on a 2-worker runtime. The file (about SIZE_MIB MiB) is made with the
//! crate's Arrow writer when missing.
//!
//!   parquet FILE [SIZE_MIB [ROUNDS]]     (FILE on a device: not tmpfs)
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use futures_util::StreamExt;
use parquet::arrow::{ArrowWriter, ParquetRecordBatchStreamBuilder};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tprobe::{Figure, Rounds, cpu_ns, runtime};

const ROWS_PER_BATCH: usize = 1 << 16;
const RANGES: usize = 20_000;
const TASKS: usize = 32;

/// Writes a Parquet file of about `mib` MiB: an id, a value and a name per row.
fn make(path: &str, mib: u64) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("value", DataType::Float64, false),
        Field::new("name", DataType::Utf8, false),
    ]));
    let file = std::fs::File::create(path).expect("create the Parquet file");
    let mut writer = ArrowWriter::try_new(file, schema.clone(), None).expect("a Parquet writer");
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut id = 0i64;
    while std::fs::metadata(path).expect("stat").len() < mib << 20 {
        let ids: Vec<i64> = (0..ROWS_PER_BATCH as i64).map(|i| id + i).collect();
        let values: Vec<f64> = (0..ROWS_PER_BATCH)
            .map(|_| tprobe::xorshift(&mut seed) as f64 / 1e9)
            .collect();
        let names: Vec<String> = (0..ROWS_PER_BATCH)
            .map(|_| format!("name-{:016x}", tprobe::xorshift(&mut seed)))
            .collect();
        id += ROWS_PER_BATCH as i64;
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(Float64Array::from(values)),
                Arc::new(StringArray::from(names)),
            ],
        )
        .expect("a batch");
        writer.write(&batch).expect("write a batch");
        writer.flush().expect("flush a row group");
    }
    writer.close().expect("close the Parquet file");
}

fn drop_cache(path: &str) {
    let file = std::fs::File::open(path).expect("open FILE");
    // SAFETY: no memory is passed.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0, "posix_fadvise(DONTNEED)");
}

/// Rows in the file, scanned through the async reader over `reader`.
async fn scan<R>(reader: R) -> usize
where
    R: tokio::io::AsyncRead + tokio::io::AsyncSeek + Unpin + Send + 'static,
{
    let builder = ParquetRecordBatchStreamBuilder::new(reader)
        .await
        .expect("the file's footer");
    let mut stream = builder.build().expect("a batch stream");
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        rows += batch.expect("a batch").num_rows();
    }
    rows
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: parquet FILE [SIZE_MIB [ROUNDS]]")
        .clone();
    let mib: u64 = args.get(2).map_or(1024, |s| s.parse().expect("MiB"));
    let rounds: usize = args.get(3).map_or(3, |s| s.parse().expect("rounds"));
    if std::fs::metadata(&path).is_err() {
        let started = Instant::now();
        make(&path, mib);
        println!("made {path} in {:.1} s", started.elapsed().as_secs_f64());
    }
    let len = std::fs::metadata(&path).expect("stat FILE").len();
    let rt = runtime();
    let ways = ["hybrio-tokio", "tokio::fs"];
    let mut cached = Rounds::new(&ways, "MiB/s");
    let mut cold = Rounds::new(&ways, "MiB/s");
    let mut ranges = Rounds::new(&ways, "ranges/s");
    let mut rows_seen = None;
    // Round 0 is a warm-up, not counted (see `Rounds::forget`).
    for round in 0..=rounds {
        if round == 1 {
            for results in [&mut cached, &mut cold, &mut ranges] {
                results.forget();
            }
        }
        println!("round {round}");
        for (label, results, drop_first) in
            [("cold", &mut cold, true), ("cached", &mut cached, false)]
        {
            println!(" scan, {label}");
            for way in tprobe::in_turn(ways.len(), round) {
                if drop_first {
                    drop_cache(&path);
                } else {
                    // Cached: read once before, so that the pages are in.
                    let _ = std::fs::read(&path);
                }
                let cpu = cpu_ns();
                let started = Instant::now();
                let rows = rt.block_on(async {
                    if way == 0 {
                        scan(hybrio_tokio::fs::File::open(&path).await.expect("open")).await
                    } else {
                        scan(tokio::fs::File::open(&path).await.expect("open")).await
                    }
                });
                assert_eq!(
                    *rows_seen.get_or_insert(rows),
                    rows,
                    "the same rows each way"
                );
                let secs = started.elapsed().as_secs_f64();
                results.record(
                    way,
                    Figure {
                        rate: len as f64 / secs / (1 << 20) as f64,
                        latencies: vec![(secs * 1e9) as u32],
                        cpu_ns_per_op: (cpu_ns() - cpu) as f64,
                    },
                );
            }
        }
        println!(" {RANGES} range reads from {TASKS} tasks");
        for way in tprobe::in_turn(ways.len(), round) {
            let cpu = cpu_ns();
            let started = Instant::now();
            let latencies = rt.block_on(async {
                let hybrio = Arc::new(hybrio_tokio::fs::File::open(&path).await.expect("open"));
                let tasks: Vec<_> = (0..TASKS)
                    .map(|task| {
                        let (hybrio, path) = (hybrio.clone(), path.clone());
                        tokio::spawn(async move {
                            let mut seed =
                                0x9E37_79B9_7F4A_7C15 ^ (task as u64 + 1) ^ (round as u64) << 40;
                            let mut tokio_file = tokio::fs::File::open(&path).await.expect("open");
                            let mut latencies = Vec::new();
                            for _ in 0..RANGES / TASKS {
                                let size =
                                    4096 + (tprobe::xorshift(&mut seed) % (60 << 10)) as usize;
                                let at = tprobe::xorshift(&mut seed) % (len - size as u64);
                                let began = Instant::now();
                                if way == 0 {
                                    let (result, _) =
                                        hybrio.read_exact_at(vec![0u8; size], at).await;
                                    result.expect("a range");
                                } else {
                                    let mut buf = vec![0u8; size];
                                    tokio_file
                                        .seek(std::io::SeekFrom::Start(at))
                                        .await
                                        .expect("seek");
                                    tokio_file.read_exact(&mut buf).await.expect("a range");
                                }
                                latencies.push(began.elapsed().as_nanos() as u32);
                            }
                            latencies
                        })
                    })
                    .collect();
                tprobe::joined(tasks).await
            });
            let secs = started.elapsed().as_secs_f64();
            let ops = latencies.len() as f64;
            ranges.record(
                way,
                Figure {
                    rate: ops / secs,
                    latencies,
                    cpu_ns_per_op: (cpu_ns() - cpu) as f64 / ops,
                },
            );
        }
    }
    println!("scan, cold:");
    cold.print_ratios(0);
    println!("scan, cached:");
    cached.print_ratios(0);
    println!("range reads:");
    ranges.print_ratios(0);
}
