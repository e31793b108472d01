//! What a fault plan says, and what was injected: the plan parsed and
//! shown, and the counts. Apart from the hook that injects them so that
//! the engines' configuration and counters (`engine/api.rs`) can carry
//! them without what the hook builds on.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The seed of a plan that names none.
pub const DEFAULT_SEED: u64 = 0x6879_6272_696f;

/// Which faults to inject, each with its probability per request.
///
/// Built by parsing ([`str::parse`], see its [`FromStr`] implementation for
/// the form) and shown ([`Display`](fmt::Display)) in the same form. A plan built by hand with
/// probabilities outside `[0, 1]` or adding up to more than 1 is not refused
/// by the engines that inject it: the probabilities are clamped, in the order `eio`,
/// `eagain`, `short`, `delay`, to what is left of 1.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    /// Probability that a request fails with `EIO` without being performed.
    pub eio: f64,
    /// Probability that a read or write moves half its window and comes back short.
    pub short: f64,
    /// Probability that a request fails with `EAGAIN` without being performed.
    pub eagain: f64,
    /// Probability that a request's completion is delivered [`delay_by`](Self::delay_by) late.
    pub delay: f64,
    /// How much later a delayed completion is delivered.
    pub delay_by: Duration,
    /// Probability that a read comes back with one bit of its data flipped.
    pub corrupt: f64,
    /// Seed of the draws: the same seed gives the same faults.
    pub seed: u64,
}

impl Default for FaultPlan {
    /// No faults.
    fn default() -> Self {
        FaultPlan {
            eio: 0.0,
            short: 0.0,
            eagain: 0.0,
            delay: 0.0,
            delay_by: Duration::ZERO,
            corrupt: 0.0,
            seed: DEFAULT_SEED,
        }
    }
}

/// Why a fault plan was refused: the part at fault and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad fault plan `{part}`: {reason}")]
pub struct FaultPlanError {
    /// The entry at fault, or the whole plan when its entries do not add up.
    pub part: String,
    /// What is wrong with it.
    pub reason: String,
}

impl FaultPlanError {
    fn new(part: &str, reason: impl Into<String>) -> Self {
        FaultPlanError {
            part: part.to_owned(),
            reason: reason.into(),
        }
    }
}

/// A probability: a number from 0 to 1.
fn parse_probability(entry: &str, text: &str) -> Result<f64, FaultPlanError> {
    match text.trim().parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        Ok(p) => Err(FaultPlanError::new(
            entry,
            format!("probability {p} is not between 0 and 1"),
        )),
        Err(_) => Err(FaultPlanError::new(
            entry,
            format!(
                "`{}` is not a probability (a number from 0 to 1)",
                text.trim()
            ),
        )),
    }
}

/// A duration with its unit: `250us`, `5ms`, `1.5s` (also `ns`).
fn parse_duration(entry: &str, text: &str) -> Result<Duration, FaultPlanError> {
    let text = text.trim();
    let bad = |why: &str| FaultPlanError::new(entry, format!("`{text}` is not a duration: {why}"));
    let (number, ns_per_unit) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .into_iter()
        .find_map(|(unit, scale)| text.strip_suffix(unit).map(|n| (n, scale)))
        .ok_or_else(|| bad("give a unit, us, ms or s (e.g. 5ms)"))?;
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| bad("expected a number and a unit, e.g. 5ms"))?;
    let ns = (value * ns_per_unit).round();
    if !(0.0..=u64::MAX as f64).contains(&ns) {
        return Err(bad("out of range"));
    }
    Ok(Duration::from_nanos(ns as u64))
}

impl FromStr for FaultPlan {
    type Err = FaultPlanError;

