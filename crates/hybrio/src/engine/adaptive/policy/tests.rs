use super::class::*;
use super::window::{EARLY_FIRST_SAMPLES, EARLY_SAMPLES, Tally, Window};
use crate::engine::adaptive::path::Path;
use crate::engine::adaptive::priors::Prior;

/// Feeds `n` inline requests costing `ns` each, one every `ns`.
fn inline_requests(policy: &mut ClassPolicy, now: &mut u64, n: usize, ns: u64) -> usize {
    let mut asynchronous = 0;
    for _ in 0..n {
        let route = policy.route(*now, Tally::reaped(asynchronous), true);
        match route.path {
            Path::Inline => {
                let start = *now;
                *now += ns;
                policy.record(
                    Path::Inline,
                    route.epoch,
                    start,
                    ns,
                    *now,
                    Tally::reaped(asynchronous),
                );
            }
            Path::Async => {
                // One at a time, taking 3 ns.
                asynchronous += 1;
                let start = *now;
                *now += 3 * ns;
                policy.record(
                    Path::Async,
                    route.epoch,
                    start,
                    3 * ns,
                    *now,
                    Tally::reaped(asynchronous),
                );
            }
        }
    }
    asynchronous as usize
}

#[test]
fn a_new_class_prices_both_paths_then_keeps_the_cheaper() {
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    let mut now = 0;
    // At depth 1 the first exploration waits until the class has lived
    // 50 times its least cost (4 samples at a handoff's 30 us: 6 ms);
    // then an epoch of 32 asynchronous requests ends once its first 8
    // samples (after the one left out) price that path 3 times dearer;
    // they were the engine's first asynchronous completions (cold), so
    // a second epoch looks again soon.
    let explored = inline_requests(&mut policy, &mut now, 5_900, 1000);
    assert_eq!(explored, 0, "no exploration in the first 6 ms");
    let explored = inline_requests(&mut policy, &mut now, 300, 1000);
    assert_eq!(
        explored,
        2 * (1 + EARLY_SAMPLES as usize),
        "two short epochs"
    );
    inline_requests(&mut policy, &mut now, 1000, 1000);
    assert_eq!(policy.chosen(), Path::Inline);
    let [inline, asynchronous] = policy.costs();
    assert_eq!(inline, Some(1000.0));
    assert_eq!(asynchronous, Some(3000.0));
}

#[test]
fn preempted_requests_do_not_move_the_choice() {
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    let (mut now, mut reaped) = (0u64, 0u64);
    let mut switches = 0;
    for i in 0..1_000_000u64 {
        let route = policy.route(now, Tally::reaped(reaped), true);
        switches += u64::from(route.switched);
        let start = now;
        match route.path {
            Path::Inline => {
                // 1 us, but one request in 150 is preempted for 200 us.
                now += if i % 150 == 0 { 200_000 } else { 1_000 };
                policy.record(
                    Path::Inline,
                    route.epoch,
                    start,
                    now - start,
                    now,
                    Tally::reaped(reaped),
                );
            }
            Path::Async => {
                now += 1_300;
                reaped += 1;
                policy.record(
                    Path::Async,
                    route.epoch,
                    start,
                    1_300,
                    now,
                    Tally::reaped(reaped),
                );
            }
        }
    }
    assert_eq!(policy.chosen(), Path::Inline);
    assert_eq!(switches, 0, "costs {:?}", policy.costs());
}

#[test]
fn explorations_stay_rare() {
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    let mut now = 0;
    // Two million requests of 1 us: two seconds of requests.
    let explored = inline_requests(&mut policy, &mut now, 2_000_000, 1000);
    let share = explored as f64 / 2e6;
    assert!(share < 0.005, "{explored} of two million requests explored");
    // The other path costs 3 times as much, so each epoch ends after
    // 9 requests (one left out, 8 samples) costing 18 us beyond inline.
    // While the class learns, explorations come back after 8, 16, ...,
    // 256 epoch lengths, each once 50 times its cost (0.9 ms) has
    // passed: at about 0.06, 0.96, 1.9, 2.9, 4.9, 9.0 and 17 ms. Then the
    // regular ones, every 400 ms (the other path stayed far dearer): at
    // 0.42, 0.82, 1.22 and 1.62 s.
    assert_eq!(explored, 9 * (7 + 4));
}

