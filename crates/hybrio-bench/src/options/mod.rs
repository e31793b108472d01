//! The option tables: every job option hybrio knows, with its type, default
//! and help. They drive the command line, job files, `--cmdhelp` and
//! validation, so there is one parser and one place where an option is
//! defined.

mod buffers;
mod cmdprio;
mod def;
mod engines;
mod errors;
mod fio_names;
mod groups;
mod iolog;
mod job;
mod lacking;
mod placement;
mod pseudo;
mod region;
mod table;
mod values;
mod verify;

pub use cmdprio::check as check_cmdprio;
pub use def::{Kind, OptionDef};
pub use engines::{
    FileOp, SpaceEngine, StatType, is_fio_engine, needs as fio_engine_needs,
    needs_hardware as fio_engine_needs_hardware,
};
pub use groups::{
    BlockPriorities, BufferOptions, CmdPrio, CpuMode, ErrorKind, ErrorPolicy, ExitWhat,
    IologOptions, NetOptions, Placement, Protocol, PseudoEngine, PseudoOptions, ReplaySkip,
    VerifyOptions, ioprio_value,
};
pub use job::{
    BlockSizes, BlockSplit, DEFAULT_PERCENTILES, Distribution, FadviseHint, FileService, FileType,
    JobOptions, Offset, Preallocate, RwMode, StridedZones, UnifiedRw, WindowValue, Zone, ZoneSize,
};
pub use pseudo::check as check_pseudo_engine;
pub use region::check_across_jobs;

/// Every job option hybrio implements, table after table.
pub fn all() -> impl Iterator<Item = &'static OptionDef> {
    table::CORE_OPTIONS
        .iter()
        .chain(verify::VERIFY_OPTIONS)
        .chain(errors::ERROR_OPTIONS)
        .chain(region::REGION_OPTIONS)
        .chain(placement::PLACEMENT_OPTIONS)
        .chain(buffers::BUFFER_OPTIONS)
        .chain(pseudo::PSEUDO_OPTIONS)
        .chain(pseudo::DEFRAG_OPTIONS)
        .chain(cmdprio::CMDPRIO_OPTIONS)
        .chain(iolog::IOLOG_OPTIONS)
}

/// Finds an option by name or alias.
pub fn find(name: &str) -> Option<&'static OptionDef> {
    all().find(|o| o.name == name || o.aliases.contains(&name))
}

/// Whether fio (3.33 or 3.42) has an option (or alias) of this name: one hybrio does
/// not know is then unsupported rather than misspelt.
pub fn is_fio_option(name: &str) -> bool {
    fio_names::FIO_OPTION_NAMES.binary_search(&name).is_ok()
}

/// Why hybrio lacks fio's option `name`: `None` when hybrio has it, or fio
/// does not.
pub fn lacking_reason(name: &str) -> Option<std::borrow::Cow<'static, str>> {
    find(name)
        .is_none()
        .then(|| lacking::reason(name))
        .flatten()
}

