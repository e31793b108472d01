//! Value expansion, as fio does it in job files and job options: `${VAR}`
//! from the environment, the keywords `$ncpus`, `$pagesize` and
//! `$mb_memory`, and arithmetic in parentheses (`size=($mb_memory/4)m`).
//! hybrio adds `$rank` and `$nranks`: this process's rank among those an
//! MPI launcher started and their number (0 and 1 outside one), so that
//! `offset=($rank*64)m` gives each rank of `hybrio --mpi` its own part of
//! a shared file.
//!
//! Expansion happens before a value reaches its option, so `--showcmd`
//! prints what will run, and every option accepts it.

/// What a value could not be expanded for, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// `${NAME}` names nothing in the environment.
    #[error("environment variable {0} is not set")]
    Unset(String),
    /// `${` without its `}`.
    #[error("'${{' without a closing '}}'")]
    Unterminated,
    /// An expression in parentheses that does not compute.
    #[error("cannot compute '{expression}': {reason}")]
    Arithmetic {
        /// The expression, parentheses included.
        expression: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// The figures fio's keywords stand for, read once from this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keywords {
    /// `$ncpus`: CPUs online.
    pub ncpus: u64,
    /// `$pagesize`: bytes per memory page.
    pub pagesize: u64,
    /// `$mb_memory`: physical memory in MiB.
    pub mb_memory: u64,
    /// `$rank`: this process's rank, as the MPI launcher's environment
    /// says (0 outside one).
    pub rank: u64,
    /// `$nranks`: how many ranks the launcher started (1 outside one).
    pub nranks: u64,
}

impl Keywords {
    /// This machine's figures, as fio reads them (CPUs online, not the ones
    /// this process may use; all of physical memory).
    pub fn of_this_machine() -> Keywords {
        Keywords {
            ncpus: online_cpus().unwrap_or(1),
            pagesize: hybrio::probe::page_size() as u64,
            mb_memory: total_memory_kib().map_or(0, |kib| kib / 1024),
            rank: launcher_rank().map_or(0, |(rank, _)| rank),
            nranks: launcher_rank().map_or(1, |(_, size)| size),
        }
    }
}

/// This process's rank and the number of ranks, as an MPI launcher tells
/// them in the environment: Open MPI's `mpirun`, the PMI of MPICH and
/// Intel MPI, or Slurm's `srun`.
pub fn launcher_rank() -> Option<(u64, u64)> {
    let number = |name: &str| std::env::var(name).ok()?.trim().parse::<u64>().ok();
    [
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        ("PMI_RANK", "PMI_SIZE"),
        ("SLURM_PROCID", "SLURM_NTASKS"),
    ]
    .iter()
    .find_map(|(rank, size)| Some((number(rank)?, number(size)?)))
}

/// Counts the CPUs in `/sys/devices/system/cpu/online` ("0-3,6,8-9").
fn online_cpus() -> Option<u64> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    let mut count = 0;
    for part in text.trim().split(',') {
        count += match part.split_once('-') {
            Some((first, last)) => last.parse::<u64>().ok()? - first.parse::<u64>().ok()? + 1,
            None => {
                part.parse::<u64>().ok()?;
                1
            }
        };
    }
    (count > 0).then_some(count)
}

/// `MemTotal` from `/proc/meminfo`, in KiB.
fn total_memory_kib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Expands one value: environment variables, then keywords, then arithmetic.
/// `env` looks a variable up (the process environment, outside tests).
pub fn expand(
    value: &str,
    keywords: &Keywords,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    if !value.contains('$') && !value.contains('(') {
        return Ok(value.to_string());
    }
    let with_variables = expand_variables(value, env)?;
    let with_keywords = with_variables
        .replace("$ncpus", &keywords.ncpus.to_string())
        .replace("$pagesize", &keywords.pagesize.to_string())
        .replace("$mb_memory", &keywords.mb_memory.to_string())
        .replace("$nranks", &keywords.nranks.to_string())
        .replace("$rank", &keywords.rank.to_string());
    expand_arithmetic(&with_keywords)
}