/// Sends `n` requests through a fresh policy of depth 1, one at a time,
/// the `i`th costing `ns(i, path)`; returns (requests explored, switches).
fn drive(policy: &mut ClassPolicy, n: u64, ns: impl Fn(u64, Path) -> u64) -> (u64, u64) {
    let (mut now, mut reaped, mut explored, mut switches) = (0u64, 0u64, 0, 0);
    for i in 0..n {
        let route = step(policy, &mut now, &mut reaped, |route| ns(i, route.path));
        explored += u64::from(route.epoch != 0);
        switches += u64::from(route.switched);
    }
    (explored, switches)
}

/// One request of [`drive`]: routed at `now`, costing what `ns` says
/// for its route, recorded at its end.
fn step(
    policy: &mut ClassPolicy,
    now: &mut u64,
    reaped: &mut u64,
    ns: impl FnOnce(Route) -> u64,
) -> Route {
    let route = policy.route(*now, Tally::reaped(*reaped), true);
    let start = *now;
    let cost = ns(route);
    *now += cost;
    *reaped += u64::from(route.path == Path::Async);
    policy.record(
        route.path,
        route.epoch,
        start,
        cost,
        *now,
        Tally::reaped(*reaped),
    );
    route
}

#[test]
fn a_prior_is_refuted_by_the_first_window_far_from_it() {
    let prior = |inline| Prior {
        chosen: Path::Inline,
        cost: [inline, 3_000.0],
        typical: [inline, 3_000.0],
        explorations: 1,
    };
    let mut found = Vec::new();
    for saved in [1_000.0, 10_000.0] {
        let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
        policy.start_from(&prior(saved));
        // Requests of 1 us: the first window (every one timed) closes
        // after 200 of them.
        let (_, switches) = drive(&mut policy, 300, |_, path| match path {
            Path::Inline => 1_000,
            Path::Async => 3_000,
        });
        assert_eq!(switches, 0, "prior {saved}");
        found.push(policy.take_refuted());
        assert!(!policy.take_refuted(), "told once");
    }
    assert_eq!(found, [false, true], "a price 10 times off is refuted");
}

#[test]
fn a_preempted_request_among_the_first_does_not_set_the_first_price() {
    // Page-cache hits of 1 us, the third preempted for 200 us: the first
    // window closes after 8, and would price them at
    // 26 us each; capped at four times their median, at 1.4 us.
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    drive(&mut policy, 8, |i, path| match (i, path) {
        (2, _) => 200_000,
        (_, Path::Inline) => 1_000,
        (_, Path::Async) => 3_000,
    });
    let [inline, _] = policy.costs();
    assert_eq!(inline, Some((7.0 * 1_000.0 + 4.0 * 1_000.0) / 8.0));
}

#[test]
fn explorations_come_every_100_ms_while_the_other_path_is_close() {
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    // Inline 1 us, asynchronous 1.2 us: close, but not worth a switch.
    let (explored, _) = drive(&mut policy, 1_000_000, |_, path| match path {
        Path::Inline => 1_000,
        Path::Async => 1_200,
    });
    assert_eq!(policy.chosen(), Path::Inline);
    assert!(
        explored >= 32 * 9,
        "explored only {explored}: not every 100 ms"
    );
}

#[test]
fn a_path_cheaper_by_less_than_the_chosen_one_varies_wins_on_repeated_evidence() {
    // Epochs pricing the other path 20% below the chosen one, whose own
    // windows vary by 25% or more (a copy's reads inline beside its
    // writes on a kernel worker): no two in a row clear the margin, and
    // with only that rule the class kept the dearer path for good.
    let weigh_all = |ratios: &[f64]| {
        let mut policy = ClassPolicy::new(4, SLOW_INLINE_NS);
        ratios
            .iter()
            .map(|&ratio| policy.weigh(ratio, MAX_MARGIN))
            .collect::<Vec<_>>()
    };
    let weighed = weigh_all(&[0.82, 0.78, 0.80, 0.81, 0.79, 0.80]);
    assert!(
        weighed[..5].iter().all(|&(leaning, _)| leaning),
        "{weighed:?}"
    );
    assert_eq!(
        weighed.iter().position(|&(_, proven)| proven),
        Some(4),
        "the fifth"
    );
    // A path 10% cheaper is not proven by a margin of 25%, and after
    // eight epochs it is no longer hurried along.
    let weighed = weigh_all(&[0.9; 12]);
    assert!(weighed.iter().all(|&(_, proven)| !proven), "{weighed:?}");
    assert!(!weighed[7].0, "hurried for at most eight epochs");
    // One far cheaper epoch is no proof, nor is it with a dearer one.
    let weighed = weigh_all(&[0.5, 1.3]);
    assert_eq!(weighed, [(true, false), (true, false)]);
}