/// The known option closest to a misspelt one, for "did you mean".
pub fn suggest(name: &str) -> Option<&'static str> {
    all()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::ValueError;
    use hybrio::file::Caching;
    use std::time::Duration;

    fn apply(name: &str, value: &str) -> Result<JobOptions, ValueError> {
        let mut job = JobOptions::default();
        find(name).expect("known option").apply(&mut job, value)?;
        Ok(job)
    }

    #[test]
    fn every_option_has_a_unique_name_and_help() {
        let mut names: Vec<&str> = all()
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
            .collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(
            names.len(),
            count,
            "an option name or alias is defined twice"
        );
        assert!(all().all(|o| !o.help.is_empty()));
    }

    #[test]
    fn defaults_of_the_table_agree_with_the_struct() {
        // Applying each documented default must leave the defaults unchanged.
        for option in all().filter(|o| !o.default.is_empty()) {
            let mut job = JobOptions::default();
            option.apply(&mut job, option.default).unwrap();
            // Given, even at its default, randseed counts as given (fio's
            // fio_option_is_set).
            job.randseed_given = false;
            job.iodepth_given = false;
            job.buffers.zero_given = false;
            job.verify.write_sequence = None;
            job.verify.header_seed = None;
            assert_eq!(
                job,
                JobOptions::default(),
                "default of {} disagrees",
                option.name
            );
        }
    }

    #[test]
    fn every_fadvise_hint_of_fio_is_taken() {
        let hint = |v: &str| apply("fadvise_hint", v).map(|j| j.fadvise_hint);
        assert_eq!(hint("0").unwrap(), None);
        assert_eq!(hint("1").unwrap(), Some(FadviseHint::Workload));
        assert_eq!(hint("sequential").unwrap(), Some(FadviseHint::Sequential));
        assert_eq!(hint("random").unwrap(), Some(FadviseHint::Random));
        assert_eq!(hint("normal").unwrap(), Some(FadviseHint::Normal));
        assert!(hint("willneed").is_err());
    }

    #[test]
    fn uncached_is_a_boolean_or_auto() {
        let caching = |v: &str| apply("uncached", v).map(|j| j.uncached);
        assert_eq!(caching("1").unwrap(), Caching::Uncached);
        assert_eq!(caching("0").unwrap(), Caching::Cached);
        assert_eq!(caching("auto").unwrap(), Caching::Auto);
        assert!(caching("sometimes").is_err());
    }

    #[test]
    fn block_sizes_per_direction() {
        assert_eq!(apply("bs", "8k").unwrap().bs, [8192; 3]);
        assert_eq!(apply("bs", "4k,8k").unwrap().bs, [4096, 8192, 8192]);
        assert_eq!(apply("blocksize", ",16k").unwrap().bs, [4096, 16384, 16384]);
        assert!(apply("bs", "abc").is_err());
        assert!(apply("bs", "0").is_err());
        assert!(apply("bs", "4k,8k,16k,32k").is_err());
    }

    #[test]
    fn random_distributions_as_fio_writes_them() {
        let reads =
            |v: &str| apply("random_distribution", v).map(|j| j.random_distribution[0].clone());
        assert_eq!(reads("random").unwrap(), Distribution::Uniform);
        assert_eq!(
            reads("zipf:0.5").unwrap(),
            Distribution::Zipf {
                theta: 0.5,
                center: None
            }
        );
        assert_eq!(
            reads("zipf:1.2:0.25").unwrap(),
            Distribution::Zipf {
                theta: 1.2,
                center: Some(0.25)
            }
        );
        assert_eq!(
            reads("pareto:0.2").unwrap(),
            Distribution::Pareto {
                h: 0.2,
                center: None
            }
        );
        assert_eq!(
            reads("normal:10").unwrap(),
            Distribution::Normal {
                deviation: 10.0,
                center: None
            }
        );
        // rand-zones.fio's last zone has no size: it takes the rest, 80%.
        let Distribution::Zoned(zones) = reads("zoned:50/5:30/15:20/").unwrap() else {
            panic!("zoned")
        };
        assert_eq!(zones[2].size, ZoneSize::Percent(80.0));
        let Distribution::Zoned(zones) = reads("zoned_abs=60/20G:30/100G:10/500g").unwrap() else {
            panic!("zoned_abs")
        };
        assert_eq!(zones[1].size, ZoneSize::Bytes(100 << 30));
        let Distribution::Zoned(zones) = reads("zoned:60/10:30/20:8/30:2/40").unwrap() else {
            panic!("zoned")
        };
        assert_eq!((zones.len(), zones[3].access_percent), (4, 2.0));
        for bad in [
            "zipf",
            "zipf:1",
            "zipf:x",
            "pareto:1.5",
            "normal:0",
            "zoned:60/10:30/20",
            "zoned:50/80:50/30",
            "zoned:5",
            "uniform",
            "zipf:0.5:2",
        ] {
            let err = apply("random_distribution", bad).unwrap_err().to_string();
            assert!(!err.is_empty() && !err.contains('\n'), "{bad}: {err}");
        }
        // Per direction: reads zipf, writes and trims zoned.
        let job = apply("random_distribution", "zipf:0.8,zoned:100/50").unwrap();
        assert!(matches!(job.random_distribution[2], Distribution::Zoned(_)));
    }

    #[test]
    fn a_trimming_jobs_blocks_are_its_trims_sizes() {
        let mut job = apply("bs", "4k,2k,8k").unwrap();
        assert_eq!((job.min_block_size(), job.max_block_size()), (4096, 4096));
        for rw in ["randtrimwrite", "trimwrite", "trim"] {
            find("rw").unwrap().apply(&mut job, rw).unwrap();
            // trimwrite's writes are its trims' size: its buffers must hold one.
            assert_eq!(
                (job.min_block_size(), job.max_block_size()),
                (8192, 8192),
                "{rw}"
            );
        }
    }

    #[test]
    fn block_size_ranges_and_splits() {
        let job = apply("bsrange", "4k-16k,8k-32k").unwrap();
        let ranges = [0, 1, 2].map(|d| job.block_range(d));
        assert_eq!(ranges, [(4096, 16384), (8192, 32768), (8192, 32768)]);
        let err = apply("bsrange", "4k-16k,8k").unwrap_err().to_string();
        assert!(err.contains("'8k' is not a range"), "{err}");
        // Either order, ':' as fio also writes it, and the long name.
        assert_eq!(
            apply("bsrange", "16k:4k").unwrap().block_range(1),
            (4096, 16384)
        );
        assert_eq!(
            apply("blocksize_range", "1k-2k").unwrap().block_range(0),
            (1024, 2048)
        );
        assert!(apply("bsrange", "4k-0").is_err());
        // fio reads bs=4k-16k as bs=4k,16k: refused, naming both readings.
        let err = apply("bs", "4k-16k").unwrap_err().to_string();
        assert!(
            err.contains("bs=4k,16k") && err.contains("bsrange=4k-16k"),
            "{err}"
        );
        // With directions as well, fio's reading is not spelt out.
        let err = apply("bs", "4k:16k,8k:32k").unwrap_err().to_string();
        assert!(
            err.contains("bsrange=4k:16k,8k:32k") && !err.contains("bs=4k,16k"),
            "{err}"
        );
        // A single size after a range is a single size again.
        let mut job = JobOptions::default();
        find("bsrange").unwrap().apply(&mut job, "4k-16k").unwrap();
        find("bs").unwrap().apply(&mut job, "8k").unwrap();
        assert_eq!(job.block_range(0), (8192, 8192));

        let shares = |job: &JobOptions, dir: usize| -> Vec<(u64, u32)> {
            job.bssplit[dir]
                .iter()
                .map(|s| (s.size, s.percent))
                .collect()
        };
        let job = apply("bssplit", "4k/10:64k/50:32k/40").unwrap();
        assert_eq!(shares(&job, 1), [(4096, 10), (65536, 50), (32768, 40)]);
        assert_eq!(job.block_range(0), (4096, 65536));
        // Entries without a share split what is left: 100 - 50 over two.
        let job = apply("bssplit", "2k/50:4k/:8k,16k").unwrap();
        assert_eq!(shares(&job, 0), [(2048, 50), (4096, 25), (8192, 25)]);
        assert_eq!(shares(&job, 1), [(16384, 100)]);
        // Shares that do not add up to 100 are kept, as fio keeps them.
        assert_eq!(
            shares(&apply("bssplit", "4k/60:8k/60").unwrap(), 0),
            [(4096, 60), (8192, 60)]
        );
        let err = apply("bssplit", "4k/60:8k/60:16k").unwrap_err().to_string();
        assert!(err.contains("add up to 120"), "{err}");
        assert!(apply("bssplit", "4k/x").is_err());
        assert!(apply("bssplit", "4k/101").is_err());
    }

    #[test]
    fn choices_and_aliases() {
        assert_eq!(apply("rw", "readwrite").unwrap().rw, RwMode::ReadWrite);
        assert_eq!(
            apply("readwrite", "randrw").unwrap().rw,
            RwMode::RandReadWrite
        );
        assert!(matches!(
            apply("rw", "sideways"),
            Err(ValueError::Choice { .. })
        ));
        assert_eq!(apply("rw", "randtrim").unwrap().rw, RwMode::RandTrim);
        assert!(matches!(
            apply("rw", "trimread"),
            Err(ValueError::Choice { .. } | ValueError::Unsupported(_))
        ));
        assert!(apply("buffered", "0").unwrap().direct);
        assert_eq!(apply("rwmixwrite", "30").unwrap().rwmixread, 70);
        assert!(apply("rwmixread", "101").is_err());
    }

    #[test]
    fn derived_depth_defaults_follow_fio() {
        let mut job = JobOptions {
            iodepth: 64,
            ..JobOptions::default()
        };
        assert_eq!(
            (
                job.batch_submit(),
                job.batch_complete_max(),
                job.depth_low()
            ),
            (1, 1, 64)
        );
        job.iodepth_batch_submit = 0;
        job.iodepth_batch_complete_min = 16;
        job.iodepth_low = Some(16);
        assert_eq!(
            (
                job.batch_submit(),
                job.batch_complete_max(),
                job.depth_low()
            ),
            (64, 16, 16)
        );
    }

    #[test]
    fn startdelay_is_one_time_in_seconds_by_default() {
        assert_eq!(
            apply("startdelay", "2").unwrap().startdelay,
            Duration::from_secs(2)
        );
        assert_eq!(
            apply("startdelay", "250ms").unwrap().startdelay,
            Duration::from_millis(250)
        );
        assert_eq!(
            apply("startdelay", "0.5").unwrap().startdelay,
            Duration::from_millis(500)
        );
        assert!(matches!(
            apply("startdelay", "soon"),
            Err(ValueError::Time(_))
        ));
        for range in ["1-5", "1s:5s"] {
            let err = apply("startdelay", range).unwrap_err();
            assert!(
                matches!(&err, ValueError::Unsupported(m) if m.contains("ranges are not supported")),
                "{err}"
            );
        }
    }

    #[test]
    fn drop_cache_after_is_unset_unless_given() {
        assert_eq!(JobOptions::default().drop_cache_after, None);
        assert_eq!(
            apply("drop_cache_after", "2").unwrap().drop_cache_after,
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            apply("drop_cache_after", "1500ms")
                .unwrap()
                .drop_cache_after,
            Some(Duration::from_millis(1500))
        );
        assert!(apply("drop_cache_after", "").is_err());
        assert!(apply("drop_cache_after", "2x").is_err());
        assert!(
            find("drop_cache_after")
                .unwrap()
                .help
                .starts_with("hybrio:")
        );
    }

    #[test]
    fn suggestions_for_misspellings() {
        assert_eq!(suggest("iodepht"), Some("iodepth"));
        assert_eq!(suggest("blocksze"), Some("blocksize"));
        assert_eq!(suggest("zzzzzzzzzzzz"), None);
    }
}
