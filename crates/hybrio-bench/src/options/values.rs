//! Readers of option values with more to them than a number or a word:
//! per-direction lists, block sizes, ranges and splits, distributions,
//! rates, times and percentiles, with fio's rules and its words.

use std::time::Duration;

use super::job::{BlockSizes, BlockSplit, Distribution, RwMode, Zone, ZoneSize};
use crate::units::{self, ValueError};

pub(super) fn size(v: &str, kb_base: u32) -> Result<u64, ValueError> {
    units::parse_size_in(v, kb_base)
}

pub(super) fn nonzero_u32(v: &str) -> Result<u32, ValueError> {
    match units::parse_u32(v)? {
        0 => Err(ValueError::Range(v.to_string())),
        n => Ok(n),
    }
}

pub(super) fn seconds(v: &str) -> Result<Duration, ValueError> {
    units::parse_time(v, Duration::from_secs(1))
}

/// fio's `startdelay` is an irange: `1-5` (or `1:5`) gives each clone a random
/// delay in that range. hybrio takes one time, and says so rather than guessing.
pub(super) fn start_delay(v: &str) -> Result<Duration, ValueError> {
    if v.contains('-') || v.contains(':') {
        return Err(ValueError::Unsupported(format!(
            "'{v}': startdelay ranges are not supported by hybrio; give one time, e.g. startdelay=2s"
        )));
    }
    seconds(v)
}

/// Splits a per-direction value (`reads,writes,trims`) into three fields: one
/// field serves all directions; with two, trims take the writes' field; an
/// empty field keeps the value of the field before it (or the default).
pub(super) fn per_direction(v: &str) -> Result<[Option<&str>; 3], ValueError> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(ValueError::Range(v.to_string()));
    }
    let mut fields = [None; 3];
    let mut last = None;
    for (i, field) in fields.iter_mut().enumerate() {
        let part = parts.get(i).copied().filter(|p| !p.is_empty());
        *field = part.or(last);
        if part.is_some() {
            last = part;
        }
    }
    Ok(fields)
}

/// A block size: more than 0, at most 4 GiB - 1 (fio's limit).
pub(super) fn block_size(v: &str, whole: &str, kb_base: u32) -> Result<u64, ValueError> {
    let value = size(v, kb_base)?;
    if value == 0 || value > u32::MAX as u64 {
        return Err(ValueError::Range(whole.to_string()));
    }
    Ok(value)
}

/// `bs`: one size per direction. fio 3.33 reads `bs=4k-16k` (and `4k:16k`)
/// as `bs=4k,16k`, reads 4k and writes 16k, where the writer most likely
/// meant a range: hybrio refuses it and says which to write.
pub(super) fn block_sizes(v: &str, kb_base: u32) -> Result<BlockSizes, ValueError> {
    if v.contains(['-', ':']) {
        // With commas too, fio's reading is stranger still (4k:16k,8k:32k
        // reads 4k, writes 8k, trims 32k): it is not spelt out.
        if v.contains(',') {
            return Err(ValueError::Invalid(format!(
                "'{v}' is not a range here: fio reads bs as one size per direction; \
                 write bsrange={v} for sizes drawn from ranges"
            )));
        }
        let both = v.replace([':', '-'], ",");
        return Err(ValueError::Invalid(format!(
            "'{v}' is not a range here: fio reads it as bs={both} (a size per direction); \
             write bsrange={v} for sizes drawn from a range, or bs={both}"
        )));
    }
    let mut sizes = [4096u64; 3];
    for (dir, field) in per_direction(v)?.into_iter().enumerate() {
        if let Some(field) = field {
            sizes[dir] = block_size(field, v, kb_base)?;
        }
    }
    Ok(sizes)
}

/// `bsrange`: per direction, `min-max` (or `min:max`, either order). fio
/// refuses a lone size, and ignores one in a list (`4k-16k,8k` leaves writes
/// at 4k): both are refused here.
pub(super) fn block_ranges(
    v: &str,
    kb_base: u32,
) -> Result<(BlockSizes, Option<BlockSizes>), ValueError> {
    let mut min = [4096u64; 3];
    let mut max = [4096u64; 3];
    for (dir, field) in per_direction(v)?.into_iter().enumerate() {
        let Some(field) = field else { continue };
        let (low, high) = match field.split_once(['-', ':']) {
            Some((low, high)) => (
                block_size(low.trim(), v, kb_base)?,
                block_size(high.trim(), v, kb_base)?,
            ),
            None => {
                return Err(ValueError::Invalid(format!(
                    "'{v}': '{field}' is not a range min-max (for one size, use bs)"
                )));
            }
        };
        (min[dir], max[dir]) = (low.min(high), low.max(high));
    }
    Ok((min, (min != max).then_some(max)))
}

