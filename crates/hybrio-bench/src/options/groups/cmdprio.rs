//! fio's per-I/O priorities (`cmdprio_percentage`, `cmdprio_class`,
//! `cmdprio`, `cmdprio_hint`, `cmdprio_bssplit`) and `log_prio`: a share of a job's reads
//! and writes go with another I/O priority than the job's, sent with each
//! request by io_uring and libaio, as fio's engines of those names send it.

use crate::units;

/// fio's `ioprio_value(class, level, hint)`: the hint sits in the bits
/// between the class and the level (Linux 6.5's `IOPRIO_PRIO_HINT`); no
/// class is best effort, as the kernel takes it.
pub fn ioprio_value(class: u32, level: u32, hint: u32) -> u16 {
    let class = if class == 0 { 2 } else { class };
    ((class << 13) | (hint << 3) | level) as u16
}

/// One block size's priorities in `cmdprio_bssplit`: of its I/Os, each
/// `(percent, ioprio)` share goes with that priority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPriorities {
    /// The block size.
    pub bs: u64,
    /// The shares and their priorities.
    pub shares: Vec<(u32, u16)>,
}

/// Per direction (reads, writes): which I/Os get which priority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmdPrio {
    /// `cmdprio_percentage`.
    pub percent: [u32; 2],
    /// `cmdprio_class` (1 realtime, 2 best effort, 3 idle).
    pub class: [u32; 2],
    /// `cmdprio`: the level within the class (0-7).
    pub level: [u32; 2],
    /// `cmdprio_hint` (0-1023, 0: none).
    pub hint: [u32; 2],
    /// `cmdprio_bssplit`, as given (it takes `cmdprio_class` and `cmdprio`
    /// where an entry names no class and level of its own, so it is read
    /// when the job is made).
    pub bssplit: Option<String>,
    /// `log_prio`: the latency logs' last column is each I/O's priority.
    pub log: bool,
}

impl Default for CmdPrio {
    fn default() -> Self {
        CmdPrio {
            percent: [0; 2],
            class: [1; 2],
            level: [0; 2],
            hint: [0; 2],
            bssplit: None,
            log: false,
        }
    }
}

impl CmdPrio {
    /// Whether some I/Os get a priority of their own.
    pub fn is_set(&self) -> bool {
        self.percent.iter().any(|&p| p > 0) || self.bssplit.is_some()
    }

    /// `cmdprio_bssplit` per direction: `bs/percent[/class/level[/hint]]`
    /// entries separated by `:`, reads and writes by `,` (one list for both
    /// when only one is given); an entry's own class, level and hint, or
    /// else `cmdprio_class`, `cmdprio` and `cmdprio_hint`. Entries of one size add up (at most
    /// 100%); 0% entries are left out.
    pub fn split(&self) -> Result<[Vec<BlockPriorities>; 2], String> {
        let Some(text) = &self.bssplit else {
            return Ok([Vec::new(), Vec::new()]);
        };
        let lists: Vec<&str> = text.split(',').collect();
        let mut out: [Vec<BlockPriorities>; 2] = [Vec::new(), Vec::new()];
        for (dir, slot) in out.iter_mut().enumerate() {
            let list = lists
                .get(dir)
                .or(lists.first())
                .copied()
                .unwrap_or_default();
            let implicit = ioprio_value(self.class[dir], self.level[dir], self.hint[dir]);
            for entry in list.split(':').filter(|e| !e.trim().is_empty()) {
                let fields: Vec<&str> = entry.trim().split('/').collect();
                let bad =
                    || format!("cmdprio_bssplit entry '{entry}': bs/percent[/class/level[/hint]]");
                let (bs, percent, prio) = match fields.as_slice() {
                    [bs, percent] => (*bs, *percent, implicit),
                    [bs, percent, class, level, hint @ ..] if hint.len() <= 1 => {
                        let number = |f: &str| f.parse::<u32>().map_err(|_| bad());
                        let (class, level) = (number(class)?, number(level)?);
                        let hint = hint.first().map_or(Ok(0), |h| number(h))?;
                        if !(1..=3).contains(&class) || level > 7 || hint > 1023 {
                            return Err(format!(
                                "cmdprio_bssplit entry '{entry}': class 1-3, level 0-7, hint 0-1023"
                            ));
                        }
                        (*bs, *percent, ioprio_value(class, level, hint))
                    }
                    _ => return Err(bad()),
                };
                let bs = units::parse_size(bs).map_err(|_| bad())?;
                let percent: u32 = percent.parse().map_err(|_| bad())?;
                if percent == 0 {
                    continue;
                }
                match slot.iter_mut().find(|b| b.bs == bs) {
                    Some(block) => block.shares.push((percent, prio)),
                    None => slot.push(BlockPriorities {
                        bs,
                        shares: vec![(percent, prio)],
                    }),
                }
            }
            if let Some(over) = slot
                .iter()
                .find(|b| b.shares.iter().map(|s| s.0).sum::<u32>() > 100)
            {
                return Err(format!(
                    "cmdprio_bssplit: the shares of {} bytes exceed 100%",
                    over.bs
                ));
            }
        }
        Ok(out)
    }
}