#[test]
fn a_switch_prices_the_new_path_by_its_own_first_window() {
    // Asynchronous costs 1 us while the first epoch prices it, 2 us from
    // then on (the classes beside it changed); inline 3 us. The epoch's
    // price brings the switch; the path's first window replaces it
    // rather than averaging with it, every request of that window timed.
    let mut policy = ClassPolicy::new(4, SLOW_INLINE_NS);
    let (mut now, mut reaped, mut switched_at) = (0u64, 0u64, None);
    for i in 0..400u64 {
        let route = step(&mut policy, &mut now, &mut reaped, |route| {
            match (route.path, route.epoch) {
                (Path::Inline, _) => 3_000,
                (Path::Async, 0) => 2_000,
                (Path::Async, _) => 1_000,
            }
        });
        if route.switched {
            switched_at = Some(i);
            assert!(
                policy.times_every_request(),
                "the first window is timed whole"
            );
        }
    }
    assert!(switched_at.is_some(), "switched to asynchronous");
    assert_eq!(policy.chosen(), Path::Async);
    assert_eq!(policy.costs()[Path::Async.index()], Some(2_000.0));
}

#[test]
fn a_chosen_path_that_varies_needs_a_wider_margin() {
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    // Inline alternates between windows of 0.8 and 1.2 us (a writeback
    // flush coming and going); asynchronous is a steady 0.92 us, 8% below
    // the inline mean: within the inline path's own variation, so no
    // evidence for a switch.
    let (_, switches) = drive(&mut policy, 2_000_000, |i, path| match path {
        Path::Inline if (i / 4096) % 2 == 0 => 800,
        Path::Inline => 1_200,
        Path::Async => 920,
    });
    // (The first look, after 4 ms at depth 1, may come in a slow phase
    // before the inline path's range is known, and switch there and back
    // once: what the margin prevents is a switch at each of the 244
    // swings.)
    assert!(
        switches <= 2,
        "{switches} switches, costs {:?}",
        policy.costs()
    );
}

#[test]
fn a_path_swinging_between_known_levels_is_not_explored_at_each_swing() {
    // Inline swings between 1.1 and 2.7 us every 30,000 requests (ext4
    // buffered writes as writeback comes and goes: a drift each time, 34
    // of them); asynchronous costs 10 us. After the first swing each way
    // only the regular explorations remain (calm: every 400 ms).
    let swinging = |i: u64, path| match path {
        Path::Inline if (i / 30_000).is_multiple_of(2) => 1_100,
        Path::Inline => 2_700,
        Path::Async => 10_000,
    };
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    let (explored, switches) = drive(&mut policy, 1_000_000, swinging);
    assert_eq!(switches, 0);
    assert!(
        explored <= 32 * 10,
        "{} explorations in 1.9 s: one per swing",
        explored / 32
    );
    // A level never held (a cache dropped: 50 us) is explored at once:
    // the class goes asynchronous within 2,000 requests (100 ms), long
    // before a regular exploration would be due (16,000 requests).
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    let (_, switches) = drive(&mut policy, 1_002_000, |i, path| match (i, path) {
        (1_000_000.., Path::Inline) => 50_000,
        _ => swinging(i, path),
    });
    assert_eq!(switches, 1, "costs {:?}", policy.costs());
    assert_eq!(policy.chosen(), Path::Async);
}