/// `bssplit`: per direction, `size/percent` entries separated by `:`. As in
/// fio, entries without a percent share what the others leave of 100
/// equally, and shares that do not add up to 100 are taken in order: past
/// 100 the later sizes lose their share, short of it the last size takes
/// the rest.
pub(super) fn block_splits(v: &str, kb_base: u32) -> Result<[Vec<BlockSplit>; 3], ValueError> {
    let mut splits: [Vec<BlockSplit>; 3] = Default::default();
    for (dir, field) in per_direction(v)?.into_iter().enumerate() {
        let Some(field) = field else { continue };
        let mut entries = Vec::new();
        let mut missing = 0u32;
        let mut total = 0u32;
        for entry in field.split(':').map(str::trim) {
            let (size_text, percent) = match entry.split_once('/') {
                Some((size_text, "")) => (size_text, None),
                Some((size_text, percent)) => (size_text, Some(units::parse_u32(percent.trim())?)),
                None => (entry, None),
            };
            let size = block_size(size_text.trim(), v, kb_base)?;
            match percent {
                Some(p) if p > 100 => return Err(ValueError::Range(v.to_string())),
                Some(p) => total += p,
                None => missing += 1,
            }
            entries.push((size, percent));
        }
        if total > 100 && missing > 0 {
            return Err(ValueError::Invalid(format!(
                "'{v}': the percentages add up to {total}, leaving nothing for the sizes without one"
            )));
        }
        let share = (100u32.saturating_sub(total))
            .checked_div(missing)
            .unwrap_or(0);
        for (size, percent) in entries {
            splits[dir].push(BlockSplit {
                size,
                percent: percent.unwrap_or(share),
            });
        }
    }
    Ok(splits)
}

/// `rate`, `rate_iops`: a limit per direction. One value limits each
/// direction; in a list an empty field, or 0, is no limit (`rate=,500k` caps
/// writes only), and trims follow writes unless given.
pub(super) fn rates(
    v: &str,
    read: impl Fn(&str) -> Result<u64, ValueError>,
) -> Result<[Option<u64>; 3], ValueError> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(ValueError::Range(v.to_string()));
    }
    let mut limits = [None; 3];
    for (dir, limit) in limits.iter_mut().enumerate() {
        let field = match (parts.len(), dir) {
            (1, _) => parts[0],
            (2, 2) => parts[1],
            _ => parts[dir],
        };
        if !field.is_empty() {
            *limit = Some(read(field)?).filter(|&l| l > 0);
        }
    }
    Ok(limits)
}

/// `random_distribution`: a model per direction (`reads,writes,trims`).
pub(super) fn distributions(v: &str, kb_base: u32) -> Result<[Distribution; 3], ValueError> {
    let mut models: [Distribution; 3] = Default::default();
    for (dir, field) in per_direction(v)?.into_iter().enumerate() {
        if let Some(field) = field {
            models[dir] = distribution(field, v, kb_base)?;
        }
    }
    Ok(models)
}

