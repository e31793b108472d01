use super::*;
use crate::options::ZoneSize;

#[test]
fn random_offsets_stay_inside_the_file_and_aligned() {
    let size = 10 * 4096 + 1000; // a partial block at the end must never be used
    for random_map in [true, false] {
        let mut plan =
            IoPlan::new(RwMode::RandRead, 100, [4096, 4096], &[size], random_map, 7).unwrap();
        for _ in 0..10_000 {
            let io = plan.next_io();
            assert_eq!(io.offset % 4096, 0);
            assert!(io.offset + io.len <= size);
        }
    }
}

#[test]
fn random_map_covers_each_block_once_per_pass() {
    let mut plan = IoPlan::new(RwMode::RandWrite, 0, [512, 512], &[512 * 100], true, 1).unwrap();
    for _pass in 0..3 {
        let mut offsets: Vec<u64> = (0..100).map(|_| plan.next_io().offset).collect();
        offsets.sort();
        assert_eq!(offsets, (0..100).map(|b| b * 512).collect::<Vec<_>>());
    }
}

#[test]
fn sequential_wraps_and_round_robins_files() {
    let mut plan = IoPlan::new(RwMode::Write, 0, [4096, 8192], &[16384, 16384], false, 0).unwrap();
    let got: Vec<(usize, u64)> = (0..6)
        .map(|_| plan.next_io())
        .map(|io| (io.file, io.offset))
        .collect();
    assert_eq!(
        got,
        vec![(0, 0), (1, 0), (0, 8192), (1, 8192), (0, 0), (1, 0)]
    );
}

#[test]
fn restart_begins_a_new_pass_at_offset_zero() {
    let mut plan = IoPlan::new(RwMode::Read, 100, [4096, 4096], &[4096 * 8], false, 0).unwrap();
    plan.next_io();
    plan.next_io();
    plan.restart();
    assert_eq!(plan.next_io().offset, 0);
    let mut plan = IoPlan::new(RwMode::RandRead, 100, [4096, 4096], &[4096 * 8], true, 0).unwrap();
    plan.next_io();
    plan.restart();
    let mut offsets: Vec<u64> = (0..8).map(|_| plan.next_io().offset).collect();
    offsets.sort();
    assert_eq!(
        offsets,
        (0..8).map(|b| b * 4096).collect::<Vec<_>>(),
        "a full pass after restart"
    );
}

#[test]
fn mix_follows_rwmixread() {
    let mut plan =
        IoPlan::new(RwMode::RandReadWrite, 70, [4096, 4096], &[1 << 20], true, 3).unwrap();
    let reads = (0..10_000)
        .filter(|_| plan.next_io().direction == Direction::Read)
        .count();
    assert!(
        (6_700..7_300).contains(&reads),
        "{reads} reads of 10000 at rwmixread=70"
    );
}

#[test]
fn a_range_draws_multiples_of_its_smallest_size_as_fio_does() {
    let range = BlockSizing::Range {
        min: 4096,
        max: 16384,
    };
    let size = 1 << 20;
    let mut plan = IoPlan::new(
        RwMode::RandRead,
        100,
        [range.clone(), range],
        &[size],
        false,
        9,
    )
    .unwrap();
    let mut counts = [0u32; 5];
    for _ in 0..12_000 {
        let io = plan.next_io();
        assert_eq!((io.offset % 4096, io.len % 4096), (0, 0), "{io:?}");
        assert!(
            io.len >= 4096 && io.len <= 16384 && io.offset + io.len <= size,
            "{io:?}"
        );
        counts[(io.len / 4096) as usize] += 1;
    }
    // fio's draw: 4096 plus a fraction of 16384, rounded down to 4k and
    // capped at 16k: a quarter each of 4k, 8k, 12k and 16k.
    for units in 1..=4 {
        assert!((2_700..3_300).contains(&counts[units]), "{counts:?}");
    }
}

#[test]
fn a_split_gives_each_size_its_share() {
    let split = BlockSizing::Split(vec![(4096, 60), (65536, 100)]);
    let mut plan = IoPlan::new(
        RwMode::RandWrite,
        0,
        [4096.into(), split],
        &[1 << 24],
        false,
        4,
    )
    .unwrap();
    let small = (0..10_000).filter(|_| plan.next_io().len == 4096).count();
    assert!((5_700..6_300).contains(&small), "{small} of 10000 at 60%");
}

#[test]
fn sequential_sizes_follow_each_other_and_the_last_is_cut_at_the_end() {
    let split = BlockSizing::Split(vec![(4096, 50), (12288, 100)]);
    let size = 4096 * 10;
    let mut plan = IoPlan::new(RwMode::Write, 0, [4096.into(), split], &[size], false, 2).unwrap();
    let mut expected = 0;
    let mut wraps = 0;
    for _ in 0..200 {
        let io = plan.next_io();
        if io.offset == 0 && expected != 0 {
            assert_eq!(expected, size, "wrapped before the end");
            wraps += 1;
        } else {
            assert_eq!(io.offset, expected % size);
        }
        assert!(io.offset + io.len <= size, "{io:?}");
        expected = io.offset + io.len;
    }
    assert!(wraps > 5, "{wraps} passes");
}