    /// Parses `fault:probability` entries separated by commas: `eio`,
    /// `short`, `eagain`, and `delay:P@D` with a duration (`us`, `ms`, `s`),
    /// plus `seed:N`. Each at most once; the probabilities add up to at most
    /// 1. `none` is the plan without faults.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut plan = FaultPlan::default();
        let text = s.trim();
        if text == "none" {
            return Ok(plan);
        }
        if text.is_empty() {
            return Err(FaultPlanError::new(
                s,
                "empty: give e.g. eio:0.001,short:0.01,eagain:0.01,delay:0.001@5ms, or none",
            ));
        }
        let mut seen: Vec<&str> = Vec::new();
        for entry in text.split(',').map(str::trim) {
            let Some((fault, value)) = entry.split_once(':') else {
                return Err(FaultPlanError::new(
                    entry,
                    "expected fault:probability, e.g. eio:0.001",
                ));
            };
            let fault = fault.trim();
            if seen.contains(&fault) {
                return Err(FaultPlanError::new(
                    entry,
                    format!("{fault} is given twice"),
                ));
            }
            match fault {
                "eio" => plan.eio = parse_probability(entry, value)?,
                "short" => plan.short = parse_probability(entry, value)?,
                "eagain" => plan.eagain = parse_probability(entry, value)?,
                "corrupt" => plan.corrupt = parse_probability(entry, value)?,
                "delay" => {
                    let Some((p, d)) = value.split_once('@') else {
                        return Err(FaultPlanError::new(
                            entry,
                            "delay needs a duration: delay:P@D, e.g. delay:0.001@5ms",
                        ));
                    };
                    plan.delay = parse_probability(entry, p)?;
                    plan.delay_by = parse_duration(entry, d)?;
                }
                "seed" => {
                    plan.seed = value.trim().parse().map_err(|_| {
                        FaultPlanError::new(
                            entry,
                            format!("`{}` is not a seed (a whole number)", value.trim()),
                        )
                    })?;
                }
                _ => {
                    return Err(FaultPlanError::new(
                        entry,
                        format!(
                            "unknown fault `{fault}` (expected eio, short, eagain, delay, corrupt or seed)"
                        ),
                    ));
                }
            }
            seen.push(fault);
        }
        let sum = plan.eio + plan.short + plan.eagain + plan.delay + plan.corrupt;
        // Slack for decimal fractions that add up to exactly 1 on paper.
        if sum > 1.0 + 1e-9 {
            return Err(FaultPlanError::new(
                s,
                format!("the probabilities add up to {sum}, more than 1"),
            ));
        }
        Ok(plan)
    }
}

/// A duration in the largest unit that shows it whole.
fn fmt_duration(d: Duration, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let ns = d.as_nanos();
    match ns {
        0 => f.write_str("0ms"),
        _ if ns.is_multiple_of(1_000_000_000) => write!(f, "{}s", ns / 1_000_000_000),
        _ if ns.is_multiple_of(1_000_000) => write!(f, "{}ms", ns / 1_000_000),
        _ if ns.is_multiple_of(1_000) => write!(f, "{}us", ns / 1_000),
        _ => write!(f, "{ns}ns"),
    }
}

impl fmt::Display for FaultPlan {
    /// The form [`FromStr`] reads, faults with probability 0 left out (`none`
    /// when all are).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut sep = |f: &mut fmt::Formatter<'_>| {
            let s = if first { "" } else { "," };
            first = false;
            f.write_str(s)
        };
        for (name, p) in [
            ("eio", self.eio),
            ("short", self.short),
            ("eagain", self.eagain),
        ] {
            if p != 0.0 {
                sep(f)?;
                write!(f, "{name}:{p}")?;
            }
        }
        if self.delay != 0.0 || !self.delay_by.is_zero() {
            sep(f)?;
            write!(f, "delay:{}@", self.delay)?;
            fmt_duration(self.delay_by, f)?;
        }
        if self.corrupt != 0.0 {
            sep(f)?;
            write!(f, "corrupt:{}", self.corrupt)?;
        }
        if self.seed != DEFAULT_SEED {
            sep(f)?;
            write!(f, "seed:{}", self.seed)?;
        }
        if first {
            f.write_str("none")?;
        }
        Ok(())
    }
}

/// Faults injected so far, by kind.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct InjectedCounts {
    /// Requests failed with `EIO` without being performed.
    pub eio: u64,
    /// Reads and writes performed with half their window.
    pub short: u64,
    /// Requests failed with `EAGAIN` without being performed.
    pub eagain: u64,
    /// Completions delivered late.
    pub delay: u64,
    /// Reads that came back with a bit flipped.
    pub corrupt: u64,
}

impl std::ops::Add for InjectedCounts {
    type Output = InjectedCounts;

    fn add(self, other: InjectedCounts) -> InjectedCounts {
        InjectedCounts {
            eio: self.eio + other.eio,
            short: self.short + other.short,
            eagain: self.eagain + other.eagain,
            delay: self.delay + other.delay,
            corrupt: self.corrupt + other.corrupt,
        }
    }
}