pub(super) fn distribution(
    field: &str,
    whole: &str,
    kb_base: u32,
) -> Result<Distribution, ValueError> {
    let invalid = |why: &str| ValueError::Invalid(format!("'{whole}': {why}"));
    let number = |text: &str| -> Result<f64, ValueError> {
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| invalid(&format!("'{text}' is not a number")))
    };
    let (model, rest) = field.split_once([':', '=']).unwrap_or((field, ""));
    let params: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(':').collect()
    };
    let center = |i: usize| -> Result<Option<f64>, ValueError> {
        match params.get(i) {
            None => Ok(None),
            Some(text) => match number(text)? {
                c if (0.0..=1.0).contains(&c) => Ok(Some(c)),
                _ => Err(invalid("the center must lie in 0..1")),
            },
        }
    };
    let first = || -> Result<f64, ValueError> {
        params
            .first()
            .ok_or_else(|| invalid(&format!("{model} needs a value, e.g. {model}:0.8")))
            .and_then(|t| number(t))
    };
    let one_center_at_most = || {
        if params.len() > 2 {
            Err(invalid(&format!(
                "{model} takes a value and an optional center"
            )))
        } else {
            Ok(())
        }
    };
    match model {
        "random" if params.is_empty() => Ok(Distribution::Uniform),
        "zipf" => {
            one_center_at_most()?;
            let theta = first()?;
            if theta <= 0.0 || theta == 1.0 {
                return Err(invalid("the Zipf theta must be above 0 and not 1"));
            }
            Ok(Distribution::Zipf {
                theta,
                center: center(1)?,
            })
        }
        "pareto" => {
            one_center_at_most()?;
            let h = first()?;
            if !(h > 0.0 && h < 1.0) {
                return Err(invalid("the Pareto power must lie between 0 and 1"));
            }
            Ok(Distribution::Pareto {
                h,
                center: center(1)?,
            })
        }
        "normal" => {
            one_center_at_most()?;
            let deviation = first()?;
            if !(deviation > 0.0 && deviation <= 100.0) {
                return Err(invalid(
                    "the normal deviation is a percentage, above 0 and at most 100",
                ));
            }
            Ok(Distribution::Normal {
                deviation,
                center: center(1)?,
            })
        }
        "zoned" | "zoned_abs" => {
            // As fio: a `zoned` zone without a size shares what the others
            // leave of the file with the other such zones.
            let mut zones = Vec::new();
            let mut unsized_zones = Vec::new();
            for zone in &params {
                let (access, extent) = zone.split_once('/').unwrap_or((zone, ""));
                let access_percent = number(access)?;
                let extent = match (model, extent.trim()) {
                    ("zoned", "") => {
                        unsized_zones.push(zones.len());
                        ZoneSize::Percent(0.0)
                    }
                    ("zoned", extent) => ZoneSize::Percent(number(extent)?),
                    (_, "") => return Err(invalid(&format!("zone '{zone}' needs a size"))),
                    (_, extent) => ZoneSize::Bytes(size(extent, kb_base)?),
                };
                zones.push(Zone {
                    access_percent,
                    size: extent,
                });
            }
            let given: f64 = zones
                .iter()
                .map(|z| match z.size {
                    ZoneSize::Percent(p) => p,
                    ZoneSize::Bytes(_) => 0.0,
                })
                .sum();
            if !unsized_zones.is_empty() {
                let share = (100.0 - given).max(0.0) / unsized_zones.len() as f64;
                for i in unsized_zones {
                    zones[i].size = ZoneSize::Percent(share);
                }
            }
            let access: f64 = zones.iter().map(|z| z.access_percent).sum();
            let room: f64 = zones
                .iter()
                .map(|z| match z.size {
                    ZoneSize::Percent(p) => p,
                    ZoneSize::Bytes(_) => 0.0,
                })
                .sum();
            if zones.is_empty() || zones.len() > 256 {
                return Err(invalid("give 1 to 256 zones"));
            }
            if (access - 100.0).abs() > 1e-9 {
                return Err(invalid(&format!(
                    "the zones' accesses add up to {access}%, not 100%"
                )));
            }
            if room > 100.0 + 1e-9 {
                return Err(invalid(&format!("the zones cover {room}% of the file")));
            }
            Ok(Distribution::Zoned(zones))
        }
        _ => Err(ValueError::Choice {
            value: field.to_string(),
            allowed: "random, zipf:theta, pareto:h, normal:dev, zoned:..., zoned_abs:...".into(),
        }),
    }
}

pub(super) fn rw_mode(v: &str) -> Result<RwMode, ValueError> {
    let word = v.split(':').next().unwrap_or_default();
    Ok(match word {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "randread" => RwMode::RandRead,
        "randwrite" => RwMode::RandWrite,
        "rw" | "readwrite" => RwMode::ReadWrite,
        "randrw" => RwMode::RandReadWrite,
        "trim" => RwMode::Trim,
        "randtrim" => RwMode::RandTrim,
        "trimwrite" => RwMode::TrimWrite,
        "randtrimwrite" => RwMode::RandTrimWrite,
        other => {
            return Err(ValueError::Unsupported(format!(
                "rw={other} is not supported by hybrio"
            )));
        }
    })
}

/// `rw=WORD:N`'s modifier, as fio reads it: for random I/O, how many I/Os
/// share each random offset (a count); for sequential I/O, bytes added to
/// each offset (a size, negative to go backwards). `(seq_nr, seq_add)`.
pub(super) fn rw_modifier(v: &str, kb_base: u32) -> Result<(u32, i64), ValueError> {
    let Some((word, modifier)) = v.split_once(':') else {
        return Ok((1, 0));
    };
    let modifier = modifier.trim();
    if matches!(word, "randread" | "randwrite" | "randrw") {
        let nr = units::parse_u32(modifier)?;
        if nr == 0 {
            return Err(ValueError::Range(v.to_string()));
        }
        Ok((nr, 0))
    } else {
        let (negative, size) = match modifier.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, modifier),
        };
        let bytes = units::parse_size_in(size, kb_base)?;
        let bytes = i64::try_from(bytes).map_err(|_| ValueError::Range(v.to_string()))?;
        Ok((1, if negative { -bytes } else { bytes }))
    }
}

pub(super) fn percentile_list(v: &str) -> Result<Vec<f64>, ValueError> {
    let list: Result<Vec<f64>, _> = v.split(':').map(|p| p.trim().parse::<f64>()).collect();
    match list {
        Ok(list)
            if !list.is_empty()
                && list.len() <= 20
                && list.iter().all(|p| (0.0..=100.0).contains(p)) =>
        {
            Ok(list)
        }
        _ => Err(ValueError::Range(v.to_string())),
    }
}

pub(super) const RW_WORDS: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
    "trim",
    "randtrim",
    "trimwrite",
    "randtrimwrite",
];