fn expand_variables(
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(ExpandError::Unterminated)?;
        let name = &after[..end];
        out.push_str(&env(name).ok_or_else(|| ExpandError::Unset(name.to_string()))?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Replaces each outermost parenthesised group made only of numbers and
/// operators by its value; other parentheses (a description's) stay.
fn expand_arithmetic(value: &str) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..open]);
        let group = &rest[open..];
        let Some(close) = matching_close(group) else {
            // Unbalanced: not arithmetic; the option judges the text.
            out.push_str(group);
            return Ok(out);
        };
        let expression = &group[..=close];
        if expression
            .chars()
            .all(|c| c.is_ascii_digit() || " \t.+-*/%^()".contains(c))
        {
            let number = evaluate(expression).map_err(|reason| ExpandError::Arithmetic {
                expression: expression.to_string(),
                reason,
            })?;
            out.push_str(&format_number(number));
        } else {
            out.push_str(expression);
        }
        rest = &group[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The index of the `)` closing the `(` at the start of `text`.
fn matching_close(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A whole result prints as an integer (what size and count options take).
fn format_number(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 9.0e18 {
        format!("{}", number as i64)
    } else {
        format!("{number}")
    }
}

/// Parentheses nested deeper than this are refused, not recursed into.
const MAX_NESTING: usize = 64;

/// Evaluates `+ - * / % ^` (power, right-associative), unary signs and
/// parentheses. Without a decimal point anywhere the arithmetic is on whole
/// numbers, as fio's (`($mb_memory/2)` is 12052 for 24105, not 12052.5).
fn evaluate(expression: &str) -> Result<f64, &'static str> {
    let tokens: Vec<char> = expression.chars().collect();
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
        depth: 0,
        whole: !expression.contains('.'),
    };
    let value = parser.sum()?;
    if parser.peek().is_some() {
        return Err("unexpected text after the expression");
    }
    if !value.is_finite() {
        return Err("the result is not a finite number");
    }
    Ok(value)
}

struct Parser<'a> {
    tokens: &'a [char],
    at: usize,
    depth: usize,
    /// Whole-number arithmetic: quotients and powers are truncated.
    whole: bool,
}