#[test]
fn requests_between_explorations_go_straight_through() {
    // As the engine does: one request in 8 is timed and routed; the
    // others go straight inline when the class says it is settled.
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    let (mut now, mut reaped, mut straight) = (0u64, 0u64, 0u64);
    let n = 2_000_000u64;
    for i in 0..n {
        if i % 8 != 0 && matches!(policy.straight_allowance(), (Path::Inline, 1..)) {
            policy.went_straight(1);
            straight += 1;
            now += 1_000;
            continue;
        }
        let route = policy.route(now, Tally::reaped(reaped), true);
        let start = now;
        let ns = if route.path == Path::Inline {
            1_000
        } else {
            3_000
        };
        now += ns;
        reaped += u64::from(route.path == Path::Async);
        policy.record(
            route.path,
            route.epoch,
            start,
            ns,
            now,
            Tally::reaped(reaped),
        );
    }
    // 7 in 8 could; explorations (every 400 ms) and clock checks (every
    // 64 requests) take a few of those.
    let share = straight as f64 / n as f64;
    assert!(
        share > 0.85,
        "only {:.1}% went straight through",
        share * 100.0
    );
}

#[test]
fn the_asynchronous_throughput_prices_a_request() {
    // Four requests out at a time, each 100 ns, 8 reaped in 200 ns: a
    // request takes 25 ns of the caller's, whatever its latency.
    let mut window = Window::open(1_000, Tally::reaped(10));
    for _ in 0..8 {
        window.add(1_000, 100, f64::INFINITY);
    }
    assert_eq!(
        window.cost(Path::Async, 1_200, Tally::reaped(18)),
        Some(25.0)
    );
    assert_eq!(
        window.cost(Path::Inline, 1_200, Tally::reaped(18)),
        Some(100.0)
    );
    assert_eq!(
        window.cost(Path::Async, 1_200, Tally::reaped(10)),
        None,
        "none reaped"
    );
    // The caller's time in other classes' inline requests meanwhile is
    // theirs: 120 of the 200 ns leave 80 for the 8 completions...
    let with_inline = |inline_ns| Tally {
        reaped: 18,
        inline_ns,
    };
    assert_eq!(
        window.cost(Path::Async, 1_200, with_inline(120)),
        Some(10.0)
    );
    // ...and however much their prices say, a sixteenth of the span stays
    // (12 ns).
    assert_eq!(window.cost(Path::Async, 1_200, with_inline(500)), Some(1.5));
    assert_eq!(
        window.cost(Path::Inline, 1_200, with_inline(500)),
        Some(100.0)
    );
    // Requests started before the window opened are left out of the
    // samples, which set the path's typical latency.
    let mut window = Window::open(50, Tally::default());
    window.add(10, 1_000, f64::INFINITY);
    window.add(60, 100, f64::INFINITY);
    assert_eq!(window.mean(), Some(100.0));
}

#[test]
fn a_cold_epoch_far_dearer_is_looked_at_again_only_within_the_learning_budget() {
    // 8 KiB buffered writes at depth 1: 3.5 us inline, 80 us through a
    // kernel worker being made. The first look comes after 6 ms and ends
    // after its first samples (4 requests, 0.3 ms dearer); a second at once
    // would double that in a job of 2,400 such writes (8.4 ms). It waits
    // until the class has lived 50 times what the two would cost.
    let writes = |_, path| match path {
        Path::Inline => 3_500,
        Path::Async => 80_000,
    };
    let first = 1 + u64::from(EARLY_FIRST_SAMPLES);
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    assert_eq!(drive(&mut policy, 2_400, writes), (first, 0));
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    assert_eq!(drive(&mut policy, 8_000, writes), (first, 0));
    // 10,000 writes (35 ms) look again.
    let mut policy = ClassPolicy::new(1, SLOW_INLINE_NS);
    let (explored, _) = drive(&mut policy, 10_000, writes);
    assert!(explored > first, "looked again once affordable");
}

/// Requests of a class started asynchronous at depth 16 on a device that
/// serves each in `latency_ns`, 16 at a time (inline, one takes as long);
/// returns how many went inline.
fn device_at_depth_16(policy: &mut ClassPolicy, n: usize, latency_ns: u64) -> usize {
    let (mut now, mut reaped, mut inline) = (0u64, 0u64, 0);
    let mut in_flight = std::collections::VecDeque::new();
    for _ in 0..n {
        if in_flight.len() == 16
            && let Some((start, epoch)) = in_flight.pop_front()
        {
            now = now.max(start + latency_ns);
            reaped += 1;
            policy.record(
                Path::Async,
                epoch,
                start,
                now - start,
                now,
                Tally::reaped(reaped),
            );
        }
        let route = policy.route(now, Tally::reaped(reaped), true);
        match route.path {
            Path::Inline => {
                inline += 1;
                let start = now;
                now += latency_ns;
                policy.record(
                    Path::Inline,
                    route.epoch,
                    start,
                    latency_ns,
                    now,
                    Tally::reaped(reaped),
                );
            }
            Path::Async => in_flight.push_back((now, route.epoch)),
        }
    }
    inline
}