/// Hits per block of 100,000 random reads over 1000 blocks.
fn hits(distribution: &Distribution) -> Vec<u32> {
    let mut plan = IoPlan::new(
        RwMode::RandRead,
        100,
        [4096, 4096],
        &[4096 * 1000],
        true,
        11,
    )
    .unwrap()
    .with_distributions([distribution, distribution])
    .with_distribution_seeds(&[11]);
    let mut hits = vec![0u32; 1000];
    for _ in 0..100_000 {
        hits[(plan.next_io().offset / 4096) as usize] += 1;
    }
    hits
}

/// The share of hits on the `n` most-hit blocks.
fn hottest(hits: &[u32], n: usize) -> f64 {
    let mut sorted = hits.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted[..n].iter().sum::<u32>() as f64 / hits.iter().sum::<u32>() as f64
}

#[test]
fn skewed_distributions_concentrate_their_hits() {
    let uniform = hits(&Distribution::Uniform);
    assert!(hottest(&uniform, 100) < 0.12, "{}", hottest(&uniform, 100));
    // Zipf 1.2 over 1000 blocks: the 10 hottest take about half.
    let zipf = hits(&Distribution::Zipf {
        theta: 1.2,
        center: None,
    });
    assert!(hottest(&zipf, 10) > 0.4, "{}", hottest(&zipf, 10));
    // Pareto 0.2: fio's 80/20.
    let pareto = hits(&Distribution::Pareto {
        h: 0.2,
        center: None,
    });
    assert!(hottest(&pareto, 200) > 0.7, "{}", hottest(&pareto, 200));
    // Centred: the hottest block sits at a quarter of the file.
    let centred = hits(&Distribution::Zipf {
        theta: 1.2,
        center: Some(0.25),
    });
    let top = (0..1000).max_by_key(|&b| centred[b]).unwrap();
    assert_eq!(top, 250);
    // Normal, 10% deviation: scattered by fio's hash, but a fifth of the
    // blocks take most of the hits.
    let normal = hits(&Distribution::Normal {
        deviation: 10.0,
        center: None,
    });
    assert!(hottest(&normal, 200) > 0.5, "{}", hottest(&normal, 200));
}

#[test]
fn zones_get_their_share_of_accesses() {
    let zones =
        [(60.0, 10.0), (30.0, 20.0), (8.0, 30.0), (2.0, 40.0)].map(|(access_percent, size)| {
            crate::options::Zone {
                access_percent,
                size: ZoneSize::Percent(size),
            }
        });
    let hits = hits(&Distribution::Zoned(zones.to_vec()));
    let share = |range: std::ops::Range<usize>| hits[range].iter().sum::<u32>() as f64 / 1000.0;
    for (range, percent) in [
        (0..100, 60.0),
        (100..300, 30.0),
        (300..600, 8.0),
        (600..1000, 2.0),
    ] {
        let got = share(range.clone());
        assert!(
            (got - percent).abs() < 1.5,
            "{range:?}: {got}% for {percent}%"
        );
    }
}

#[test]
fn aligned_offsets_stay_aligned_and_inside_the_file() {
    let zones = [(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)].map(|(access_percent, size)| {
        crate::options::Zone {
            access_percent,
            size: ZoneSize::Percent(size),
        }
    });
    let zoned = Distribution::Zoned(zones.to_vec());
    let split = BlockSizing::Split(vec![(512, 10), (4096, 80), (65536, 100)]);
    for distribution in [&Distribution::Uniform, &zoned] {
        let mut plan = IoPlan::new(
            RwMode::RandRead,
            100,
            [split.clone(), split.clone()],
            &[1 << 20],
            true,
            3,
        )
        .unwrap()
        .with_distributions([distribution, distribution])
        .with_block_align([4096, 4096]);
        for _ in 0..10_000 {
            let io = plan.next_io();
            assert!(io.offset.is_multiple_of(4096), "{io:?}");
            assert!(io.offset + io.len <= 1 << 20, "{io:?}");
            assert!(io.len >= 512 && io.len.is_multiple_of(512), "{io:?}");
        }
    }
}

#[test]
fn same_seed_same_sequence() {
    let run = |seed| {
        let mut plan =
            IoPlan::new(RwMode::RandRead, 100, [4096, 4096], &[1 << 24], true, seed).unwrap();
        (0..100).map(|_| plan.next_io().offset).collect::<Vec<_>>()
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5), run(6));
}