impl Parser<'_> {
    /// The next character that is not a space.
    fn peek(&mut self) -> Option<char> {
        while self.tokens.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
        self.tokens.get(self.at).copied()
    }

    fn sum(&mut self) -> Result<f64, &'static str> {
        let mut value = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            let rhs = self.product()?;
            value = if op == '+' { value + rhs } else { value - rhs };
        }
        Ok(value)
    }

    fn product(&mut self) -> Result<f64, &'static str> {
        let mut value = self.power()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.at += 1;
            let rhs = self.power()?;
            value = match op {
                '*' => value * rhs,
                _ if rhs == 0.0 => return Err("division by zero"),
                '/' if self.whole => (value / rhs).trunc(),
                '/' => value / rhs,
                _ => value % rhs,
            };
        }
        Ok(value)
    }

    fn power(&mut self) -> Result<f64, &'static str> {
        let base = self.unary()?;
        if self.peek() == Some('^') {
            self.at += 1;
            let exponent = self.power()?;
            let power = base.powf(exponent);
            return Ok(if self.whole { power.trunc() } else { power });
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, &'static str> {
        match self.peek() {
            Some(sign @ ('-' | '+')) => {
                self.at += 1;
                self.nested(|p| p.unary())
                    .map(|v| if sign == '-' { -v } else { v })
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<f64, &'static str> {
        match self.peek() {
            Some('(') => {
                self.at += 1;
                let value = self.nested(|p| p.sum())?;
                if self.peek() != Some(')') {
                    return Err("missing ')'");
                }
                self.at += 1;
                Ok(value)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.at;
                // Digits only: "2 3" is two numbers, not 23.
                while self
                    .tokens
                    .get(self.at)
                    .is_some_and(|c| c.is_ascii_digit() || *c == '.')
                {
                    self.at += 1;
                }
                let text: String = self.tokens[start..self.at].iter().collect();
                text.parse().map_err(|_| "a number is malformed")
            }
            Some(_) => Err("expected a number or '('"),
            None => Err("the expression ends too soon"),
        }
    }

    fn nested(
        &mut self,
        inner: impl FnOnce(&mut Self) -> Result<f64, &'static str>,
    ) -> Result<f64, &'static str> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err("nested too deeply");
        }
        let value = inner(self);
        self.depth -= 1;
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MACHINE: Keywords = Keywords {
        ncpus: 2,
        pagesize: 4096,
        mb_memory: 24105,
        rank: 3,
        nranks: 4,
    };

    fn env(name: &str) -> Option<String> {
        (name == "SZ").then(|| "3".to_string())
    }

    fn x(value: &str) -> Result<String, ExpandError> {
        expand(value, &MACHINE, &env)
    }

    #[test]
    fn variables_and_keywords_as_fio_expands_them() {
        // Checked against fio 3.33: `${SZ}m` with SZ=3 gives 3m, `$ncpus` 2
        // and `($mb_memory/2)` 12052 on a 2-CPU, 24105 MiB machine.
        assert_eq!(x("${SZ}m").unwrap(), "3m");
        assert_eq!(x("$ncpus").unwrap(), "2");
        assert_eq!(x("($mb_memory/2)").unwrap(), "12052");
        assert_eq!(x("$pagesize").unwrap(), "4096");
        assert_eq!(x("($ncpus*2)").unwrap(), "4");
        assert_eq!(x("plain text").unwrap(), "plain text");
        assert_eq!(x("${NOPE}"), Err(ExpandError::Unset("NOPE".into())));
        assert_eq!(x("${SZ"), Err(ExpandError::Unterminated));
    }

    #[test]
    fn arithmetic_in_parentheses() {
        assert_eq!(x("(2+3)").unwrap(), "5");
        assert_eq!(x("((2+3)*4)k").unwrap(), "20k");
        assert_eq!(x("( 2 + 3 * 4 )").unwrap(), "14");
        assert_eq!(x("(2^10)").unwrap(), "1024");
        assert_eq!(x("(2^3^2)").unwrap(), "512");
        assert_eq!(x("(7%3)").unwrap(), "1");
        assert_eq!(x("(-4+8)").unwrap(), "4");
        assert_eq!(x("(10/4)").unwrap(), "2");
        assert_eq!(x("(10.0/4)").unwrap(), "2.5");
        assert_eq!(x("4k,(2*4)k").unwrap(), "4k,8k");
        assert_eq!(x("a job (the first)").unwrap(), "a job (the first)");
        assert_eq!(x("unbalanced (2+3").unwrap(), "unbalanced (2+3");
        for bad in ["(1/0)", "(2+)", "(2 3)", "()", "(1..2)", "(9^999)"] {
            assert!(
                matches!(x(bad), Err(ExpandError::Arithmetic { .. })),
                "{bad}: {:?}",
                x(bad)
            );
        }
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert!(matches!(x(&deep), Err(ExpandError::Arithmetic { .. })));
    }

    #[test]
    fn this_machine_has_cpus_and_memory() {
        let machine = Keywords::of_this_machine();
        assert!(machine.ncpus >= 1);
        assert!(machine.pagesize >= 4096 && machine.pagesize.is_power_of_two());
        assert!(machine.mb_memory > 0);
    }

    #[test]
    fn rank_keywords_give_each_rank_its_part() {
        assert_eq!(x("offset=($rank*64)m").unwrap(), "offset=192m");
        assert_eq!(x("($rank*65536)").unwrap(), "196608");
        assert_eq!(x("(($nranks-1)*4096)").unwrap(), "12288");
        assert_eq!(x("f.$rank.of.$nranks").unwrap(), "f.3.of.4");
    }
}