#[test]
fn an_asynchronous_start_at_depth_looks_at_inline_once_it_can_afford_it() {
    // O_DIRECT reads at depth 16 of 160 us, one done every 10 us: an inline
    // one holds the caller for up to 160 us, so the first look waits until
    // the class has lived 50 times four of them (32 ms). A job of 500 such
    // reads (5 ms) never pays it; a longer one looks.
    let mut policy = ClassPolicy::new(16, SLOW_INLINE_NS);
    policy.start_on(Path::Async);
    assert_eq!(device_at_depth_16(&mut policy, 500, 160_000), 0);
    assert!(device_at_depth_16(&mut policy, 4_000, 160_000) > 0);
    assert_eq!(policy.chosen(), Path::Async);
}

#[test]
fn a_cold_epoch_that_came_out_close_is_looked_at_again_soon() {
    // A copy's writes at depth 4: 40 us inline; through a kernel worker 47
    // us while it starts (the first epoch), 15 us from then on. The cold
    // epoch's 0.2 ms does not hold the next look back for 11 ms, and the
    // next is the first comparison: far cheaper, it decides alone.
    let mut policy = ClassPolicy::new(4, SLOW_INLINE_NS);
    drive(&mut policy, 250, |i, path| match path {
        Path::Inline => 40_000,
        Path::Async if i < 60 => 47_000,
        Path::Async => 15_000,
    });
    assert_eq!(policy.chosen(), Path::Async);
}

/// Like [`drive`], but as the engine asks the policy: a request it may send
/// straight along the choice (one of up to 127 between timed ones) is
/// neither routed nor recorded; returns the switches.
fn drive_as_engine(policy: &mut ClassPolicy, n: u64, ns: impl Fn(u64, Path) -> u64) -> u64 {
    let (mut now, mut reaped, mut switches, mut i) = (0u64, 0u64, 0, 0);
    while i < n {
        let (path, allowed) = policy.straight_allowance();
        let straight = u64::from(allowed.min(127)).min(n - i);
        if straight > 0 {
            for _ in 0..straight {
                now += ns(i, path);
                reaped += u64::from(path == Path::Async);
                i += 1;
            }
            policy.went_straight(straight as u32);
            continue;
        }
        switches +=
            u64::from(step(policy, &mut now, &mut reaped, |route| ns(i, route.path)).switched);
        i += 1;
    }
    switches
}

#[test]
fn a_first_window_dearer_than_the_path_is_replaced_soon_and_whole() {
    // 4 KiB page-cache hits at depth 32 on tmpfs: the class's first eight
    // took 2.4-4.8 us (everything beneath them cold; 8 below), the rest 1.3-1.6;
    // through io_uring's kernel workers 2.2 us. Timed one in 128, the next
    // window took 4-8 ms to come, and epochs against the first window's
    // price (or the mean of it and the next) found io_uring cheaper; a look
    // back at inline from there (draining 32 requests on workers) could
    // price inline too dear to come back: a job ran at 0.7 of psync's speed.
    for (depth, first) in [(32, 3_000), (32, 8_000), (1, 8_000)] {
        let mut policy = ClassPolicy::new(depth, SLOW_INLINE_NS);
        let switches = drive_as_engine(&mut policy, 50_000, |i, path| match path {
            Path::Inline if i < 8 => first,
            Path::Inline => 1_400,
            Path::Async => 2_200,
        });
        assert_eq!(
            (policy.chosen(), switches),
            (Path::Inline, 0),
            "depth {depth}, first {first}"
        );
    }
    // A far cheaper path still wins on the first window: a device read
    // inline against io_uring at depth.
    let mut policy = ClassPolicy::new(32, SLOW_INLINE_NS);
    drive_as_engine(&mut policy, 2_000, |i, path| match path {
        Path::Inline if i < 8 => 90_000,
        Path::Inline => 70_000,
        Path::Async => 10_000,
    });
    assert_eq!(policy.chosen(), Path::Async);
}
